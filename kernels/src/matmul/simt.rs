//! The vectorized CUDA-core product: shared tiles held as 4-wide vectors, so every shared read
//! in the inner loop is one 16-byte access that feeds 4 × 4 FMAs.

use super::common::{Place, cube_block, numbered_block, store4, warp_tiles, zeroed};
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_simt_kernel()`].
///
/// Preconditions: `tm`, `tn` are multiples of 4; `bm % tm == 0`, `bn % tn == 0`; with
/// `u = (bm/tm)·(bn/tn)` units, `u` divides `bk·bm/4` and `bk·bn/4`; `stages` is 1 or 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimtConfig {
    /// Block rows.
    pub bm: usize,
    /// Block columns.
    pub bn: usize,
    /// Depth of one shared tile.
    pub bk: usize,
    /// Rows per unit (groups of 4, `bm / (tm/4)` apart).
    pub tm: usize,
    /// Columns per unit (groups of 4, `bn / (tn/4)` apart).
    pub tn: usize,
    /// Padding vectors per row of the transposed A tile (spreads its transposing stores over
    /// the banks; the reads in the inner loop are row-wise and never conflict).
    pub pad: usize,
    /// Shared stages: 1 (prefetch into registers, two barriers per tile) or 2 (ping-pong, one
    /// barrier per tile).
    pub stages: usize,
    /// Cubes cover the output in column strips this many block-rows tall (1: the launch
    /// order; see `common::grouped_block`).
    pub group: usize,
    /// Add `bias[col]` before the activation.
    pub bias: bool,
    /// B is read as 4-wide vectors (the launch's `NB` is 4).
    pub b_vec: bool,
    /// C is written as 4-wide vectors (the launch's `NC` is 4).
    pub c_vec: bool,
    /// [`matmul_simt_kernel()`] runs on a 1-D grid whose cube `j` takes output block `j` in
    /// the numbering of [`matmul_simt_sk_kernel()`] (the stream-K launch's whole blocks `0..dp`
    /// on `dp` cubes), instead of one cube per block of a `(⌈n/bn⌉, ⌈m/bm⌉, batch)` grid.
    pub linear: bool,
}

/// The `(x, y)` register tile of this unit of a `ux × uy` grid (see [`warp_tiles`]).
#[cube]
pub(super) fn simt_unit(#[comptime] ux: usize, #[comptime] uy: usize) -> (usize, usize) {
    warp_tiles(UNIT_POS as usize % ux, UNIT_POS as usize / ux, ux, uy)
}

/// Fetches this unit's share of the A tile at depth `k0`: each slot is 4 consecutive rows at
/// one depth (scalar loads, any strides; zero outside the problem).
#[cube]
fn fetch_a4<F: Float>(
    a: &Array<F>,
    regs: &mut Array<Vector<F, Const<4>>>,
    o: &Place,
    k0: usize,
    #[comptime] cfg: SimtConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bm / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        let kk = k0 + s % cfg.bk;
        let r = o.row0 + (s / cfg.bk) * 4;
        let mut v = Vector::<F, Const<4>>::empty();
        #[unroll]
        for i in 0..4usize {
            let mut x = F::new(0.0);
            if r + i < o.m && kk < o.k {
                x = a[o.a_base + (r + i) * o.a_sr + kk * o.a_sc];
            }
            v[i] = x;
        }
        regs[l] = v;
    }
}

/// Fetches this unit's share of the B tile at depth `k0`: each slot is 4 consecutive columns
/// of one row — one 16-byte load when `NB = 4` (B row-contiguous, `n` and the row stride
/// multiples of 4, base aligned), else 4 strided scalar loads.
#[cube]
fn fetch_b4<F: Float, NB: Size>(
    b: &Array<Vector<F, NB>>,
    regs: &mut Array<Vector<F, Const<4>>>,
    o: &Place,
    k0: usize,
    #[comptime] cfg: SimtConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let bn4 = comptime!(cfg.bn / 4);
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bn / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        let kk = k0 + s / bn4;
        let col = o.col0 + (s % bn4) * 4;
        let mut v = Vector::<F, Const<4>>::empty();
        if comptime!(cfg.b_vec) {
            let mut t = Vector::<F, NB>::empty().fill(F::new(0.0));
            if kk < o.k && col < o.n {
                t = b[(o.b_base + kk * o.b_sr + col) / 4];
            }
            #[unroll]
            for j in 0..4usize {
                v[j] = t[j];
            }
        } else {
            #[unroll]
            for j in 0..4usize {
                let mut x = F::new(0.0);
                if kk < o.k && col + j < o.n {
                    x = b[o.b_base + kk * o.b_sr + (col + j) * o.b_sc][0];
                }
                v[j] = x;
            }
        }
        regs[l] = v;
    }
}

/// Stores fetched slots into shared stage `stage`: A transposed (`[bk][bm/4 + pad]` vectors),
/// B as is (`[bk][bn/4]` vectors).
#[cube]
fn stash4<F: Float>(
    ra: &Array<Vector<F, Const<4>>>,
    rb: &Array<Vector<F, Const<4>>>,
    a_s: &mut SharedMemory<Vector<F, Const<4>>>,
    b_s: &mut SharedMemory<Vector<F, Const<4>>>,
    stage: usize,
    #[comptime] cfg: SimtConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let a_row = comptime!(cfg.bm / 4 + cfg.pad);
    let bn4 = comptime!(cfg.bn / 4);
    let a_off = stage * comptime!(cfg.bk * (cfg.bm / 4 + cfg.pad));
    let b_off = stage * comptime!(cfg.bk * cfg.bn / 4);
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bm / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        a_s[a_off + (s % cfg.bk) * a_row + s / cfg.bk] = ra[l];
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * cfg.bn / 4 / units) {
        let s = UNIT_POS as usize + l * units;
        b_s[b_off + (s / bn4) * bn4 + s % bn4] = rb[l];
    }
}

/// `acc += A_tile · B_tile` for this unit's `tm × tn` registers from shared stage `stage`:
/// per depth, `tm/4 + tn/4` vector reads and `tm · tn` FMAs.
#[cube]
#[allow(clippy::too_many_arguments)]
fn multiply4<F: Float>(
    a_s: &SharedMemory<Vector<F, Const<4>>>,
    b_s: &SharedMemory<Vector<F, Const<4>>>,
    acc: &mut Array<f32>,
    stage: usize,
    tx: usize,
    ty: usize,
    #[comptime] cfg: SimtConfig,
) {
    let a_row = comptime!(cfg.bm / 4 + cfg.pad);
    let bn4 = comptime!(cfg.bn / 4);
    let ga = comptime!(cfg.tm / 4);
    let gb = comptime!(cfg.tn / 4);
    let a_off = stage * comptime!(cfg.bk * (cfg.bm / 4 + cfg.pad)) + ty;
    let b_off = stage * comptime!(cfg.bk * cfg.bn / 4) + tx;
    let mut fa = Array::<Vector<F, Const<4>>>::new(ga);
    let mut fb = Array::<Vector<F, Const<4>>>::new(gb);
    #[unroll]
    for kk in 0..cfg.bk {
        #[unroll]
        for g in 0..ga {
            fa[g] = a_s[a_off + kk * a_row + g * comptime!(cfg.bm / 4 / ga)];
        }
        #[unroll]
        for h in 0..gb {
            fb[h] = b_s[b_off + kk * bn4 + h * comptime!(bn4 / gb)];
        }
        // Serpentine order: odd rows walk the columns backwards, so each row's first FMA
        // reuses the B value of the previous row's last. ptxas keeps much of the source order,
        // and this order issues better than every row walking forwards (measured:
        // docs/BENCHMARKS-history.md).
        #[unroll]
        for g in 0..ga {
            #[unroll]
            for i2 in 0..2usize {
                let x0 = f32::cast_from(fa[g][2 * i2]);
                #[unroll]
                for q in 0..comptime!(gb * 4) {
                    let idx = (g * 4 + 2 * i2) * cfg.tn + q;
                    acc[idx] += x0 * f32::cast_from(fb[q / 4][q % 4]);
                }
                let x1 = f32::cast_from(fa[g][2 * i2 + 1]);
                #[unroll]
                for q in 0..comptime!(gb * 4) {
                    let c = comptime!(gb * 4 - 1) - q;
                    let idx = (g * 4 + 2 * i2 + 1) * cfg.tn + c;
                    acc[idx] += x1 * f32::cast_from(fb[c / 4][c % 4]);
                }
            }
        }
    }
}

/// `acc += A[:, kt0·bk .. kt1·bk] · B[kt0·bk .. kt1·bk, :]` for this cube's block (`kt0 < kt1`
/// tile indices; depths past `o.k` read as zero) through the register-staged pipeline: tile
/// `t + 1` waits in registers while tile `t` is multiplied, and the loads of tile `t + 2` are
/// issued at the end of iteration `t`, so a whole multiply separates every load from its use
/// (issued later, nvcc would sink them next to the stores). Ends past a barrier, so the shared
/// tiles may be refilled at once.
#[cube]
#[allow(clippy::too_many_arguments)]
fn accumulate_simt<F: Float, NB: Size>(
    a: &Array<F>,
    b: &Array<Vector<F, NB>>,
    a_s: &mut SharedMemory<Vector<F, Const<4>>>,
    b_s: &mut SharedMemory<Vector<F, Const<4>>>,
    acc: &mut Array<f32>,
    o: &Place,
    tx: usize,
    ty: usize,
    kt0: usize,
    kt1: usize,
    #[comptime] cfg: SimtConfig,
) {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    let mut ra = Array::<Vector<F, Const<4>>>::new(comptime!(cfg.bk * cfg.bm / 4 / units));
    let mut rb = Array::<Vector<F, Const<4>>>::new(comptime!(cfg.bk * cfg.bn / 4 / units));
    let tiles = kt1 - kt0;
    let k0 = kt0 * cfg.bk;
    fetch_a4::<F>(a, &mut ra, o, k0, cfg);
    fetch_b4::<F, NB>(b, &mut rb, o, k0, cfg);
    stash4::<F>(&ra, &rb, a_s, b_s, 0, cfg);
    if tiles > 1 {
        fetch_a4::<F>(a, &mut ra, o, k0 + cfg.bk, cfg);
        fetch_b4::<F, NB>(b, &mut rb, o, k0 + cfg.bk, cfg);
    }
    sync_cube();
    for t in 0..tiles {
        let cur = (t % 2) * comptime!(cfg.stages - 1);
        multiply4::<F>(a_s, b_s, acc, cur, tx, ty, cfg);
        if comptime!(cfg.stages == 1) {
            sync_cube();
        }
        if t + 1 < tiles {
            let dst = ((t + 1) % 2) * comptime!(cfg.stages - 1);
            stash4::<F>(&ra, &rb, a_s, b_s, dst, cfg);
        }
        sync_cube();
        if t + 2 < tiles {
            fetch_a4::<F>(a, &mut ra, o, k0 + (t + 2) * cfg.bk, cfg);
            fetch_b4::<F, NB>(b, &mut rb, o, k0 + (t + 2) * cfg.bk, cfg);
        }
    }
}

/// Writes this unit's `tm × tn` accumulators through the epilogue to the block at
/// `(row0, col0)` of batch `z` (masked to `m × n`).
#[cube]
#[allow(clippy::too_many_arguments)]
fn store_simt<F: Float, NC: Size, A: Activation>(
    c: &mut Array<Vector<F, NC>>,
    acc: &mut Array<f32>,
    bias: &Array<F>,
    row0: usize,
    col0: usize,
    z: usize,
    m: usize,
    n: usize,
    k: usize,
    c_pitch: usize,
    scale: f32,
    tx: usize,
    ty: usize,
    #[comptime] cfg: SimtConfig,
) {
    // Multiplying by a one that the compiler cannot see (k ≥ 1) gives the 4-aligned registers
    // the vector stores need to new values, so the accumulators are not pinned to them during
    // the main loop (measurably faster on large products: docs/BENCHMARKS-history.md).
    let one = f32::cast_from(k.min(1));
    #[unroll]
    for i in 0..comptime!(cfg.tm * cfg.tn) {
        acc[i] *= one;
    }
    let ga = comptime!(cfg.tm / 4);
    let gb = comptime!(cfg.tn / 4);
    #[unroll]
    for g in 0..ga {
        #[unroll]
        for i in 0..4usize {
            let r = row0 + g * comptime!(cfg.bm / ga) + ty * 4 + i;
            let row_start = (z * m + r) * c_pitch;
            #[unroll]
            for h in 0..gb {
                let col = col0 + h * comptime!(cfg.bn / gb) + tx * 4;
                let at = (g * 4 + i) * cfg.tn + h * 4;
                store4::<F, NC, A, Array<f32>>(
                    c, acc, at, r, col, row_start, m, n, bias, scale, cfg.c_vec, cfg.bias,
                );
            }
        }
    }
}

/// Shared-memory tiled, register-blocked product with 16-byte shared reads (and 16-byte B
/// loads and C stores where the layout allows: `NB`, `NC` = 4, else 1).
/// `CUBE_DIM = ((bm/tm)·(bn/tn), 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Each unit owns `tm × tn` outputs in 4 × 4 groups (`bm/(tm/4)` rows and `bn/(tn/4)` columns
/// apart), so a warp's vector reads of one A row and one B row touch 4 and 8 distinct vectors
/// (broadcasts, no bank conflicts). Global loads run two tiles ahead through registers
/// (`accumulate_simt`).
///
/// With `cfg.linear`, cubes are `(dp, 1, 1)` and cube `j` computes block `j` of the numbering
/// of [`matmul_simt_sk_kernel()`] (batch-major, each batch in the order of `cfg.group`): the
/// stream-K launch's whole blocks, with no cube for the tail blocks (a full grid whose tail
/// cubes skip their depth is slower: docs/BENCHMARKS-history.md).
///
/// Strides are `[batch, row, col]` in elements; a batch stride of 0 broadcasts.
/// Preconditions: as [`SimtConfig`]; every addressed element in bounds; `k ≥ 1`;
/// `NB = 4` exactly when `cfg.b_vec`, which needs `b_strides[2] = 1` and `b_strides[0]`,
/// `b_strides[1]`, `n` multiples of 4; `NC = 4` exactly when `cfg.c_vec`, which needs `c_pitch`
/// and `n` multiples of 4; vector-read buffers aligned to the vector.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_simt_kernel<F: Float, NB: Size, NC: Size, A: Activation>(
    a: &Array<F>,
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
    #[comptime] cfg: SimtConfig,
) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    let mut a_s = SharedMemory::<Vector<F, Const<4>>>::new(comptime!(
        cfg.stages * cfg.bk * (cfg.bm / 4 + cfg.pad)
    ));
    let mut b_s =
        SharedMemory::<Vector<F, Const<4>>>::new(comptime!(cfg.stages * cfg.bk * cfg.bn / 4));
    let mut acc = zeroed(comptime!(cfg.tm * cfg.tn));
    let block = if comptime!(cfg.linear) {
        let (gx, gy) = (n.div_ceil(cfg.bn), m.div_ceil(cfg.bm));
        numbered_block(CUBE_POS_X as usize, gx, gy, cfg.group)
    } else {
        cube_block(cfg.group)
    };
    let o = Place::new(&a_strides, &b_strides, m, n, k, block, cfg.bm, cfg.bn);
    let (tx, ty) = simt_unit(ux, uy);
    let tiles = k.div_ceil(cfg.bk);
    accumulate_simt::<F, NB>(
        a, b, &mut a_s, &mut b_s, &mut acc, &o, tx, ty, 0, tiles, cfg,
    );
    store_simt::<F, NC, A>(
        c, &mut acc, bias, o.row0, o.col0, o.z, m, n, k, c_pitch, scale, tx, ty, cfg,
    );
}

