//! Products with few columns (`n` of 1 to 16: a weight times a handful of vectors). A tiled
//! kernel would leave almost every column of its block empty; here each unit owns one row of
//! A and all of its `nc` outputs, so A, the large operand, is read once, as 16-byte vectors,
//! and B, the small one, is read by every unit of a plane at the same address (a broadcast
//! from cache), as vectors along its rows where the layout allows. No reduction across units:
//! the depth is split over the grid instead.

use super::common::{epilogue, zeroed};
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_narrow_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NarrowConfig {
    /// Columns of C per cube (every unit accumulates all of them, `nc` f32 registers);
    /// `n > nc` takes `⌈n/nc⌉` column groups, each reading A again.
    pub nc: usize,
    /// Vectors of A per row and step: each unit loads its row's `steps` vectors before using
    /// any (one DRAM round trip per step of `steps · NA` depths), or, `staged`, the cube loads
    /// a tile of `rows × steps` vectors together.
    pub steps: usize,
    /// The cube's rows (`CUBE_DIM`): one unit per row.
    pub rows: usize,
    /// A reaches the units through a shared tile: each row's vectors are loaded by consecutive
    /// units (whole 128-byte lines per instruction), not one row per unit (a line per unit and
    /// instruction).
    pub staged: bool,
    /// One depth chunk: the cube applies the epilogue and stores C. Otherwise it writes f32
    /// partial sums for [`matmul_skinny_fixup_kernel()`](super::matmul_skinny_fixup_kernel()).
    pub direct: bool,
    /// Add `bias[col]` before the activation (direct launches only).
    pub bias: bool,
}

/// Sums of products over one depth chunk for one row of A per unit × `nc` columns.
///
/// Grid: `(⌈m / CUBE_DIM⌉, ⌈n/nc⌉ · chunks, batch)`; cube `y` is column group `y mod ⌈n/nc⌉`
/// of depth chunk `y / ⌈n/nc⌉` (`chunk_k` depths each). Direct: `c[z, row, col] =
/// act(sum + bias)`; else `partials[((z · chunks + chunk) · m + row) · n + col] = sum` (f32),
/// the layout the skinny kernel's fixup pass sums.
///
/// Preconditions: `NA > 1` only where A's column stride is 1 and its batch and row strides
/// and `k` are multiples of `NA`; `NB > 1` only where B's column stride is 1, its batch and
/// row strides and `n` are multiples of `NB`, and `NB` divides `nc`; `chunk_k` a multiple of
/// `NA`; strides address in-bounds
/// elements for every `(z, row < m, col < n, kk < k)`; `partials` holds `batch · chunks · m ·
/// n` values when not direct.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_narrow_kernel<F: Float, NA: Size, NB: Size, A: Activation>(
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
    #[comptime] cfg: NarrowConfig,
) {
    let na = NA::value();
    let nb = NB::value();
    let nc = comptime!(cfg.nc);
    let steps = comptime!(cfg.steps);
    let row = CUBE_POS_X as usize * CUBE_DIM as usize + UNIT_POS as usize;
    let groups = n.div_ceil(nc);
    let chunks = CUBE_COUNT_Y as usize / groups;
    let chunk = CUBE_POS_Y as usize / groups;
    let col0 = (CUBE_POS_Y as usize % groups) * nc;
    let z = CUBE_POS_Z as usize;
    let k0 = chunk * chunk_k;
    let k1 = select(k0 + chunk_k < k, k0 + chunk_k, k);
    let (a_sc, b_sr, b_sc) = (a_strides[2], b_strides[1], b_strides[2]);
    // With NB > 1 the column stride is 1 and the batch and row strides are multiples of NB.
    let b_base = z * b_strides[0];
    // The group's B vectors along a depth row, offsets in scalars. Vectors past `n` (the last
    // group) read the row's last vector and are never stored: no branch around the loads.
    let mut bcol = Array::<usize>::new(comptime!(cfg.nc / nb));
    #[unroll]
    for jv in 0..comptime!(cfg.nc / nb) {
        let col = col0 + jv * nb;
        bcol[jv] = select(col < n, col, n - nb) * b_sc;
    }
    let mut acc = zeroed(nc);
    if comptime!(cfg.staged) {
        // Its barriers need every unit, rows past `m` included.
        narrow_staged::<F, NA, NB>(
            a, b, &mut acc, m, k0, k1, &a_strides, b_base, b_sr, &bcol, cfg,
        );
    } else {
        // Rows past `m` skip the loops (they hold no barrier).
        let kend = select(row < m, k1, k0);
        // With NA > 1 the column stride is 1 and every term is a multiple of NA.
        let a_base = z * a_strides[0] + row * a_strides[1];
        let mut kk = k0;
        let mut av = Array::<Vector<F, NA>>::new(steps);
        while kk + steps * na <= kend {
            #[unroll]
            for s in 0..steps {
                av[s] = a[(a_base + (kk + s * na) * a_sc) / na];
            }
            #[unroll]
            for s in 0..steps {
                #[unroll]
                for t in 0..na {
                    let brow = b_base + (kk + s * na + t) * b_sr;
                    add_row::<F, NB>(&mut acc, f32::cast_from(av[s][t]), b, brow, &bcol, nc);
                }
            }
            kk += steps * na;
        }
        while kk < kend {
            let v = a[(a_base + kk * a_sc) / na];
            #[unroll]
            for t in 0..na {
                let brow = b_base + (kk + t) * b_sr;
                add_row::<F, NB>(&mut acc, f32::cast_from(v[t]), b, brow, &bcol, nc);
            }
            kk += na;
        }
    }
    if row < m {
        #[unroll]
        for j in 0..nc {
            let col = col0 + j;
            if col < n {
                if comptime!(cfg.direct) {
                    c[(z * m + row) * c_pitch + col] =
                        epilogue::<F, A>(acc[j], bias, col, scale, cfg.bias);
                } else {
                    partials[((z * chunks + chunk) * m + row) * n + col] = acc[j];
                }
            }
        }
    }
}

