//! The tensor-core product with a `cp.async` pipeline: operands go from global to shared memory
//! without passing through registers, `stages` tiles in flight, one cube barrier per tile; the
//! epilogue goes out one fragment at a time through a per-plane scratch tile (so shared memory
//! holds the pipeline, not a block of f32 outputs).

use super::common::{
    Place, commit_arrive, cube_block, stage_barriers, wait_stage, zero_accumulators,
};
use super::tc::{TcConfig, multiply_tc, plane_epilogue};
use crate::activation::Activation;
use cubecl::prelude::barrier::copy_async_checked;
use cubecl::prelude::*;

/// Issues this unit's async copies of the A and B tiles at depth `k0` into shared stage
/// `stage` (same layouts as the register-staged kernel: A `[bm][bk + vec]`, B `[bk][bn + vec]`
/// in `vec`-wide vectors). Each copy is one 16-byte vector, zero-filled when it lies outside the problem (its source
/// then points at the operand's first vector and reads nothing).
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn issue_tiles<F: Float, NA: Size, NB: Size, NV: Size>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    a_s: &mut SharedMemory<Vector<F, NV>>,
    b_s: &mut SharedMemory<Vector<F, NV>>,
    p: &Place,
    k0: usize,
    stage: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let v = cfg.vec;
    let a_row = comptime!((cfg.bk + v) / v);
    let b_row = comptime!((bn + v) / v);
    let a_off = stage * comptime!(bm * (cfg.bk + v) / v);
    let b_off = stage * comptime!(cfg.bk * (bn + v) / v);
    let per_a = comptime!(cfg.bk / v);
    let per_b = comptime!(bn / v);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / v / units) {
        let s = UNIT_POS as usize + l * units;
        let (lr, lk) = (s / per_a, s % per_a);
        let r = p.row0 + lr;
        let kk = k0 + lk * v;
        let inside = r < p.m && kk < p.k;
        let src = select(inside, (p.a_base + r * p.a_sr + kk) / v, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = a_off + lr * a_row + lk;
        copy_async_checked(
            &a.slice(src, src + len),
            &mut a_s.slice_mut(dst, dst + 1).downcast(),
            comptime!(v as u32),
        );
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / v / units) {
        let s = UNIT_POS as usize + l * units;
        let (lk, lc) = (s / per_b, s % per_b);
        let kk = k0 + lk;
        let col = p.col0 + lc * v;
        let inside = kk < p.k && col < p.n;
        let src = select(inside, (p.b_base + kk * p.b_sr + col) / v, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = b_off + lk * b_row + lc;
        copy_async_checked(
            &b.slice(src, src + len),
            &mut b_s.slice_mut(dst, dst + 1).downcast(),
            comptime!(v as u32),
        );
    }
}

/// Tensor-core product (cubecl `cmma`: WMMA on CUDA), f16/bf16 inputs, f32 accumulation, with
/// `stages` shared stages filled by `cp.async` (CUDA, sm ≥ 80).
/// `CUBE_DIM = (plane · warps_m · warps_n, 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Pipeline: tiles `0 … stages−2` are in flight before the loop; iteration `t` waits for tile
/// `t` (its stage's barrier, phase `⌊t/stages⌋ mod 2`), syncs the cube (so the stage read in
/// iteration `t − 1` is free), issues tile `t + stages − 1` into that stage and multiplies tile
/// `t`. Every unit arrives on every stage's barrier once per use, copies or not, so the phases
/// stay in step. Epilogue: each plane stores one accumulator fragment at a time into its own
/// 16 × 16 f32 scratch tile, then its 32 units apply bias and activation and write 4 columns
/// each (4-wide stores when `NC = 4`), masked at the edges.
///
/// Preconditions: as [`TcConfig`], with `NA = NB = 8` (A and B rows contiguous, `k`, `n`, the
/// row and batch strides multiples of 8, buffers 16-byte aligned); `2 ≤ stages ≤ 4`; every
/// addressed element in bounds; the device has 16×16×16 cmma for `F` with f32 accumulators,
/// planes of 32 and `copy_async`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_tc_async_kernel<F: Float, FT: Float, NA: Size, NB: Size, NC: Size, A: Activation>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] cfg: TcConfig,
    #[comptime] stages: usize,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let mut a_s =
        SharedMemory::<Vector<F, NA>>::new(comptime!(stages * bm * (cfg.bk + cfg.vec) / cfg.vec));
    let mut b_s =
        SharedMemory::<Vector<F, NA>>::new(comptime!(stages * cfg.bk * (bn + cfg.vec) / cfg.vec));
    let bars = stage_barriers(stages);
    let block = cube_block(1usize);
    let p = Place::new(&a_strides, &b_strides, m, n, k, block, bm, bn);
    let plane_id = UNIT_POS as usize / cfg.plane;
    let wm = plane_id / cfg.warps_n;
    let wn = plane_id % cfg.warps_n;
    let acc = zero_accumulators(comptime!(cfg.frags_m * cfg.frags_n), cfg.kf);
    let tiles = k.div_ceil(cfg.bk);

    #[unroll]
    for s in 0..comptime!(stages - 1) {
        if s < tiles {
            issue_tiles::<F, NA, NB, NA>(a, b, &mut a_s, &mut b_s, &p, s * cfg.bk, s, cfg);
        }
        commit_arrive(&bars, s, stages);
    }
    for t in 0..tiles {
        let stage = t % stages;
        wait_stage(&bars, stage, ((t / stages) % 2) as u32, stages);
        sync_cube();
        let next = t + comptime!(stages - 1);
        let next_stage = next % stages;
        if next < tiles {
            issue_tiles::<F, NA, NB, NA>(
                a,
                b,
                &mut a_s,
                &mut b_s,
                &p,
                next * cfg.bk,
                next_stage,
                cfg,
            );
        }
        commit_arrive(&bars, next_stage, stages);
        multiply_tc::<F, FT, NA>(&a_s, &b_s, &acc, stage, wm, wn, cfg);
    }

    // Plane barriers: this kernel runs on CUDA only (`cp.async`), where they order memory.
    plane_epilogue::<F, NC, A>(c, &acc, &p, bias, m, n, c_pitch, scale, wm, wn, cfg, false);
}