/// Where partial block `slot`'s entry `i` of unit `u` lies in the stream-K workspace: units
/// innermost, so a plane's stores and loads are contiguous.
#[cube]
fn partial_at(slot: usize, i: usize, #[comptime] cfg: SimtConfig) -> usize {
    let units = comptime!((cfg.bm / cfg.tm) * (cfg.bn / cfg.tn));
    (slot * comptime!(cfg.tm * cfg.tn) + i) * units + UNIT_POS as usize
}

/// The stream-K tail of a SIMT product (its first pass; [`matmul_simt_fixup_kernel()`] finishes
/// it). The output's blocks (`⌈m/bm⌉ · ⌈n/bn⌉` per batch, batch-major, each batch in the order
/// of `cfg.group`) are numbered `0..tiles`; each is `iters = ⌈k/bk⌉` depth tiles deep.
/// [`matmul_simt_kernel()`] computes blocks `0..dp` whole (with `cfg.linear`, `dp` cubes); the last
/// `tiles − dp` blocks are one stream of `total = (tiles − dp) · iters` depth tiles cut in runs
/// of `chunk`. Cube `j` (`CUBE_POS_Y · CUBE_COUNT_X + CUBE_POS_X`) takes run `j`, which spans at
/// most two blocks, and writes each piece's raw `f32` accumulators to workspace slot
/// `j + (block − dp)`; cubes past the last run do nothing. `CUBE_DIM = (bm/tm)·(bn/tn)`.
///
/// With `dp = tiles − tiles mod SMs` and one cube per SM for the tail, the last wave is full:
/// every SM gets the same share of the tail.
/// Preconditions: as [`matmul_simt_kernel()`], and `chunk < iters` (so every tail block has at
/// least two pieces); `ws` holds `(⌈total/chunk⌉ + tiles − dp) · bm · bn` entries.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_simt_sk_kernel<F: Float, NB: Size>(
    a: &Array<F>,
    b: &Array<Vector<F, NB>>,
    ws: &mut Array<f32>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    dp: usize,
    chunk: usize,
    total: usize,
    #[comptime] cfg: SimtConfig,
) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    let mut a_s = SharedMemory::<Vector<F, Const<4>>>::new(comptime!(
        cfg.stages * cfg.bk * (cfg.bm / 4 + cfg.pad)
    ));
    let mut b_s =
        SharedMemory::<Vector<F, Const<4>>>::new(comptime!(cfg.stages * cfg.bk * cfg.bn / 4));
    let mut acc = Array::<f32>::new(comptime!(cfg.tm * cfg.tn));
    let (tx, ty) = simt_unit(ux, uy);
    let iters = k.div_ceil(cfg.bk);
    let (gx, gy) = (n.div_ceil(cfg.bn), m.div_ceil(cfg.bm));
    let j = CUBE_POS_Y as usize * CUBE_COUNT_X as usize + CUBE_POS_X as usize;
    // Depth tiles `[it, end)` of the stream in which block `b` holds `[b · iters, (b+1) · iters)`.
    let mut it = dp * iters + (j * chunk).min(total);
    let end = dp * iters + (j * chunk + chunk).min(total);
    while it < end {
        let blk = it / iters;
        let kt0 = it % iters;
        let kt1 = (kt0 + end - it).min(iters);
        let block = numbered_block(blk, gx, gy, cfg.group);
        let o = Place::new(&a_strides, &b_strides, m, n, k, block, cfg.bm, cfg.bn);
        #[unroll]
        for i in 0..comptime!(cfg.tm * cfg.tn) {
            acc[i] = 0.0;
        }
        accumulate_simt::<F, NB>(
            a, b, &mut a_s, &mut b_s, &mut acc, &o, tx, ty, kt0, kt1, cfg,
        );
        let slot = j + blk - dp;
        #[unroll]
        for i in 0..comptime!(cfg.tm * cfg.tn) {
            ws[partial_at(slot, i, cfg)] = acc[i];
        }
        it += kt1 - kt0;
    }
}

