//! The `cp.async` tensor-core pipeline of [`super::tc_async`] with hand-placed fragments: cubecl's
//! manual MMA (`mma.sync.m16n8k16`, f32 accumulators in registers) fed by `ldmatrix` from the
//! padded shared tiles, for f16 and bf16 alike. cubecl's WMMA path loads bf16 fragments with plain
//! shared loads (f16 ones with `ldmatrix`); here both dtypes take the same instructions, and the
//! epilogue writes straight from the accumulator registers (no shared scratch tile).

use super::common::{Place, commit_at, cube_block, mma_accumulators, stage_barriers, wait_stage};
use super::tc::{PAD, TcConfig};
use crate::activation::Activation;
use cubecl::prelude::barrier::copy_async_checked;
use cubecl::prelude::*;

/// This unit's share of every tile copy, worked out once: per A copy the element offset of its
/// 16-byte source at depth 0, whether its row is inside, its depth within the tile and its
/// destination (vectors, within a stage); per B copy likewise with its column's test and its
/// tile row. A tile at depth `k0` then costs a few integer operations per copy.
#[derive(CubeType)]
struct CopyPlan {
    a_src: Sequence<usize>,
    a_ok: Sequence<bool>,
    a_kk: Sequence<usize>,
    a_dst: Sequence<usize>,
    b_src: Sequence<usize>,
    b_ok: Sequence<bool>,
    b_kk: Sequence<usize>,
    b_dst: Sequence<usize>,
}

#[cube]
fn plan_copies(p: &Place, #[comptime] cfg: TcConfig) -> CopyPlan {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let a_row = comptime!((cfg.bk + PAD) / 8);
    let b_row = comptime!((bn + PAD) / 8);
    let per_a = comptime!(cfg.bk / 8);
    let per_b = comptime!(bn / 8);
    let mut plan = CopyPlan {
        a_src: Sequence::new(),
        a_ok: Sequence::new(),
        a_kk: Sequence::new(),
        a_dst: Sequence::new(),
        b_src: Sequence::new(),
        b_ok: Sequence::new(),
        b_kk: Sequence::new(),
        b_dst: Sequence::new(),
    };
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / 8 / units) {
        let s = UNIT_POS as usize + l * units;
        let (lr, lk) = (s / per_a, s % per_a);
        let r = p.row0 + lr;
        plan.a_src.push(p.a_base + r * p.a_sr + lk * 8);
        plan.a_ok.push(r < p.m);
        plan.a_kk.push(lk * 8);
        plan.a_dst.push(lr * a_row + lk);
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / 8 / units) {
        let s = UNIT_POS as usize + l * units;
        let (lk, lc) = (s / per_b, s % per_b);
        let col = p.col0 + lc * 8;
        plan.b_src.push(p.b_base + lk * p.b_sr + col);
        plan.b_ok.push(col < p.n);
        plan.b_kk.push(lk);
        plan.b_dst.push(lk * b_row + lc);
    }
    plan
}

/// Issues this unit's `cp.async` copies of the tiles at depth `k0` into shared stage `stage`
/// (comptime, so destinations are immediate offsets), each 16 bytes, zero-filled outside the
/// problem (depths past `k` included: tiles beyond the last are issued as zeros, never read).
#[cube]
#[allow(clippy::too_many_arguments)]
fn issue_planned<F: Float, NA: Size, NB: Size>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    a_s: &mut SharedMemory<Vector<F, Const<8>>>,
    b_s: &mut SharedMemory<Vector<F, Const<8>>>,
    plan: &CopyPlan,
    k0: usize,
    k: usize,
    b_sr: usize,
    #[comptime] stage: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let a_off = comptime!(stage * bm * (cfg.bk + PAD) / 8);
    let b_off = comptime!(stage * cfg.bk * (bn + PAD) / 8);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / 8 / units) {
        let inside = *plan.a_ok.index(l) && k0 + *plan.a_kk.index(l) < k;
        let src = select(inside, (*plan.a_src.index(l) + k0) / 8, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = a_off + *plan.a_dst.index(l);
        copy_async_checked(
            &a.slice(src, src + len),
            &mut a_s.slice_mut(dst, dst + 1).downcast(),
            8u32,
        );
    }
    let b_k0 = k0 * b_sr;
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / 8 / units) {
        let inside = *plan.b_ok.index(l) && k0 + *plan.b_kk.index(l) < k;
        let src = select(inside, (*plan.b_src.index(l) + b_k0) / 8, 0usize);
        let len = select(inside, 1usize, 0usize);
        let dst = b_off + *plan.b_dst.index(l);
        copy_async_checked(
            &b.slice(src, src + len),
            &mut b_s.slice_mut(dst, dst + 1).downcast(),
            8u32,
        );
    }
}

