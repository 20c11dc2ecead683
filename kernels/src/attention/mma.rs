//! The tensor-core attention kernel (CUDA): FlashAttention-2's forward with cubecl's manual MMA
//! (`mma.sync.m16n8k16`, f16/bf16 operands, f32 accumulators), `ldmatrix` fragment loads and a
//! two-stage `cp.async` pipeline for the K/V tiles.
//!
//! Each plane owns 16 query rows (Q fragments held in registers for the whole pass) or 32 (two
//! row tiles sharing every K/V fragment read; Q fragments re-read from shared memory). Per
//! tile of `keys` keys: `S = Q·Kᵀ` into m16n8 accumulators (K read with a plain `ldmatrix`,
//! since its rows are the columns of Kᵀ), the online softmax on those registers (a row's values
//! sit in the four lanes of a quad, combined by two shuffles), the probabilities converted in
//! registers into the A fragments of `P·V` (an m16n8 accumulator pair has the element order of
//! an m16n8k16 A fragment), and `O += P·V` with V read by a transposing `ldmatrix`. The row sums
//! stay per lane until the end. While tile `t` is multiplied, tile `t + 1` is in flight.

use super::causal_key_end;
use cubecl::prelude::barrier::{Barrier, copy_async_checked};
use cubecl::prelude::*;

/// Elements of padding per shared row: row pitches of `D + 8` halves put the eight rows an
/// `ldmatrix` reads in eight different bank groups.
const PAD: usize = 8;

/// Comptime configuration of [`attention_mma_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttentionMmaConfig {
    /// Head dimension (a multiple of 16).
    pub head_dim: usize,
    /// Planes per cube.
    pub warps: usize,
    /// m16 row tiles per plane: each plane owns `16 · m_tiles` query rows, and every K / V
    /// fragment it reads from shared memory feeds `2 · m_tiles` MMAs.
    pub m_tiles: usize,
    /// Keep the plane's Q fragments in registers for the whole pass (else they are re-read
    /// from shared memory for every tile, which frees registers for more row tiles).
    pub q_regs: bool,
    /// Keys per tile (a multiple of 16).
    pub keys: usize,
    /// Bottom-right causal mask.
    pub causal: bool,
    /// Write the log-sum-exp of each row.
    pub lse: bool,
    /// The softmax scale is positive: row maxima are taken of the raw scores and the scale
    /// is applied inside each exponent's FMA (else every score is scaled first).
    pub raw_scores: bool,
}

impl AttentionMmaConfig {
    /// Query rows per cube.
    pub fn rows(&self) -> usize {
        16 * self.m_tiles * self.warps
    }

    /// Shared-memory bytes for elements of `elem_bytes`: the Q tile and two stages of K and V.
    pub fn shared_bytes(&self, elem_bytes: usize) -> usize {
        let row = self.head_dim + PAD;
        (self.rows() * row + 4 * self.keys * row) * elem_bytes
    }
}

/// `eˣ` through CUDA's `__expf` (`ex2.approx` of `x·log₂e`: two instructions where the
/// full-precision `expf` takes about six, evaluated for every score), as FlashAttention's
/// fast-math build does. Its error, about `2 + 1.16·|x|` ulp of f32 for the `x ≤ 0` softmax
/// takes, stays far below the rounding of the f16/bf16 output; `−∞` still gives 0. This kernel
/// runs on CUDA only (manual MMA), the one backend whose fast-math flags only pick intrinsics.
#[cube(fast_math = FastMath::ReducedPrecision | FastMath::NotNaN | FastMath::NotInf)]
fn fast_exp(x: f32) -> f32 {
    f32::exp(x)
}

