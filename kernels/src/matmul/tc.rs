//! The tiled tensor-core product: each plane owns a grid of 16 × 16 accumulator fragments,
//! operands travel as 8-wide (16-byte) vectors from global memory through padded shared tiles.

use super::epilogue;
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_tc_kernel()`]: `warps_m × warps_n` planes per cube, each plane
/// `frags_m × frags_n` fragments of 16 × 16, so a cube covers `bm = 16·frags_m·warps_m` rows
/// and `bn = 16·frags_n·warps_n` columns, through `bk`-deep shared tiles (a multiple of 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcConfig {
    /// Planes along m.
    pub warps_m: usize,
    /// Planes along n.
    pub warps_n: usize,
    /// Fragments per plane along m.
    pub frags_m: usize,
    /// Fragments per plane along n.
    pub frags_n: usize,
    /// Depth of one shared tile (a multiple of 16).
    pub bk: usize,
    /// Elements per 16-byte vector of the input dtype (8 for f16/bf16, 4 for f32): the unit of
    /// global and shared accesses, and each shared row's padding.
    pub vec: usize,
    /// Depth of one fragment: 16 for f16/bf16, 8 for TF32 (WMMA 16 × 16 × 8).
    pub kf: usize,
    /// The plane width (32: WMMA is a warp operation).
    pub plane: usize,
    /// Cubes cover the output in column strips this many block-rows tall (1: the launch
    /// order; `grouped_block`). Manual-MMA kernel only.
    pub group: usize,
    /// Add `bias[col]` before the activation.
    pub bias: bool,
    /// A is read as 8-wide vectors along k (the launch's `NA` is 8).
    pub a_vec: bool,
    /// B is read as 8-wide vectors along n (the launch's `NB` is 8).
    pub b_vec: bool,
    /// C is written as 4-wide vectors (the launch's `NC` is 4).
    pub c_vec: bool,
}

/// Padding elements per shared row: 8 halves = 16 bytes, so the 8 rows one fragment load reads
/// start in 8 different 16-byte bank groups.
pub(super) const PAD: usize = 8;

/// This cube's `(block_row, block_col)`: with `group > 1` the launch order is remapped so that
/// consecutive cubes go down a strip `group` block-rows tall before moving right (the last
/// strip shorter), so the cubes resident at once read fewer distinct A and B tiles and reuse
/// them from L2. A bijection of the 2-D grid for any grid size.
#[cube]
pub(super) fn grouped_block(#[comptime] group: usize) -> (usize, usize) {
    let mut by = CUBE_POS_Y as usize;
    let mut bx = CUBE_POS_X as usize;
    if comptime!(group > 1) {
        let gx = CUBE_COUNT_X as usize;
        let (y, x) = grouped_tile(by * gx + bx, gx, CUBE_COUNT_Y as usize, group);
        by = y;
        bx = x;
    }
    (by, bx)
}

/// The `(block_row, block_col)` of the `lin`-th block of a `gx × gy` grid in the order of
/// [`grouped_block`] (`group ≤ 1`: row by row).
#[cube]
pub(super) fn grouped_tile(
    lin: usize,
    gx: usize,
    gy: usize,
    #[comptime] group: usize,
) -> (usize, usize) {
    let mut by = lin / gx;
    let mut bx = lin % gx;
    if comptime!(group > 1) {
        let per_strip = group * gx;
        let first = (lin / per_strip) * group;
        let rows = select(gy - first < group, gy - first, group);
        let within = lin % per_strip;
        by = first + within % rows;
        bx = within / rows;
    }
    (by, bx)
}

/// Where one cube's operands lie.
#[derive(CubeType, Clone, Copy)]
pub(super) struct Place {
    pub(super) a_base: usize,
    pub(super) b_base: usize,
    pub(super) row0: usize,
    pub(super) col0: usize,
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) a_sr: usize,
    pub(super) a_sc: usize,
    pub(super) b_sr: usize,
    pub(super) b_sc: usize,
}

#[cube]
impl Place {
    /// Batch `z`'s block at `(row0, col0)` of an `m × n × k` product with `[batch, row, col]`
    /// element strides.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn at(
        a_strides: &Sequence<usize>,
        b_strides: &Sequence<usize>,
        z: usize,
        row0: usize,
        col0: usize,
        m: usize,
        n: usize,
        k: usize,
    ) -> Place {
        Place {
            a_base: z * a_strides[0],
            b_base: z * b_strides[0],
            row0,
            col0,
            m,
            n,
            k,
            a_sr: a_strides[1],
            a_sc: a_strides[2],
            b_sr: b_strides[1],
            b_sc: b_strides[2],
        }
    }
}

/// This unit's share of the A tile at depth `k0`, as `vec`-wide (16-byte) vectors along k
/// (zero outside).
#[cube]
fn fetch_a8<F: Float, NA: Size, NV: Size>(
    a: &Array<Vector<F, NA>>,
    regs: &mut Array<Vector<F, NV>>,
    p: &Place,
    k0: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let per_row = comptime!(cfg.bk / cfg.vec);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / cfg.vec / units) {
        let s = UNIT_POS as usize + l * units;
        let r = p.row0 + s / per_row;
        let kk = k0 + (s % per_row) * cfg.vec;
        let mut v = Vector::<F, NV>::empty().fill(F::new(0.0));
        if comptime!(cfg.a_vec) {
            if r < p.m && kk < p.k {
                let t = a[(p.a_base + r * p.a_sr + kk) / cfg.vec];
                #[unroll]
                for j in 0..cfg.vec {
                    v[j] = t[j];
                }
            }
        } else {
            #[unroll]
            for j in 0..cfg.vec {
                let mut x = F::new(0.0);
                if r < p.m && kk + j < p.k {
                    x = a[p.a_base + r * p.a_sr + (kk + j) * p.a_sc][0];
                }
                v[j] = x;
            }
        }
        regs[l] = v;
    }
}

/// This unit's share of the B tile at depth `k0`, as `vec`-wide vectors along n (zero
/// outside).
#[cube]
fn fetch_b8<F: Float, NB: Size, NV: Size>(
    b: &Array<Vector<F, NB>>,
    regs: &mut Array<Vector<F, NV>>,
    p: &Place,
    k0: usize,
    #[comptime] cfg: TcConfig,
) {
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let per_row = comptime!(bn / cfg.vec);
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / cfg.vec / units) {
        let s = UNIT_POS as usize + l * units;
        let kk = k0 + s / per_row;
        let col = p.col0 + (s % per_row) * cfg.vec;
        let mut v = Vector::<F, NV>::empty().fill(F::new(0.0));
        if comptime!(cfg.b_vec) {
            if kk < p.k && col < p.n {
                let t = b[(p.b_base + kk * p.b_sr + col) / cfg.vec];
                #[unroll]
                for j in 0..cfg.vec {
                    v[j] = t[j];
                }
            }
        } else {
            #[unroll]
            for j in 0..cfg.vec {
                let mut x = F::new(0.0);
                if kk < p.k && col + j < p.n {
                    x = b[p.b_base + kk * p.b_sr + (col + j) * p.b_sc][0];
                }
                v[j] = x;
            }
        }
        regs[l] = v;
    }
}

/// Stores fetched vectors into shared stage `stage`: A as `[bm][bk + vec]`, B as
/// `[bk][bn + vec]` (row-major, in `vec`-wide vectors; one vector of padding per row).
#[cube]
fn stash8<F: Float, NV: Size>(
    ra: &Array<Vector<F, NV>>,
    rb: &Array<Vector<F, NV>>,
    a_s: &mut SharedMemory<Vector<F, NV>>,
    b_s: &mut SharedMemory<Vector<F, NV>>,
    stage: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let a_row = comptime!((cfg.bk + cfg.vec) / cfg.vec);
    let b_row = comptime!((bn + cfg.vec) / cfg.vec);
    let a_off = stage * comptime!(bm * (cfg.bk + cfg.vec) / cfg.vec);
    let b_off = stage * comptime!(cfg.bk * (bn + cfg.vec) / cfg.vec);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / cfg.vec / units) {
        let s = UNIT_POS as usize + l * units;
        a_s[a_off + (s / comptime!(cfg.bk / cfg.vec)) * a_row + s % comptime!(cfg.bk / cfg.vec)] =
            ra[l];
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / cfg.vec / units) {
        let s = UNIT_POS as usize + l * units;
        b_s[b_off + (s / comptime!(bn / cfg.vec)) * b_row + s % comptime!(bn / cfg.vec)] = rb[l];
    }
}

/// `acc += A_stage · B_stage` for this plane's fragments (`FT`: the fragment type — the input
/// dtype, or TF32 for f32 inputs; `16 × 16 × kf` WMMA shapes).
#[cube]
pub(super) fn multiply_tc<F: Float, FT: Float, NV: Size>(
    a_s: &SharedMemory<Vector<F, NV>>,
    b_s: &SharedMemory<Vector<F, NV>>,
    acc: &Sequence<cmma::Matrix<f32>>,
    stage: usize,
    wm: usize,
    wn: usize,
    #[comptime] cfg: TcConfig,
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let a_row = comptime!((cfg.bk + cfg.vec) / cfg.vec);
    let b_row = comptime!((bn + cfg.vec) / cfg.vec);
    let a_off = stage * comptime!(bm * (cfg.bk + cfg.vec) / cfg.vec)
        + wm * comptime!(16 * cfg.frags_m) * a_row;
    let b_off = stage * comptime!(cfg.bk * (bn + cfg.vec) / cfg.vec)
        + wn * comptime!(16 * cfg.frags_n / cfg.vec);
    let span_a = comptime!((15 * (cfg.bk + cfg.vec) + cfg.kf) / cfg.vec);
    let span_b = comptime!(((cfg.kf - 1) * (bn + cfg.vec) + 16) / cfg.vec);
    #[unroll]
    for ks in 0..comptime!(cfg.bk / cfg.kf) {
        let mut fa = Sequence::<cmma::Matrix<FT>>::new();
        let mut fb = Sequence::<cmma::Matrix<FT>>::new();
        #[unroll]
        for i in 0..cfg.frags_m {
            let start = a_off + i * 16 * a_row + ks * comptime!(cfg.kf / cfg.vec);
            // SAFETY: loaded in full on the next line before any use.
            let frag = unsafe {
                cmma::Matrix::<FT>::uninitialized(
                    cmma::MatrixIdent::A,
                    16usize,
                    16usize,
                    cfg.kf,
                    cmma::MatrixLayout::RowMajor,
                )
            };
            cmma::load(
                &frag,
                &a_s.slice(start, start + span_a),
                comptime!((cfg.bk + cfg.vec) as u32),
            );
            fa.push(frag);
        }
        #[unroll]
        for j in 0..cfg.frags_n {
            let start = b_off + ks * cfg.kf * b_row + j * comptime!(16 / cfg.vec);
            // SAFETY: loaded in full on the next line before any use.
            let frag = unsafe {
                cmma::Matrix::<FT>::uninitialized(
                    cmma::MatrixIdent::B,
                    16usize,
                    16usize,
                    cfg.kf,
                    cmma::MatrixLayout::RowMajor,
                )
            };
            cmma::load(
                &frag,
                &b_s.slice(start, start + span_b),
                comptime!((bn + cfg.vec) as u32),
            );
            fb.push(frag);
        }
        #[unroll]
        for i in 0..cfg.frags_m {
            #[unroll]
            for j in 0..cfg.frags_n {
                let c = &acc[i * cfg.frags_n + j];
                cmma::execute::<FT, FT, f32, f32>(&fa[i], &fb[j], c, c);
            }
        }
    }
}

/// Tensor-core product, f16/bf16 inputs, f32 accumulation (cubecl `cmma`: WMMA on CUDA).
/// `CUBE_DIM = (plane · warps_m · warps_n, 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Operands move as 16-byte vectors where their layout allows (`NA = 8`: A rows contiguous,
/// `k` and the row stride multiples of 8; `NB = 8`: B rows contiguous, `n` and the row stride
/// multiples of 8), else as strided scalars; shared rows are padded by 16 bytes. Loads run two
/// tiles ahead through registers (tile `t + 1` waits in registers while tile `t` is multiplied;
/// the loads of tile `t + 2` are issued at the end of iteration `t`), with two shared stages and
/// one barrier per tile. The accumulators go through shared memory (f32) for the epilogue
/// (bias, activation, masks, 4-wide stores when `NC = 4`).
/// Preconditions: as [`TcConfig`]; every addressed element in bounds; vector sizes match the
/// flags; the device has 16×16×16 cmma for `F` with f32 accumulators and planes of `plane`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_tc_kernel<
    F: Float,
    FT: Float,
    NA: Size,
    NB: Size,
    NV: Size,
    NC: Size,
    A: Activation,
>(
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
) {
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let mut a_s =
        SharedMemory::<Vector<F, NV>>::new(comptime!(2 * bm * (cfg.bk + cfg.vec) / cfg.vec));
    let mut b_s =
        SharedMemory::<Vector<F, NV>>::new(comptime!(2 * cfg.bk * (bn + cfg.vec) / cfg.vec));
    let mut ra = Array::<Vector<F, NV>>::new(comptime!(bm * cfg.bk / cfg.vec / units));
    let mut rb = Array::<Vector<F, NV>>::new(comptime!(cfg.bk * bn / cfg.vec / units));
    let z = CUBE_POS_Z as usize;
    let p = Place::at(
        &a_strides,
        &b_strides,
        z,
        CUBE_POS_Y as usize * bm,
        CUBE_POS_X as usize * bn,
        m,
        n,
        k,
    );
    let plane_id = UNIT_POS as usize / cfg.plane;
    let wm = plane_id / cfg.warps_n;
    let wn = plane_id % cfg.warps_n;
    let mut acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..comptime!(cfg.frags_m * cfg.frags_n) {
        acc.push(cmma::Matrix::<f32>::from_value(
            cmma::MatrixIdent::Accumulator,
            16usize,
            16usize,
            cfg.kf,
            cmma::MatrixLayout::Undefined,
            0.0,
        ));
    }
    let tiles = k.div_ceil(cfg.bk);

    fetch_a8::<F, NA, NV>(a, &mut ra, &p, 0, cfg);
    fetch_b8::<F, NB, NV>(b, &mut rb, &p, 0, cfg);
    stash8::<F, NV>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
    if tiles > 1 {
        fetch_a8::<F, NA, NV>(a, &mut ra, &p, cfg.bk, cfg);
        fetch_b8::<F, NB, NV>(b, &mut rb, &p, cfg.bk, cfg);
    }
    sync_cube();
    for t in 0..tiles {
        multiply_tc::<F, FT, NV>(&a_s, &b_s, &acc, t % 2, wm, wn, cfg);
        if t + 1 < tiles {
            stash8::<F, NV>(&ra, &rb, &mut a_s, &mut b_s, (t + 1) % 2, cfg);
        }
        sync_cube();
        if t + 2 < tiles {
            fetch_a8::<F, NA, NV>(a, &mut ra, &p, (t + 2) * cfg.bk, cfg);
            fetch_b8::<F, NB, NV>(b, &mut rb, &p, (t + 2) * cfg.bk, cfg);
        }
    }

    // Epilogue through shared memory: fragments out (row stride bn + 4 floats, a multiple of
    // 16 bytes as WMMA stores need), then 4 consecutive columns per unit and step.
    let c_row = comptime!(bn + 4);
    let mut c_s = SharedMemory::<f32>::new(comptime!(bm * (bn + 4)));
    let span = comptime!(15 * (bn + 4) + 16);
    #[unroll]
    for i in 0..cfg.frags_m {
        #[unroll]
        for j in 0..cfg.frags_n {
            let at = (wm * comptime!(16 * cfg.frags_m) + i * 16) * c_row
                + wn * comptime!(16 * cfg.frags_n)
                + j * 16;
            cmma::store(
                &mut c_s.slice_mut(at, at + span),
                &acc[i * cfg.frags_n + j],
                comptime!((bn + 4) as u32),
                cmma::MatrixLayout::RowMajor,
            );
        }
    }
    sync_cube();
    let per_row = comptime!(bn / 4);
    #[unroll]
    for l in 0..comptime!(bm * bn / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        let lr = s / per_row;
        let lc = (s % per_row) * 4;
        let r = p.row0 + lr;
        let col = p.col0 + lc;
        let row_start = (z * m + r) * c_pitch;
        if comptime!(cfg.c_vec) {
            if r < m && col < n {
                let mut v = Vector::<F, NC>::empty();
                #[unroll]
                for j in 0..4usize {
                    v[j] =
                        epilogue::<F, A>(c_s[lr * c_row + lc + j], bias, col + j, scale, cfg.bias);
                }
                c[(row_start + col) / 4] = v;
            }
        } else {
            #[unroll]
            for j in 0..4usize {
                if r < m && col + j < n {
                    let y =
                        epilogue::<F, A>(c_s[lr * c_row + lc + j], bias, col + j, scale, cfg.bias);
                    c[row_start + col + j] = Vector::<F, NC>::new(y);
                }
            }
        }
    }
}