/// This plane's fragments of the 16-deep step `ks` of shared stage `stage`, written into
/// `fa` (`frags_m` A fragments: `ldmatrix.x4` of each 16 × 16 block, row-major) and `fb`
/// (`2·frags_n` B fragments: `ldmatrix.x4.trans` of each 16 × 16 block of the row-major
/// `k × n` tile, split into its two 16 × 8 halves).
#[cube]
#[allow(clippy::too_many_arguments)]
fn load_frags<F: Float, NA: Size, NB: Size>(
    def: &cmma::MmaDefinition<F, F, f32>,
    a_s: &SharedMemory<Vector<F, Const<8>>>,
    b_s: &SharedMemory<Vector<F, Const<8>>>,
    fa: &mut Sequence<Array<Vector<F, NA>>>,
    fb: &mut Sequence<Array<Vector<F, NB>>>,
    stage: usize,
    #[comptime] ks: usize,
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
        + half
        + comptime!(ks * 2);
    let b_off = stage * comptime!(cfg.bk * (bn + PAD) / 8)
        + (lane % 16) * b_row
        + wn * comptime!(2 * cfg.frags_n)
        + half
        + comptime!(ks * 16 * b_row);
    let va = def.vectors_per_lane(cmma::MatrixIdent::A);
    #[unroll]
    for i in 0..cfg.frags_m {
        let s = a_off + i * comptime!(16 * a_row);
        let r = def.load_matrix::<Vector<F, Const<8>>, NA>(
            &a_s.slice(s, s + 1),
            cmma::MatrixIdent::A,
            4usize,
            false,
        );
        let dst = fa.index_mut(i);
        #[unroll]
        for v in 0..va {
            dst[v] = r[v];
        }
    }
    #[unroll]
    for j in 0..cfg.frags_n {
        let s = b_off + j * 2;
        let r = def.load_matrix::<Vector<F, Const<8>>, NB>(
            &b_s.slice(s, s + 1),
            cmma::MatrixIdent::B,
            4usize,
            true,
        );
        let lo = fb.index_mut(2 * j);
        lo[0] = r[0];
        lo[1] = r[1];
        let hi = fb.index_mut(2 * j + 1);
        hi[0] = r[2];
        hi[1] = r[3];
    }
}

