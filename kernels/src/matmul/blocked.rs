//! The shared-memory tiled, register-blocked kernel (`tm = tn = 1`: the plain tiled one).

use super::common::{Place, cube_block, epilogue, warp_tiles, zeroed};
use crate::activation::Activation;
use cubecl::prelude::*;

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

/// The `(x, y)` register tile of this unit (see [`warp_tiles`]).
#[cube]
fn unit_tile(#[comptime] cfg: BlockConfig) -> (usize, usize) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    warp_tiles(UNIT_POS_X as usize, UNIT_POS_Y as usize, ux, uy)
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

/// Loads this unit's share of the A and B tiles at depth `k0` into registers.
#[cube]
fn fetch_tiles<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    ra: &mut Array<F>,
    rb: &mut Array<F>,
    p: &Place,
    k0: usize,
    #[comptime] cfg: BlockConfig,
) {
    fetch_a::<F>(a, ra, p.a_base, p.row0, k0, p.m, p.k, p.a_sr, p.a_sc, cfg);
    fetch_b::<F>(b, rb, p.b_base, k0, p.col0, p.k, p.n, p.b_sr, p.b_sc, cfg);
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
    let mut acc = zeroed(comptime!(cfg.tm * cfg.tn));
    let block = cube_block(1usize);
    let p = Place::new(&a_strides, &b_strides, m, n, k, block, cfg.bm, cfg.bn);
    let tiles = k.div_ceil(cfg.bk);
    let (tx, ty) = unit_tile(cfg);

    fetch_tiles::<F>(a, b, &mut ra, &mut rb, &p, 0, cfg);
    stash::<F>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
    sync_cube();
    for t in 0..tiles {
        let next = t + 1;
        if comptime!(cfg.double_buffer) {
            let cur = t % 2;
            // Global loads of the next tile are in flight while this one is multiplied.
            if next < tiles {
                fetch_tiles::<F>(a, b, &mut ra, &mut rb, &p, next * cfg.bk, cfg);
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
                fetch_tiles::<F>(a, b, &mut ra, &mut rb, &p, next * cfg.bk, cfg);
                stash::<F>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
            }
            sync_cube();
        }
    }

    #[unroll]
    for i in 0..cfg.tm {
        let r = p.row0 + lane_offset(i, ty, cfg.tm, cfg.bm);
        #[unroll]
        for j in 0..cfg.tn {
            let cc = p.col0 + lane_offset(j, tx, cfg.tn, cfg.bn);
            if r < m && cc < n {
                c[(p.z * m + r) * c_pitch + cc] =
                    epilogue::<F, A>(acc[i * cfg.tn + j], bias, cc, scale, cfg.bias);
            }
        }
    }
}
