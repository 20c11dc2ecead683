//! References for reductions, softmax and GEMV.

/// A reduction (host-side name of the op; the kernels' `#[cube]` trait is separate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// `Σ x`.
    Sum,
    /// `Σ x / n`.
    Mean,
    /// `max x`; NaN propagates.
    Max,
    /// `min x`; NaN propagates.
    Min,
}

impl Reduction {
    /// Every reduction.
    pub const ALL: [Reduction; 4] = [
        Reduction::Sum,
        Reduction::Mean,
        Reduction::Max,
        Reduction::Min,
    ];

    /// Stable lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Mean => "mean",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }

    fn fold(self, values: impl Iterator<Item = f64>, n: usize) -> f64 {
        match self {
            Reduction::Sum => values.sum(),
            Reduction::Mean => values.sum::<f64>() / n.max(1) as f64,
            Reduction::Max => values.fold(f64::NEG_INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            }),
            Reduction::Min => values.fold(f64::INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.min(b)
                }
            }),
        }
    }
}

/// Reduces `input` (dense row-major `shape`) over `axis`, or over everything with `None`.
/// The result has `shape` without `axis` (one value for `None`). Empty input or a bad axis give
/// an empty vector.
pub fn reduce(input: &[f64], shape: &[usize], axis: Option<usize>, op: Reduction) -> Vec<f64> {
    let Some(axis) = axis else {
        return vec![op.fold(input.iter().copied(), input.len())];
    };
    if axis >= shape.len() || input.len() != shape.iter().product::<usize>() || input.is_empty() {
        return Vec::new();
    }
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    use rayon::prelude::*;
    (0..outer * inner)
        .into_par_iter()
        .map(|oi| {
            let (o, i) = (oi / inner, oi % inner);
            op.fold((0..len).map(|j| input[(o * len + j) * inner + i]), len)
        })
        .collect()
}

/// Row softmax (`log == false`) or log-softmax over contiguous rows of `row_len`, in f64.
/// A row of all `-inf` gives NaN (as `torch.softmax`); NaN anywhere makes the row NaN.
pub fn softmax(input: &[f64], row_len: usize, log: bool) -> Vec<f64> {
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
            row.iter().map(move |&x| {
                if log {
                    x - max - sum.ln()
                } else {
                    (x - max).exp() / sum
                }
            })
        })
        .collect()
}

/// `A·x` (`transpose == false`: `a` is `rows × cols`, `x` has `cols` entries) or `Aᵀ·x`
/// (`x` has `rows` entries, the result `cols`), in f64. Mismatched lengths give an empty vector.
pub fn gemv(a: &[f64], rows: usize, cols: usize, x: &[f64], transpose: bool) -> Vec<f64> {
    if a.len() != rows * cols || x.len() != if transpose { rows } else { cols } {
        return Vec::new();
    }
    use rayon::prelude::*;
    if transpose {
        (0..cols)
            .into_par_iter()
            .map(|j| (0..rows).map(|i| a[i * cols + j] * x[i]).sum())
            .collect()
    } else {
        a.par_chunks_exact(cols.max(1))
            .map(|row| row.iter().zip(x).map(|(p, q)| p * q).sum())
            .collect()
    }
}

/// `C[z] = A[z]·B[z]` for dense row-major `A: [batch_a, m, k]`, `B: [batch_b, k, n]` where a
/// batch of 1 broadcasts; `C: [max(batch_a, batch_b), m, n]` (empty on inconsistent sizes).
pub fn matmul(
    a: &[f64],
    b: &[f64],
    batch_a: usize,
    batch_b: usize,
    m: usize,
    n: usize,
    k: usize,
) -> Vec<f64> {
    let batch = batch_a.max(batch_b);
    let ok_batch = |x: usize| x == batch || x == 1;
    if a.len() != batch_a * m * k
        || b.len() != batch_b * k * n
        || !ok_batch(batch_a)
        || !ok_batch(batch_b)
    {
        return Vec::new();
    }
    let mut c = vec![0.0; batch * m * n];
    for z in 0..batch {
        let ao = if batch_a == 1 { 0 } else { z * m * k };
        let bo = if batch_b == 1 { 0 } else { z * k * n };
        for i in 0..m {
            for p in 0..k {
                let av = a[ao + i * k + p];
                let row = &b[bo + p * n..bo + (p + 1) * n];
                let out = &mut c[(z * m + i) * n..(z * m + i + 1) * n];
                for (o, bv) in out.iter_mut().zip(row) {
                    *o += av * bv;
                }
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_axes() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // [2, 3]
        assert_eq!(
            reduce(&x, &[2, 3], Some(1), Reduction::Sum),
            vec![6.0, 15.0]
        );
        assert_eq!(
            reduce(&x, &[2, 3], Some(0), Reduction::Max),
            vec![4.0, 5.0, 6.0]
        );
        assert_eq!(reduce(&x, &[2, 3], None, Reduction::Mean), vec![3.5]);
        assert_eq!(
            reduce(&x, &[2, 3], Some(0), Reduction::Min),
            vec![1.0, 2.0, 3.0]
        );
        assert!(reduce(&x, &[2, 3], Some(2), Reduction::Sum).is_empty());
        assert!(reduce(&[f64::NAN, 1.0], &[2], Some(0), Reduction::Max)[0].is_nan());
        assert!(reduce(&[1.0, f64::NAN, 2.0], &[3], None, Reduction::Min)[0].is_nan());
    }

    #[test]
    fn softmax_edges() {
        let s = softmax(&[1.0, 2.0, f64::NEG_INFINITY, 0.0], 2, false);
        assert!((s[0] + s[1] - 1.0).abs() < 1e-15);
        assert_eq!(s[2], 0.0);
        assert_eq!(s[3], 1.0);
        assert!(
            softmax(&[f64::NEG_INFINITY; 2], 2, false)
                .iter()
                .all(|v| v.is_nan())
        );
        let l = softmax(&[0.0, 0.0], 2, true);
        assert!((l[0] + std::f64::consts::LN_2).abs() < 1e-15);
    }

    #[test]
    fn gemv_both_ways() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
        assert_eq!(gemv(&a, 2, 3, &[1.0, 0.0, -1.0], false), vec![-2.0, -2.0]);
        assert_eq!(gemv(&a, 2, 3, &[1.0, 2.0], true), vec![9.0, 12.0, 15.0]);
        assert!(gemv(&a, 2, 3, &[1.0], false).is_empty());
    }
}
