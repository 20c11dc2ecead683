//! The `cp.async` tensor-core pipeline of [`super::tc_async`] with hand-placed fragments: cubecl's
//! manual MMA (`mma.sync.m16n8k16`, f32 accumulators in registers) fed by `ldmatrix` from the
//! padded shared tiles, for f16 and bf16 alike. cubecl's WMMA path loads bf16 fragments with plain
//! shared loads (f16 ones with `ldmatrix`); here both dtypes take the same instructions, and the
//! epilogue writes straight from the accumulator registers (no shared scratch tile).

use super::epilogue;
use super::tc::{PAD, Place, TcConfig};
use super::tc_async::{commit_arrive, issue_tiles, wait_stage};
use crate::activation::Activation;
use cubecl::prelude::barrier::Barrier;
use cubecl::prelude::*;

/// One tile's products for this plane: per 16-deep step, `ldmatrix.x4` of each 16 × 16 block of
/// A (row-major), `ldmatrix.x4.trans` of each 16 × 16 block of B (row-major `k × n`: two
/// 16 × 8 fragments), then `frags_m × 2·frags_n` `mma.sync.m16n8k16` into `acc`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn multiply_mma<F: Float, NA: Size, NB: Size, NC: Size>(
    def: &cmma::MmaDefinition<F, F, f32>,
    a_s: &SharedMemory<Vector<F, Const<8>>>,
    b_s: &SharedMemory<Vector<F, Const<8>>>,
    acc: &mut Sequence<Array<Vector<f32, NC>>>,
    stage: usize,
    wm: usize,
    wn: usize,
    lane: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    // Row strides in 8-wide vectors; each lane addresses one 16-byte row of an 8 × 8 matrix:
    // lanes 0–15 rows 0–15 of the block's first 8 columns, lanes 16–31 the next 8.
    let a_row = comptime!((cfg.bk + PAD) / 8);
    let b_row = comptime!((bn + PAD) / 8);
    let half = lane / 16;
    let a_off = stage * comptime!(bm * (cfg.bk + PAD) / 8)
        + (wm * comptime!(16 * cfg.frags_m) + lane % 16) * a_row
        + half;
    let b_off = stage * comptime!(cfg.bk * (bn + PAD) / 8)
        + (lane % 16) * b_row
        + wn * comptime!(2 * cfg.frags_n)
        + half;
    #[unroll]
    for ks in 0..comptime!(cfg.bk / 16) {
        let mut fa = Sequence::<Array<Vector<F, NA>>>::new();
        #[unroll]
        for i in 0..cfg.frags_m {
            let s = a_off + i * comptime!(16 * a_row) + ks * 2;
            fa.push(def.load_matrix::<Vector<F, Const<8>>, NA>(
                &a_s.slice(s, s + 1),
                cmma::MatrixIdent::A,
                4usize,
                false,
            ));
        }
        let mut fb = Sequence::<Array<Vector<F, NB>>>::new();
        #[unroll]
        for j in 0..cfg.frags_n {
            let s = b_off + ks * comptime!(16 * b_row) + j * 2;
            let r = def.load_matrix::<Vector<F, Const<8>>, NB>(
                &b_s.slice(s, s + 1),
                cmma::MatrixIdent::B,
                4usize,
                true,
            );
            let mut lo = Array::<Vector<F, NB>>::new(2usize);
            let mut hi = Array::<Vector<F, NB>>::new(2usize);
            lo[0] = r[0];
            lo[1] = r[1];
            hi[0] = r[2];
            hi[1] = r[3];
            fb.push(lo);
            fb.push(hi);
        }
        #[unroll]
        for i in 0..cfg.frags_m {
            #[unroll]
            for j in 0..comptime!(2 * cfg.frags_n) {
                def.execute_inplace(
                    fa.index(i),
                    fb.index(j),
                    acc.index_mut(i * comptime!(2 * cfg.frags_n) + j),
                );
            }
        }
    }
}