/// `acc[j] += x · B[row, col0 + j]` for the group's `nc` columns: B's row at scalar offset
/// `brow`, its vectors at the offsets `bcol`.
#[cube]
fn add_row<F: Float, NB: Size>(
    acc: &mut Array<f32>,
    x: f32,
    b: &Array<Vector<F, NB>>,
    brow: usize,
    bcol: &Array<usize>,
    #[comptime] nc: usize,
) {
    let nb = NB::value();
    #[unroll]
    for jv in 0..comptime!(nc / nb) {
        let bv = b[(brow + bcol[jv]) / nb];
        #[unroll]
        for l in 0..nb {
            acc[jv * nb + l] += x * f32::cast_from(bv[l]);
        }
    }
}

/// The staged depth loop of [`matmul_narrow_kernel()`]: tiles of `rows × steps` vectors of A
/// (depths `k0 .. k1` of the cube's rows) loaded by the whole cube into shared memory, rows
/// padded by one vector (conflict-free 16-byte reads, one row per unit), then each unit's row
/// against B. Every unit meets the barriers; rows past `m` and depths past `k1` hold zeros and
/// are never used.
#[cube]
#[allow(clippy::too_many_arguments)]
fn narrow_staged<F: Float, NA: Size, NB: Size>(
    a: &Array<Vector<F, NA>>,
    b: &Array<Vector<F, NB>>,
    acc: &mut Array<f32>,
    m: usize,
    k0: usize,
    k1: usize,
    a_strides: &Sequence<usize>,
    b_base: usize,
    b_sr: usize,
    bcol: &Array<usize>,
    #[comptime] cfg: NarrowConfig,
) {
    let na = NA::value();
    let steps = comptime!(cfg.steps);
    let rows = comptime!(cfg.rows);
    let pitch = comptime!(cfg.steps + 1);
    let mut a_s = SharedMemory::<Vector<F, NA>>::new(comptime!(cfg.rows * (cfg.steps + 1)));
    let row0 = CUBE_POS_X as usize * rows;
    let a_base = CUBE_POS_Z as usize * a_strides[0];
    let (a_sr, a_sc) = (a_strides[1], a_strides[2]);
    let mut kk = k0;
    while kk < k1 {
        // Clamped addresses, loads first and masks after: no branch holds a load back.
        #[unroll]
        for l in 0..steps {
            let i = UNIT_POS as usize + l * rows;
            let (r, v) = (i / steps, i % steps);
            let (ar, d) = (row0 + r, kk + v * na);
            let ok = ar < m && d < k1;
            let cr = select(ar < m, ar, m - 1);
            let cd = select(d < k1, d, k1 - na);
            let mut x = a[(a_base + cr * a_sr + cd * a_sc) / na];
            if !ok {
                x = Vector::<F, NA>::empty().fill(F::new(0.0));
            }
            a_s[r * pitch + v] = x;
        }
        sync_cube();
        let base = UNIT_POS as usize * pitch;
        #[unroll]
        for v in 0..steps {
            let d = kk + v * na;
            // Uniform across the cube: the tile's last vectors past `k1`.
            if d < k1 {
                let xv = a_s[base + v];
                #[unroll]
                for t in 0..na {
                    let brow = b_base + (d + t) * b_sr;
                    add_row::<F, NB>(acc, f32::cast_from(xv[t]), b, brow, bcol, cfg.nc);
                }
            }
        }
        sync_cube();
        kk += steps * na;
    }
}

