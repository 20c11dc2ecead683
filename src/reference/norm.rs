//! The references for RMSNorm and LayerNorm.

/// Row RMSNorm over contiguous rows of `row_len`, in f64: `x / √(mean(x²) + eps) · w` (`w` = 1
/// when `weight` is `None`).
///
/// Edge semantics: a NaN anywhere in a row makes the row NaN; a mean square beyond the f32
/// range counts as `+∞` (the kernels' statistics are f32), so the scale is 0 and an infinite
/// entry gives NaN (`∞ · 0`), a finite one `0 · w`. `row_len == 0` gives an empty vector.
pub fn rms_norm(input: &[f64], weight: Option<&[f64]>, row_len: usize, eps: f64) -> Vec<f64> {
    rows(input, row_len, |row| {
        let ms = f32_range(row.iter().map(|x| x * x).sum::<f64>() / row_len as f64);
        (0.0, 1.0 / (ms + eps).sqrt())
    })
    .zip(input)
    .enumerate()
    .map(|(i, ((mean, inv), &x))| affine((x - mean) * inv, i % row_len.max(1), weight, None))
    .collect()
}

/// Row LayerNorm over contiguous rows of `row_len`, in f64: `(x − mean) / √(var + eps) · w + b`
/// with the biased variance `mean((x − mean)²)` (`w` = 1, `b` = 0 where `None`).
///
/// Edge semantics: a row with a NaN or an infinite entry is NaN throughout (its mean is not
/// finite); a variance beyond the f32 range counts as `+∞`, giving `0 · w + b`. `row_len == 0`
/// gives an empty vector.
pub fn layer_norm(
    input: &[f64],
    weight: Option<&[f64]>,
    bias: Option<&[f64]>,
    row_len: usize,
    eps: f64,
) -> Vec<f64> {
    rows(input, row_len, |row| {
        let mean = row.iter().sum::<f64>() / row_len as f64;
        if !mean.is_finite() {
            return (f64::NAN, f64::NAN);
        }
        let var = f32_range(row.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / row_len as f64);
        (mean, 1.0 / (var + eps).sqrt())
    })
    .zip(input)
    .enumerate()
    .map(|(i, ((mean, inv), &x))| affine((x - mean) * inv, i % row_len.max(1), weight, bias))
    .collect()
}

/// Per output, the magnitude of the terms it is made of, `(|x| + |mean|) · inv · |w| + |b|`:
/// what [`crate::reference::Tolerance::norm`] scales its rounding slack by. NaN rows give 0.
pub fn norm_magnitudes(
    input: &[f64],
    weight: Option<&[f64]>,
    bias: Option<&[f64]>,
    row_len: usize,
    eps: f64,
    layer: bool,
) -> Vec<f64> {
    rows(input, row_len, |row| {
        let n = row_len as f64;
        let mean = if layer {
            row.iter().sum::<f64>() / n
        } else {
            0.0
        };
        let ms = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, 1.0 / (ms + eps).sqrt())
    })
    .zip(input)
    .enumerate()
    .map(|(i, ((mean, inv), &x))| {
        let j = i % row_len.max(1);
        let w = weight.map_or(1.0, |w| w[j].abs());
        let b = bias.map_or(0.0, |b| b[j].abs());
        let m = (x.abs() + mean.abs()) * inv * w + b;
        if m.is_finite() { m } else { 0.0 }
    })
    .collect()
}

/// `(mean, 1/√(stat + eps))` of every element's row, from `stats` of the row (NaN rows NaN).
fn rows<'a>(
    input: &'a [f64],
    row_len: usize,
    stats: impl Fn(&[f64]) -> (f64, f64) + Sync,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    use rayon::prelude::*;
    let per_row: Vec<(f64, f64)> = if row_len == 0 {
        Vec::new()
    } else {
        input
            .par_chunks_exact(row_len)
            .map(|row| {
                if row.iter().any(|x| x.is_nan()) {
                    (f64::NAN, f64::NAN)
                } else {
                    stats(row)
                }
            })
            .collect()
    };
    let len = input.len().checked_div(row_len).unwrap_or(0) * row_len;
    (0..len).map(move |i| per_row[i / row_len])
}

/// A statistic as f32 holds it: `+∞` beyond the f32 range.
fn f32_range(v: f64) -> f64 {
    if (v as f32).is_infinite() {
        f64::INFINITY
    } else {
        v
    }
}

fn affine(y: f64, j: usize, weight: Option<&[f64]>, bias: Option<&[f64]>) -> f64 {
    let y = weight.map_or(y, |w| y * w[j]);
    bias.map_or(y, |b| y + b[j])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rms_norm_values_and_edges() {
        let y = rms_norm(&[3.0, 4.0], Some(&[1.0, 2.0]), 2, 0.0);
        let r = (12.5f64).sqrt();
        assert!((y[0] - 3.0 / r).abs() < 1e-15 && (y[1] - 8.0 / r).abs() < 1e-15);
        assert!(
            rms_norm(&[1.0, f64::NAN], None, 2, 0.0)
                .iter()
                .all(|v| v.is_nan())
        );
        let y = rms_norm(&[f64::INFINITY, 1.0], None, 2, 0.0);
        assert!(y[0].is_nan() && y[1] == 0.0);
        // 1e30² is beyond f32: the scale is 0.
        assert_eq!(rms_norm(&[1e30, 1.0], None, 2, 0.0), vec![0.0, 0.0]);
        assert!(rms_norm(&[1.0], None, 0, 0.0).is_empty());
    }

    #[test]
    fn layer_norm_values_and_edges() {
        let y = layer_norm(&[1.0, 3.0], Some(&[2.0, 2.0]), Some(&[0.5, 0.0]), 2, 0.0);
        assert_eq!(y, vec![-1.5, 2.0]);
        assert!(
            layer_norm(&[f64::INFINITY, 1.0], None, None, 2, 0.0)
                .iter()
                .all(|v| v.is_nan())
        );
        assert_eq!(
            layer_norm(&[1e30, -1e30], None, Some(&[0.25, 0.5]), 2, 0.0),
            vec![0.25, 0.5]
        );
        let m = norm_magnitudes(&[1.0, 3.0], None, None, 2, 0.0, true);
        assert_eq!(m, vec![3.0, 5.0]);
    }
}