/// `frags_m × 2·frags_n` `mma.sync.m16n8k16` of one 16-deep step into `acc`.
#[cube]
fn mma_step<F: Float, NA: Size, NB: Size, NC: Size>(
    def: &cmma::MmaDefinition<F, F, f32>,
    fa: &Sequence<Array<Vector<F, NA>>>,
    fb: &Sequence<Array<Vector<F, NB>>>,
    acc: &mut Sequence<Array<Vector<f32, NC>>>,
    #[comptime] cfg: TcConfig,
) {
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

/// Two register sets of fragments (`frags_m` A and `2·frags_n` B), so the loads of one 16-deep
/// step overlap the products of the one before.
#[cube]
#[allow(clippy::type_complexity)]
fn frag_buffers<F: Float, NA: Size, NB: Size>(
    def: &cmma::MmaDefinition<F, F, f32>,
    #[comptime] cfg: TcConfig,
) -> (
    Sequence<Array<Vector<F, NA>>>,
    Sequence<Array<Vector<F, NB>>>,
) {
    let va = def.vectors_per_lane(cmma::MatrixIdent::A);
    let vb = def.vectors_per_lane(cmma::MatrixIdent::B);
    let mut fa = Sequence::<Array<Vector<F, NA>>>::new();
    #[unroll]
    for _ in 0..cfg.frags_m {
        fa.push(Array::<Vector<F, NA>>::new(va));
    }
    let mut fb = Sequence::<Array<Vector<F, NB>>>::new();
    #[unroll]
    for _ in 0..comptime!(2 * cfg.frags_n) {
        fb.push(Array::<Vector<F, NB>>::new(vb));
    }
    (fa, fb)
}

/// Tensor-core product through manual MMA (`mma.sync.aligned.m16n8k16`, f16/bf16 inputs, f32
/// accumulators) fed by a `cp.async` pipeline of `stages` shared stages, one mbarrier each (the
/// layouts and zero fills of [`fn@super::matmul_tc_async_kernel`]; here the tiles run in
/// unrolled groups of `stages`, see the loop). Fragments come from shared memory by `ldmatrix`,
/// double-buffered in registers across 16-deep steps. Each plane holds its
/// `16·frags_m × 16·frags_n` outputs as `frags_m × 2·frags_n` m16n8 accumulators and writes
/// them from registers: bias, activation, masked stores of column pairs (`NC = 2` with
/// `cfg.c_vec`) or scalars (`NC = 1`).
/// `CUBE_DIM = (32 · warps_m · warps_n, 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)` (visited in strips
/// of `cfg.group` block-rows when `cfg.group > 1`).
///
/// With `cfg.split` the depth is cut into `chunks` chunks of `chunk_k` (a multiple of 8)
/// rows: cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch · chunks)`, cube z = `batch_index · chunks + chunk`
/// multiplies its chunk only and writes the raw f32 sums to `partials[((z·chunks + chunk)·m +
/// row)·n + col]` (no bias, no activation; `c` untouched), which
/// [`fn@super::matmul_skinny_fixup_kernel`] adds in chunk order. Without it `partials`,
/// `chunks` and `chunk_k` are unused.
///
/// Preconditions: `NA = NB = 8` with the layouts of [`fn@super::matmul_tc_async_kernel`];
/// `bk` a multiple of 32 (an even number of 16-deep steps); `2 ≤ stages ≤ 8`; `NC = 2` exactly
/// when `cfg.c_vec` (`n` and `c_pitch` even, C 4-byte aligned), else `NC = 1`; the device has
/// manual MMA m16n8k16 for `F` with f32 accumulators (CUDA sm ≥ 80).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_tc_mma_kernel<F: Float, NA: Size, NB: Size, NC: Size, A: Activation>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    partials: &mut Array<f32>,
    m: usize,
    n: usize,
    k_all: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    chunks: usize,
    chunk_k: usize,
    #[comptime] cfg: TcConfig,
    #[comptime] stages: usize,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let mut a_s =
        SharedMemory::<Vector<F, Const<8>>>::new(comptime!(stages * bm * (cfg.bk + PAD) / 8));
    let mut b_s =
        SharedMemory::<Vector<F, Const<8>>>::new(comptime!(stages * cfg.bk * (bn + PAD) / 8));
    let bars = stage_barriers(stages);
    let mut block = cube_block(cfg.group);
    let mut chunk = 0usize;
    if comptime!(cfg.split) {
        chunk = block.z % chunks;
        block.z /= chunks;
    }
    let mut p = Place::new(&a_strides, &b_strides, m, n, k_all, block, bm, bn);
    // This cube's depth: its chunk moved into the bases (A's columns and B's rows are
    // contiguous in the `cp.async` layouts; `chunk_k` keeps the 16-byte alignment).
    let mut k = k_all;
    if comptime!(cfg.split) {
        let k_lo = chunk * chunk_k;
        k = select(k_all - k_lo < chunk_k, k_all - k_lo, chunk_k);
        p.a_base += k_lo;
        p.b_base += k_lo * p.b_sr;
    }
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
    let mut acc = mma_accumulators::<NFC>(comptime!(cfg.frags_m * 2 * cfg.frags_n), acc_vectors);
    let tiles = k.div_ceil(cfg.bk);
    let steps = comptime!(cfg.bk / 16);
    let (mut fa0, mut fb0) = frag_buffers::<F, NFA, NFB>(&def, cfg);
    let (mut fa1, mut fb1) = frag_buffers::<F, NFA, NFB>(&def, cfg);

    let plan = plan_copies(&p, cfg);
    #[unroll]
    for s in 0..comptime!(stages - 1) {
        issue_planned::<F, NA, NB>(
            a,
            b,
            &mut a_s,
            &mut b_s,
            &plan,
            s * cfg.bk,
            k,
            p.b_sr,
            s,
            cfg,
        );
        commit_at(&bars, s);
    }
    bars.index(0usize).wait_parity(0u32);
    load_frags::<F, NFA, NFB>(
        &def, &a_s, &b_s, &mut fa0, &mut fb0, 0usize, 0usize, wm, wn, lane, cfg,
    );
    // Tiles go in groups of `stages`, so each one's stage is a comptime constant (barriers,
    // offsets). Step `ks` of tile `t` multiplies the fragments loaded one step earlier while the
    // next step's load; the last step of a tile first waits for tile `t + 1` and syncs the cube
    // (every plane has then read all of tile `t`'s fragments, so its stage may be refilled),
    // loads tile `t + 1`'s first fragments and then multiplies, so the tensor pipe has
    // independent work right after the barrier. Tile `t + stages − 1` is issued at the first
    // step of tile `t`, into the stage of tile `t − 1`, free since that sync; tiles past the
    // last are issued as zero fills (no branch) and drained after the loop.
    let groups = tiles.div_ceil(stages);
    for g in 0..groups {
        let t0 = g * stages;
        let phase = (g % 2) as u32;
        let phase_next = ((g + 1) % 2) as u32;
        #[unroll]
        for s in 0..stages {
            let t = t0 + s;
            if t < tiles {
                #[unroll]
                for ks in 0..steps {
                    if comptime!(ks == 0) {
                        let ns = comptime!((s + stages - 1) % stages);
                        issue_planned::<F, NA, NB>(
                            a,
                            b,
                            &mut a_s,
                            &mut b_s,
                            &plan,
                            (t + comptime!(stages - 1)) * cfg.bk,
                            k,
                            p.b_sr,
                            ns,
                            cfg,
                        );
                        commit_at(&bars, ns);
                    }
                    let even = comptime!(ks % 2 == 0);
                    if comptime!(ks + 1 < steps) {
                        if comptime!(even) {
                            load_frags::<F, NFA, NFB>(
                                &def,
                                &a_s,
                                &b_s,
                                &mut fa1,
                                &mut fb1,
                                s,
                                comptime!(ks + 1),
                                wm,
                                wn,
                                lane,
                                cfg,
                            );
                        } else {
                            load_frags::<F, NFA, NFB>(
                                &def,
                                &a_s,
                                &b_s,
                                &mut fa0,
                                &mut fb0,
                                s,
                                comptime!(ks + 1),
                                wm,
                                wn,
                                lane,
                                cfg,
                            );
                        }
                    } else {
                        // Tile `t + 1` was issued (as zeros when `t + 1 = tiles`), so the wait
                        // and the load need no branch; `steps` is even, so step 0 reads set 0.
                        let s1 = comptime!((s + 1) % stages);
                        if comptime!(s + 1 == stages) {
                            bars.index(s1).wait_parity(phase_next);
                        } else {
                            bars.index(s1).wait_parity(phase);
                        }
                        sync_cube();
                        load_frags::<F, NFA, NFB>(
                            &def, &a_s, &b_s, &mut fa0, &mut fb0, s1, 0usize, wm, wn, lane, cfg,
                        );
                    }
                    if comptime!(even) {
                        mma_step::<F, NFA, NFB, NFC>(&def, &fa0, &fb0, &mut acc, cfg);
                    } else {
                        mma_step::<F, NFA, NFB, NFC>(&def, &fa1, &fb1, &mut acc, cfg);
                    }
                }
            }
        }
    }
    // The zero fills past tile `tiles` (waited for above) land before the cube exits.
    #[unroll]
    for e in 1..comptime!(stages - 1) {
        let extra = tiles + e;
        wait_stage(&bars, extra % stages, ((extra / stages) % 2) as u32, stages);
    }

    if comptime!(cfg.split) {
        // Raw f32 sums of this chunk, for the fixup pass (which adds bias and activation).
        let per_tile = comptime!(acc_vectors * acc_width);
        #[unroll]
        for i in 0..cfg.frags_m {
            let r0 = p.row0 + wm * comptime!(16 * cfg.frags_m) + i * 16;
            #[unroll]
            for j in 0..comptime!(2 * cfg.frags_n) {
                let c0 = p.col0 + wn * comptime!(16 * cfg.frags_n) + j * 8;
                let tile = acc.index(i * comptime!(2 * cfg.frags_n) + j);
                #[unroll]
                for q in 0..per_tile {
                    let (row, col) =
                        def.position_of_nth(lane as u32, q as u32, cmma::MatrixIdent::Accumulator);
                    let r = r0 + row as usize;
                    let col = c0 + col as usize;
                    if r < m && col < n {
                        let vals = tile[comptime!(q / acc_width)];
                        partials[((p.z * chunks + chunk) * m + r) * n + col] =
                            vals[comptime!(q % acc_width)];
                    }
                }
            }
        }
    } else if comptime!(cfg.staged_c && cfg.c_vec && acc_width == 2) {
        epilogue_staged::<F, NC, NFC, A>(
            &def, &acc, bias, c, &p, m, n, c_pitch, scale, wm, wn, lane, cfg,
        );
    } else {
        epilogue::<F, NC, NFC, A>(
            &def, &acc, bias, c, &p, m, n, c_pitch, scale, wm, wn, lane, cfg,
        );
    }
}

