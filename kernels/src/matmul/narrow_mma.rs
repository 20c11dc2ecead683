//! Few columns on tensor cores (f16/bf16, up to `8 · n_tiles` columns per column group):
//! `mma.sync.m16n8k16` is eight columns wide, so a product with few columns is a stream of A
//! through m16n8 tiles, read once, straight from global memory into the A fragments.
//!
//! The depths inside a fragment may be permuted as long as A and B agree. Lane `(g, t)` (`g =
//! lane / 4`, `t = lane mod 4`) loads one 16-byte vector of each of its rows `g` and `g + 8`:
//! depths `8t … 8t + 7` of a 32-deep step, so the plane reads whole 64-byte runs of 16 rows per
//! instruction and A never passes through shared memory. Those eight depths feed two MMAs:
//! depths `8t + {0, 1, 2, 3}` sit at the fragment positions `2t, 2t + 1, 2t + 8, 2t + 9` of
//! the first, `8t + {4, 5, 6, 7}` at those of the second. B's 32 rows of the step (eight
//! columns per n tile) go through a per-plane shared buffer, one row per lane, and come back
//! by one transposing `ldmatrix.x4` per n tile whose row addresses apply the same permutation:
//! each lane receives column `g` at depths `8t + 2j, 8t + 2j + 1` from matrix `j` (matrices
//! 0–1 are the first MMA's B fragment, 2–3 the second's).
//!
//! Each plane of a cube takes a slice of the depth for all of the cube's rows; the slices are
//! summed through shared memory in plane order at the end (deterministic). Where even that
//! leaves the device under-filled, the depth is also split over the grid as for the other
//! narrow kernels and [`matmul_skinny_fixup_kernel()`](super::matmul_skinny_fixup_kernel())
//! adds the chunks.

use super::common::{epilogue, mma_accumulators};
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_narrow_mma_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NarrowMmaConfig {
    /// 16-row tiles per cube: every plane multiplies all of them over its slice of the depth,
    /// each B fragment it stages feeding `m_tiles` MMAs.
    pub m_tiles: usize,
    /// 8-column tiles per column group: every A fragment feeds `n_tiles` MMAs.
    pub n_tiles: usize,
    /// Planes per cube, each one slice of the cube's depth.
    pub warps: usize,
    /// 32-deep steps a lane loads before using any (`2 · m_tiles` A vectors and `n_tiles` B
    /// rows each): the bytes each plane keeps in flight.
    pub steps: usize,
    /// One depth chunk: the cube applies the epilogue and stores C. Otherwise it writes f32
    /// partial sums for [`matmul_skinny_fixup_kernel()`](super::matmul_skinny_fixup_kernel()).
    pub direct: bool,
    /// Add `bias[col]` before the activation (direct launches only).
    pub bias: bool,
}

