//! RMSNorm and LayerNorm over contiguous rows, statistics in f32, optionally after a residual
//! add whose sum is written out too.
//!
//! | kernel | mapping | traffic |
//! |---|---|---|
//! | [`norm_rows_kernel()`] | a group of `CUBE_DIM_X` units per row (a plane for short rows, a whole cube for long ones), `CUBE_DIM_Y` rows per cube | rows that fit the units' registers: one read, one write; longer rows: a second read (mostly L2) |
//!
//! * RMSNorm: `y = x / √(mean(x²) + eps) · w`.
//! * LayerNorm: `y = (x − mean) / √(var + eps) · w + b`, `var = mean((x − mean)²)` (biased, as
//!   PyTorch's `layer_norm`).
//!
//! Sums of squares of f32 and bf16 rows accumulate `(x · 1/√n)²`, so a partial sum overflows f32
//! only where the mean square itself does (`NormConfig::scaled`); f16 rows cannot overflow it
//! and sum raw squares, one multiplication per element fewer. LayerNorm's sums are shifted by the
//! row's first element, so one combined reduction gives the mean and the variance (`mean((x −
//! p)²) − (mean − p)²`) without the cancellation of raw sums for rows whose mean is far from
//! zero, as long as their spread is not tiny next to their distance from that element.
//!
//! The kernel is lean per element because a half-precision row leaves about 32 instructions per
//! element at the copy's bandwidth on an H100/H200-class SM (4 schedulers, ~16 bytes per clock),
//! and conversions, sums and the affine map must fit in that.

use crate::reduce::{GroupConfig, ReduceOp, Sum, group_reduce, group_reduce_pair};
use cubecl::prelude::*;

/// Comptime configuration of [`norm_rows_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NormConfig {
    /// How units group per row and how they combine.
    pub group: GroupConfig,
    /// LayerNorm (subtract the mean) instead of RMSNorm.
    pub layer: bool,
    /// Multiply by `weight` (else by 1).
    pub weight: bool,
    /// Add `bias` (else 0).
    pub bias: bool,
    /// Normalize `input + residual` and write that sum to `sum`.
    pub residual: bool,
    /// Accumulate squares of `x · 1/√n` (storage types whose squares can overflow f32: f32,
    /// bf16); else of `x` and scale the sums once.
    pub scaled: bool,
    /// `0`: read the row twice. `c > 0`: each unit keeps its (at most `c`) vectors in registers
    /// between the passes; needs `row_vecs ≤ c · group`.
    pub cached: usize,
    /// Test every element with `is_nan` and select per element (drivers that may drop NaN from
    /// arithmetic: WGSL). Without, plain sums carry NaN and a dead row's scale is made NaN
    /// once; only for devices whose arithmetic keeps NaN (`Caps::ieee_nan`). The per-element
    /// tests and selects cost more ALU than the memory time of a half-precision row.
    pub nan_checks: bool,
}

/// `Σ` that keeps NaN: either operand's NaN wins, tested with `is_nan` (WGSL lets drivers
/// assume there is no NaN, and lavapipe drops it from plain sums).
pub struct SumNan;

#[cube]
impl ReduceOp for SumNan {
    fn identity(_inf: f32) -> f32 {
        f32::new(0.0)
    }
    fn combine(a: f32, b: f32) -> f32 {
        select(a.is_nan(), a, select(b.is_nan(), b, a + b))
    }
    fn finalize(acc: f32, _scale: f32) -> f32 {
        acc
    }
}

/// Scalars of one launch (the kernel's scalar arguments, bundled for its helpers).
#[derive(CubeType, Clone, Copy)]
pub struct NormArgs {
    /// Rows in the launch.
    pub rows: usize,
    /// Vectors per row.
    pub row_vecs: usize,
    /// Row pitches in vectors of `input`, `residual`, `sum` and `output`.
    pub in_pitch: usize,
    pub res_pitch: usize,
    pub sum_pitch: usize,
    pub out_pitch: usize,
    /// `1/√n` (squares are taken of `x · scale`).
    pub scale: f32,
    /// `1/n`.
    pub inv_n: f32,
    /// Added to the variance (mean square) before the square root.
    pub eps: f32,
    /// `+∞` (CUDA C has no literal for it).
    pub inf: f32,
}