/// Issues this unit's 16-byte `cp.async` copies of `rows` rows of `head_dim` (starting at row
/// `first` of a tensor whose rows are `stride` elements apart from `base`) into `dst` at vector
/// offset `dst0`, rows `head_dim + PAD` apart; rows at or past `limit` are zero-filled.
#[cube]
#[allow(clippy::too_many_arguments)]
fn issue_rows<F: Float, N: Size>(
    src: &Array<Vector<F, N>>,
    dst: &mut SharedMemory<Vector<F, Const<8>>>,
    base: usize,
    stride: usize,
    first: usize,
    limit: usize,
    dst0: usize,
    #[comptime] rows: usize,
    #[comptime] head_dim: usize,
    #[comptime] units: usize,
) {
    let per_row = comptime!(head_dim / 8);
    let pitch = comptime!((head_dim + PAD) / 8);
    #[unroll]
    for l in 0..comptime!(rows * head_dim / 8 / units) {
        let s = UNIT_POS as usize + l * units;
        let (r, c) = (s / per_row, s % per_row);
        let row = first + r;
        let inside = row < limit;
        let from = select(inside, (base + row * stride) / 8 + c, 0usize);
        let len = select(inside, 1usize, 0usize);
        let to = dst0 + r * pitch + c;
        copy_async_checked(
            &src.slice(from, from + len),
            &mut dst.slice_mut(to, to + 1).downcast(),
            8u32,
        );
    }
}

/// Commits this unit's copies so far to `bar` and arrives on it.
#[cube]
fn commit(bar: &Shared<Barrier>) {
    bar.commit_copy_async();
    let _token = bar.arrive();
}

