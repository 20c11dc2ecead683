//! Matrix products `C[z] = act(A[z]·B[z] + bias)`, f32 accumulation whatever the storage type.
//!
//! | kernel | mapping | memory pattern |
//! |---|---|---|
//! | [`matmul_naive_kernel()`] | one unit per output | every operand read from global memory (L1/L2) |
//! | [`matmul_blocked_kernel()`] | a cube per `bm × bn` block, each unit a `tm × tn` register tile | `bk`-deep tiles of A (stored transposed) and B in shared memory; optional ping-pong double buffer |
//! | [`matmul_simt_kernel()`] | as the blocked kernel, each unit `tm × tn` in 4 × 4 groups | shared tiles stored as 4-wide vectors (16-byte reads), 16-byte B loads and C stores where the layout allows, next tile prefetched into registers, 1 or 2 stages |
//! | [`matmul_simt_sk_kernel()`] + [`matmul_simt_fixup_kernel()`] | the SIMT kernel's blocks; whole blocks for all but the last `tiles mod SMs`, which one cube per SM shares as a stream of depth tiles (stream-K) | as the SIMT kernel; tail pieces go to an f32 workspace, and the fixup pass sums each tail block's pieces in a fixed order before the epilogue |
//! | [`matmul_simt_async_kernel()`] | as the SIMT kernel (f32) | A and B tiles copied global → shared by `cp.async` into 2–4 stages on mbarriers (A row-major, read 4 depths at a time), one barrier per tile |
//! | [`matmul_tc_kernel()`] | a cube of `warps_m × warps_n` planes, each a grid of 16×16 fragments | 16-byte vector loads into padded shared tiles, two stages, loads two tiles ahead through registers; tensor cores through `cmma` |
//! | [`matmul_cmma_kernel()`] | a cube of planes, each plane a 32 × 32 tile of 2 × 2 16×16 fragments | shared tiles, tensor cores through cubecl's `cmma` (WMMA on CUDA) |
//!
//! Operands are addressed through element strides (batch, row, column), so transposed and
//! broadcast (batch stride 0) inputs need no copy; C is `[batch, m, n]` with rows `c_pitch ≥ n`
//! apart (dense when `c_pitch = n`; frameworks pad rows). Ragged edges
//! are zero-filled on load and masked on store. The epilogue adds a per-column bias (when
//! `bias`) and applies the [`Activation`] in f32 before the single store.

use crate::activation::Activation;
use cubecl::prelude::*;

mod simt;
mod simt_async;
mod tc;
mod tc_async;
mod tc_mma;
pub use simt::{SimtConfig, matmul_simt_fixup_kernel, matmul_simt_kernel, matmul_simt_sk_kernel};
pub use simt_async::matmul_simt_async_kernel;
pub use tc::{TcConfig, matmul_tc_kernel};
pub use tc_async::matmul_tc_async_kernel;
pub use tc_mma::matmul_tc_mma_kernel;

/// Comptime shape of [`matmul_blocked_kernel()`].
///
/// Preconditions: `bm % tm == 0`, `bn % tn == 0`; with `u = (bm/tm)·(bn/tn)` units,
/// `u` divides `bm·bk` and `bk·bn`; `tm`, `tn` are 1, 4 or a multiple of 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockConfig {
    /// Block rows.
    pub bm: usize,
    /// Block columns.
    pub bn: usize,
    /// Depth of one shared tile.
    pub bk: usize,
    /// Rows per unit.
    pub tm: usize,
    /// Columns per unit.
    pub tn: usize,
    /// Padding words per shared row (4 keeps 16-byte alignment and breaks bank conflicts).
    pub pad: usize,
    /// Ping-pong shared buffers: tile `t + 1` is fetched while tile `t` is multiplied.
    pub double_buffer: bool,
    /// Add `bias[col]` before the activation.
    pub bias: bool,
}