/// Comptime shape of [`matmul_narrow_plane_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NarrowPlaneConfig {
    /// Columns of C per cube, as [`NarrowConfig::nc`].
    pub nc: usize,
    /// Rows of A per lane group: every B value a lane loads serves all of them.
    pub rows: usize,
    /// Vectors of A per row a lane loads before using any (`steps · rows` loads in flight).
    pub steps: usize,
    /// Lanes per group (`CUBE_DIM_X`): they split each row's depths, `NA` apart.
    pub group: usize,
    /// Groups per cube (`CUBE_DIM_Y`).
    pub groups: usize,
    /// Sum each output over the group's lanes with plane ops (the group is one plane of this
    /// width); else through shared memory.
    pub plane: bool,
    /// As [`NarrowConfig::direct`].
    pub direct: bool,
    /// As [`NarrowConfig::bias`].
    pub bias: bool,
}

/// The products of [`matmul_narrow_kernel()`] with A read across lanes: a group of
/// `cfg.group` lanes owns `cfg.rows` rows of A; lane `l` takes depths `l·NA, (group + l)·NA, …`
/// of the chunk, so every load instruction of the group reads consecutive vectors of one row
/// (whole lines). Each B row a lane loads is used for all of the group's rows (the cube's groups
/// read the same B rows at about the same time, from L1). The group's partial sums are then
/// added across its lanes: plane sums, or a padded shared-memory transpose.
///
/// Grid: `(⌈m / (rows · groups)⌉, ⌈n/nc⌉ · chunks, batch)`, `CUBE_DIM = (group, groups)`;
/// outputs as [`matmul_narrow_kernel()`] (direct, or f32 partial sums in the fixup's layout).
///
/// Preconditions: those of [`matmul_narrow_kernel()`], with `chunk_k` a multiple of
/// `group · NA`; with `cfg.plane`, `group` equals the plane width.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_narrow_plane_kernel<F: Float, NA: Size, NB: Size, A: Activation>(
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
    #[comptime] cfg: NarrowPlaneConfig,
) {
    let na = NA::value();
    let nb = NB::value();
    let nc = comptime!(cfg.nc);
    let rows = comptime!(cfg.rows);
    let steps = comptime!(cfg.steps);
    let outs = comptime!(cfg.rows * cfg.nc);
    let lane = UNIT_POS_X as usize;
    let y = UNIT_POS_Y as usize;
    let row0 = (CUBE_POS_X as usize * comptime!(cfg.groups) + y) * rows;
    let groups = n.div_ceil(nc);
    let chunks = CUBE_COUNT_Y as usize / groups;
    let chunk = CUBE_POS_Y as usize / groups;
    let col0 = (CUBE_POS_Y as usize % groups) * nc;
    let z = CUBE_POS_Z as usize;
    let k0 = chunk * chunk_k;
    let k1 = select(k0 + chunk_k < k, k0 + chunk_k, k);
    let (a_sc, b_sr, b_sc) = (a_strides[2], b_strides[1], b_strides[2]);
    let b_base = z * b_strides[0];
    let mut bcol = Array::<usize>::new(comptime!(cfg.nc / nb));
    #[unroll]
    for jv in 0..comptime!(cfg.nc / nb) {
        let col = col0 + jv * nb;
        bcol[jv] = select(col < n, col, n - nb) * b_sc;
    }
    // Rows past `m` read row `m − 1` (never stored): no branch holds a load back.
    let mut a_row = Array::<usize>::new(rows);
    #[unroll]
    for r in 0..rows {
        let row = select(row0 + r < m, row0 + r, m - 1);
        a_row[r] = z * a_strides[0] + row * a_strides[1];
    }
    let mut acc = zeroed(outs);
    let stride = comptime!(cfg.group) * na;
    let mut kk = k0 + lane * na;
    let mut av = Array::<Vector<F, NA>>::new(comptime!(cfg.steps * cfg.rows));
    while kk + comptime!(cfg.steps - 1) * stride < k1 {
        #[unroll]
        for s in 0..steps {
            #[unroll]
            for r in 0..rows {
                av[s * rows + r] = a[(a_row[r] + (kk + s * stride) * a_sc) / na];
            }
        }
        #[unroll]
        for s in 0..steps {
            rows_step::<F, NA, NB>(
                &mut acc,
                &av,
                s,
                b,
                b_base + (kk + s * stride) * b_sr,
                b_sr,
                &bcol,
                cfg,
            );
        }
        kk += steps * stride;
    }
    // The last vectors of a chunk whose lane has fewer than `steps` left.
    while kk < k1 {
        #[unroll]
        for r in 0..rows {
            av[r] = a[(a_row[r] + kk * a_sc) / na];
        }
        rows_step::<F, NA, NB>(
            &mut acc,
            &av,
            0usize,
            b,
            b_base + kk * b_sr,
            b_sr,
            &bcol,
            cfg,
        );
        kk += stride;
    }
    if comptime!(cfg.plane) {
        #[unroll]
        for i in 0..outs {
            let total = plane_sum(acc[i]);
            if lane == comptime!(i % cfg.group) {
                store_out::<F, A>(
                    c,
                    partials,
                    bias,
                    total,
                    row0 + comptime!(i / cfg.nc),
                    col0 + comptime!(i % cfg.nc),
                    m,
                    n,
                    z,
                    chunks,
                    chunk,
                    c_pitch,
                    scale,
                    cfg,
                );
            }
        }
    } else {
        // Slot (group, output) holds the group's lanes in a row padded by one word: the
        // writes are consecutive per output, the column reads conflict-free.
        let pitch = comptime!(cfg.group + 1);
        let mut sums =
            SharedMemory::<f32>::new(comptime!(cfg.groups * cfg.rows * cfg.nc * (cfg.group + 1)));
        #[unroll]
        for i in 0..outs {
            sums[(y * outs + i) * pitch + lane] = acc[i];
        }
        sync_cube();
        let mut i = lane;
        while i < outs {
            let mut total = 0.0f32;
            let group = comptime!(cfg.group);
            for l in 0..group {
                total += sums[(y * outs + i) * pitch + l];
            }
            store_out::<F, A>(
                c,
                partials,
                bias,
                total,
                row0 + i / nc,
                col0 + i % nc,
                m,
                n,
                z,
                chunks,
                chunk,
                c_pitch,
                scale,
                cfg,
            );
            i += comptime!(cfg.group);
        }
    }
}

