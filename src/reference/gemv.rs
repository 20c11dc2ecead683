//! The reference for GEMV.

use crate::Transpose;

/// `A·x` (`Transpose::No`: `a` is `rows × cols`, `x` has `cols` entries) or `Aᵀ·x`
/// (`Transpose::Yes`: `x` has `rows` entries, the result `cols`), in f64. Mismatched lengths
/// give an empty vector.
pub fn gemv(a: &[f64], rows: usize, cols: usize, x: &[f64], transpose: Transpose) -> Vec<f64> {
    let x_len = match transpose {
        Transpose::No => cols,
        Transpose::Yes => rows,
    };
    if a.len() != rows * cols || x.len() != x_len {
        return Vec::new();
    }
    use rayon::prelude::*;
    match transpose {
        Transpose::Yes => (0..cols)
            .into_par_iter()
            .map(|j| (0..rows).map(|i| a[i * cols + j] * x[i]).sum())
            .collect(),
        Transpose::No => a
            .par_chunks_exact(cols.max(1))
            .map(|row| row.iter().zip(x).map(|(p, q)| p * q).sum())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemv_both_ways() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
        assert_eq!(
            gemv(&a, 2, 3, &[1.0, 0.0, -1.0], Transpose::No),
            vec![-2.0, -2.0]
        );
        assert_eq!(
            gemv(&a, 2, 3, &[1.0, 2.0], Transpose::Yes),
            vec![9.0, 12.0, 15.0]
        );
        assert!(gemv(&a, 2, 3, &[1.0], Transpose::No).is_empty());
    }
}