/// Tensor-core product through manual MMA (`mma.sync.aligned.m16n8k16`, f16/bf16 inputs, f32
/// accumulators), `stages` shared stages filled by `cp.async` exactly as
/// [`fn@super::matmul_tc_async_kernel`] (same tiles, barriers and phases); fragments come from
/// shared memory by `ldmatrix`. Each plane holds its `16·frags_m × 16·frags_n` outputs as
/// `frags_m × 2·frags_n` m16n8 accumulators and writes them from registers: bias, activation,
/// masked scalar stores (`NC = 1`).
/// `CUBE_DIM = (32 · warps_m · warps_n, 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Preconditions: as [`fn@super::matmul_tc_async_kernel`] with `NC = 1`, and the device has
/// manual MMA m16n8k16 for `F` with f32 accumulators (CUDA sm ≥ 80).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_tc_mma_kernel<F: Float, NA: Size, NB: Size, NC: Size, A: Activation>(
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
        SharedMemory::<Vector<F, Const<8>>>::new(comptime!(stages * bm * (cfg.bk + PAD) / 8));
    let mut b_s =
        SharedMemory::<Vector<F, Const<8>>>::new(comptime!(stages * cfg.bk * (bn + PAD) / 8));
    let mut bars = Sequence::<Shared<Barrier>>::new();
    #[unroll]
    for _ in 0..stages {
        bars.push(Barrier::shared(CUBE_DIM, UNIT_POS == 0));
    }
    let z = CUBE_POS_Z as usize;
    let p = Place {
        a_base: z * a_strides[0],
        b_base: z * b_strides[0],
        row0: CUBE_POS_Y as usize * bm,
        col0: CUBE_POS_X as usize * bn,
        m,
        n,
        k,
        a_sr: a_strides[1],
        a_sc: a_strides[2],
        b_sr: b_strides[1],
        b_sc: b_strides[2],
    };
    let plane_id = UNIT_POS as usize / cfg.plane;
    let lane = UNIT_POS as usize % cfg.plane;
    let wm = plane_id / cfg.warps_n;
    let wn = plane_id % cfg.warps_n;

    let def = cmma::MmaDefinition::<F, F, f32>::new(16usize, 8usize, 16usize);
    let size!(NFA) = def.vector_size(cmma::MatrixIdent::A);
    let size!(NFB) = def.vector_size(cmma::MatrixIdent::B);
    let size!(NFC) = def.vector_size(cmma::MatrixIdent::Accumulator);
    let acc_vectors = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    let acc_width = def.vector_size(cmma::MatrixIdent::Accumulator);
    let mut acc = Sequence::<Array<Vector<f32, NFC>>>::new();
    #[unroll]
    for _ in 0..comptime!(cfg.frags_m * 2 * cfg.frags_n) {
        let mut t = Array::<Vector<f32, NFC>>::new(acc_vectors);
        #[unroll]
        for v in 0..acc_vectors {
            t[v] = Vector::<f32, NFC>::new(0.0);
        }
        acc.push(t);
    }
    let tiles = k.div_ceil(cfg.bk);

    #[unroll]
    for s in 0..comptime!(stages - 1) {
        if s < tiles {
            issue_tiles::<F, NA, NB>(a, b, &mut a_s, &mut b_s, &p, s * cfg.bk, s, cfg);
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
            issue_tiles::<F, NA, NB>(a, b, &mut a_s, &mut b_s, &p, next * cfg.bk, next_stage, cfg);
        }
        commit_arrive(&bars, next_stage, stages);
        multiply_mma::<F, NFA, NFB, NFC>(&def, &a_s, &b_s, &mut acc, stage, wm, wn, lane, cfg);
    }

    // Epilogue from the registers: element `e` of vector `v` of an m16n8 accumulator sits at
    // `position_of_nth(lane, v·width + e)` within its 16 × 8 tile.
    #[unroll]
    for i in 0..cfg.frags_m {
        #[unroll]
        for j in 0..comptime!(2 * cfg.frags_n) {
            let r0 = p.row0 + wm * comptime!(16 * cfg.frags_m) + i * 16;
            let c0 = p.col0 + wn * comptime!(16 * cfg.frags_n) + j * 8;
            let tile = acc.index(i * comptime!(2 * cfg.frags_n) + j);
            #[unroll]
            for v in 0..acc_vectors {
                let vals = tile[v];
                #[unroll]
                for e in 0..acc_width {
                    let (row, col) = def.position_of_nth(
                        lane as u32,
                        (v * acc_width + e) as u32,
                        cmma::MatrixIdent::Accumulator,
                    );
                    let r = r0 + row as usize;
                    let col = c0 + col as usize;
                    if r < m && col < n {
                        let y = epilogue::<F, A>(vals[e], bias, col, scale, cfg.bias);
                        c[(z * m + r) * c_pitch + col] = Vector::<F, NC>::new(y);
                    }
                }
            }
        }
    }
}