/// Row RMSNorm (`cfg.layer == false`) or LayerNorm (`cfg.layer == true`), f32 statistics.
///
/// Row `r` starts at vector `r · pitch` of each array. `weight` and `bias` hold one row
/// (`row_vecs` vectors), read when `cfg.weight` / `cfg.bias`; `residual` and `sum` are read and
/// written only with `cfg.residual` (otherwise any arrays stand in). With a residual the row
/// normalized is `input + residual` rounded to `F`, the value written to `sum`.
///
/// Edge semantics (the f64 reference's): a NaN anywhere in a row makes the row NaN. RMSNorm of a
/// row with ±∞ (or a mean square beyond f32) gives NaN at the infinite entries and `0 · w`
/// elsewhere; LayerNorm of a row with ±∞ is NaN throughout (its mean is not finite).
///
/// Preconditions: `row_vecs ≥ 1`; each array holds `(rows − 1) · pitch + row_vecs` vectors (`weight`, `bias`:
/// `row_vecs`); `cfg.group` as in [`GroupConfig`]; with `cfg.cached = c > 0`,
/// `row_vecs ≤ c · cfg.group.group`; `pitches` = the row pitches (vectors) of `input`,
/// `residual`, `sum`, `output`; `scale = 1/√n`, `inv_n = 1/n` for rows of `n` elements;
/// `inf = +∞`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn norm_rows_kernel<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    weight: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    sum: &mut Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    rows: usize,
    row_vecs: usize,
    pitches: Sequence<usize>,
    scale: f32,
    inv_n: f32,
    eps: f32,
    inf: f32,
    #[comptime] cfg: NormConfig,
) {
    let args = NormArgs {
        rows,
        row_vecs,
        in_pitch: pitches[0],
        res_pitch: pitches[1],
        sum_pitch: pitches[2],
        out_pitch: pitches[3],
        scale,
        inv_n,
        eps,
        inf,
    };
    let row = CUBE_POS * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let valid = row < args.rows;
    if comptime!(cfg.cached > 0) {
        norm_row_cached::<F, N>(
            input, residual, weight, bias, sum, output, valid, row, args, cfg,
        );
    } else {
        norm_row_streamed::<F, N>(
            input, residual, weight, bias, sum, output, valid, row, args, cfg,
        );
    }
}

/// Vectors of a streamed row each unit loads before it sums them (loads in flight per unit).
const STREAM_BATCH: usize = 4;

/// Vector `i` of the row being normalized (`input`, or `input + residual` rounded to `F`),
/// read at `min(i, row_vecs − 1)`: the load is unconditional, so a unit's loads of one batch
/// are all issued before the first is used. Behind a bounds test per vector, NVRTC issued each
/// load only after the previous vector's sums (offline SASS: one `LDG` per branch region), so
/// a unit waited for its DRAM round trips one after another. [`fold_vector`] masks the
/// out-of-row copies.
#[cube]
fn load_clamped<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    row: usize,
    i: usize,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> Vector<F, N> {
    let j = usize::min(i, args.row_vecs - 1);
    let mut v = input[row * args.in_pitch + j];
    if comptime!(cfg.residual) {
        v += residual[row * args.res_pitch + j];
    }
    v
}