/// Row (or column) of a unit's `i`-th register within the block. Tiles of 8 or more are split
/// into halves `bm / 2` apart so that 4-wide groups of neighbouring units are contiguous in
/// shared memory (conflict-free, vectorizable reads).
#[cube]
fn lane_offset(i: usize, unit: usize, #[comptime] t: usize, #[comptime] block: usize) -> usize {
    let half = comptime!(if t >= 8 { 4usize } else { t });
    let groups = comptime!(t / half);
    (i / half) * comptime!(block / groups) + unit * half + i % half
}

/// The `(x, y)` register tile of this unit. With at least 32 units in 8 × 4 groups, each run of
/// 32 consecutive units (one NVIDIA warp) covers 8 tiles across × 4 down instead of 16 × 2, so
/// a warp's shared-memory reads touch 8 B-columns and 4 A-rows' worth of tiles (a third less
/// traffic per step). A pure relabeling of the units: correct for any plane width.
#[cube]
fn unit_tile(#[comptime] cfg: BlockConfig) -> (usize, usize) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    let mut tx = UNIT_POS_X as usize;
    let mut ty = UNIT_POS_Y as usize;
    if comptime!(ux % 8 == 0 && uy % 4 == 0 && ux * uy >= 32) {
        let u = UNIT_POS as usize;
        let group = u / 32;
        let lane = u % 32;
        let groups_x = comptime!(ux / 8);
        tx = (group % groups_x) * 8 + lane % 8;
        ty = (group / groups_x) * 4 + lane / 8;
    }
    (tx, ty)
}

/// `v` after the epilogue: `+ bias[col]` (when `bias`), then the activation.
#[cube]
fn epilogue<F: Float, A: Activation>(
    v: f32,
    bias: &Array<F>,
    col: usize,
    scale: f32,
    #[comptime] with_bias: bool,
) -> F {
    let mut x = v;
    if comptime!(with_bias) {
        x += f32::cast_from(bias[col]);
    }
    F::cast_from(A::apply(x, scale))
}

/// One output per unit. `CUBE_DIM = (16, 16)`, cubes `(⌈n/16⌉, ⌈m/16⌉, batch)`.
/// Preconditions: strides address in-bounds elements for every `(z, row < m, col < n, kk < k)`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_naive_kernel<F: Float, A: Activation>(
    a: &Array<F>,
    b: &Array<F>,
    bias: &Array<F>,
    c: &mut Array<F>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] with_bias: bool,
) {
    let col = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let row = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let z = CUBE_POS_Z as usize;
    if row < m && col < n {
        let a_base = z * a_strides[0] + row * a_strides[1];
        let b_base = z * b_strides[0] + col * b_strides[2];
        let mut acc = 0.0f32;
        for kk in 0..k {
            acc += f32::cast_from(a[a_base + kk * a_strides[2]])
                * f32::cast_from(b[b_base + kk * b_strides[1]]);
        }
        c[(z * m + row) * c_pitch + col] = epilogue::<F, A>(acc, bias, col, scale, with_bias);
    }
}

/// Loads this unit's share of the A tile (`bm × bk` at `(row0, k0)`) into registers.
#[cube]
#[allow(clippy::too_many_arguments)]
fn fetch_a<F: Float>(
    a: &Array<F>,
    regs: &mut Array<F>,
    base: usize,
    row0: usize,
    k0: usize,
    m: usize,
    k: usize,
    s_row: usize,
    s_col: usize,
    #[comptime] cfg: BlockConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    #[unroll]
    for l in 0..comptime!(cfg.bm * cfg.bk / units) {
        let idx = UNIT_POS as usize + l * units;
        let r = row0 + idx / cfg.bk;
        let kk = k0 + idx % cfg.bk;
        let mut v = F::new(0.0);
        if r < m && kk < k {
            v = a[base + r * s_row + kk * s_col];
        }
        regs[l] = v;
    }
}

