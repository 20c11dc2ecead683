//! The references for softmax and log-softmax.

/// Row softmax over contiguous rows of `row_len`, in f64: `exp(x − max) / Σ exp(x − max)`.
/// A row of all `-inf` gives NaN (as `torch.softmax`); `-inf` entries of a finite row give 0;
/// NaN anywhere makes the row NaN. `row_len == 0` gives an empty vector.
pub fn softmax(input: &[f64], row_len: usize) -> Vec<f64> {
    rows(input, row_len, |x, max, sum| (x - max).exp() / sum)
}

/// Row log-softmax over contiguous rows of `row_len`, in f64: `x − max − ln Σ exp(x − max)`.
/// Edge semantics as [`softmax`], with `-inf` entries of a finite row staying `-inf`.
pub fn log_softmax(input: &[f64], row_len: usize) -> Vec<f64> {
    rows(input, row_len, |x, max, sum| x - max - sum.ln())
}

/// Applies `f(x, max, Σ exp(x − max))` to every element of each row.
fn rows(input: &[f64], row_len: usize, f: impl Fn(f64, f64, f64) -> f64 + Sync) -> Vec<f64> {
    let f = &f;
    if row_len == 0 {
        return Vec::new();
    }
    use rayon::prelude::*;
    input
        .par_chunks_exact(row_len)
        .flat_map_iter(|row| {
            let max = row.iter().fold(f64::NEG_INFINITY, |m, &x| {
                if x.is_nan() || m.is_nan() {
                    f64::NAN
                } else {
                    m.max(x)
                }
            });
            let sum: f64 = row.iter().map(|&x| (x - max).exp()).sum();
            row.iter().map(move |&x| f(x, max, sum))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_edges() {
        let s = softmax(&[1.0, 2.0, f64::NEG_INFINITY, 0.0], 2);
        assert!((s[0] + s[1] - 1.0).abs() < 1e-15);
        assert_eq!(s[2], 0.0);
        assert_eq!(s[3], 1.0);
        assert!(
            softmax(&[f64::NEG_INFINITY; 2], 2)
                .iter()
                .all(|v| v.is_nan())
        );
        assert!(softmax(&[1.0, f64::NAN], 2).iter().all(|v| v.is_nan()));
        assert!(softmax(&[1.0], 0).is_empty());
    }

    #[test]
    fn log_softmax_edges() {
        let l = log_softmax(&[0.0, 0.0], 2);
        assert!((l[0] + std::f64::consts::LN_2).abs() < 1e-15);
        let l = log_softmax(&[f64::NEG_INFINITY, 0.0], 2);
        assert_eq!(l, vec![f64::NEG_INFINITY, 0.0]);
    }
}