/// `acc[r · nc + j] += A[row r, depth d + t] · B[d + t, col0 + j]` for `t < NA`: step `s` of
/// the loaded A vectors `av`, B's row `d` at scalar offset `brow`, rows `b_sr` apart.
#[cube]
#[allow(clippy::too_many_arguments)]
fn rows_step<F: Float, NA: Size, NB: Size>(
    acc: &mut Array<f32>,
    av: &Array<Vector<F, NA>>,
    #[comptime] s: usize,
    b: &Array<Vector<F, NB>>,
    brow: usize,
    b_sr: usize,
    bcol: &Array<usize>,
    #[comptime] cfg: NarrowPlaneConfig,
) {
    let na = NA::value();
    let nb = NB::value();
    let rows = comptime!(cfg.rows);
    let nc = comptime!(cfg.nc);
    #[unroll]
    for t in 0..na {
        let mut bv = Array::<f32>::new(comptime!(cfg.nc));
        #[unroll]
        for jv in 0..comptime!(cfg.nc / nb) {
            let v = b[(brow + t * b_sr + bcol[jv]) / nb];
            #[unroll]
            for l in 0..nb {
                bv[jv * nb + l] = f32::cast_from(v[l]);
            }
        }
        #[unroll]
        for r in 0..rows {
            let x = f32::cast_from(av[s * rows + r][t]);
            #[unroll]
            for j in 0..nc {
                acc[r * nc + j] += x * bv[j];
            }
        }
    }
}

/// Output `(row, col)` of the narrow kernels: through the epilogue into C (direct), else the
/// chunk's f32 partial sum; nothing past `m` or `n`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn store_out<F: Float, A: Activation>(
    c: &mut Array<F>,
    partials: &mut Array<f32>,
    bias: &Array<F>,
    total: f32,
    row: usize,
    col: usize,
    m: usize,
    n: usize,
    z: usize,
    chunks: usize,
    chunk: usize,
    c_pitch: usize,
    scale: f32,
    #[comptime] cfg: NarrowPlaneConfig,
) {
    if row < m && col < n {
        if comptime!(cfg.direct) {
            c[(z * m + row) * c_pitch + col] = epilogue::<F, A>(total, bias, col, scale, cfg.bias);
        } else {
            partials[((z * chunks + chunk) * m + row) * n + col] = total;
        }
    }
}