/// Loads this unit's share of the B tile (`bk × bn` at `(k0, col0)`) into registers.
#[cube]
#[allow(clippy::too_many_arguments)]
fn fetch_b<F: Float>(
    b: &Array<F>,
    regs: &mut Array<F>,
    base: usize,
    k0: usize,
    col0: usize,
    k: usize,
    n: usize,
    s_row: usize,
    s_col: usize,
    #[comptime] cfg: BlockConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bn / units) {
        let idx = UNIT_POS as usize + l * units;
        let kk = k0 + idx / cfg.bn;
        let cc = col0 + idx % cfg.bn;
        let mut v = F::new(0.0);
        if kk < k && cc < n {
            v = b[base + kk * s_row + cc * s_col];
        }
        regs[l] = v;
    }
}

/// Where one cube's operands lie: batch offsets, block origin, problem size, row/column
/// strides of A and B.
#[derive(CubeType, Clone, Copy)]
struct Geometry {
    a_base: usize,
    b_base: usize,
    row0: usize,
    col0: usize,
    m: usize,
    n: usize,
    k: usize,
    a_sr: usize,
    a_sc: usize,
    b_sr: usize,
    b_sc: usize,
}

/// Loads this unit's share of the A and B tiles at depth `k0` into registers.
#[cube]
fn fetch_tiles<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    ra: &mut Array<F>,
    rb: &mut Array<F>,
    g: &Geometry,
    k0: usize,
    #[comptime] cfg: BlockConfig,
) {
    fetch_a::<F>(a, ra, g.a_base, g.row0, k0, g.m, g.k, g.a_sr, g.a_sc, cfg);
    fetch_b::<F>(b, rb, g.b_base, k0, g.col0, g.k, g.n, g.b_sr, g.b_sc, cfg);
}

/// Stores fetched registers into shared stage `stage`: A transposed (`[bk][bm + pad]`), B as is
/// (`[bk][bn + pad]`).
#[cube]
fn stash<F: Float>(
    ra: &Array<F>,
    rb: &Array<F>,
    a_s: &mut SharedMemory<F>,
    b_s: &mut SharedMemory<F>,
    stage: usize,
    #[comptime] cfg: BlockConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let a_stride = comptime!(cfg.bm + cfg.pad);
    let b_stride = comptime!(cfg.bn + cfg.pad);
    let a_off = stage * comptime!(cfg.bk * (cfg.bm + cfg.pad));
    let b_off = stage * comptime!(cfg.bk * (cfg.bn + cfg.pad));
    #[unroll]
    for l in 0..comptime!(cfg.bm * cfg.bk / units) {
        let idx = UNIT_POS as usize + l * units;
        a_s[a_off + (idx % cfg.bk) * a_stride + idx / cfg.bk] = ra[l];
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bn / units) {
        let idx = UNIT_POS as usize + l * units;
        b_s[b_off + (idx / cfg.bn) * b_stride + idx % cfg.bn] = rb[l];
    }
}

/// `acc += A_tile · B_tile` for this unit's `tm × tn` registers, from shared stage `stage`.
#[cube]
fn multiply_stage<F: Float>(
    a_s: &SharedMemory<F>,
    b_s: &SharedMemory<F>,
    acc: &mut Array<f32>,
    stage: usize,
    tx: usize,
    ty: usize,
    #[comptime] cfg: BlockConfig,
) {
    let a_stride = comptime!(cfg.bm + cfg.pad);
    let b_stride = comptime!(cfg.bn + cfg.pad);
    let a_off = stage * comptime!(cfg.bk * (cfg.bm + cfg.pad));
    let b_off = stage * comptime!(cfg.bk * (cfg.bn + cfg.pad));
    let mut fa = Array::<f32>::new(cfg.tm);
    let mut fb = Array::<f32>::new(cfg.tn);
    #[unroll]
    for kk in 0..cfg.bk {
        #[unroll]
        for i in 0..cfg.tm {
            fa[i] = f32::cast_from(a_s[a_off + kk * a_stride + lane_offset(i, ty, cfg.tm, cfg.bm)]);
        }
        #[unroll]
        for j in 0..cfg.tn {
            fb[j] = f32::cast_from(b_s[b_off + kk * b_stride + lane_offset(j, tx, cfg.tn, cfg.bn)]);
        }
        #[unroll]
        for i in 0..cfg.tm {
            #[unroll]
            for j in 0..cfg.tn {
                acc[i * cfg.tn + j] += fa[i] * fb[j];
            }
        }
    }
}