/// The epilogue through shared memory for column pairs (`NC = 2`): each plane writes its
/// accumulators (bias and activation applied, in `F`) as pairs into the output block in shared
/// memory, then the cube copies the block out row by row, consecutive units on consecutive
/// pairs: a plane's store covers 128 contiguous bytes of one row, where a store straight from
/// the accumulators covers 16 bytes in each of eight rows (those ran the epilogue-bound depth-128
/// products 1.5x slower than the staged WMMA epilogue, BENCHMARKS.md). The block takes shared
/// memory of its own, not the pipeline's: cubecl 0.10's liveness kept freed pipeline memory
/// live past the main loop (see `TcShape::staged`), so no barrier is needed before the writes.
#[cube]
#[allow(clippy::too_many_arguments)]
fn epilogue_staged<F: Float, NC: Size, NFC: Size, A: Activation>(
    def: &cmma::MmaDefinition<F, F, f32>,
    acc: &Sequence<Array<Vector<f32, NFC>>>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    p: &Place,
    m: usize,
    n: usize,
    c_pitch: usize,
    scale: f32,
    wm: usize,
    wn: usize,
    lane: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(32 * cfg.warps_m * cfg.warps_n);
    // Pairs per staged row: 4 more than the block's, so the 8 rows of one accumulator store
    // fall on distinct banks (`TcShape::shared_bytes` counts `bm × (bn + 8)` elements).
    let pitch = comptime!(bn / 2 + 4);
    let mut c_s = SharedMemory::<Vector<F, NC>>::new(comptime!(bm * (bn / 2 + 4)));
    let acc_vectors = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    #[unroll]
    for j in 0..comptime!(2 * cfg.frags_n) {
        let c0 = wn * comptime!(16 * cfg.frags_n) + j * 8;
        let bv = bias_entries::<F>(def, bias, p.col0 + c0, n, lane, cfg.bias);
        #[unroll]
        for i in 0..cfg.frags_m {
            let r0 = wm * comptime!(16 * cfg.frags_m) + i * 16;
            let tile = acc.index(i * comptime!(2 * cfg.frags_n) + j);
            #[unroll]
            for v in 0..acc_vectors {
                let vals = tile[v];
                let (row, col) = def.position_of_nth(
                    lane as u32,
                    (v * 2) as u32,
                    cmma::MatrixIdent::Accumulator,
                );
                let local = c0 + col as usize;
                let mut out = Vector::<F, NC>::empty();
                #[unroll]
                for e in 0..2usize {
                    let mut x = vals[e];
                    if comptime!(cfg.bias) {
                        x += bv[v * 2 + e];
                    }
                    out[e] = F::cast_from(A::apply(x, scale));
                }
                c_s[(r0 + row as usize) * pitch + local / 2] = out;
            }
        }
    }
    sync_cube();
    #[unroll]
    for it in 0..comptime!(bm * bn / 2 / units) {
        let idx = UNIT_POS as usize + it * units;
        let rl = idx / comptime!(bn / 2);
        let pc = idx % comptime!(bn / 2);
        let r = p.row0 + rl;
        let col = p.col0 + pc * 2;
        if r < m && col < n {
            c[((p.z * m + r) * c_pitch + col) / 2] = c_s[rl * pitch + pc];
        }
    }
}

