//! The reference for reductions.

/// A reduction (host-side name of the op; the kernels' `#[cube]` trait is separate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
}