/// Shared-memory tiled, register-blocked product (`tm = tn = 1` is the plain tiled kernel).
/// `CUBE_DIM = (bn/tn, bm/tm)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Strides are `[batch, row, col]` in elements for A (`m × k`) and B (`k × n`); a batch stride
/// of 0 broadcasts. Preconditions: as [`BlockConfig`]; every addressed element in bounds;
/// `k ≥ 1`; `c` holds `batch · m · n`; `bias` holds `n` when `cfg.bias`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_blocked_kernel<F: Float, A: Activation>(
    a: &Array<F>,
    b: &Array<F>,
    bias: &Array<F>,
    c: &mut Array<F>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] cfg: BlockConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let stages = comptime!(if cfg.double_buffer { 2usize } else { 1usize });
    let mut a_s = SharedMemory::<F>::new(comptime!(stages * cfg.bk * (cfg.bm + cfg.pad)));
    let mut b_s = SharedMemory::<F>::new(comptime!(stages * cfg.bk * (cfg.bn + cfg.pad)));
    let mut ra = Array::<F>::new(comptime!(cfg.bm * cfg.bk / units));
    let mut rb = Array::<F>::new(comptime!(cfg.bk * cfg.bn / units));
    let mut acc = Array::<f32>::new(comptime!(cfg.tm * cfg.tn));
    #[unroll]
    for i in 0..comptime!(cfg.tm * cfg.tn) {
        acc[i] = 0.0;
    }
    let z = CUBE_POS_Z as usize;
    let row0 = CUBE_POS_Y as usize * cfg.bm;
    let col0 = CUBE_POS_X as usize * cfg.bn;
    let a_base = z * a_strides[0];
    let b_base = z * b_strides[0];
    let (a_sr, a_sc) = (a_strides[1], a_strides[2]);
    let (b_sr, b_sc) = (b_strides[1], b_strides[2]);
    let tiles = k.div_ceil(cfg.bk);
    let (tx, ty) = unit_tile(cfg);

    let geo = Geometry {
        a_base,
        b_base,
        row0,
        col0,
        m,
        n,
        k,
        a_sr,
        a_sc,
        b_sr,
        b_sc,
    };
    fetch_tiles::<F>(a, b, &mut ra, &mut rb, &geo, 0, cfg);
    stash::<F>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
    sync_cube();
    for t in 0..tiles {
        let next = t + 1;
        if comptime!(cfg.double_buffer) {
            let cur = t % 2;
            // Global loads of the next tile are in flight while this one is multiplied.
            if next < tiles {
                fetch_tiles::<F>(a, b, &mut ra, &mut rb, &geo, next * cfg.bk, cfg);
            }
            multiply_stage::<F>(&a_s, &b_s, &mut acc, cur, tx, ty, cfg);
            if next < tiles {
                stash::<F>(&ra, &rb, &mut a_s, &mut b_s, 1 - cur, cfg);
            }
            sync_cube();
        } else {
            multiply_stage::<F>(&a_s, &b_s, &mut acc, 0, tx, ty, cfg);
            sync_cube();
            if next < tiles {
                fetch_tiles::<F>(a, b, &mut ra, &mut rb, &geo, next * cfg.bk, cfg);
                stash::<F>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
            }
            sync_cube();
        }
    }

    #[unroll]
    for i in 0..cfg.tm {
        let r = row0 + lane_offset(i, ty, cfg.tm, cfg.bm);
        #[unroll]
        for j in 0..cfg.tn {
            let cc = col0 + lane_offset(j, tx, cfg.tn, cfg.bn);
            if r < m && cc < n {
                c[(z * m + r) * c_pitch + cc] =
                    epilogue::<F, A>(acc[i * cfg.tn + j], bias, cc, scale, cfg.bias);
            }
        }
    }
}