/// The stream-K tail's second pass: cube `t` sums, in run order, the pieces of block `dp + t`
/// that [`matmul_simt_sk_kernel()`] left in `ws` (runs `⌊t·iters/chunk⌋ ..= ⌊((t+1)·iters −
/// 1)/chunk⌋`, slot `run + t`) and stores the block through the epilogue. Summing in a fixed
/// order makes the result the same on every run. `CUBE_DIM = (bm/tm)·(bn/tn)`, cubes
/// `(tiles − dp, 1, 1)`. Preconditions: as [`matmul_simt_sk_kernel()`]'s, with the same arguments.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_simt_fixup_kernel<F: Float, NC: Size, A: Activation>(
    ws: &Array<f32>,
    bias: &Array<F>,
    c: &mut Array<Vector<F, NC>>,
    m: usize,
    n: usize,
    k: usize,
    c_pitch: usize,
    scale: f32,
    dp: usize,
    chunk: usize,
    #[comptime] cfg: SimtConfig,
) {
    let ux = comptime!(cfg.bn / cfg.tn);
    let uy = comptime!(cfg.bm / cfg.tm);
    let (tx, ty) = simt_unit(ux, uy);
    let iters = k.div_ceil(cfg.bk);
    let (gx, gy) = (n.div_ceil(cfg.bn), m.div_ceil(cfg.bm));
    let t = CUBE_POS_X as usize;
    let blk = dp + t;
    let mut acc = zeroed(comptime!(cfg.tm * cfg.tn));
    for run in t * iters / chunk..((t + 1) * iters - 1) / chunk + 1 {
        #[unroll]
        for i in 0..comptime!(cfg.tm * cfg.tn) {
            acc[i] += ws[partial_at(run + t, i, cfg)];
        }
    }
    let block = numbered_block(blk, gx, gy, cfg.group);
    store_simt::<F, NC, A>(
        c,
        &mut acc,
        bias,
        block.row * cfg.bm,
        block.col * cfg.bn,
        block.z,
        m,
        n,
        k,
        c_pitch,
        scale,
        tx,
        ty,
        cfg,
    );
}
