//! The reference for attention.

/// The shape of an attention problem: `q` is `[batch, heads, sq, head_dim]`, `k` and `v` are
/// `[batch, kv_heads, sk, head_dim]` (head `h` reads kv head `h / (heads / kv_heads)`), all
/// dense row-major in the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionShape {
    /// Batch size.
    pub batch: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (divides `heads`).
    pub kv_heads: usize,
    /// Query rows per head.
    pub sq: usize,
    /// Key rows per head.
    pub sk: usize,
    /// Head dimension.
    pub head_dim: usize,
}

/// `softmax(scale · q·kᵀ + mask) · v` in f64 per (batch, head), and the log-sum-exp of each
/// row's scaled, masked scores. `causal` masks key `j` from query `i` unless
/// `j + sq ≤ i + sk` (bottom-right aligned, as FlashAttention and PyTorch's `causal_lower_right`).
///
/// Edge semantics: a row that sees no key gives 0 and `lse = −∞`; a NaN in the query row, a
/// visible key or a visible value makes the row (and its lse) NaN. Returns `(out, lse)`; a
/// `kv_heads` of 0 or not dividing `heads` gives empty vectors.
pub fn attention(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: AttentionShape,
    causal: bool,
    scale: f64,
) -> (Vec<f64>, Vec<f64>) {
    use rayon::prelude::*;
    let AttentionShape {
        batch,
        heads,
        kv_heads,
        sq,
        sk,
        head_dim: d,
    } = shape;
    if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
        return (Vec::new(), Vec::new());
    }
    let group = heads / kv_heads;
    let rows: Vec<(Vec<f64>, f64)> = (0..batch * heads * sq)
        .into_par_iter()
        .map(|row| {
            let (bh, i) = (row / sq.max(1), row % sq.max(1));
            let (b, h) = (bh / heads, bh % heads);
            let kv = (b * kv_heads + h / group) * sk;
            let qi = &q[row * d..(row + 1) * d];
            let visible = |j: usize| !causal || j + sq <= i + sk;
            let scores: Vec<f64> = (0..sk)
                .filter(|&j| visible(j))
                .map(|j| {
                    let kj = &k[(kv + j) * d..(kv + j + 1) * d];
                    scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
                })
                .collect();
            if scores.is_empty() {
                return (vec![0.0; d], f64::NEG_INFINITY);
            }
            if scores.iter().any(|s| s.is_nan()) {
                return (vec![f64::NAN; d], f64::NAN);
            }
            let m = scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
            let p: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
            let l: f64 = p.iter().sum();
            let mut o = vec![0.0; d];
            for (pj, j) in p.iter().zip((0..sk).filter(|&j| visible(j))) {
                let vj = &v[(kv + j) * d..(kv + j + 1) * d];
                for (od, vd) in o.iter_mut().zip(vj) {
                    *od += pj * vd;
                }
            }
            (o.into_iter().map(|x| x / l).collect(), m + l.ln())
        })
        .collect();
    let lse = rows.iter().map(|r| r.1).collect();
    (rows.into_iter().flat_map(|r| r.0).collect(), lse)
}

/// Per output, `Σ_j p_j·|v_jd|` with the row's softmax weights (and the scores' magnitude):
/// what [`crate::reference::Tolerance::attention`] scales its slack by. Same shapes as
/// [`attention`]; rows that see nothing give 0.
pub fn attention_magnitudes(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: AttentionShape,
    causal: bool,
    scale: f64,
) -> Vec<f64> {
    let abs = |x: &[f64]| x.iter().map(|v| v.abs()).collect::<Vec<_>>();
    // |q|·|k| bounds the scores' rounding; the weights of `attention(|q|, |k|, |v|)` spread
    // that error over |v|.
    let (o, _) = attention(&abs(q), &abs(k), &abs(v), shape, causal, scale);
    o.into_iter()
        .map(|m| if m.is_finite() { m } else { 0.0 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(sq: usize, sk: usize, d: usize) -> AttentionShape {
        AttentionShape {
            batch: 1,
            heads: 1,
            kv_heads: 1,
            sq,
            sk,
            head_dim: d,
        }
    }

    #[test]
    fn uniform_scores_average_the_values() {
        let (o, lse) = attention(
            &[0.0; 2],
            &[1.0; 4],
            &[1.0, 2.0, 3.0, 4.0],
            shape(1, 2, 2),
            false,
            1.0,
        );
        assert_eq!(o, vec![2.0, 3.0]);
        assert!((lse[0] - std::f64::consts::LN_2).abs() < 1e-15);
    }

    #[test]
    fn causal_is_bottom_right_and_blind_rows_are_zero() {
        // sq = 2 > sk = 1: row 0 sees nothing, row 1 sees key 0.
        let (o, lse) = attention(&[1.0, 1.0], &[1.0], &[5.0], shape(2, 1, 1), true, 1.0);
        assert_eq!(o, vec![0.0, 5.0]);
        assert_eq!(lse[0], f64::NEG_INFINITY);
        let (o, _) = attention(
            &[1.0],
            &[1.0, f64::NAN],
            &[1.0, 2.0],
            shape(1, 2, 1),
            false,
            1.0,
        );
        assert!(o[0].is_nan());
    }
}