/// Comptime shape of [`matmul_cmma_kernel()`]: `planes_m × planes_n` planes per cube, each a
/// 32 × 32 output tile (2 × 2 fragments of 16 × 16), `bk`-deep shared tiles (a multiple of 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmmaConfig {
    /// Planes along m.
    pub planes_m: usize,
    /// Planes along n.
    pub planes_n: usize,
    /// Depth of one shared tile.
    pub bk: usize,
    /// The device's plane width (32 on NVIDIA).
    pub plane: usize,
    /// Add `bias[col]` before the activation.
    pub bias: bool,
}

/// Tensor-core product: f16/bf16 inputs, f32 accumulation. `CUBE_DIM = (plane, planes_m ·
/// planes_n)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)` with `bm = 32·planes_m`, `bn = 32·planes_n`.
/// The accumulators go through shared memory for the epilogue (bias, activation, masks).
/// Preconditions: as [`matmul_blocked_kernel()`]; the device supports 16×16×16 cmma for `F`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_cmma_kernel<F: Float, A: Activation>(
    a: &Array<F>,
    b: &Array<F>,
    bias: &Array<F>,
    c: &mut Array<F>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] cfg: CmmaConfig,
) {
    let bm = comptime!(32 * cfg.planes_m);
    let bn = comptime!(32 * cfg.planes_n);
    let units = comptime!(cfg.plane * cfg.planes_m * cfg.planes_n);
    let mut a_s = SharedMemory::<F>::new(comptime!(bm * cfg.bk));
    let mut b_s = SharedMemory::<F>::new(comptime!(cfg.bk * bn));
    let mut c_s = SharedMemory::<f32>::new(comptime!(bm * bn));
    let z = CUBE_POS_Z as usize;
    let row0 = CUBE_POS_Y as usize * bm;
    let col0 = CUBE_POS_X as usize * bn;
    let a_base = z * a_strides[0];
    let b_base = z * b_strides[0];
    let plane_id = UNIT_POS_Y as usize;
    let pm = plane_id / cfg.planes_n;
    let pn = plane_id % cfg.planes_n;
    let c00 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let c01 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let c10 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let c11 = cmma::Matrix::<f32>::from_value(
        cmma::MatrixIdent::Accumulator,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::Undefined,
        0.0,
    );
    let tiles = k.div_ceil(cfg.bk);
    for t in 0..tiles {
        let k0 = t * cfg.bk;
        #[unroll]
        for l in 0..comptime!(bm * cfg.bk / units) {
            let idx = UNIT_POS as usize + l * units;
            let r = row0 + idx / cfg.bk;
            let kk = k0 + idx % cfg.bk;
            let mut v = F::new(0.0);
            if r < m && kk < k {
                v = a[a_base + r * a_strides[1] + kk * a_strides[2]];
            }
            a_s[idx] = v;
        }
        #[unroll]
        for l in 0..comptime!(cfg.bk * bn / units) {
            let idx = UNIT_POS as usize + l * units;
            let kk = k0 + idx / bn;
            let cc = col0 + idx % bn;
            let mut v = F::new(0.0);
            if kk < k && cc < n {
                v = b[b_base + kk * b_strides[1] + cc * b_strides[2]];
            }
            b_s[idx] = v;
        }
        sync_cube();
        #[unroll]
        for ks in 0..comptime!(cfg.bk / 16) {
            let a0 = (pm * 32) * cfg.bk + ks * 16;
            let a1 = a0 + 16 * cfg.bk;
            let b0 = ks * 16 * bn + pn * 32;
            let b1 = b0 + 16;
            let span_a = comptime!(15 * cfg.bk + 16);
            let span_b = comptime!(15 * bn + 16);
            let fa0 = cmma::Matrix::<F>::from_slice(
                cmma::MatrixIdent::A,
                16usize,
                16usize,
                16usize,
                cmma::MatrixLayout::RowMajor,
                &a_s.slice(a0, a0 + span_a),
                cfg.bk as u32,
            );
            let fa1 = cmma::Matrix::<F>::from_slice(
                cmma::MatrixIdent::A,
                16usize,
                16usize,
                16usize,
                cmma::MatrixLayout::RowMajor,
                &a_s.slice(a1, a1 + span_a),
                cfg.bk as u32,
            );
            let fb0 = cmma::Matrix::<F>::from_slice(
                cmma::MatrixIdent::B,
                16usize,
                16usize,
                16usize,
                cmma::MatrixLayout::RowMajor,
                &b_s.slice(b0, b0 + span_b),
                bn as u32,
            );
            let fb1 = cmma::Matrix::<F>::from_slice(
                cmma::MatrixIdent::B,
                16usize,
                16usize,
                16usize,
                cmma::MatrixLayout::RowMajor,
                &b_s.slice(b1, b1 + span_b),
                bn as u32,
            );
            cmma::execute::<F, F, f32, f32>(&fa0, &fb0, &c00, &c00);
            cmma::execute::<F, F, f32, f32>(&fa0, &fb1, &c01, &c01);
            cmma::execute::<F, F, f32, f32>(&fa1, &fb0, &c10, &c10);
            cmma::execute::<F, F, f32, f32>(&fa1, &fb1, &c11, &c11);
        }
        sync_cube();
    }
    let o00 = (pm * 32) * bn + pn * 32;
    let span = comptime!(15 * bn + 16);
    let o01 = o00 + 16;
    let o10 = o00 + 16 * bn;
    let o11 = o10 + 16;
    cmma::store(
        &mut c_s.slice_mut(o00, o00 + span),
        &c00,
        bn as u32,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c_s.slice_mut(o01, o01 + span),
        &c01,
        bn as u32,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c_s.slice_mut(o10, o10 + span),
        &c10,
        bn as u32,
        cmma::MatrixLayout::RowMajor,
    );
    cmma::store(
        &mut c_s.slice_mut(o11, o11 + span),
        &c11,
        bn as u32,
        cmma::MatrixLayout::RowMajor,
    );
    sync_cube();
    #[unroll]
    for l in 0..comptime!(bm * bn / units) {
        let idx = UNIT_POS as usize + l * units;
        let r = row0 + idx / bn;
        let cc = col0 + idx % bn;
        if r < m && cc < n {
            c[(z * m + r) * c_pitch + cc] = epilogue::<F, A>(c_s[idx], bias, cc, scale, cfg.bias);
        }
    }
}

/// `order[lin] = by · CUBE_COUNT_X + bx` for the cube at launch position
/// `lin = CUBE_POS_Y · CUBE_COUNT_X + CUBE_POS_X`, where `(by, bx)` is the block the grouped
/// order of the manual-MMA and SIMT kernels (`group` block-rows per strip) hands that cube — so
/// tests can check the remap on any backend. `CUBE_DIM = 1`; `order` holds the whole 2-D grid.
#[cube(launch_unchecked)]
pub fn grouped_order_kernel(order: &mut Array<u32>, #[comptime] group: usize) {
    let (by, bx) = tc::grouped_block(group);
    let gx = CUBE_COUNT_X as usize;
    let lin = CUBE_POS_Y as usize * gx + CUBE_POS_X as usize;
    order[lin] = (by * gx + bx) as u32;
}
