//! The reference for transposes.

/// `output[b, c, r] = input[b, r, c]` for `batch` row-major `rows × cols` matrices (empty on
/// a length mismatch).
pub fn transpose(input: &[f64], batch: usize, rows: usize, cols: usize) -> Vec<f64> {
    if input.len() != batch * rows * cols {
        return Vec::new();
    }
    let mut out = vec![0.0; input.len()];
    for b in 0..batch {
        for r in 0..rows {
            for c in 0..cols {
                out[b * rows * cols + c * rows + r] = input[b * rows * cols + r * cols + c];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposes_each_matrix_of_the_batch() {
        let x = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ];
        assert_eq!(
            transpose(&x, 2, 2, 3),
            vec![
                1.0, 4.0, 2.0, 5.0, 3.0, 6.0, 7.0, 10.0, 8.0, 11.0, 9.0, 12.0
            ]
        );
        assert!(transpose(&x, 1, 2, 3).is_empty());
    }
}
