//! Tensor cores, the plain form: each plane a 32 × 32 tile of 2 × 2 fragments, scalar loads.

use super::common::{Place, cube_block, epilogue, zero_accumulators};
use crate::activation::Activation;
use cubecl::prelude::*;

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
/// Preconditions: as [`matmul_blocked_kernel()`](super::matmul_blocked_kernel()); the device
/// supports 16×16×16 cmma for `F`.
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
    let block = cube_block(1usize);
    let p = Place::new(&a_strides, &b_strides, m, n, k, block, bm, bn);
    let plane_id = UNIT_POS_Y as usize;
    let pm = plane_id / cfg.planes_n;
    let pn = plane_id % cfg.planes_n;
    // The plane's 2 × 2 fragments, `acc[2·i + j]` at rows `16·i`, columns `16·j` of its tile.
    let acc = zero_accumulators(4usize, 16usize);
    let tiles = k.div_ceil(cfg.bk);
    for t in 0..tiles {
        let k0 = t * cfg.bk;
        #[unroll]
        for l in 0..comptime!(bm * cfg.bk / units) {
            let idx = UNIT_POS as usize + l * units;
            let r = p.row0 + idx / cfg.bk;
            let kk = k0 + idx % cfg.bk;
            let mut v = F::new(0.0);
            if r < m && kk < k {
                v = a[p.a_base + r * p.a_sr + kk * p.a_sc];
            }
            a_s[idx] = v;
        }
        #[unroll]
        for l in 0..comptime!(cfg.bk * bn / units) {
            let idx = UNIT_POS as usize + l * units;
            let kk = k0 + idx / bn;
            let cc = p.col0 + idx % bn;
            let mut v = F::new(0.0);
            if kk < k && cc < n {
                v = b[p.b_base + kk * p.b_sr + cc * p.b_sc];
            }
            b_s[idx] = v;
        }
        sync_cube();
        #[unroll]
        for ks in 0..comptime!(cfg.bk / 16) {
            let a0 = (pm * 32) * cfg.bk + ks * 16;
            let b0 = ks * 16 * bn + pn * 32;
            let span_a = comptime!(15 * cfg.bk + 16);
            let span_b = comptime!(15 * bn + 16);
            let mut fa = Sequence::<cmma::Matrix<F>>::new();
            #[unroll]
            for i in 0..2usize {
                let at = a0 + i * comptime!(16 * cfg.bk);
                fa.push(fragment::<F>(
                    cmma::MatrixIdent::A,
                    &a_s.slice(at, at + span_a),
                    cfg.bk as u32,
                ));
            }
            let mut fb = Sequence::<cmma::Matrix<F>>::new();
            #[unroll]
            for j in 0..2usize {
                let at = b0 + j * 16;
                fb.push(fragment::<F>(
                    cmma::MatrixIdent::B,
                    &b_s.slice(at, at + span_b),
                    bn as u32,
                ));
            }
            #[unroll]
            for i in 0..2usize {
                #[unroll]
                for j in 0..2usize {
                    let c = &acc[2 * i + j];
                    cmma::execute::<F, F, f32, f32>(&fa[i], &fb[j], c, c);
                }
            }
        }
        sync_cube();
    }
    let o00 = (pm * 32) * bn + pn * 32;
    let span = comptime!(15 * bn + 16);
    #[unroll]
    for i in 0..2usize {
        #[unroll]
        for j in 0..2usize {
            let at = o00 + i * comptime!(16 * bn) + j * 16;
            cmma::store(
                &mut c_s.slice_mut(at, at + span),
                &acc[2 * i + j],
                bn as u32,
                cmma::MatrixLayout::RowMajor,
            );
        }
    }
    sync_cube();
    #[unroll]
    for l in 0..comptime!(bm * bn / units) {
        let idx = UNIT_POS as usize + l * units;
        let r = p.row0 + idx / bn;
        let cc = p.col0 + idx % bn;
        if r < m && cc < n {
            c[(p.z * m + r) * c_pitch + cc] = epilogue::<F, A>(c_s[idx], bias, cc, scale, cfg.bias);
        }
    }
}

/// A row-major 16 × 16 × 16 fragment (`ident`: A or B) of a shared tile whose rows are
/// `stride` elements apart.
#[cube]
fn fragment<F: Float>(
    #[comptime] ident: cmma::MatrixIdent,
    from: &Slice<F>,
    stride: u32,
) -> cmma::Matrix<F> {
    cmma::Matrix::<F>::from_slice(
        ident,
        16usize,
        16usize,
        16usize,
        cmma::MatrixLayout::RowMajor,
        from,
        stride,
    )
}