/// `out = softmax(scale · q·kᵀ + mask) · v` on tensor cores; the contract of
/// [`fn@super::attention_simt_kernel`] (tensors, strides, `dims`, edge semantics) with these
/// differences: `q`, `k`, `v` are read as 16-byte vectors (`N = 8`), so every stride and the
/// head dim are multiples of 8 and the buffers 16-byte aligned; `D = cfg.head_dim` and
/// `cfg.keys` are multiples of 16; `CUBE_DIM = (32 · cfg.warps, 1)`; cube `c` takes rows
/// `(c mod row_blocks) · 16 · warps …`. Values of masked keys must be finite: a tile's masked
/// keys get weight 0, and the tensor cores multiply `0 · NaN` like any product (as
/// FlashAttention does).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::collapsible_if)] // comptime and runtime conditions stay apart
pub fn attention_mma_kernel<F: Float, N: Size>(
    q: &Array<Vector<F, N>>,
    k: &Array<Vector<F, N>>,
    v: &Array<Vector<F, N>>,
    out: &mut Array<F>,
    lse: &mut Array<f32>,
    q_strides: Sequence<usize>,
    k_strides: Sequence<usize>,
    v_strides: Sequence<usize>,
    o_strides: Sequence<usize>,
    dims: Sequence<usize>,
    scale: f32,
    inf: f32,
    #[comptime] cfg: AttentionMmaConfig,
) {
    let heads = dims[0];
    let sq = dims[2];
    let sk = dims[3];
    let row_blocks = dims[4];
    if CUBE_POS >= dims[5] {
        terminate!();
    }
    let d = cfg.head_dim;
    let bc = cfg.keys;
    let mts = cfg.m_tiles;
    let br = comptime!(16 * cfg.m_tiles * cfg.warps);
    let units = comptime!(32 * cfg.warps);
    let pitch = comptime!((cfg.head_dim + PAD) / 8);
    let ksteps = comptime!(cfg.head_dim / 16);
    let ntiles = comptime!(cfg.keys / 8);
    let dtiles = comptime!(cfg.head_dim / 8);
    let rows2 = comptime!(2 * cfg.m_tiles);
    let neg_inf = -inf;
    // The factor inside the exponents: the scale itself where the maxima are of raw scores.
    let mut es = 1.0f32;
    if comptime!(cfg.raw_scores) {
        es = scale;
    }
    let rb = CUBE_POS % row_blocks;
    let bh = CUBE_POS / row_blocks;
    let h = bh % heads;
    let b = bh / heads;
    let hk = h / dims[1];
    let row0 = rb * br;
    let warp = UNIT_POS as usize / 32;
    let lane = UNIT_POS as usize % 32;
    let quad = lane / 4;
    let tq = lane % 4;

    let mut q_s = SharedMemory::<Vector<F, Const<8>>>::new(comptime!(
        16 * cfg.m_tiles * cfg.warps * (cfg.head_dim + PAD) / 8
    ));
    let mut k_s = SharedMemory::<Vector<F, Const<8>>>::new(comptime!(
        2 * cfg.keys * (cfg.head_dim + PAD) / 8
    ));
    let mut v_s = SharedMemory::<Vector<F, Const<8>>>::new(comptime!(
        2 * cfg.keys * (cfg.head_dim + PAD) / 8
    ));
    let bar_q = Barrier::shared(CUBE_DIM, UNIT_POS == 0);
    let mut bars = Sequence::<Shared<Barrier>>::new();
    #[unroll]
    for _ in 0..2 {
        bars.push(Barrier::shared(CUBE_DIM, UNIT_POS == 0));
    }
    sync_cube();

    let mut key_end = sk;
    if comptime!(cfg.causal) {
        key_end = causal_key_end(row0 + br, sq, sk);
    }
    let tiles = key_end.div_ceil(bc);
    let q_base = b * q_strides[0] + h * q_strides[1];
    let k_base = b * k_strides[0] + hk * k_strides[1];
    let v_base = b * v_strides[0] + hk * v_strides[1];

    issue_rows::<F, N>(q, &mut q_s, q_base, q_strides[2], row0, sq, 0, br, d, units);
    commit(&bar_q);
    if tiles > 0 {
        issue_rows::<F, N>(k, &mut k_s, k_base, k_strides[2], 0, sk, 0, bc, d, units);
        issue_rows::<F, N>(v, &mut v_s, v_base, v_strides[2], 0, sk, 0, bc, d, units);
        commit(bars.index(0usize));
    }
    bar_q.wait_parity(0u32);
    sync_cube();

    let def = cmma::MmaDefinition::<F, F, f32>::new(16usize, 8usize, 16usize);
    let size!(NA) = def.vector_size(cmma::MatrixIdent::A);
    let size!(NB) = def.vector_size(cmma::MatrixIdent::B);
    let size!(NC) = def.vector_size(cmma::MatrixIdent::Accumulator);
    let va = def.vectors_per_lane(cmma::MatrixIdent::A);
    let vc = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    let warp_row0 = row0 + warp * comptime!(16 * cfg.m_tiles);
    // Keys this plane's rows can see (with the causal mask, fewer than the cube's last rows).
    let mut warp_end = key_end;
    if comptime!(cfg.causal) {
        warp_end = causal_key_end(warp_row0 + comptime!(16 * cfg.m_tiles), sq, sk);
    }

    // With `q_regs`, this plane's Q rows as A fragments (row tile mt, 16 dims ks at
    // `mt · ksteps + ks`), loaded once.
    let mut fq = Sequence::<Array<Vector<F, NA>>>::new();
    if comptime!(cfg.q_regs) {
        #[unroll]
        for mt in 0..mts {
            #[unroll]
            for ks in 0..ksteps {
                fq.push(load_q::<F, NA>(&def, &q_s, warp, mt, ks, lane, cfg));
            }
        }
    }

    // Output accumulators (row tile mt, 8 dims dt at `mt · dtiles + dt`); running maxima,
    // per-lane sums and NaN flags of rows `quad + 8·half` of each row tile (at `2·mt + half`).
    let mut acc_o = Sequence::<Array<Vector<f32, NC>>>::new();
    #[unroll]
    for _ in 0..comptime!(cfg.m_tiles * cfg.head_dim / 8) {
        acc_o.push(zeros::<NC>(vc));
    }
    // Running maxima (of raw scores with `cfg.raw_scores`) and per-lane sums of rows
    // `quad + 8·half` of each row tile (at `2·mt + half`). A NaN score is dropped by the maxima
    // (fmax) but not by its exponent, so it reaches the row's sum and stays there (`NaN · α`).
    let mut m = Array::<f32>::new(rows2);
    let mut l = Array::<f32>::new(rows2);
    #[unroll]
    for rr in 0..rows2 {
        m[rr] = neg_inf;
        l[rr] = 0.0;
    }

    let groups = tiles.div_ceil(2);
    for g in 0..groups {
        let phase = (g % 2) as u32;
        #[unroll]
        for s in 0..2usize {
            let t = g * 2 + s;
            if t < tiles {
                let j0 = t * bc;
                // Every plane is done with the other stage (tile t − 1): refill it with t + 1.
                sync_cube();
                if t + 1 < tiles {
                    let ns = comptime!((s + 1) % 2);
                    let off = comptime!(((s + 1) % 2) * cfg.keys * (cfg.head_dim + PAD) / 8);
                    issue_rows::<F, N>(
                        k,
                        &mut k_s,
                        k_base,
                        k_strides[2],
                        j0 + bc,
                        sk,
                        off,
                        bc,
                        d,
                        units,
                    );
                    issue_rows::<F, N>(
                        v,
                        &mut v_s,
                        v_base,
                        v_strides[2],
                        j0 + bc,
                        sk,
                        off,
                        bc,
                        d,
                        units,
                    );
                    commit(bars.index(ns));
                }
                bars.index(s).wait_parity(phase);
                let stage0 = comptime!(s * cfg.keys * (cfg.head_dim + PAD) / 8);
                // A causal tile wholly above this plane's rows is skipped: its scores would all be
                // −∞ and change nothing (the cube's last row blocks reach past its first planes).
                if j0 < warp_end {
                    // S = Q·Kᵀ: one m16n8 accumulator per row tile and 8 keys (`mt · ntiles + nt`).
                    let mut acc_s = Sequence::<Array<Vector<f32, NC>>>::new();
                    #[unroll]
                    for _ in 0..comptime!(cfg.m_tiles * cfg.keys / 8) {
                        acc_s.push(zeros::<NC>(vc));
                    }
                    #[unroll]
                    for ks in 0..ksteps {
                        let mut fq_step = Sequence::<Array<Vector<F, NA>>>::new();
                        if comptime!(!cfg.q_regs) {
                            #[unroll]
                            for mt in 0..mts {
                                fq_step.push(load_q::<F, NA>(&def, &q_s, warp, mt, ks, lane, cfg));
                            }
                        }
                        #[unroll]
                        for np in 0..comptime!(cfg.keys / 16) {
                            // Matrices: keys 0–7 / dims 0–7, keys 0–7 / dims 8–15, keys 8–15 /
                            // dims 0–7, keys 8–15 / dims 8–15 of this 16 × 16 block.
                            let key = np * 16 + lane % 8 + (lane / 16) * 8;
                            let at = stage0 + key * pitch + ks * 2 + (lane / 8) % 2;
                            let r = def.load_matrix::<Vector<F, Const<8>>, NB>(
                                &k_s.slice(at, at + 1),
                                cmma::MatrixIdent::B,
                                4usize,
                                false,
                            );
                            let (lo, hi) = split_b::<F, NB>(&r);
                            #[unroll]
                            for mt in 0..mts {
                                let a = if comptime!(cfg.q_regs) {
                                    fq.index(mt * ksteps + ks)
                                } else {
                                    fq_step.index(mt)
                                };
                                def.execute_inplace(a, &lo, acc_s.index_mut(mt * ntiles + np * 2));
                                def.execute_inplace(
                                    a,
                                    &hi,
                                    acc_s.index_mut(mt * ntiles + np * 2 + 1),
                                );
                            }
                        }
                    }

                    // Online softmax on the registers: element e of vector half of tile nt of row
                    // tile mt is row `16·mt + quad + 8·half` of the plane, key
                    // `j0 + 8·nt + 2·tq + e`.
                    if comptime!(!cfg.raw_scores) {
                        #[unroll]
                        for t in 0..comptime!(cfg.m_tiles * cfg.keys / 8) {
                            #[unroll]
                            for half in 0..2usize {
                                let mut vals = acc_s.index(t)[half];
                                vals *= Vector::<f32, NC>::new(scale);
                                acc_s.index_mut(t)[half] = vals;
                            }
                        }
                    }
                    // Tiles past the keys' end or crossing this plane's diagonal are masked in one
                    // branch around the whole tile: a test per score, even predicated off, costs
                    // its issue slots on every tile (the compiler predicates a per-score branch).
                    let mut needs_mask = j0 + bc > sk;
                    if comptime!(cfg.causal) {
                        needs_mask = needs_mask || j0 + bc + sq > warp_row0 + sk;
                    }
                    if needs_mask {
                        let base = i32::cast_from(j0 + tq * 2);
                        #[unroll]
                        for mt in 0..mts {
                            #[unroll]
                            for half in 0..2usize {
                                // Row i sees the keys below `end`.
                                let mut end = sk;
                                if comptime!(cfg.causal) {
                                    let i = warp_row0 + mt * 16 + quad + half * 8;
                                    end = causal_key_end(i + 1, sq, sk);
                                }
                                let rel = i32::cast_from(end) - base;
                                #[unroll]
                                for nt in 0..ntiles {
                                    let mut vals = acc_s.index(mt * ntiles + nt)[half];
                                    #[unroll]
                                    for e in 0..2usize {
                                        let c = i32::cast_from(nt * 8 + e);
                                        vals[e] = select(c >= rel, neg_inf, vals[e]);
                                    }
                                    acc_s.index_mut(mt * ntiles + nt)[half] = vals;
                                }
                            }
                        }
                    }
                    let mut alpha = Array::<f32>::new(rows2);
                    let mut unchanged = true;
                    #[unroll]
                    for mt in 0..mts {
                        #[unroll]
                        for half in 0..2usize {
                            let rr = mt * 2 + half;
                            let mut mx = neg_inf;
                            #[unroll]
                            for nt in 0..ntiles {
                                let vals = acc_s.index(mt * ntiles + nt)[half];
                                #[unroll]
                                for e in 0..2usize {
                                    mx = f32::max(mx, vals[e]);
                                }
                            }
                            mx = f32::max(mx, plane_shuffle_xor(mx, 1u32));
                            mx = f32::max(mx, plane_shuffle_xor(mx, 2u32));
                            let m_old = m[rr];
                            let m_new = f32::max(m_old, mx);
                            // A row that has seen only −∞ so far takes 0 as its reference, so its
                            // masked scores give exp(−∞) = 0 without a test per score.
                            let m_use = select(m_new == neg_inf, 0.0, m_new);
                            let shift = -m_use * es;
                            let a = select(m_new == m_old, 1.0, fast_exp((m_old - m_use) * es));
                            let mut sum = 0.0f32;
                            #[unroll]
                            for nt in 0..ntiles {
                                let mut vals = acc_s.index(mt * ntiles + nt)[half];
                                #[unroll]
                                for e in 0..2usize {
                                    let p = fast_exp(fma(vals[e], es, shift));
                                    vals[e] = p;
                                    sum += p;
                                }
                                acc_s.index_mut(mt * ntiles + nt)[half] = vals;
                            }
                            l[rr] = l[rr] * a + sum;
                            m[rr] = m_new;
                            alpha[rr] = a;
                            unchanged = unchanged && m_new == m_old;
                        }
                    }
                    // Where no row of the plane has a new maximum (most tiles of a long row), every
                    // α is 1 and the rescale of the output accumulators is skipped.
                    if !plane_all(unchanged) {
                        #[unroll]
                        for mt in 0..mts {
                            #[unroll]
                            for dt in 0..dtiles {
                                #[unroll]
                                for half in 0..2usize {
                                    let mut o = acc_o.index(mt * dtiles + dt)[half];
                                    o *= Vector::<f32, NC>::new(alpha[mt * 2 + half]);
                                    acc_o.index_mut(mt * dtiles + dt)[half] = o;
                                }
                            }
                        }
                    }

                    // O += P·V, 16 keys at a time; P's A fragment is the accumulator pair of
                    // tiles 2kk and 2kk + 1 in element order.
                    #[unroll]
                    for kk in 0..comptime!(cfg.keys / 16) {
                        let mut fp = Sequence::<Array<Vector<F, NA>>>::new();
                        #[unroll]
                        for mt in 0..mts {
                            let mut f = Array::<Vector<F, NA>>::new(va);
                            #[unroll]
                            for half_tile in 0..2usize {
                                #[unroll]
                                for half in 0..2usize {
                                    let src = acc_s.index(mt * ntiles + kk * 2 + half_tile)[half];
                                    let mut pv = Vector::<F, NA>::empty();
                                    #[unroll]
                                    for e in 0..2usize {
                                        pv[e] = F::cast_from(src[e]);
                                    }
                                    f[half_tile * 2 + half] = pv;
                                }
                            }
                            fp.push(f);
                        }
                        #[unroll]
                        for dp in 0..comptime!(cfg.head_dim / 16) {
                            let at = stage0 + (kk * 16 + lane % 16) * pitch + dp * 2 + lane / 16;
                            let r = def.load_matrix::<Vector<F, Const<8>>, NB>(
                                &v_s.slice(at, at + 1),
                                cmma::MatrixIdent::B,
                                4usize,
                                true,
                            );
                            let (lo, hi) = split_b::<F, NB>(&r);
                            #[unroll]
                            for mt in 0..mts {
                                def.execute_inplace(
                                    fp.index(mt),
                                    &lo,
                                    acc_o.index_mut(mt * dtiles + dp * 2),
                                );
                                def.execute_inplace(
                                    fp.index(mt),
                                    &hi,
                                    acc_o.index_mut(mt * dtiles + dp * 2 + 1),
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    // Epilogue: the quad's sums, then rows `16·mt + quad + 8·half`, dims `8·dt + 2·tq + e`.
    let o_base = b * o_strides[0] + h * o_strides[1];
    let o_row = o_strides[2];
    // A quiet NaN from +∞'s bits (CUDA cannot reinterpret a literal).
    let qnan = f32::reinterpret(u32::reinterpret(inf) | 0x0040_0000u32);
    #[unroll]
    for mt in 0..mts {
        #[unroll]
        for half in 0..2usize {
            let rr = mt * 2 + half;
            let mut total = l[rr];
            total += plane_shuffle_xor(total, 1u32);
            total += plane_shuffle_xor(total, 2u32);
            // A NaN score of the row reached its sum (see `l`).
            let dead = total.is_nan();
            let blind = total == 0.0;
            let i = warp_row0 + mt * 16 + quad + half * 8;
            if i < sq {
                let inv = select(blind, 0.0, 1.0 / total);
                #[unroll]
                for dt in 0..dtiles {
                    let o = acc_o.index(mt * dtiles + dt)[half];
                    #[unroll]
                    for e in 0..2usize {
                        // A blind row's accumulators may hold 0 · NaN from a masked value.
                        let y = select(dead, qnan, select(blind, 0.0, o[e] * inv));
                        out[o_base + i * o_row + dt * 8 + tq * 2 + e] = F::cast_from(y);
                    }
                }
                if comptime!(cfg.lse) {
                    if tq == 0 {
                        let row_lse = select(blind, neg_inf, m[rr] * es + f32::ln(total));
                        lse[(b * heads + h) * sq + i] = select(dead, qnan, row_lse);
                    }
                }
            }
        }
    }
}

/// The A fragment of Q rows `16·mt …` of this plane and dims `16·ks …` from shared memory.
#[cube]
fn load_q<F: Float, NA: Size>(
    def: &cmma::MmaDefinition<F, F, f32>,
    q_s: &SharedMemory<Vector<F, Const<8>>>,
    warp: usize,
    #[comptime] mt: usize,
    #[comptime] ks: usize,
    lane: usize,
    #[comptime] cfg: AttentionMmaConfig,
) -> Array<Vector<F, NA>> {
    let pitch = comptime!((cfg.head_dim + PAD) / 8);
    let row = warp * comptime!(16 * cfg.m_tiles) + mt * 16 + lane % 16;
    let at = row * pitch + lane / 16 + ks * 2;
    let r = def.load_matrix::<Vector<F, Const<8>>, NA>(
        &q_s.slice(at, at + 1),
        cmma::MatrixIdent::A,
        4usize,
        false,
    );
    let va = def.vectors_per_lane(cmma::MatrixIdent::A);
    let mut f = Array::<Vector<F, NA>>::new(va);
    #[unroll]
    for i in 0..va {
        f[i] = r[i];
    }
    f
}

/// The two m16n8k16 B fragments (each two registers) of one `ldmatrix.x4`.
#[cube]
#[allow(clippy::type_complexity)] // a pair of fragments; a type alias would hide the vectors
fn split_b<F: Float, NB: Size>(
    r: &Array<Vector<F, NB>>,
) -> (Array<Vector<F, NB>>, Array<Vector<F, NB>>) {
    let mut lo = Array::<Vector<F, NB>>::new(2usize);
    let mut hi = Array::<Vector<F, NB>>::new(2usize);
    lo[0] = r[0];
    lo[1] = r[1];
    hi[0] = r[2];
    hi[1] = r[3];
    (lo, hi)
}

/// A zeroed m16n8 accumulator of `vectors` vectors.
#[cube]
fn zeros<NC: Size>(#[comptime] vectors: usize) -> Array<Vector<f32, NC>> {
    let mut t = Array::<Vector<f32, NC>>::new(vectors);
    #[unroll]
    for i in 0..vectors {
        t[i] = Vector::<f32, NC>::new(0.0);
    }
    t
}
