//! The CUDA-core product fed by `cp.async`: A and B tiles go global → shared as 16-byte
//! copies into `stages` stages on mbarriers (no register staging, no transposing stores, one
//! cube barrier per tile). A stays row-major in shared memory (`[bm][bk + 4]`); each unit reads
//! 4 depths of one row per 16-byte read and takes them apart in registers, so the reads per FMA
//! match the transposed layout of [`super::matmul_simt_kernel`].

use super::common::{Place, commit_arrive, cube_block, stage_barriers, store4, wait_stage, zeroed};
use super::simt::{SimtConfig, simt_unit};
use crate::activation::Activation;
use cubecl::prelude::barrier::copy_async_checked;
use cubecl::prelude::*;

/// Issues this unit's copies of the tiles at depth `k0` into shared stage `stage`: A as
/// `[bm][bk + 4]`, B as `[bk][bn]`, 4-wide vectors, zero-filled outside the problem.
#[cube]
#[allow(clippy::too_many_arguments)]
fn issue_simt<F: Float, NV: Size>(
    a: &Array<Vector<F, NV>>,
    b: &Array<Vector<F, NV>>,
    a_s: &mut SharedMemory<Vector<F, NV>>,
    b_s: &mut SharedMemory<Vector<F, NV>>,
    o: &Place,
    k0: usize,
    stage: usize,
    #[comptime] cfg: SimtConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let a_row = comptime!(cfg.bk / 4 + 1);
    let bn4 = comptime!(cfg.bn / 4);
    let per_a = comptime!(cfg.bk / 4);
    let a_off = stage * comptime!(cfg.bm * (cfg.bk / 4 + 1));
    let b_off = stage * comptime!(cfg.bk * cfg.bn / 4);
    #[unroll]
    for l in 0..comptime!(cfg.bm * cfg.bk / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        let (lr, lk) = (s / per_a, s % per_a);
        let r = o.row0 + lr;
        let kk = k0 + lk * 4;
        let inside = r < o.m && kk < o.k;
        let src = select(inside, (o.a_base + r * o.a_sr + kk) / 4, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = a_off + lr * a_row + lk;
        copy_async_checked(
            &a.slice(src, src + len),
            &mut a_s.slice_mut(dst, dst + 1),
            4u32,
        );
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bn / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        let (lk, lc) = (s / bn4, s % bn4);
        let kk = k0 + lk;
        let col = o.col0 + lc * 4;
        let inside = kk < o.k && col < o.n;
        let src = select(inside, (o.b_base + kk * o.b_sr + col) / 4, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = b_off + lk * bn4 + lc;
        copy_async_checked(
            &b.slice(src, src + len),
            &mut b_s.slice_mut(dst, dst + 1),
            4u32,
        );
    }
}

/// `acc += A_stage · B_stage` for this unit's `tm × tn` registers: per 4 depths, `tm` 16-byte
/// reads of A (one per row: its 4 depths) and `4 · tn/4` of B, `4 · tm · tn` FMAs.
#[cube]
#[allow(clippy::too_many_arguments)]
fn multiply_rows<F: Float, NV: Size>(
    a_s: &SharedMemory<Vector<F, NV>>,
    b_s: &SharedMemory<Vector<F, NV>>,
    acc: &mut Array<f32>,
    stage: usize,
    tx: usize,
    ty: usize,
    #[comptime] cfg: SimtConfig,
) {
    let uy = comptime!(cfg.bm / cfg.tm);
    let a_row = comptime!(cfg.bk / 4 + 1);
    let bn4 = comptime!(cfg.bn / 4);
    let gb = comptime!(cfg.tn / 4);
    let a_off = stage * comptime!(cfg.bm * (cfg.bk / 4 + 1)) + ty * a_row;
    let b_off = stage * comptime!(cfg.bk * cfg.bn / 4) + tx;
    let mut fa = Array::<Vector<F, NV>>::new(cfg.tm);
    let mut fb = Array::<Vector<F, NV>>::new(gb);
    #[unroll]
    for kq in 0..comptime!(cfg.bk / 4) {
        #[unroll]
        for i in 0..cfg.tm {
            fa[i] = a_s[a_off + i * comptime!(uy * a_row) + kq];
        }
        #[unroll]
        for kk in 0..4usize {
            #[unroll]
            for h in 0..gb {
                fb[h] = b_s[b_off + (kq * 4 + kk) * bn4 + h * comptime!(bn4 / gb)];
            }
            #[unroll]
            for i in 0..cfg.tm {
                let x = f32::cast_from(fa[i][kk]);
                #[unroll]
                for h in 0..gb {
                    #[unroll]
                    for j in 0..4usize {
                        let idx = i * cfg.tn + h * 4 + j;
                        acc[idx] += x * f32::cast_from(fb[h][j]);
                    }
                }
            }
        }
    }
}

/// CUDA-core product with a `cp.async` pipeline (CUDA, sm ≥ 80): `stages` shared stages, each
/// on its own mbarrier, one cube barrier per tile, as [`fn@super::matmul_tc_async_kernel`].
/// Unit `(tx, ty)` owns rows `ty + (bm/tm)·i` (`i < tm`: the units of a plane read 4
/// consecutive rows, distinct banks with the one-vector row padding) and columns in `tn/4`
/// groups of 4, `bn/(tn/4)` apart.
/// `CUBE_DIM = ((bm/tm)·(bn/tn), 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Preconditions: as [`SimtConfig`] with `bk` a multiple of 4 and `2 ≤ stages ≤ 4`; `NV = 4`:
/// A and B rows contiguous, `k`, `n`, the row and batch strides multiples of 4, buffers
/// 16-byte aligned; `NC = 4` exactly when `cfg.c_vec`; every addressed element in bounds; the
/// device has `copy_async`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_simt_async_kernel<F: Float, NV: Size, NC: Size, A: Activation>(
    a: &Array<Vector<F, NV>>,
    b: &Array<Vector<F, NV>>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] cfg: SimtConfig,
) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    let stages = cfg.stages;
    let mut a_s =
        SharedMemory::<Vector<F, NV>>::new(comptime!(cfg.stages * cfg.bm * (cfg.bk / 4 + 1)));
    let mut b_s = SharedMemory::<Vector<F, NV>>::new(comptime!(cfg.stages * cfg.bk * cfg.bn / 4));
    let bars = stage_barriers(stages);
    let mut acc = zeroed(comptime!(cfg.tm * cfg.tn));
    let block = cube_block(cfg.group);
    let o = Place::new(&a_strides, &b_strides, m, n, k, block, cfg.bm, cfg.bn);
    let (tx, ty) = simt_unit(ux, uy);
    let tiles = k.div_ceil(cfg.bk);

    #[unroll]
    for s in 0..comptime!(stages - 1) {
        if s < tiles {
            issue_simt::<F, NV>(a, b, &mut a_s, &mut b_s, &o, s * cfg.bk, s, cfg);
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
            issue_simt::<F, NV>(a, b, &mut a_s, &mut b_s, &o, next * cfg.bk, next_stage, cfg);
        }
        commit_arrive(&bars, next_stage, stages);
        multiply_rows::<F, NV>(&a_s, &b_s, &mut acc, stage, tx, ty, cfg);
    }

    let gb = comptime!(cfg.tn / 4);
    #[unroll]
    for i in 0..cfg.tm {
        let r = o.row0 + ty + i * uy;
        let row_start = (o.z * m + r) * c_pitch;
        #[unroll]
        for h in 0..gb {
            let col = o.col0 + h * comptime!(cfg.bn / gb) + tx * 4;
            let at = i * cfg.tn + h * 4;
            store4::<F, NC, A, Array<f32>>(
                c, &acc, at, r, col, row_start, m, n, bias, scale, cfg.c_vec, cfg.bias,
            );
        }
    }
}
