//! Softmax and log-softmax over contiguous rows, f32 arithmetic.
//!
//! | kernel | mapping | passes over the row |
//! |---|---|---|
//! | [`softmax_rows_kernel()`] | a group of `CUBE_DIM_X` units per row (a plane for short rows, a whole cube for long ones) | 2 reads + 1 write; the second read is usually an L2 hit |
//!
//! Pass 1 keeps an online (max, Σexp) pair per unit; the group combines the maxima, rescales
//! the sums and adds them; pass 2 writes `exp(x − max) / Σ` (or `x − max − ln Σ`).

use crate::reduce::{GroupConfig, Max, ReduceOp, Sum, group_reduce};
use cubecl::prelude::*;

/// Comptime configuration of [`softmax_rows_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SoftmaxConfig {
    /// How units group per row and how they combine.
    pub group: GroupConfig,
    /// Log-softmax instead of softmax.
    pub log: bool,
    /// `0`: read the row twice from memory. `c > 0`: each unit keeps its (at most `c`) vectors
    /// in registers between the passes, so the row is read once; needs
    /// `row_vecs ≤ c · group`.
    pub cached: usize,
}

/// Running (max, Σ exp(x − max)) of one unit.
#[derive(CubeType, Clone, Copy)]
pub struct Online {
    pub m: f32,
    pub s: f32,
}

/// Folds one vector into the running state. NaN is tracked with `is_nan`, not arithmetic:
/// WGSL lets drivers assume no NaN (lavapipe drops it from sums), so it is kept in `m`.
#[cube]
pub fn online_update<F: Float, N: Size>(state: Online, v: Vector<F, N>, neg_inf: f32) -> Online {
    let mut m = state.m;
    let mut s = state.s;
    #[unroll]
    for k in 0..N::value() {
        let x = f32::cast_from(v[k]);
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
    Online { m, s }
}

/// `exp(x − max) / Σ` (or `x − max − ln Σ`) of one vector; NaN rows stay NaN.
#[cube]
#[allow(unused_assignments)] // `r` is set in exactly one comptime branch
pub fn softmax_vector<F: Float, N: Size>(
    v: Vector<F, N>,
    row_max: f32,
    inv: f32,
    log_sum: f32,
    #[comptime] log: bool,
) -> Vector<F, N> {
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
    y
}

/// Row softmax (`cfg.log == false`) or log-softmax (`cfg.log == true`).
///
/// Edge semantics (the f64 reference's): a row of all `-inf` gives NaN; `-inf` elements of an
/// otherwise finite row give 0 (log: `-inf`); a NaN anywhere in a row makes the row NaN.
/// Row `r` starts at vector `r · in_pitch` of `input` and `r · out_pitch` of `output` (pitches
/// ≥ `row_vecs`: padded rows). Preconditions: `row_vecs ≥ 1`; both arrays hold `(rows − 1) · pitch + row_vecs`
/// vectors; `cfg.group` as in
/// [`GroupConfig`]; with `cfg.cached = c > 0`, `row_vecs ≤ c · cfg.group.group`; `inf = +∞`.
#[cube(launch_unchecked)]
pub fn softmax_rows_kernel<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    rows: usize,
    row_vecs: usize,
    in_pitch: usize,
    out_pitch: usize,
    inf: f32,
    #[comptime] cfg: SoftmaxConfig,
) {
    let row = CUBE_POS * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let valid = row < rows;
    let base = row * in_pitch;
    let out_base = row * out_pitch;
    if comptime!(cfg.cached > 0) {
        softmax_row_cached::<F, N>(input, output, valid, base, out_base, row_vecs, inf, cfg);
    } else {
        softmax_row_streamed::<F, N>(input, output, valid, base, out_base, row_vecs, inf, cfg);
    }
}

