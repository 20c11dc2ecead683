//! The tiled tensor-core product: each plane owns a grid of 16 × 16 accumulator fragments,
//! operands travel as 16-byte vectors (narrower only where a shape forces it) from global
//! memory through shared tiles whose rows are padded by 16 bytes.

use super::common::{Place, cube_block, load_fragment, store4, zero_accumulators};
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
    /// Elements per 16-byte vector of the input dtype (8 for f16/bf16, 4 for f32): each shared
    /// row's padding, and the unit of the `cp.async` kernels' accesses. The register-staged
    /// kernel's loads and shared vectors are its launch's `NV` wide: `vec`, or a narrower
    /// width that divides it (forced, to time one against the other; rows keep their 16-byte
    /// padding whatever the width).
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
    /// A is read as `NV`-wide vectors along k (the launch's `NA` is `NV`).
    pub a_vec: bool,
    /// B is read as `NV`-wide vectors along n (the launch's `NB` is `NV`).
    pub b_vec: bool,
    /// C is written as 4-wide vectors (the launch's `NC` is 4).
    pub c_vec: bool,
    /// Split depth (manual-MMA kernel only): the grid's z axis is `batch · chunks`, each cube
    /// multiplies one `chunk_k`-deep chunk and writes its f32 partial sums (no epilogue) for
    /// `matmul_skinny_fixup_kernel` to add in order.
    pub split: bool,
    /// Passes of the register-staged kernel's epilogue (`matmul_tc_kernel` only): 1 stages
    /// the whole block's f32 accumulators in shared memory at once; `p > 1` (a divisor of
    /// `frags_m`) stages `frags_m / p` fragment rows of every plane per pass, in a `p`-th of the
    /// memory, for devices with little shared memory (Vulkan's 48 KiB).
    pub c_passes: usize,
    /// The manual-MMA kernel's epilogue through shared memory (`matmul_tc_mma_kernel` with
    /// `c_vec`): outputs staged as column pairs, each plane store a contiguous row segment.
    pub staged_c: bool,
    /// The register-staged kernel's epilogue one fragment at a time through a 16 × 16 f32
    /// scratch tile per plane (`plane_epilogue`, the `cp.async` kernel's), instead of the
    /// block's accumulators staged at once (`c_passes`): 1 KiB a plane, so larger tiles fit
    /// devices with little shared memory (Vulkan's 48 KiB).
    pub plane_scratch: bool,
    /// The register-staged kernel keeps two tiles in flight in registers instead of one
    /// (the loads of tile `t + 3` issued at the end of iteration `t`), so each
    /// load has two tiles' products and barriers to arrive: for drivers that wait at the
    /// first use of a load and keep few cubes resident. Twice the prefetch registers.
    pub deep_prefetch: bool,
}

/// Padding elements per shared row: 8 halves = 16 bytes, so the 8 rows one fragment load reads
/// start in 8 different 16-byte bank groups.
pub(super) const PAD: usize = 8;

