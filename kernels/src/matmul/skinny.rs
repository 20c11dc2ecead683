//! Products with few rows (decode-like `m`): B is streamed once, so the kernel is bound by
//! B's bytes, not by arithmetic. A tiled kernel would leave almost every row of its block
//! empty and never reach the memory roof.

use super::common::{epilogue, zeroed};
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_skinny_kernel()`].
///
/// Preconditions: `tm ≥ 1`, `ux · uk` units fit a cube, `tm · slab` f32 plus the depth
/// slices' `uk · ux · NB` f32 fit its shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SkinnyConfig {
    /// Rows of C per cube (each unit accumulates all of them); `m > tm` takes `⌈m/tm⌉` row
    /// groups, each streaming B again.
    pub tm: usize,
    /// Units along the columns (`CUBE_DIM_X`): consecutive units take consecutive column
    /// vectors, so one depth row of B is read contiguously.
    pub ux: usize,
    /// Units along the depth (`CUBE_DIM_Y`): each takes every `uk`-th depth row of the cube's
    /// chunk; their sums meet in shared memory.
    pub uk: usize,
    /// Depth rows of A staged in shared memory per cube (`tm · slab` f32): the launch's
    /// `chunk_k` must not exceed it.
    pub slab: usize,
    /// One depth chunk: the cube applies the epilogue and stores C. Otherwise it writes f32
    /// partial sums for [`matmul_skinny_fixup_kernel()`].
    pub direct: bool,
    /// Add `bias[col]` before the activation (direct launches only).
    pub bias: bool,
}

/// Sums of products over one depth chunk for `tm` rows × `ux · NB` columns per cube.
///
/// Grid: `(⌈(n/NB)/ux⌉, ⌈m/tm⌉ · chunks, batch)`; cube `y` is row group `y mod ⌈m/tm⌉` of
/// depth chunk `y / ⌈m/tm⌉` (`chunk_k` depth rows each). Direct: `c[z, row, col] =
/// act(sum + bias)`; else `partials[((z · chunks + chunk) · m + row) · n + col] = sum` (f32).
///
/// The cube's slab of A is staged in shared memory (read back as broadcasts: one address per
/// depth row of a plane), B read as `NB`-wide vectors along its rows, eight depth rows in flight
/// per unit.
/// Preconditions: `NB > 1` only where B's column stride is 1 and its batch and row strides
/// and `n` are multiples of `NB`; strides address in-bounds elements for every `(z, row < m,
/// col < n, kk < k)`; `chunk_k ≤ slab`; `partials` holds `batch · chunks · m · n` values when not direct.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_skinny_kernel<F: Float, NB: Size, A: Activation>(
    a: &Array<F>,
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
    #[comptime] cfg: SkinnyConfig,
) {
    let nv = NB::value();
    let tm = comptime!(cfg.tm);
    let ux = comptime!(cfg.ux);
    let uk = comptime!(cfg.uk);
    let tx = UNIT_POS_X as usize;
    let ty = UNIT_POS_Y as usize;
    let groups = m.div_ceil(tm);
    let chunks = CUBE_COUNT_Y as usize / groups;
    let chunk = CUBE_POS_Y as usize / groups;
    let row0 = (CUBE_POS_Y as usize % groups) * tm;
    let z = CUBE_POS_Z as usize;
    let cv = CUBE_POS_X as usize * ux + tx;
    let col = cv * nv;
    let (a_sr, a_sc) = (a_strides[1], a_strides[2]);
    let (b_sr, b_sc) = (b_strides[1], b_strides[2]);
    let a_base = z * a_strides[0];
    // With NB > 1 the column stride is 1 and every term is a multiple of NB.
    let b_base = z * b_strides[0] + col * b_sc;
    let k0 = chunk * chunk_k;
    let k1 = select(k0 + chunk_k < k, k0 + chunk_k, k);
    // The cube's slab of A (`tm` rows × its depth chunk, f32) in shared memory, staged once
    // with coalesced reads: from global memory each depth step would wait on an L2 round trip
    // per row (no cube reads an A element twice, so L1 never helps), which made the time grow
    // with the rows. Rows past `m` and depths past the chunk hold zeros.
    let slab = comptime!(cfg.slab);
    let mut a_s = SharedMemory::<f32>::new(comptime!(tm * cfg.slab));
    let units = ux * uk;
    let mut i = ty * ux + tx;
    while i < comptime!(tm * cfg.slab) {
        let (r, d) = (i / slab, i % slab);
        let row = row0 + r;
        let mut v = 0.0f32;
        if row < m && k0 + d < k1 {
            v = f32::cast_from(a[a_base + row * a_sr + (k0 + d) * a_sc]);
        }
        a_s[i] = v;
        i += units;
    }
    sync_cube();
    // Units past the last column skip the loop but still meet the barriers below.
    let kend = select(col < n, k1, k0);
    let mut acc = zeroed(comptime!(tm * nv));
    let mut kk = k0 + ty;
    // Eight depth rows of B in flight per unit: one DRAM round trip feeds eight rows of FMAs.
    let mut bs = Array::<Vector<F, NB>>::new(8usize);
    while kk + 7 * uk < kend {
        #[unroll]
        for u in 0..8usize {
            bs[u] = b[(b_base + (kk + u * uk) * b_sr) / nv];
        }
        let d = kk - k0;
        #[unroll]
        for r in 0..tm {
            #[unroll]
            for u in 0..8usize {
                let av = a_s[r * slab + d + u * uk];
                #[unroll]
                for j in 0..nv {
                    acc[r * nv + j] += av * f32::cast_from(bs[u][j]);
                }
            }
        }
        kk += 8 * uk;
    }
    while kk < kend {
        let bv = b[(b_base + kk * b_sr) / nv];
        let d = kk - k0;
        #[unroll]
        for r in 0..tm {
            let av = a_s[r * slab + d];
            #[unroll]
            for j in 0..nv {
                acc[r * nv + j] += av * f32::cast_from(bv[j]);
            }
        }
        kk += uk;
    }
    if comptime!(uk > 1) {
        // The depth slices' sums, one row at a time: `uk · ux · NB` f32 of shared memory.
        let mut part = SharedMemory::<f32>::new(comptime!(uk * ux * nv));
        #[unroll]
        for r in 0..tm {
            #[unroll]
            for j in 0..nv {
                part[(ty * ux + tx) * nv + j] = acc[r * nv + j];
            }
            sync_cube();
            if ty == 0 {
                for s in 1..uk {
                    #[unroll]
                    for j in 0..nv {
                        acc[r * nv + j] += part[(s * ux + tx) * nv + j];
                    }
                }
            }
            sync_cube();
        }
    }
    if ty == 0 && col < n {
        #[unroll]
        for r in 0..tm {
            let row = row0 + r;
            if row < m {
                #[unroll]
                for j in 0..nv {
                    if comptime!(cfg.direct) {
                        c[(z * m + row) * c_pitch + col + j] =
                            epilogue::<F, A>(acc[r * nv + j], bias, col + j, scale, cfg.bias);
                    } else {
                        partials[((z * chunks + chunk) * m + row) * n + col + j] = acc[r * nv + j];
                    }
                }
            }
        }
    }
}

/// Finishes a split product: `c[z, row, col] = act(Σ_chunk partials[z, chunk, row, col] +
/// bias[col])`, the chunks summed in order (deterministic). 1-D grid-stride over the
/// `batch · m · n` outputs.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_skinny_fixup_kernel<F: Float, A: Activation>(
    partials: &Array<f32>,
    bias: &Array<F>,
    c: &mut Array<F>,
    m: usize,
    n: usize,
    c_pitch: usize,
    chunks: usize,
    scale: f32,
    #[comptime] with_bias: bool,
) {
    let total = partials.len() / chunks;
    let stride = CUBE_COUNT * CUBE_DIM as usize;
    let mut pos = ABSOLUTE_POS;
    while pos < total {
        let col = pos % n;
        let zr = pos / n;
        let (z, row) = (zr / m, zr % m);
        let mut s = 0.0f32;
        for ch in 0..chunks {
            s += partials[((z * chunks + ch) * m + row) * n + col];
        }
        c[zr * c_pitch + col] = epilogue::<F, A>(s, bias, col, scale, with_bias);
        pos += stride;
    }
}