/// Folds vector `i` (loaded by [`load_clamped`]) into this unit's sums `(a, q)` (see
/// [`accumulate`]) and, with a residual, writes it to `sum`; a vector past the row's end (a
/// clamped copy) changes nothing.
#[cube]
#[allow(clippy::too_many_arguments, clippy::collapsible_if)] // the outer `if` is comptime
fn fold_vector<F: Float, N: Size>(
    v: Vector<F, N>,
    sum: &mut Array<Vector<F, N>>,
    row: usize,
    i: usize,
    pivot: f32,
    a: f32,
    q: f32,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> (f32, f32) {
    let in_row = i < args.row_vecs;
    if comptime!(cfg.residual) {
        if in_row {
            sum[row * args.sum_pitch + i] = v;
        }
    }
    let (na, nq) = accumulate::<F, N>(v, pivot, a, q, args, cfg);
    (select(in_row, na, a), select(in_row, nq, q))
}

/// Loads `count` vectors of the row, `i0 + c · step` for `c < count`, into `values` (every load
/// first, see [`load_clamped`]), then folds them into `(a, q)` with [`fold_vector`].
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_fold<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    sum: &mut Array<Vector<F, N>>,
    values: &mut Array<Vector<F, N>>,
    row: usize,
    i0: usize,
    step: usize,
    pivot: f32,
    a: f32,
    q: f32,
    args: NormArgs,
    #[comptime] count: usize,
    #[comptime] cfg: NormConfig,
) -> (f32, f32) {
    #[unroll]
    for c in 0..count {
        values[c] = load_clamped::<F, N>(input, residual, row, i0 + c * step, args, cfg);
    }
    let mut a = a;
    let mut q = q;
    #[unroll]
    for c in 0..count {
        let (na, nq) =
            fold_vector::<F, N>(values[c], sum, row, i0 + c * step, pivot, a, q, args, cfg);
        a = na;
        q = nq;
    }
    (a, q)
}

/// `(x − mean) · inv · w + b` of one vector (RMSNorm: `mean = 0`); a dead row (NaN statistics)
/// gives `nan` throughout.
#[cube]
#[allow(clippy::too_many_arguments)]
fn normalize_vector<F: Float, N: Size>(
    v: Vector<F, N>,
    weight: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    i: usize,
    mean: f32,
    inv: f32,
    dead: bool,
    nan: f32,
    #[comptime] cfg: NormConfig,
) -> Vector<F, N> {
    let mut y = Vector::<F, N>::empty();
    let mut w = Vector::<F, N>::empty();
    let mut b = Vector::<F, N>::empty();
    if comptime!(cfg.weight) {
        w = weight[i];
    }
    if comptime!(cfg.bias) {
        b = bias[i];
    }
    // LayerNorm: `x·inv − mean·inv` in one FMA. Against `(x − mean)·inv` it adds at most an f32
    // rounding of `mean·inv`, which the norm tolerance's `|mean|·inv` term covers.
    let offset = -mean * inv;
    #[unroll]
    for k in 0..N::value() {
        let mut r = f32::cast_from(v[k]);
        if comptime!(cfg.layer) {
            r = fma(r, inv, offset);
        } else {
            r *= inv;
        }
        if comptime!(cfg.weight) {
            r *= f32::cast_from(w[k]);
        }
        if comptime!(cfg.bias) {
            r += f32::cast_from(b[k]);
        }
        if comptime!(cfg.nan_checks) {
            r = select(dead, nan, r);
        }
        y[k] = F::cast_from(r);
    }
    y
}