/// This lane's bias entries for the m16n8 accumulators of the column of tiles starting at
/// output column `c0`: entry `q` for accumulator element `q` (0 past `n` or without `with_bias`).
/// Element `q` sits at `position_of_nth(lane, q)` within its tile, the same place in every tile
/// of a column of tiles, so each lane reads its bias entries once per column of tiles.
#[cube]
fn bias_entries<F: Float>(
    def: &cmma::MmaDefinition<F, F, f32>,
    bias: &Array<F>,
    c0: usize,
    n: usize,
    lane: usize,
    #[comptime] with_bias: bool,
) -> Array<f32> {
    let acc_vectors = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    let acc_width = def.vector_size(cmma::MatrixIdent::Accumulator);
    let per_tile = comptime!(acc_vectors * acc_width);
    let mut bv = Array::<f32>::new(per_tile);
    #[unroll]
    for q in 0..per_tile {
        let mut x = 0.0f32;
        if comptime!(with_bias) {
            let (_, col) =
                def.position_of_nth(lane as u32, q as u32, cmma::MatrixIdent::Accumulator);
            let cc = c0 + col as usize;
            if cc < n {
                x = f32::cast_from(bias[cc]);
            }
        }
        bv[q] = x;
    }
    bv
}

/// The epilogue from the registers: bias, activation, masked stores of column pairs or scalars.
#[cube]
#[allow(clippy::too_many_arguments)]
fn epilogue<F: Float, NC: Size, NFC: Size, A: Activation>(
    def: &cmma::MmaDefinition<F, F, f32>,
    acc: &Sequence<Array<Vector<f32, NFC>>>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    p: &Place,
    m: usize,
    n: usize,
    c_pitch: usize,
    scale: f32,
    wm: usize,
    wn: usize,
    lane: usize,
    #[comptime] cfg: TcConfig,
) {
    let acc_vectors = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    let acc_width = def.vector_size(cmma::MatrixIdent::Accumulator);
    // Epilogue from the registers: element `q = v·width + e` of an m16n8 accumulator sits at
    // `position_of_nth(lane, q)` within its 16 × 8 tile.
    #[unroll]
    for j in 0..comptime!(2 * cfg.frags_n) {
        let c0 = p.col0 + wn * comptime!(16 * cfg.frags_n) + j * 8;
        let bv = bias_entries::<F>(def, bias, c0, n, lane, cfg.bias);
        #[unroll]
        for i in 0..cfg.frags_m {
            let r0 = p.row0 + wm * comptime!(16 * cfg.frags_m) + i * 16;
            let tile = acc.index(i * comptime!(2 * cfg.frags_n) + j);
            #[unroll]
            for v in 0..acc_vectors {
                let vals = tile[v];
                if comptime!(cfg.c_vec && acc_width == 2) {
                    // The vector's two elements are neighbours in one row (`NC = 2`, `n` even,
                    // the first column even): one 2-wide store.
                    let q = v * 2;
                    let (row, col) =
                        def.position_of_nth(lane as u32, q as u32, cmma::MatrixIdent::Accumulator);
                    let r = r0 + row as usize;
                    let col = c0 + col as usize;
                    if r < m && col < n {
                        let mut out = Vector::<F, NC>::empty();
                        #[unroll]
                        for e in 0..2usize {
                            let mut x = vals[e];
                            if comptime!(cfg.bias) {
                                x += bv[q + e];
                            }
                            out[e] = F::cast_from(A::apply(x, scale));
                        }
                        c[((p.z * m + r) * c_pitch + col) / 2] = out;
                    }
                } else {
                    #[unroll]
                    for e in 0..acc_width {
                        let q = v * acc_width + e;
                        let (row, col) = def.position_of_nth(
                            lane as u32,
                            q as u32,
                            cmma::MatrixIdent::Accumulator,
                        );
                        let r = r0 + row as usize;
                        let col = c0 + col as usize;
                        if r < m && col < n {
                            let mut x = vals[e];
                            if comptime!(cfg.bias) {
                                x += bv[q];
                            }
                            let y = F::cast_from(A::apply(x, scale));
                            c[(p.z * m + r) * c_pitch + col] = Vector::<F, NC>::new(y);
                        }
                    }
                }
            }
        }
    }
}