/// This unit's share of the A tile at depth `k0`, as `NV`-wide vectors along k (zero
/// outside).
#[cube]
fn fetch_a8<F: Float, NA: Size, NV: Size>(
    a: &Array<Vector<F, NA>>,
    regs: &mut Array<Vector<F, NV>>,
    p: &Place,
    k0: usize,
    #[comptime] cfg: TcConfig,
) {
    let load = NV::value();
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let per_row = comptime!(cfg.bk / load);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / load / units) {
        let s = UNIT_POS as usize + l * units;
        let r = p.row0 + s / per_row;
        let kk = k0 + (s % per_row) * load;
        let mut v = Vector::<F, NV>::empty().fill(F::new(0.0));
        if comptime!(cfg.a_vec) {
            // No branch around the load: outside the operand the index is clamped to 0 and
            // the value replaced. With a branch, SPIR-V carries each prefetched vector
            // through a phi at the branch's merge, where a driver may wait for the load,
            // which makes the two-tiles-ahead prefetch synchronous.
            let inside = r < p.m && kk < p.k;
            let t = a[select(inside, (p.a_base + r * p.a_sr + kk) / load, 0)];
            #[unroll]
            for j in 0..load {
                v[j] = select(inside, t[j], F::new(0.0));
            }
        } else {
            #[unroll]
            for j in 0..load {
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

/// This unit's share of the B tile at depth `k0`, as `NV`-wide vectors along n (zero
/// outside).
#[cube]
fn fetch_b8<F: Float, NB: Size, NV: Size>(
    b: &Array<Vector<F, NB>>,
    regs: &mut Array<Vector<F, NV>>,
    p: &Place,
    k0: usize,
    #[comptime] cfg: TcConfig,
) {
    let load = NV::value();
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let per_row = comptime!(bn / load);
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / load / units) {
        let s = UNIT_POS as usize + l * units;
        let kk = k0 + s / per_row;
        let col = p.col0 + (s % per_row) * load;
        let mut v = Vector::<F, NV>::empty().fill(F::new(0.0));
        if comptime!(cfg.b_vec) {
            // Branch-free, as in `fetch_a8`.
            let inside = kk < p.k && col < p.n;
            let t = b[select(inside, (p.b_base + kk * p.b_sr + col) / load, 0)];
            #[unroll]
            for j in 0..load {
                v[j] = select(inside, t[j], F::new(0.0));
            }
        } else {
            #[unroll]
            for j in 0..load {
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
/// `[bk][bn + vec]` (row-major, in `NV`-wide vectors; 16 bytes of padding per row).
#[cube]
fn stash8<F: Float, NV: Size>(
    ra: &Array<Vector<F, NV>>,
    rb: &Array<Vector<F, NV>>,
    a_s: &mut SharedMemory<Vector<F, NV>>,
    b_s: &mut SharedMemory<Vector<F, NV>>,
    stage: usize,
    #[comptime] cfg: TcConfig,
) {
    let load = NV::value();
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let a_row = comptime!((cfg.bk + cfg.vec) / load);
    let b_row = comptime!((bn + cfg.vec) / load);
    let a_off = stage * comptime!(bm * (cfg.bk + cfg.vec) / load);
    let b_off = stage * comptime!(cfg.bk * (bn + cfg.vec) / load);
    #[unroll]
    for l in 0..comptime!(bm * cfg.bk / load / units) {
        let s = UNIT_POS as usize + l * units;
        a_s[a_off + (s / comptime!(cfg.bk / load)) * a_row + s % comptime!(cfg.bk / load)] = ra[l];
    }
    #[unroll]
    for l in 0..comptime!(cfg.bk * bn / load / units) {
        let s = UNIT_POS as usize + l * units;
        b_s[b_off + (s / comptime!(bn / load)) * b_row + s % comptime!(bn / load)] = rb[l];
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
    // The tiles' own vector width (the register-staged kernel's `NV`, `vec` in the `cp.async`
    // one).
    let load = NV::value();
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let a_row = comptime!((cfg.bk + cfg.vec) / load);
    let b_row = comptime!((bn + cfg.vec) / load);
    let a_off = stage * comptime!(bm * (cfg.bk + cfg.vec) / load)
        + wm * comptime!(16 * cfg.frags_m) * a_row;
    let b_off =
        stage * comptime!(cfg.bk * (bn + cfg.vec) / load) + wn * comptime!(16 * cfg.frags_n / load);
    let span_a = comptime!((15 * (cfg.bk + cfg.vec) + cfg.kf) / load);
    let span_b = comptime!(((cfg.kf - 1) * (bn + cfg.vec) + 16) / load);
    #[unroll]
    for ks in 0..comptime!(cfg.bk / cfg.kf) {
        let mut fa = Sequence::<cmma::Matrix<FT>>::new();
        let mut fb = Sequence::<cmma::Matrix<FT>>::new();
        #[unroll]
        for i in 0..cfg.frags_m {
            let start = a_off + i * 16 * a_row + ks * comptime!(cfg.kf / load);
            fa.push(load_fragment::<FT, Vector<F, NV>>(
                cmma::MatrixIdent::A,
                &a_s.slice(start, start + span_a),
                comptime!((cfg.bk + cfg.vec) as u32),
                cfg.kf,
            ));
        }
        #[unroll]
        for j in 0..cfg.frags_n {
            let start = b_off + ks * cfg.kf * b_row + j * comptime!(16 / load);
            fb.push(load_fragment::<FT, Vector<F, NV>>(
                cmma::MatrixIdent::B,
                &b_s.slice(start, start + span_b),
                comptime!((bn + cfg.vec) as u32),
                cfg.kf,
            ));
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

/// Writes this plane's `frags_m × frags_n` accumulators to C (bias, activation, masks, 4-wide
/// stores when `NC = 4`), one fragment at a time through the plane's 16 × 16 f32 scratch tile
/// (`planes · 256` floats of shared memory; `plane` divides 64). `cube_sync`: cube barriers
/// around each tile instead of plane barriers (what Vulkan needs, see `plane_or_cube_sync`).
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn plane_epilogue<F: Float, NC: Size, A: Activation>(
    c: &mut Array<Vector<F, NC>>,
    acc: &Sequence<cmma::Matrix<f32>>,
    p: &Place,
    bias: &Array<F>,
    m: usize,
    n: usize,
    c_pitch: usize,
    scale: f32,
    wm: usize,
    wn: usize,
    #[comptime] cfg: TcConfig,
    #[comptime] cube_sync: bool,
) {
    let planes = comptime!(cfg.warps_m * cfg.warps_n);
    let plane_id = UNIT_POS as usize / cfg.plane;
    let lane = UNIT_POS as usize % cfg.plane;
    let mut c_s = SharedMemory::<f32>::new(comptime!(planes * 256));
    let scratch = plane_id * 256;
    #[unroll]
    for i in 0..cfg.frags_m {
        #[unroll]
        for j in 0..cfg.frags_n {
            cmma::store(
                &mut c_s.slice_mut(scratch, scratch + 256),
                &acc[i * cfg.frags_n + j],
                16u32,
                cmma::MatrixLayout::RowMajor,
            );
            plane_or_cube_sync(cube_sync);
            let r0 = p.row0 + wm * comptime!(16 * cfg.frags_m) + i * 16;
            let c0 = p.col0 + wn * comptime!(16 * cfg.frags_n) + j * 16;
            #[unroll]
            for q in 0..comptime!(64 / cfg.plane) {
                let idx = lane + q * cfg.plane;
                let lr = idx / 4;
                let lc = (idx % 4) * 4;
                let r = r0 + lr;
                let col = c0 + lc;
                let row_start = (p.z * m + r) * c_pitch;
                let from = scratch + lr * 16 + lc;
                store4::<F, NC, A, SharedMemory<f32>>(
                    c, &c_s, from, r, col, row_start, m, n, bias, scale, cfg.c_vec, cfg.bias,
                );
            }
            plane_or_cube_sync(cube_sync);
        }
    }
}

/// `sync_cube()` where `cube`, else `sync_plane()`. cubecl-spirv 0.10 emits the plane barrier
/// without workgroup-memory semantics, so on Vulkan it does not order the scratch tile's
/// writes and reads; a cube barrier does (every plane runs the same unrolled loop).
#[cube]
fn plane_or_cube_sync(#[comptime] cube: bool) {
    if comptime!(cube) {
        sync_cube();
    } else {
        sync_plane();
    }
}

/// Tensor-core product, f16/bf16 inputs, f32 accumulation (cubecl `cmma`: WMMA on CUDA).
/// `CUBE_DIM = (plane · warps_m · warps_n, 1)`, cubes `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
///
/// Operands move as `NV`-wide vectors (16 bytes unless a shape forces fewer) where their
/// layout allows (`NA = NV`: A rows contiguous, `k` and the row stride multiples of `vec`;
/// `NB = NV`: the same for B along n), else as strided scalars; shared tiles hold `NV`-wide
/// vectors in rows padded by 16 bytes. Loads run two
/// tiles ahead through registers (tile `t + 1` waits in registers while tile `t` is multiplied;
/// the loads of tile `t + 2` are issued at the end of iteration `t`; three ahead with
/// `deep_prefetch`), with two shared stages and one barrier per tile. The accumulators go through shared memory (f32) for the epilogue
/// (bias, activation, masks, 4-wide stores when `NC = 4`): the whole block in `c_passes`
/// passes, or with `plane_scratch` one fragment at a time through each plane's scratch tile.
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
    let load = NV::value();
    let bm = comptime!(16 * cfg.frags_m * cfg.warps_m);
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    let mut a_s = SharedMemory::<Vector<F, NV>>::new(comptime!(2 * bm * (cfg.bk + cfg.vec) / load));
    let mut b_s = SharedMemory::<Vector<F, NV>>::new(comptime!(2 * cfg.bk * (bn + cfg.vec) / load));
    let mut ra = Array::<Vector<F, NV>>::new(comptime!(bm * cfg.bk / load / units));
    let mut rb = Array::<Vector<F, NV>>::new(comptime!(cfg.bk * bn / load / units));
    let block = cube_block(1usize);
    let p = Place::new(&a_strides, &b_strides, m, n, k, block, bm, bn);
    let plane_id = UNIT_POS as usize / cfg.plane;
    let wm = plane_id / cfg.warps_n;
    let wn = plane_id % cfg.warps_n;
    let acc = zero_accumulators(comptime!(cfg.frags_m * cfg.frags_n), cfg.kf);
    let tiles = k.div_ceil(cfg.bk);

    fetch_a8::<F, NA, NV>(a, &mut ra, &p, 0, cfg);
    fetch_b8::<F, NB, NV>(b, &mut rb, &p, 0, cfg);
    stash8::<F, NV>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
    if comptime!(cfg.deep_prefetch) {
        // Two register sets, each iteration pair unrolled so the sets keep constant indices
        // (a dynamically indexed register array would go to local memory). At the top of
        // iteration t, stage t % 2 holds tile t, set (t + 1) % 2 tile t + 1 and set t % 2 the
        // loads of tile t + 2. The two halves of a pair are written out rather than shared
        // through a helper with the one-set loop: passing the stages as arguments moved that
        // loop's code (one register more for `tc128x128x32_w2x4_sc` in offline ptxas).
        let mut ra1 = Array::<Vector<F, NV>>::new(comptime!(bm * cfg.bk / load / units));
        let mut rb1 = Array::<Vector<F, NV>>::new(comptime!(cfg.bk * bn / load / units));
        if tiles > 1 {
            fetch_a8::<F, NA, NV>(a, &mut ra1, &p, cfg.bk, cfg);
            fetch_b8::<F, NB, NV>(b, &mut rb1, &p, cfg.bk, cfg);
        }
        if tiles > 2 {
            fetch_a8::<F, NA, NV>(a, &mut ra, &p, 2 * cfg.bk, cfg);
            fetch_b8::<F, NB, NV>(b, &mut rb, &p, 2 * cfg.bk, cfg);
        }
        sync_cube();
        for pair in 0..tiles.div_ceil(2) {
            let t = 2 * pair;
            multiply_tc::<F, FT, NV>(&a_s, &b_s, &acc, 0, wm, wn, cfg);
            if t + 1 < tiles {
                stash8::<F, NV>(&ra1, &rb1, &mut a_s, &mut b_s, 1, cfg);
            }
            sync_cube();
            if t + 3 < tiles {
                fetch_a8::<F, NA, NV>(a, &mut ra1, &p, (t + 3) * cfg.bk, cfg);
                fetch_b8::<F, NB, NV>(b, &mut rb1, &p, (t + 3) * cfg.bk, cfg);
            }
            if t + 1 < tiles {
                multiply_tc::<F, FT, NV>(&a_s, &b_s, &acc, 1, wm, wn, cfg);
                if t + 2 < tiles {
                    stash8::<F, NV>(&ra, &rb, &mut a_s, &mut b_s, 0, cfg);
                }
                sync_cube();
                if t + 4 < tiles {
                    fetch_a8::<F, NA, NV>(a, &mut ra, &p, (t + 4) * cfg.bk, cfg);
                    fetch_b8::<F, NB, NV>(b, &mut rb, &p, (t + 4) * cfg.bk, cfg);
                }
            }
        }
    } else {
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
    }

    if comptime!(cfg.plane_scratch) {
        // A cube barrier around each scratch tile: this epilogue is for Vulkan (see
        // `plane_or_cube_sync`).
        plane_epilogue::<F, NC, A>(c, &acc, &p, bias, m, n, c_pitch, scale, wm, wn, cfg, true);
    } else {
        block_epilogue::<F, NC, A>(c, &acc, &p, bias, m, n, c_pitch, scale, wm, wn, cfg);
    }
}

/// The register-staged kernel's epilogue through shared memory: the block's accumulators staged
/// as f32 in `c_passes` passes, then written out 4 consecutive columns per unit and step.
#[cube]
#[allow(clippy::too_many_arguments)]
fn block_epilogue<F: Float, NC: Size, A: Activation>(
    c: &mut Array<Vector<F, NC>>,
    acc: &Sequence<cmma::Matrix<f32>>,
    p: &Place,
    bias: &Array<F>,
    m: usize,
    n: usize,
    c_pitch: usize,
    scale: f32,
    wm: usize,
    wn: usize,
    #[comptime] cfg: TcConfig,
) {
    let bn = comptime!(16 * cfg.frags_n * cfg.warps_n);
    let units = comptime!(cfg.plane * cfg.warps_m * cfg.warps_n);
    // Epilogue through shared memory: fragments out (row stride bn + 4 floats, a multiple of
    // 16 bytes as WMMA stores need), then 4 consecutive columns per unit and step; in
    // `c_passes` passes of `fpp` fragment rows per plane each (one pass: the whole block).
    let c_row = comptime!(bn + 4);
    let fpp = comptime!(cfg.frags_m / cfg.c_passes);
    let pass_rows = comptime!(16 * fpp * cfg.warps_m);
    let mut c_s = SharedMemory::<f32>::new(comptime!(pass_rows * (bn + 4)));
    let span = comptime!(15 * (bn + 4) + 16);
    let per_row = comptime!(bn / 4);
    #[unroll]
    for pass in 0..cfg.c_passes {
        #[unroll]
        for ii in 0..fpp {
            #[unroll]
            for j in 0..cfg.frags_n {
                let at = (wm * comptime!(16 * fpp) + ii * 16) * c_row
                    + wn * comptime!(16 * cfg.frags_n)
                    + j * 16;
                cmma::store(
                    &mut c_s.slice_mut(at, at + span),
                    &acc[(pass * fpp + ii) * cfg.frags_n + j],
                    comptime!((bn + 4) as u32),
                    cmma::MatrixLayout::RowMajor,
                );
            }
        }
        sync_cube();
        #[unroll]
        for l in 0..comptime!(pass_rows * bn / 4 / units) {
            let s = UNIT_POS as usize + l * units;
            let lr = s / per_row;
            let lc = (s % per_row) * 4;
            // Staged row `lr` is row `lr mod 16·fpp` of plane row `lr / (16·fpp)`'s pass rows.
            let br = (lr / comptime!(16 * fpp)) * comptime!(16 * cfg.frags_m)
                + pass * comptime!(16 * fpp)
                + lr % comptime!(16 * fpp);
            let r = p.row0 + br;
            let col = p.col0 + lc;
            let row_start = (p.z * m + r) * c_pitch;
            let at = lr * c_row + lc;
            store4::<F, NC, A, SharedMemory<f32>>(
                c, &c_s, at, r, col, row_start, m, n, bias, scale, cfg.c_vec, cfg.bias,
            );
        }
        // The next pass overwrites the staging (one barrier more than needed after the last).
        if comptime!(cfg.c_passes > 1) {
            sync_cube();
        }
    }
}