/// A row held in registers: pass 1 takes the maximum (no exponentials), pass 2 computes each
/// `exp(x − max)` once, keeps it in registers and sums it, the write scales it. One read, one
/// write, one exponential per element, no data-dependent branches.
#[cube]
#[allow(clippy::too_many_arguments, unused_assignments)] // `r` is set in one comptime branch
fn softmax_row_cached<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    valid: bool,
    base: usize,
    out_base: usize,
    row_vecs: usize,
    inf: f32,
    #[comptime] cfg: SoftmaxConfig,
) {
    let step = CUBE_DIM_X as usize;
    let first = UNIT_POS_X as usize;
    let neg_inf = -inf;
    let mut cache = Array::<Vector<F, N>>::new(cfg.cached);
    let mut m = neg_inf;
    if valid {
        // Unconditional loads at `min(i, row_vecs − 1)`, so a unit's loads are all in flight
        // before the first is used (behind a bounds test per vector NVRTC serialized them); a
        // clamped copy repeats an element of the row, which leaves the maximum unchanged, and
        // the later passes skip it.
        #[unroll]
        for c in 0..cfg.cached {
            let v = input[base + usize::min(first + c * step, row_vecs - 1)];
            cache[c] = v;
            #[unroll]
            for k in 0..N::value() {
                m = Max::combine(m, f32::cast_from(v[k]));
            }
        }
    }
    let row_max = group_reduce::<Max>(m, inf, cfg.group);
    // exp(x − max) per element, kept (in f32) for the write; −inf elements give 0.
    let mut e = Array::<Vector<f32, N>>::new(cfg.cached);
    let mut s = 0.0f32;
    if valid {
        #[unroll]
        for c in 0..cfg.cached {
            let i = first + c * step;
            if i < row_vecs {
                let v = cache[c];
                let mut ev = Vector::<f32, N>::empty();
                #[unroll]
                for k in 0..N::value() {
                    let x = f32::exp(f32::cast_from(v[k]) - row_max);
                    ev[k] = x;
                    s += x;
                }
                e[c] = ev;
            }
        }
    }
    let row_sum = group_reduce::<Sum>(s, inf, cfg.group);
    if valid {
        let inv = 1.0 / row_sum;
        let log_sum = f32::ln(row_sum);
        // A NaN row, or a row of all −inf (max −inf: no finite reference point), is NaN.
        let dead = row_max.is_nan() || row_max == neg_inf;
        // A quiet NaN from +inf's bits (a runtime value: CUDA cannot reinterpret a literal,
        // and lavapipe folds `inf − inf` to 0).
        let qnan = f32::reinterpret(u32::reinterpret(inf) | 0x0040_0000u32);
        let nan = select(row_max.is_nan(), row_max, qnan);
        #[unroll]
        for c in 0..cfg.cached {
            let i = first + c * step;
            if i < row_vecs {
                let mut y = Vector::<F, N>::empty();
                #[unroll]
                for k in 0..N::value() {
                    let mut r = 0.0f32;
                    if comptime!(cfg.log) {
                        r = f32::cast_from(cache[c][k]) - row_max - log_sum;
                    } else {
                        r = e[c][k] * inv;
                    }
                    y[k] = F::cast_from(select(dead, nan, r));
                }
                output[out_base + i] = y;
            }
        }
    }
}

/// A row too long for registers: an online (max, Σexp) pass, then a second read that writes.
#[cube]
#[allow(clippy::too_many_arguments)]
fn softmax_row_streamed<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    valid: bool,
    base: usize,
    out_base: usize,
    row_vecs: usize,
    inf: f32,
    #[comptime] cfg: SoftmaxConfig,
) {
    let step = CUBE_DIM_X as usize;
    let first = UNIT_POS_X as usize;
    let neg_inf = -inf;
    let mut m = neg_inf;
    let mut s = 0.0f32;
    if valid {
        let mut i = first;
        while i < row_vecs {
            let next = online_update::<F, N>(Online { m, s }, input[base + i], neg_inf);
            m = next.m;
            s = next.s;
            i += step;
        }
    }
    let row_max = group_reduce::<Max>(m, inf, cfg.group);
    let local = select(s == 0.0, 0.0, s * f32::exp(m - row_max));
    let row_sum = group_reduce::<Sum>(local, inf, cfg.group);
    if valid {
        let inv = 1.0 / row_sum;
        let log_sum = f32::ln(row_sum);
        let mut i = first;
        while i < row_vecs {
            output[out_base + i] =
                softmax_vector::<F, N>(input[base + i], row_max, inv, log_sum, cfg.log);
            i += step;
        }
    }
}
