//! Products with few rows (decode-like `m`): B is streamed once, so the kernel is bound by
//! B's bytes, not by arithmetic. A tiled kernel would leave almost every row of its block
//! empty and never reach the memory roof.

use super::common::{epilogue, zeroed};
use crate::activation::Activation;
use cubecl::prelude::*;

/// Comptime shape of [`matmul_skinny_kernel()`].
///
/// Preconditions: `tm ≥ 1`, `ux · uk` units fit a cube.
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
/// A is read by scalars (the same address across the 32 units of a depth row: one broadcast
/// from L1), B as `NB`-wide vectors along its rows, four depth rows in flight per unit.
/// Preconditions: `NB > 1` only where B's column stride is 1 and its batch and row strides
/// and `n` are multiples of `NB`; strides address in-bounds elements for every `(z, row < m,
/// col < n, kk < k)`; `partials` holds `batch · chunks · m · n` values when not direct.
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
    // Units past the last column skip the loop but still meet the barriers below.
    let kend = select(col < n, k1, k0);
    // Rows past `m` read row `m - 1` (in bounds) and are never stored.
    let last = m - 1;
    let mut acc = zeroed(comptime!(tm * nv));
    let mut kk = k0 + ty;
    while kk + 3 * uk < kend {
        let b0 = b[(b_base + kk * b_sr) / nv];
        let b1 = b[(b_base + (kk + uk) * b_sr) / nv];
        let b2 = b[(b_base + (kk + 2 * uk) * b_sr) / nv];
        let b3 = b[(b_base + (kk + 3 * uk) * b_sr) / nv];
        #[unroll]
        for r in 0..tm {
            let at = a_base + select(row0 + r < m, row0 + r, last) * a_sr + kk * a_sc;
            let a0 = f32::cast_from(a[at]);
            let a1 = f32::cast_from(a[at + uk * a_sc]);
            let a2 = f32::cast_from(a[at + 2 * uk * a_sc]);
            let a3 = f32::cast_from(a[at + 3 * uk * a_sc]);
            #[unroll]
            for j in 0..nv {
                let mut s = acc[r * nv + j];
                s += a0 * f32::cast_from(b0[j]);
                s += a1 * f32::cast_from(b1[j]);
                s += a2 * f32::cast_from(b2[j]);
                s += a3 * f32::cast_from(b3[j]);
                acc[r * nv + j] = s;
            }
        }
        kk += 4 * uk;
    }
    while kk < kend {
        let bv = b[(b_base + kk * b_sr) / nv];
        #[unroll]
        for r in 0..tm {
            let at = a_base + select(row0 + r < m, row0 + r, last) * a_sr + kk * a_sc;
            let av = f32::cast_from(a[at]);
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
