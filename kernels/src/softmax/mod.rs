//! Softmax and log-softmax over contiguous rows, f32 arithmetic.
//!
//! | kernel | mapping | passes over the row |
//! |---|---|---|
//! | [`softmax_rows_kernel`] | a group of `CUBE_DIM_X` units per row (a plane for short rows, a whole cube for long ones) | 2 reads + 1 write; the second read is usually an L2 hit |
//!
//! Pass 1 keeps an online (max, Σexp) pair per unit; the group combines the maxima, rescales
//! the sums and adds them; pass 2 writes `exp(x − max) / Σ` (or `x − max − ln Σ`).

use crate::reduce::{GroupConfig, Max, Sum, group_reduce};
use cubecl::prelude::*;

/// Row softmax (`log == false`) or log-softmax (`log == true`).
///
/// Edge semantics (the f64 reference's): a row of all `-inf` gives NaN; `-inf` elements of an
/// otherwise finite row give 0 (log: `-inf`); a NaN anywhere in a row makes the row NaN.
/// Preconditions: `input.len() = output.len() ≥ rows · row_vecs` vectors; `cfg` as in
/// [`GroupConfig`]; `inf = +∞`.
#[cube(launch_unchecked)]
#[allow(unused_assignments)] // `r` is set in exactly one comptime branch
pub fn softmax_rows_kernel<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    rows: usize,
    row_vecs: usize,
    inf: f32,
    #[comptime] cfg: GroupConfig,
    #[comptime] log: bool,
) {
    let row = CUBE_POS * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let valid = row < rows;
    let base = row * row_vecs;
    let step = CUBE_DIM_X as usize;
    let neg_inf = -inf;
    let mut m = neg_inf;
    let mut s = 0.0f32;
    if valid {
        let mut i = UNIT_POS_X as usize;
        while i < row_vecs {
            let v = input[base + i];
            #[unroll]
            for k in 0..N::value() {
                let x = f32::cast_from(v[k]);
                // NaN is tracked with is_nan, not arithmetic: WGSL lets drivers assume no NaN
                // (lavapipe drops it from sums), so it must stay in `m` explicitly.
                if x.is_nan() || m.is_nan() {
                    m = select(m.is_nan(), m, x);
                } else if x > m {
                    s = s * f32::exp(m - x) + 1.0;
                    m = x;
                } else {
                    // x ≤ m; when m is still -inf, x is -inf too and adds nothing.
                    s += select(m == neg_inf, 0.0, f32::exp(x - m));
                }
            }
            i += step;
        }
    }
    let row_max = group_reduce::<Max>(m, inf, cfg);
    let local = select(s == 0.0, 0.0, s * f32::exp(m - row_max));
    let row_sum = group_reduce::<Sum>(local, inf, cfg);
    if valid {
        let inv = 1.0 / row_sum;
        let log_sum = f32::ln(row_sum);
        let mut i = UNIT_POS_X as usize;
        while i < row_vecs {
            let v = input[base + i];
            let mut y = Vector::<F, N>::empty();
            #[unroll]
            for k in 0..N::value() {
                let d = f32::cast_from(v[k]) - row_max;
                let mut r = d;
                if comptime!(log) {
                    r = d - log_sum;
                } else {
                    r = f32::exp(d) * inv;
                }
                y[k] = F::cast_from(select(row_max.is_nan(), row_max, r));
            }
            output[base + i] = y;
            i += step;
        }
    }
}