/// `1/√(stat + eps)`, and whether the row is dead (NaN statistics, or a LayerNorm mean that is
/// not finite) with the NaN to write then. Without `cfg.nan_checks` a dead row's scale is that
/// NaN, which the arithmetic then carries to every output.
#[cube]
fn row_scale(
    mean: f32,
    stat: f32,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> (f32, bool, f32) {
    let mut inv = 1.0 / f32::sqrt(stat + args.eps);
    let mut dead = stat.is_nan();
    let mut nan = stat;
    if comptime!(cfg.layer) {
        dead = dead || mean.is_nan() || mean.is_inf();
        // A quiet NaN whatever the mean was (∞ − ∞ is folded to 0 by some drivers, so it is
        // made from the bits of +∞ rather than by arithmetic).
        let qnan = f32::reinterpret(u32::reinterpret(args.inf) | 0x0040_0000u32);
        nan = select(stat.is_nan(), stat, select(mean.is_nan(), mean, qnan));
    }
    if comptime!(!cfg.nan_checks) {
        inv = select(dead, nan, inv);
    }
    (inv, dead, nan)
}

/// The row's pivot for LayerNorm's shifted sums: its first element (the value normalized, so
/// `input + residual` with a residual), the same for every unit; 0 for RMSNorm. With a
/// residual the cube syncs after reading it, since `sum` may alias `input` or `residual` and
/// unit 0 rewrites element 0 in the first pass.
#[cube]
fn row_pivot<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    valid: bool,
    row: usize,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> f32 {
    let mut pivot = 0.0f32;
    if comptime!(cfg.layer) {
        if valid {
            let v0 = load_clamped::<F, N>(input, residual, row, 0, args, cfg);
            pivot = f32::cast_from(v0[0]);
        }
        if comptime!(cfg.residual) {
            sync_cube();
        }
    }
    pivot
}

/// Folds one vector into this unit's sums: `q += d²` and (LayerNorm) `a += d·scale` with `d =
/// (x − pivot)·scale`, so that over the row `a = mean − pivot` and `q = mean((x − pivot)²)`;
/// without `cfg.scaled`, `d = x − pivot` and `a += d`, and [`finish_stats`] scales the sums.
/// NaN is kept through `is_nan` (see [`SumNan`]) with `cfg.nan_checks`, else by the
/// arithmetic.
///
/// Scaled LayerNorm takes `d = fma(x, scale, −pivot·scale)`, one instruction instead of two:
/// the rounding of `pivot·scale` shifts every `d` of the row by the same amount, which the
/// variance `q − a²` does not see, and moves the mean by about one f32 rounding of the pivot.
#[cube]
fn accumulate<F: Float, N: Size>(
    v: Vector<F, N>,
    pivot: f32,
    a: f32,
    q: f32,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> (f32, f32) {
    let mut a = a;
    let mut q = q;
    let shift = -pivot * args.scale;
    #[unroll]
    for k in 0..N::value() {
        let x = f32::cast_from(v[k]);
        let mut d = x;
        if comptime!(cfg.layer) {
            if comptime!(cfg.scaled) {
                d = fma(x, args.scale, shift);
                a = fold(a, d * args.scale, x, cfg.nan_checks);
            } else {
                d = x - pivot;
                a = fold(a, d, x, cfg.nan_checks);
            }
        } else if comptime!(cfg.scaled) {
            d = x * args.scale;
        }
        q = fold(q, d * d, x, cfg.nan_checks);
    }
    (a, q)
}

/// `acc + term`, the sum of element `x`'s term; with `nan_checks` a NaN `x` (or sum) is kept
/// through `is_nan` (see [`SumNan`]), else by the arithmetic.
#[cube]
#[allow(unused_assignments)] // `r` is set in exactly one comptime branch
fn fold(acc: f32, term: f32, x: f32, #[comptime] nan_checks: bool) -> f32 {
    let mut r = 0.0f32;
    if comptime!(nan_checks) {
        r = select(x.is_nan(), x, SumNan::combine(acc, term));
    } else {
        r = acc + term;
    }
    r
}

/// The group's sums combined into `(mean, stat)`: RMSNorm's mean square, or LayerNorm's mean and
/// variance `q − a²` (one combined reduction of both sums). Combined with `is_nan` tests
/// ([`SumNan`]) where the arithmetic may drop NaN (`cfg.nan_checks`), else plainly.
#[cube]
#[allow(unused_assignments)] // `mean`, `stat` are set in exactly one comptime branch
fn finish_stats(
    pivot: f32,
    a: f32,
    q: f32,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) -> (f32, f32) {
    let mut mean = 0.0f32;
    let mut stat = q;
    if comptime!(cfg.layer) {
        let mut shift = 0.0f32;
        let mut ms = 0.0f32;
        if comptime!(cfg.nan_checks) {
            (shift, ms) = group_reduce_pair::<SumNan>(a, q, args.inf, cfg.group);
        } else {
            (shift, ms) = group_reduce_pair::<Sum>(a, q, args.inf, cfg.group);
        }
        if comptime!(!cfg.scaled) {
            shift *= args.inv_n;
            ms *= args.inv_n;
        }
        mean = pivot + shift;
        // shift² ≤ the mean square, so only an infinite mean square can make it overflow;
        // the variance is then beyond f32 too.
        let var = select(ms.is_inf(), ms, f32::max(ms - shift * shift, 0.0));
        stat = select(shift.is_nan(), shift, var);
    } else {
        if comptime!(cfg.nan_checks) {
            stat = group_reduce::<SumNan>(q, args.inf, cfg.group);
        } else {
            stat = group_reduce::<Sum>(q, args.inf, cfg.group);
        }
        if comptime!(!cfg.scaled) {
            stat *= args.inv_n;
        }
    }
    (mean, stat)
}

/// A row held in registers: the sums from one read, one combined reduction, then the write
/// from the registers. One read, one write.
#[cube]
#[allow(clippy::too_many_arguments)]
fn norm_row_cached<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    weight: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    sum: &mut Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    valid: bool,
    row: usize,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) {
    let step = CUBE_DIM_X as usize;
    let first = UNIT_POS_X as usize;
    let pivot = row_pivot::<F, N>(input, residual, valid, row, args, cfg);
    let mut cache = Array::<Vector<F, N>>::new(cfg.cached);
    let mut a = 0.0f32;
    let mut q = 0.0f32;
    if valid {
        let (na, nq) = load_fold::<F, N>(
            input, residual, sum, &mut cache, row, first, step, pivot, a, q, args, cfg.cached, cfg,
        );
        a = na;
        q = nq;
    }
    let (mean, stat) = finish_stats(pivot, a, q, args, cfg);
    if valid {
        let (inv, dead, nan) = row_scale(mean, stat, args, cfg);
        #[unroll]
        for c in 0..cfg.cached {
            let i = first + c * step;
            if i < args.row_vecs {
                output[row * args.out_pitch + i] =
                    normalize_vector::<F, N>(cache[c], weight, bias, i, mean, inv, dead, nan, cfg);
            }
        }
    }
}

/// A row too long for registers: one pass of sums, then a second read that writes (from `sum`
/// with a residual, which this unit wrote itself in the first pass).
#[cube]
#[allow(clippy::too_many_arguments)]
fn norm_row_streamed<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    residual: &Array<Vector<F, N>>,
    weight: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    sum: &mut Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    valid: bool,
    row: usize,
    args: NormArgs,
    #[comptime] cfg: NormConfig,
) {
    let step = CUBE_DIM_X as usize;
    let first = UNIT_POS_X as usize;
    let pivot = row_pivot::<F, N>(input, residual, valid, row, args, cfg);
    let mut a = 0.0f32;
    let mut q = 0.0f32;
    if valid {
        // `STREAM_BATCH` loads in flight per unit, then their sums.
        let mut batch = Array::<Vector<F, N>>::new(STREAM_BATCH);
        let mut i = first;
        while i < args.row_vecs {
            let (na, nq) = load_fold::<F, N>(
                input,
                residual,
                sum,
                &mut batch,
                row,
                i,
                step,
                pivot,
                a,
                q,
                args,
                STREAM_BATCH,
                cfg,
            );
            a = na;
            q = nq;
            i += STREAM_BATCH * step;
        }
    }
    let (mean, stat) = finish_stats(pivot, a, q, args, cfg);
    if valid {
        let (inv, dead, nan) = row_scale(mean, stat, args, cfg);
        let mut batch = Array::<Vector<F, N>>::new(STREAM_BATCH);
        let mut i = first;
        while i < args.row_vecs {
            #[unroll]
            for b in 0..STREAM_BATCH {
                let j = usize::min(i + b * step, args.row_vecs - 1);
                if comptime!(cfg.residual) {
                    batch[b] = sum[row * args.sum_pitch + j];
                } else {
                    batch[b] = input[row * args.in_pitch + j];
                }
            }
            #[unroll]
            for b in 0..STREAM_BATCH {
                let j = i + b * step;
                if j < args.row_vecs {
                    output[row * args.out_pitch + j] = normalize_vector::<F, N>(
                        batch[b], weight, bias, j, mean, inv, dead, nan, cfg,
                    );
                }
            }
            i += STREAM_BATCH * step;
        }
    }
}
