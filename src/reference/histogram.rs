//! Histogram references. Counting is exact, so the reference must bin exactly as the kernels
//! do: integer input by value, float input with the same f32 arithmetic (`(x − lo) · scale`
//! with `scale = bins / (hi − lo)` in f32), not an f64 formula that could place a value on a
//! bin edge differently.

/// `counts[v] += 1` for every `0 ≤ v < bins` (others dropped).
pub fn histogram_index(values: &[i64], bins: usize) -> Vec<u32> {
    let mut counts = vec![0u32; bins];
    for &v in values {
        if v >= 0 && (v as u64) < bins as u64 {
            counts[v as usize] += 1;
        }
    }
    counts
}

/// The bin of `x` in `bins` bins over `[lo, hi]` (f32 arithmetic, `x = hi` in the last bin),
/// or `None` for NaN and values outside.
pub fn bin_of_range(x: f32, bins: usize, lo: f32, hi: f32) -> Option<usize> {
    if x.is_nan() || x < lo || x > hi || bins == 0 {
        return None;
    }
    let scale = bins as f32 / (hi - lo);
    let raw = ((x - lo) * scale).max(0.0) as u32 as usize;
    Some(raw.min(bins - 1))
}

/// `torch.histc`: counts of `values` in `bins` equal bins over `[lo, hi]`.
pub fn histogram_range(values: &[f32], bins: usize, lo: f32, hi: f32) -> Vec<u32> {
    use rayon::prelude::*;
    values
        .par_chunks(1 << 16)
        .map(|chunk| {
            let mut counts = vec![0u32; bins];
            for &x in chunk {
                if let Some(b) = bin_of_range(x, bins, lo, hi) {
                    counts[b] += 1;
                }
            }
            counts
        })
        .reduce(
            || vec![0u32; bins],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_match_torch_histc() {
        // torch.histc(tensor([0., .25, .5, 1., 1.5, -0.1, nan]), bins=4, min=0, max=1)
        // = [1, 1, 1, 1]
        let v = [0.0, 0.25, 0.5, 1.0, 1.5, -0.1, f32::NAN];
        assert_eq!(histogram_range(&v, 4, 0.0, 1.0), vec![1, 1, 1, 1]);
        assert_eq!(histogram_index(&[0, 3, 3, -1, 4, 7], 4), vec![1, 0, 0, 2]);
    }
}