/// Sums of products over one depth chunk for `16 · m_tiles` rows of A × `8 · n_tiles` columns
/// on tensor cores (f16/bf16 operands, f32 accumulators).
///
/// Grid: `(⌈m / (16 · m_tiles)⌉, groups · chunks, batch)` with `groups = ⌈n / (8 · n_tiles)⌉`;
/// cube `y` is column group `y mod groups` of depth chunk `y / groups` (`chunk_k` depths each);
/// `CUBE_DIM = (32 · warps, 1)`. Direct: `c[z, row, col] = act(sum + bias)`; else
/// `partials[((z · chunks + chunk) · m + row) · n + col] = sum` (f32), the layout the fixup
/// pass sums.
///
/// Preconditions: `NA = 8` with A's column stride 1, its batch and row strides multiples of 8
/// and its rows readable as whole vectors up to `k` rounded up to 8, zero past `k` (a padded
/// copy where `k` is not a multiple of 8); `NB > 1` only where B's column stride is 1, its
/// batch and row strides and `n` are multiples of `NB`, and `NB` divides 8; `chunk_k` a
/// multiple of 32; strides address in-bounds elements for every `(z, row < m, col < n, kk <
/// k)`; `partials` holds `batch · chunks · m · n` values when not direct; the device has
/// manual MMA m16n8k16 for `F` with f32 accumulators and 32-wide planes (CUDA sm ≥ 80).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_narrow_mma_kernel<F: Float, NA: Size, NB: Size, A: Activation>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    bias: &Array<F>,
    c: &mut Array<F>,
    partials: &mut Array<f32>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    chunk_k: usize,
    #[comptime] cfg: NarrowMmaConfig,
) {
    let na = NA::value();
    let nb = NB::value();
    let (mts, nts) = (cfg.m_tiles, cfg.n_tiles);
    let rows = comptime!(16 * cfg.m_tiles);
    let cols = comptime!(8 * cfg.n_tiles);
    let av_step = comptime!(2 * cfg.m_tiles);
    let groups = n.div_ceil(cols);
    let chunks = CUBE_COUNT_Y as usize / groups;
    let chunk = CUBE_POS_Y as usize / groups;
    let col0 = (CUBE_POS_Y as usize % groups) * cols;
    let z = CUBE_POS_Z as usize;
    let row0 = CUBE_POS_X as usize * rows;
    let warp = UNIT_POS as usize / 32;
    let lane = UNIT_POS as usize % 32;
    let g = lane / 4;
    let t = lane % 4;

    // This plane's slice of the chunk: whole 32-deep steps, but for the chunk's last.
    let k0 = chunk * chunk_k;
    let k1 = select(k0 + chunk_k < k, k0 + chunk_k, k);
    let slice = (k1 - k0).div_ceil(comptime!(32 * cfg.warps)) * 32;
    let kw0 = select(k0 + warp * slice < k1, k0 + warp * slice, k1);
    let kw1 = select(kw0 + slice < k1, kw0 + slice, k1);

    // Vector offsets of this lane's A rows `16·mt + g + 8·h` (at `2·mt + h`); rows past `m`
    // read row `m − 1` and are never stored.
    let mut a_row = Array::<usize>::new(av_step);
    #[unroll]
    for i in 0..av_step {
        let r = row0 + (i / 2) * 16 + g + (i % 2) * 8;
        let r = select(r < m, r, m - 1);
        a_row[i] = (z * a_strides[0] + r * a_strides[1]) / na;
    }
    let (b_base, b_sr, b_sc) = (z * b_strides[0], b_strides[1], b_strides[2]);

    // Shared slots of a step's B rows (per n tile): row `p` at `8a + ((p mod 8) xor 2a)`, `a =
    // p / 8`, so each 8-row matrix the `ldmatrix` below reads spans eight 16-byte bank groups.
    let st_slot = (lane / 8) * 8 + ((lane % 8) ^ ((lane / 8) * 2));
    // `ldmatrix` row `r` of matrix `j` (lane `8j + r` gives its address) is B row
    // `8·(r/2) + 2j + r mod 2` of the step.
    let (mj, mr) = (lane / 8, lane % 8);
    let ld_slot = (mr / 2) * 8 + ((2 * mj + mr % 2) ^ ((mr / 2) * 2));
    let per_warp = comptime!(cfg.steps * cfg.n_tiles * 32);
    let mut b_s = SharedMemory::<Vector<F, Const<8>>>::new(comptime!(cfg.warps * per_warp));
    let stage0 = warp * per_warp;

    let def = cmma::MmaDefinition::<F, F, f32>::new(16usize, 8usize, 16usize);
    let size!(NFA) = def.vector_size(cmma::MatrixIdent::A);
    let size!(NFB) = def.vector_size(cmma::MatrixIdent::B);
    let size!(NFC) = def.vector_size(cmma::MatrixIdent::Accumulator);
    let va = def.vectors_per_lane(cmma::MatrixIdent::A);
    let vc = def.vectors_per_lane(cmma::MatrixIdent::Accumulator);
    // Accumulators of row tile mt and n tile nt at `mt · n_tiles + nt`.
    let mut acc = mma_accumulators::<NFC>(comptime!(cfg.m_tiles * cfg.n_tiles), vc);

    let mut av = Array::<Vector<F, NA>>::new(comptime!(cfg.steps * 2 * cfg.m_tiles));
    let mut bv = Array::<Vector<F, Const<8>>>::new(comptime!(cfg.steps * cfg.n_tiles));
    let mut kk = kw0;
    while kk < kw1 {
        // Every load of the group first (`steps` DRAM round trips overlapped), zero past the
        // slice: A by vectors (a slice ends on a multiple of 8 or at `k`, past which the
        // vector holds zeros), B by rows.
        #[unroll]
        for s in 0..cfg.steps {
            let ka = kk + s * 32 + t * 8;
            let a_in = ka < kw1;
            #[unroll]
            for i in 0..av_step {
                let at = select(a_in, a_row[i] + ka / na, 0usize);
                let mut x = a[at];
                if !a_in {
                    x = Vector::<F, NA>::empty().fill(F::new(0.0));
                }
                av[s * av_step + i] = x;
            }
            let kb = kk + s * 32 + lane;
            let b_in = kb < kw1;
            let brow = select(b_in, b_base + kb * b_sr, b_base);
            #[unroll]
            for nt in 0..nts {
                let mut row = Vector::<F, Const<8>>::empty().fill(F::new(0.0));
                #[unroll]
                for jv in 0..comptime!(8 / nb) {
                    // Uniform across the plane: whole vectors past `n` are never loaded.
                    let col = col0 + nt * 8 + jv * nb;
                    if col < n {
                        let mut v = b[(brow + col * b_sc) / nb];
                        if !b_in {
                            v = Vector::<F, NB>::empty().fill(F::new(0.0));
                        }
                        #[unroll]
                        for e in 0..nb {
                            row[jv * nb + e] = v[e];
                        }
                    }
                }
                bv[s * nts + nt] = row;
            }
        }
        // The plane's `ldmatrix` reads of the previous group are done before its rows are
        // replaced, and its rows are all written before they are read.
        sync_plane();
        #[unroll]
        for i in 0..comptime!(cfg.steps * cfg.n_tiles) {
            b_s[stage0 + i * 32 + st_slot] = bv[i];
        }
        sync_plane();
        #[unroll]
        for s in 0..cfg.steps {
            // A fragments of each row tile: rows g, g + 8 at positions 2t, 2t + 1, then at
            // 2t + 8, 2t + 9 (depths 8t + 0…3 for the first MMA, 8t + 4…7 for the second).
            let mut fa = Sequence::<Array<Vector<F, NFA>>>::new();
            #[unroll]
            for mt in 0..mts {
                let x = av[s * av_step + 2 * mt];
                let y = av[s * av_step + 2 * mt + 1];
                let mut f0 = Array::<Vector<F, NFA>>::new(va);
                let mut f1 = Array::<Vector<F, NFA>>::new(va);
                f0[0] = pair::<F, NA, NFA>(x, 0usize);
                f0[1] = pair::<F, NA, NFA>(y, 0usize);
                f0[2] = pair::<F, NA, NFA>(x, 2usize);
                f0[3] = pair::<F, NA, NFA>(y, 2usize);
                f1[0] = pair::<F, NA, NFA>(x, 4usize);
                f1[1] = pair::<F, NA, NFA>(y, 4usize);
                f1[2] = pair::<F, NA, NFA>(x, 6usize);
                f1[3] = pair::<F, NA, NFA>(y, 6usize);
                fa.push(f0);
                fa.push(f1);
            }
            #[unroll]
            for nt in 0..nts {
                let at = stage0 + (s * nts + nt) * 32 + ld_slot;
                let r = def.load_matrix::<Vector<F, Const<8>>, NFB>(
                    &b_s.slice(at, at + 1),
                    cmma::MatrixIdent::B,
                    4usize,
                    true,
                );
                let mut lo = Array::<Vector<F, NFB>>::new(2usize);
                let mut hi = Array::<Vector<F, NFB>>::new(2usize);
                lo[0] = r[0];
                lo[1] = r[1];
                hi[0] = r[2];
                hi[1] = r[3];
                #[unroll]
                for mt in 0..mts {
                    def.execute_inplace(fa.index(2 * mt), &lo, acc.index_mut(mt * nts + nt));
                    def.execute_inplace(fa.index(2 * mt + 1), &hi, acc.index_mut(mt * nts + nt));
                }
            }
        }
        kk += comptime!(cfg.steps * 32);
    }

    // The planes' sums through shared memory, added in plane order: output `(row, col)` of
    // plane `w` at `w · outputs + row · cols + col`.
    let outputs = comptime!(16 * cfg.m_tiles * 8 * cfg.n_tiles);
    let mut red = SharedMemory::<f32>::new(comptime!(cfg.warps * outputs));
    #[unroll]
    for mt in 0..mts {
        #[unroll]
        for nt in 0..nts {
            #[unroll]
            for h in 0..2usize {
                let vals = acc.index(mt * nts + nt)[h];
                #[unroll]
                for e in 0..2usize {
                    let row = mt * 16 + g + h * 8;
                    red[warp * outputs + row * cols + nt * 8 + t * 2 + e] = vals[e];
                }
            }
        }
    }
    sync_cube();
    let units = comptime!(32 * cfg.warps);
    #[unroll]
    for round in 0..comptime!(outputs.div_ceil(units)) {
        let o = UNIT_POS as usize + round * units;
        let row = row0 + o / cols;
        let col = col0 + o % cols;
        if o < outputs && row < m && col < n {
            let mut sum = 0.0f32;
            #[unroll]
            for w in 0..cfg.warps {
                sum += red[w * outputs + o];
            }
            if comptime!(cfg.direct) {
                c[(z * m + row) * c_pitch + col] =
                    epilogue::<F, A>(sum, bias, col, scale, cfg.bias);
            } else {
                partials[((z * chunks + chunk) * m + row) * n + col] = sum;
            }
        }
    }
}

/// Elements `at` and `at + 1` of `v` as one fragment register.
#[cube]
fn pair<F: Float, NA: Size, NFA: Size>(v: Vector<F, NA>, #[comptime] at: usize) -> Vector<F, NFA> {
    let mut p = Vector::<F, NFA>::empty();
    p[0] = v[at];
    p[1] = v[at + 1];
    p
}
