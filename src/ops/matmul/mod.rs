//! Matrix products with fused epilogues: `C = act(A·B + bias)`.
//!
//! | variant | kernel | where it stands |
//! |---|---|---|
//! | `naive` | one unit per output, operands from global memory | the seed's first version; baseline |
//! | `tiled16` | 16 × 16 shared tiles, one output per unit | the textbook tiled kernel |
//! | `blocked64` | 64 × 64 blocks, 4 × 4 register tiles, 16-deep shared tiles | register blocking |
//! | `blocked128` | 128 × 128 blocks, 8 × 8 register tiles (split 4 + 4 for conflict-free reads), 8-deep tiles, each 32 units covering 8 × 4 tiles | superseded by the SIMT kernel (nvcc sinks its prefetch loads next to their stores) |
//! | `blocked128_db` | the same, double-buffered (tile `t + 1` fetched into registers while tile `t` is multiplied, one barrier per tile) | slower than `blocked128` on the H200 since the warp tiling (register pressure) |
//! | `simt<bm>x<bn>x<bk>_<tm>x<tn>_s<stages>[_g<rows>]` ([`SimtShape`]) | the vectorized CUDA-core kernel: shared tiles held as 4-wide vectors (one 16-byte read feeds 16 FMAs), 16-byte B loads and C stores when B's rows and C's rows are contiguous and 4-aligned, loads two tiles ahead through registers, 1 or 2 shared stages; `_g<rows>` walks the cubes in column strips | the automatic choice for f32 where the device reports no SM count (`simt128x256x8_8x16_s1_g8` for large products: 45.8 TFLOP/s at 8192³, 0.893× cuBLAS sgemm in the same process on the H200; 0.880–0.882× at 4096³; session 8, before the serpentine FMA order, not re-timed since) |
//! | `simt…_s<stages>[_g<rows>]_sk[<cubes>]` ([`SimtShape::stream_k`]) | the same kernel for all but the last `blocks mod SMs` blocks (a whole number of waves), then a stream-K tail: one cube per SM takes an equal run of the last blocks' depth tiles (16 deep), at most 8 cubes per block, and a fixup pass sums each block's f32 pieces in a fixed order before the epilogue — no partial last wave | the automatic choice for f32 on CUDA (`simt128x256x8_8x16_s1_g8_sk`: 48.1 TFLOP/s at 8192³, 0.938× cuBLAS sgemm, and 47.1 at 4096³, 0.919×, same process on the H200, session 11, with the serpentine FMA order) |
//! | `simt<bm>x<bn>x<bk>_<tm>x<tn>_a<stages>` ([`SimtShape`] with `async_copy`) | the same register tiles fed by `cp.async` (f32, CUDA): A kept row-major and read 4 depths per 16-byte read, 2–4 stages on mbarriers, one barrier per tile, no register staging; other layouts run the register-staged shape | forced only: compiled and checked offline (255 registers, no spills, 2048 FMAs per 16-deep tile), not yet timed on a GPU |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>` ([`TcShape`]) | tensor cores (cubecl `cmma` → WMMA on CUDA): `wm × wn` planes per cube, each a grid of 16 × 16 fragments, 16-byte vector loads into padded shared tiles, two stages, loads two tiles ahead through registers | the automatic choice for f16/bf16 when A or B rows are not 16-byte vectors (212.6 TFLOP/s f16 at 8192³ on the H200) |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_a<stages>` ([`TcShape`] with `stages`) | the same fragments fed by `cp.async` (global → shared, no registers) through 2–4 stages on mbarriers; outputs leave one fragment at a time through a per-plane scratch tile; other layouts run the register-staged kernel | `tc128x256x32_w2x4_a3`: f16 264.8, bf16 214.5 TFLOP/s at 8192³ on the H200 (the f16 choice until Session 6) |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_a<stages>[_g<rows>]_mma` ([`TcShape`] with `mma`) | the same `cp.async` pipeline with hand-placed fragments: cubecl's manual MMA (`ldmatrix`, `mma.sync.m16n8k16`), f32 accumulators in registers, fragments double-buffered in registers across 16-deep steps, the next tile's first fragments loaded right after the tile barrier, stages unrolled so barriers and offsets are constants, epilogue straight from the registers; `_g<rows>` walks the cubes in column strips | the automatic choice for f16 and bf16 with `cp.async` and 16-byte rows (`tc128x256x64_w2x4_a3_g8_mma`: f16 319.0, bf16 336.7 TFLOP/s at 8192³ on the H200, 0.51× cuBLAS, 1.30× / 1.35× cubek 0.2's best, same process) |
//! | `tc…_tf32` ([`TcShape`] with `tf32`) | the WMMA kernels above on f32 inputs with TF32 fragments (16 × 16 × 8, 10-bit mantissas, f32 accumulation; tolerance [`Tolerance::matmul_tf32`]) | the explicit opt-in: only when forced (`tc128x128x32_w4x2_a3_tf32`); compiled and checked offline, not yet run on a GPU |
//! | `cmma` | tensor cores, the plain form (64 × 64 blocks, scalar loads; 42 TFLOP/s) (cubecl `cmma` → WMMA on CUDA), 64 × 64 blocks of 2 × 2 planes, f16/bf16 in, f32 accumulation | the automatic choice for f16/bf16 only where no tiled tensor-core shape fits the device |
//!
//! f32 never runs on tensor cores unless a `_tf32` shape is forced (no silent TF32). Every variant accumulates in f32, handles
//! ragged `m`, `n`, `k` (zero-filled loads, masked stores), batches with a broadcast batch of 1,
//! and operands given by strides (transposed views need no copy). cubecl 0.10 emits WMMA /
//! `mma.sync`, not Hopper's `wgmma`, which caps tensor-core throughput well below cuBLAS on H100/H200.

mod spec;

use crate::guard::LaunchKey;
use crate::ops::activation::launch::Act;
use crate::ops::{expect_dtype_supported, not_float};
use crate::reference::Tolerance;
use crate::{Activation, Caps, DType, DeviceTensor, Element, Error, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::activation::{GeluErf, GeluTanh, Identity, ReluScale};
use cubeport_kernels::matmul::{
    BlockConfig, CmmaConfig, SimtConfig, TcConfig, matmul_blocked_kernel, matmul_cmma_kernel,
    matmul_naive_kernel, matmul_simt_async_kernel, matmul_simt_fixup_kernel, matmul_simt_kernel,
    matmul_simt_sk_kernel, matmul_tc_async_kernel, matmul_tc_kernel, matmul_tc_mma_kernel,
};
use spec::MatmulSpec;
use std::fmt;

/// A matmul variant (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatmulVariant {
    /// One unit per output.
    Naive,
    /// 16 × 16 shared tiles.
    Tiled16,
    /// 64 × 64 blocks, 4 × 4 per unit.
    Blocked64,
    /// 128 × 128 blocks, 8 × 8 per unit; `double_buffer` fetches the next tile during the math.
    Blocked128 {
        /// Ping-pong shared buffers.
        double_buffer: bool,
    },
    /// The vectorized CUDA-core kernel with this tile shape.
    Simt(SimtShape),
    /// The tiled tensor-core kernel with this shape (f16/bf16 inputs, f32 accumulation).
    Tc(TcShape),
    /// Tensor cores, the plain form: 64 × 64 blocks of 2 × 2 planes, 32 × 32 per plane,
    /// scalar loads, one stage (f16/bf16 inputs, f32 accumulation).
    Cmma,
}

/// Shape of the tiled tensor-core kernels ([`MatmulVariant::Tc`]): `warps_m × warps_n` planes
/// per cube, each `frags_m × frags_n` fragments of 16 × 16, `bk`-deep shared tiles, and how the
/// tiles reach shared memory: through registers, two stages (`stages = 0`), or by `cp.async`
/// with `stages` (2–4) tiles in flight. Written `tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>`, with
/// `_a<stages>` for the async pipeline (`bm = 16·frags_m·warps_m`, `bn = 16·frags_n·warps_n`),
/// which [`str::parse`] reads back. The async pipeline needs A and B rows of 16-byte vectors
/// (contiguous rows; `k`, `n` and the strides multiples of 8; aligned buffers); other layouts
/// run the register-staged kernel with the same tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcShape {
    /// Planes along m.
    pub warps_m: u16,
    /// Planes along n.
    pub warps_n: u16,
    /// Fragments per plane along m.
    pub frags_m: u16,
    /// Fragments per plane along n.
    pub frags_n: u16,
    /// Shared tile depth (a multiple of 16).
    pub bk: u16,
    /// `cp.async` stages (2–4), or 0 for the register-staged kernel.
    pub stages: u16,
    /// Fragments through cubecl's manual MMA (`ldmatrix` + `mma.sync.m16n8k16`, accumulators
    /// in registers) instead of WMMA; async pipeline only. Written with a `_mma` suffix.
    pub mma: bool,
    /// Cubes walk the output in column strips `group` block-rows tall (0 or 1: row by row, the
    /// launch order), so the cubes resident at once share A and B tiles in L2; manual-MMA
    /// kernel only. Written `_g<group>` after the stages.
    pub group: u16,
    /// f32 inputs on TF32 tensor cores (WMMA 16 × 16 × 8: 10-bit mantissas, f32 accumulation),
    /// the explicit opt-in: never chosen automatically, only when forced. Written `_tf32` last.
    pub tf32: bool,
}

impl TcShape {
    /// 128 × 128 blocks, 32-deep tiles, 2 × 4 planes of 4 × 2 fragments (64 × 32 per plane).
    pub const T128: TcShape = TcShape::new(2, 4, 4, 2, 32);
    /// 128 × 128 blocks, 32-deep tiles, 4 × 2 planes of 2 × 4 fragments (32 × 64 per plane):
    /// the default (f16 211–214, bf16 145 TFLOP/s at 8192³ on the H200).
    pub const T128_W4X2: TcShape = TcShape::new(4, 2, 2, 4, 32);
    /// 128 × 256 blocks, 32-deep tiles, 2 × 4 planes of 4 × 4 fragments (64 × 64 per plane).
    pub const T128X256: TcShape = TcShape::new(2, 4, 4, 4, 32);
    /// 64 × 128 blocks, 32-deep tiles, 2 × 2 planes of 2 × 4 fragments: outputs too small to
    /// fill the device with 128 × 128 blocks.
    pub const T64X128: TcShape = TcShape::new(2, 2, 2, 4, 32);
    /// [`TcShape::T128_W4X2`] with a three-stage `cp.async` pipeline.
    pub const T128_W4X2_A3: TcShape = TcShape::T128_W4X2.with_async(3);
    /// [`TcShape::T128X256`] (2 × 4 planes of 64 × 64) with a three-stage `cp.async` pipeline.
    pub const T128X256_A3: TcShape = TcShape::T128X256.with_async(3);
    /// [`TcShape::T128X256_A3`] with manual MMA fragments (`ldmatrix` for bf16 as for f16).
    pub const T128X256_A3_MMA: TcShape = TcShape::T128X256_A3.with_mma();
    /// 128 × 256 blocks of 2 × 4 planes (64 × 64 each), 64-deep tiles, three `cp.async`
    /// stages, manual MMA: the automatic choice for f16 and bf16 on large products.
    pub const T128X256X64_A3_MMA: TcShape = TcShape::new(2, 4, 4, 4, 64).with_async(3).with_mma();
    /// [`TcShape::T128X256X64_A3_MMA`] with cubes walking column strips 8 block-rows tall
    /// (`_g8`): the automatic choice for f16 and bf16 on large products.
    pub const T128X256X64_A3_G8_MMA: TcShape = TcShape::T128X256X64_A3_MMA.with_group(8);
    /// [`TcShape::T128_W4X2_A3`] on TF32 tensor cores for f32 inputs (the opt-in; see
    /// [`TcShape::tf32`]).
    pub const T128_W4X2_A3_TF32: TcShape = TcShape::T128_W4X2_A3.with_tf32();

    /// A shape; [`TcShape::check`] says whether a device can run it.
    pub const fn new(warps_m: u16, warps_n: u16, frags_m: u16, frags_n: u16, bk: u16) -> Self {
        TcShape {
            warps_m,
            warps_n,
            frags_m,
            frags_n,
            bk,
            stages: 0,
            mma: false,
            group: 0,
            tf32: false,
        }
    }

    /// The same tiles for f32 inputs on TF32 tensor cores (see [`TcShape::tf32`]).
    pub const fn with_tf32(self) -> Self {
        TcShape { tf32: true, ..self }
    }

    /// The same tiles with cubes grouped into strips of `group` block-rows (see
    /// [`TcShape::group`]).
    pub const fn with_group(self, group: u16) -> Self {
        TcShape { group, ..self }
    }

    /// The same tiles with manual MMA fragments (meaningful with [`TcShape::with_async`]).
    pub const fn with_mma(self) -> Self {
        TcShape { mma: true, ..self }
    }

    /// The same tiles through a `cp.async` pipeline of `stages` stages (0: registers).
    pub const fn with_async(self, stages: u16) -> Self {
        TcShape { stages, ..self }
    }

    /// Block rows.
    pub fn bm(&self) -> usize {
        16 * self.frags_m as usize * self.warps_m as usize
    }

    /// Block columns.
    pub fn bn(&self) -> usize {
        16 * self.frags_n as usize * self.warps_n as usize
    }

    fn units(&self) -> usize {
        32 * self.warps_m as usize * self.warps_n as usize
    }

    /// Shared memory one cube takes, bytes: the register-staged kernel holds two stages of
    /// padded A and B tiles and f32 staging of the whole block's outputs; the async one
    /// `stages` stages and one 16 × 16 f32 scratch tile per plane (the manual-MMA one no scratch).
    pub fn shared_bytes(&self, dtype: DType) -> usize {
        let (bm, bn, bk) = (self.bm(), self.bn(), self.bk as usize);
        // Rows padded by one 16-byte vector.
        let pad = 16 / dtype.size();
        let stage = (bm * (bk + pad) + bk * (bn + pad)) * dtype.size();
        if self.stages == 0 {
            2 * stage + bm * (bn + 4) * 4
        } else if self.mma {
            self.stages as usize * stage
        } else {
            self.stages as usize * stage + (self.units() / 32) * 256 * 4
        }
    }

    /// Why this shape cannot run on `caps` (beyond the tensor-core requirement), if it cannot.
    pub fn check(&self, caps: &Caps, dtype: DType) -> Result<(), String> {
        let TcShape {
            warps_m,
            warps_n,
            frags_m,
            frags_n,
            bk,
            stages,
            mma,
            group,
            tf32,
        } = *self;
        if stages == 1 || stages > 4 {
            return Err(format!("{self}: async stages must be 2, 3 or 4"));
        }
        if mma && stages == 0 {
            return Err(format!(
                "{self}: manual MMA fragments run only in the cp.async pipeline (_a<stages>)"
            ));
        }
        if tf32 && mma {
            return Err(format!(
                "{self}: TF32 runs through WMMA (16 × 16 × 8); manual MMA fragments are f16/bf16 only"
            ));
        }
        if tf32 != (dtype == DType::F32) {
            return Err(format!(
                "{self}: {} inputs; TF32 shapes (_tf32) take f32, the others f16/bf16",
                dtype
            ));
        }
        if tf32 && !caps.tf32 {
            return Err(format!(
                "{self}: the device has no TF32 tensor cores (cmma 16 × 16 × 8, f32 accumulators)"
            ));
        }
        if group > 1 && !mma {
            return Err(format!(
                "{self}: grouped cube order (_g) is a manual-MMA option (_mma)"
            ));
        }
        if mma && bk % 32 != 0 {
            return Err(format!(
                "{self}: manual MMA double-buffers its fragments over 16-deep steps, bk must be a multiple of 32"
            ));
        }
        if mma && !caps.manual_mma {
            return Err(format!(
                "{self}: the device has no manual MMA (mma.sync m16n8k16, f16/bf16 → f32)"
            ));
        }
        if stages > 0 && !caps.copy_async {
            return Err(format!(
                "{self}: the device has no asynchronous global-to-shared copies (cp.async)"
            ));
        }
        if warps_m == 0 || warps_n == 0 || frags_m == 0 || frags_n == 0 || bk == 0 || bk % 16 != 0 {
            return Err(format!(
                "{self}: planes and fragments must be positive, bk a multiple of 16"
            ));
        }
        let (bm, bn, bk, units) = (self.bm(), self.bn(), bk as usize, self.units());
        let vec = 16 / dtype.size();
        if !(bm * bk / vec).is_multiple_of(units)
            || !(bk * bn / vec).is_multiple_of(units)
            || !(bm * bn / 4).is_multiple_of(units)
        {
            return Err(format!(
                "{self}: the {units} units must divide the tiles' 16-byte vectors and the block's 4-wide output groups"
            ));
        }
        if units > caps.max_units_per_cube as usize || units as u32 > caps.max_cube_dim[0] {
            return Err(format!(
                "{self}: {units} units exceed the device's cube size"
            ));
        }
        // (Other layouts run `register_fallback`, which always fits.)
        let shared = self.shared_bytes(dtype);
        if shared > caps.max_shared_bytes {
            return Err(format!(
                "{self}: {shared} bytes of shared memory exceed the device's {}",
                caps.max_shared_bytes
            ));
        }
        Ok(())
    }

    /// The register-staged shape that runs this async shape's product when A or B rows are not
    /// 16-byte vectors (`cp.async` copies 16 bytes): the same tiles where they fit the device's
    /// shared memory, else [`TcShape::T128_W4X2`]. Register-staged shapes are their own.
    pub fn register_fallback(self, caps: &Caps, dtype: DType) -> TcShape {
        if self.stages == 0 {
            return self;
        }
        let same = TcShape {
            stages: 0,
            mma: false,
            ..self
        };
        if same.check(caps, dtype).is_ok() {
            same
        } else {
            TcShape {
                tf32: self.tf32,
                ..TcShape::T128_W4X2
            }
        }
    }

    fn config(&self, dtype: DType, bias: bool, a_vec: bool, b_vec: bool, c_vec: bool) -> TcConfig {
        TcConfig {
            vec: 16 / dtype.size(),
            kf: if self.tf32 { 8 } else { 16 },
            warps_m: self.warps_m as usize,
            warps_n: self.warps_n as usize,
            frags_m: self.frags_m as usize,
            frags_n: self.frags_n as usize,
            bk: self.bk as usize,
            plane: 32,
            group: self.group.max(1) as usize,
            bias,
            a_vec,
            b_vec,
            c_vec,
        }
    }
}

impl fmt::Display for TcShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tc{}x{}x{}_w{}x{}",
            self.bm(),
            self.bn(),
            self.bk,
            self.warps_m,
            self.warps_n
        )?;
        if self.stages > 0 {
            write!(f, "_a{}", self.stages)?;
        }
        if self.group > 1 {
            write!(f, "_g{}", self.group)?;
        }
        if self.mma {
            write!(f, "_mma")?;
        }
        if self.tf32 {
            write!(f, "_tf32")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TcShape {
    type Err = String;

    /// Parses `tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>[_a<stages>][_g<group>][_mma][_tf32]` (as
    /// printed).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>[_a<stages>][_g<group>][_mma][_tf32]"
            )
        };
        let (s_body, tf32) = match s.strip_suffix("_tf32") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let (body, mma) = match s_body.strip_suffix("_mma") {
            Some(b) => (b, true),
            None => (s_body, false),
        };
        let (block, warps) = body
            .strip_prefix("tc")
            .and_then(|r| r.split_once("_w"))
            .ok_or_else(bad)?;
        let (warps, group) = match warps.split_once("_g") {
            Some((w, g)) => match g.parse::<u16>() {
                Ok(g) if g > 1 => (w, g),
                _ => return Err(bad()),
            },
            None => (warps, 0),
        };
        let (warps, stages) = match warps.split_once("_a") {
            Some((w, st)) => (w, st.parse::<u16>().map_err(|_| bad())?),
            None => (warps, 0),
        };
        let nums = |t: &str| -> Result<Vec<u16>, String> {
            t.split('x')
                .map(|x| x.parse::<u16>().map_err(|_| bad()))
                .collect()
        };
        let (b, w) = (nums(block)?, nums(warps)?);
        if b.len() != 3 || w.len() != 2 || w[0] == 0 || w[1] == 0 {
            return Err(bad());
        }
        let (fm, fn_) = (b[0] / (16 * w[0]), b[1] / (16 * w[1]));
        let mut shape = TcShape::new(w[0], w[1], fm, fn_, b[2]).with_async(stages);
        shape.mma = mma;
        shape.group = group;
        shape.tf32 = tf32;
        if shape.bm() != b[0] as usize || shape.bn() != b[1] as usize {
            return Err(format!(
                "{s}: bm must be a multiple of 16·warps_m, bn of 16·warps_n"
            ));
        }
        Ok(shape)
    }
}

/// Tile shape of the vectorized CUDA-core kernel ([`MatmulVariant::Simt`]): a cube computes a
/// `bm × bn` block through `bk`-deep shared tiles, each unit a `tm × tn` register tile (in 4 × 4
/// groups), with 1 or 2 shared stages. Written `simt<bm>x<bn>x<bk>_<tm>x<tn>_s<stages>`, which
/// [`str::parse`] reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimtShape {
    /// Block rows.
    pub bm: u16,
    /// Block columns.
    pub bn: u16,
    /// Shared tile depth.
    pub bk: u16,
    /// Rows per unit (a multiple of 4).
    pub tm: u16,
    /// Columns per unit (a multiple of 4).
    pub tn: u16,
    /// Shared stages: 1 or 2 through registers, or 2–4 `cp.async` stages with `async_copy`.
    pub stages: u16,
    /// Tiles copied global → shared by `cp.async` (f32, CUDA sm ≥ 80) into `stages` stages on
    /// mbarriers, A kept row-major: no register staging. Written `_a<stages>` for `_s<stages>`.
    /// Operands whose rows are not 16-byte vectors run [`SimtShape::register_fallback`].
    pub async_copy: bool,
    /// Cubes walk the output in column strips `group` block-rows tall (0 or 1: row by row, the
    /// launch order), as [`TcShape::group`]. Written `_g<group>` after the stages.
    pub group: u16,
    /// Stream-K tail (register-staged shapes): `Some(p)` runs all but the last
    /// `blocks mod p` blocks whole and shares those last blocks' depth tiles evenly among `p`
    /// cubes, whose pieces a second pass sums (in a fixed order) before the epilogue, so a
    /// grid of one cube per SM ends in a full wave instead of a partial one. `Some(0)`: `p` is
    /// the device's SM count (an error where the device does not report one). The tail's
    /// pieces take an f32 workspace of at most `2p · bm · bn` entries. Written `_sk` or
    /// `_sk<p>` (`p ≥ 2`) last.
    pub stream_k: Option<u16>,
}

impl SimtShape {
    /// 128 × 256 blocks, 8-deep tiles, 8 × 16 per unit (256 units), one stage, cubes in the
    /// launch order (45.2 TFLOP/s at 8192³ on the H200).
    pub const S128X256: SimtShape = SimtShape::new(128, 256, 8, 8, 16, 1);
    /// [`SimtShape::S128X256`] with cubes walking column strips 8 block-rows tall: the choice
    /// for large f32 products (0.5–0.7% over the launch order at 4096³ and 8192³ on the H200).
    pub const S128X256_G8: SimtShape = SimtShape::S128X256.with_group(8);
    /// [`SimtShape::S128X256_G8`] with a stream-K tail over the device's SMs: the choice for
    /// large f32 products where the device reports its SM count (H200: 48.1 TFLOP/s at 8192³,
    /// 0.938× cuBLAS sgemm; 0.919× at 4096³).
    pub const S128X256_G8_SK: SimtShape = SimtShape::S128X256_G8.with_stream_k(0);
    /// 128 × 256 blocks, 16-deep tiles, 8 × 16 per unit, three `cp.async` stages (f32 with
    /// 16-byte rows on CUDA; forced only until it has been timed on a GPU).
    pub const S128X256_A3: SimtShape = SimtShape::new(128, 256, 16, 8, 16, 3).with_async(3);
    /// 128 × 128 blocks, 16-deep tiles, 8 × 16 per unit (128 units), one stage (45.0 TFLOP/s).
    pub const S128_WIDE: SimtShape = SimtShape::new(128, 128, 16, 8, 16, 1);
    /// 128 × 128 blocks, 8-deep tiles, 8 × 8 per unit (256 units), double-buffered.
    pub const S128: SimtShape = SimtShape::new(128, 128, 8, 8, 8, 2);
    /// The same, one shared stage (two barriers per tile, half the shared memory).
    pub const S128_SINGLE: SimtShape = SimtShape::new(128, 128, 8, 8, 8, 1);
    /// 64 × 64 blocks, 16-deep tiles, 4 × 4 per unit (256 units): mid-sized outputs.
    pub const S64: SimtShape = SimtShape::new(64, 64, 16, 4, 4, 2);

    /// A shape; [`SimtShape::check`] says whether a device can run it.
    pub const fn new(bm: u16, bn: u16, bk: u16, tm: u16, tn: u16, stages: u16) -> Self {
        SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy: false,
            group: 0,
            stream_k: None,
        }
    }

    /// The same tiles with cubes grouped into strips of `group` block-rows.
    pub const fn with_group(self, group: u16) -> Self {
        SimtShape { group, ..self }
    }

    /// The same tiles with a stream-K tail shared among `cubes` cubes (0: the device's SMs;
    /// see [`SimtShape::stream_k`]).
    pub const fn with_stream_k(self, cubes: u16) -> Self {
        SimtShape {
            stream_k: Some(cubes),
            ..self
        }
    }

    /// The cubes that share a stream-K tail on `caps` (`None`: no stream-K).
    fn stream_k_cubes(&self, caps: &Caps) -> Option<usize> {
        match self.stream_k? {
            0 => caps.num_sms.map(|s| s as usize),
            p => Some(p as usize),
        }
    }

    /// Depth of the shared tiles in a stream-K tail: twice `bk` where that shape is valid on
    /// the device, else `bk`. Concurrent tail cubes read different depths, so their loads
    /// find less in L2 and need the longer lead of a deeper tile (H200, session 9: the
    /// 128 × 256 tail took 673 µs at 16 deep against 740 µs at 8 deep, 4096³).
    fn tail_depth(&self, caps: &Caps, dtype: DType) -> u16 {
        let deep = SimtShape {
            bk: 2 * self.bk,
            stream_k: None,
            ..*self
        };
        if deep.check(caps, dtype).is_ok() {
            deep.bk
        } else {
            self.bk
        }
    }

    /// The same tiles through a `cp.async` pipeline of `stages` stages.
    pub const fn with_async(self, stages: u16) -> Self {
        SimtShape {
            stages,
            async_copy: true,
            ..self
        }
    }

    /// The register-staged shape that runs this shape's product when A or B rows are not
    /// 16-byte vectors: the same tiles in one stage where that shape is valid, else
    /// [`SimtShape::S128X256_G8`]. Register-staged shapes are their own.
    pub fn register_fallback(self, caps: &Caps, dtype: DType) -> SimtShape {
        if !self.async_copy {
            return self;
        }
        let same =
            SimtShape::new(self.bm, self.bn, self.bk, self.tm, self.tn, 1).with_group(self.group);
        if same.check(caps, dtype).is_ok() {
            same
        } else {
            SimtShape::S128X256_G8
        }
    }

    fn units(&self) -> usize {
        (self.bm / self.tm.max(1)) as usize * (self.bn / self.tn.max(1)) as usize
    }

    /// Shared memory one cube of this shape takes for `dtype`, bytes.
    pub fn shared_bytes(&self, dtype: DType) -> usize {
        let (bm, bn, bk, st) = (
            self.bm as usize,
            self.bn as usize,
            self.bk as usize,
            self.stages as usize,
        );
        if self.async_copy {
            // A row-major with one 4-wide vector of padding per row.
            st * (bm * (bk + 4) + bk * bn) * dtype.size()
        } else {
            st * bk * (bm + 4 * SIMT_PAD + bn) * dtype.size()
        }
    }

    /// Why this shape cannot run on `caps` (the kernel's preconditions), if it cannot.
    pub fn check(&self, caps: &Caps, dtype: DType) -> Result<(), String> {
        let SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy,
            group: _,
            stream_k,
        } = *self;
        if let Some(p) = stream_k {
            if async_copy {
                return Err(format!(
                    "{self}: stream-K runs the register-staged kernel, not the cp.async one"
                ));
            }
            if p == 1 {
                return Err(format!("{self}: a stream-K tail needs at least 2 cubes"));
            }
            if p == 0 && caps.num_sms.is_none() {
                return Err(format!(
                    "{self}: the device reports no SM count to size the stream-K tail by \
                     (force `_sk<cubes>`)"
                ));
            }
        }
        if async_copy {
            if dtype != DType::F32 {
                return Err(format!("{self}: the cp.async SIMT kernel takes f32 inputs"));
            }
            if !(2..=4).contains(&stages) || bk % 4 != 0 {
                return Err(format!(
                    "{self}: cp.async stages must be 2, 3 or 4 and bk a multiple of 4"
                ));
            }
            if !caps.copy_async {
                return Err(format!(
                    "{self}: the device has no asynchronous global-to-shared copies (cp.async)"
                ));
            }
        } else if !(1..=2).contains(&stages) {
            return Err(format!("{self}: stages must be 1 or 2"));
        }
        if tm == 0 || tn == 0 || tm % 4 != 0 || tn % 4 != 0 {
            return Err(format!("{self}: tm and tn must be positive multiples of 4"));
        }
        if bm == 0 || bn == 0 || bk == 0 || bm % tm != 0 || bn % tn != 0 {
            return Err(format!(
                "{self}: bm, bn, bk must be positive, bm a multiple of tm, bn of tn"
            ));
        }
        let units = self.units();
        let (a_slots, b_slots) = (bk as usize * bm as usize / 4, bk as usize * bn as usize / 4);
        if a_slots % units != 0 || b_slots % units != 0 {
            return Err(format!(
                "{self}: the {units} units must divide the {a_slots} A and {b_slots} B vectors of a tile"
            ));
        }
        if units > caps.max_units_per_cube as usize || units as u32 > caps.max_cube_dim[0] {
            return Err(format!(
                "{self}: {units} units exceed the device's cube size"
            ));
        }
        let shared = self.shared_bytes(dtype);
        if shared > caps.max_shared_bytes {
            return Err(format!(
                "{self}: {shared} bytes of shared memory exceed the device's {}",
                caps.max_shared_bytes
            ));
        }
        Ok(())
    }

    fn config(&self, bias: bool, b_vec: bool, c_vec: bool) -> SimtConfig {
        SimtConfig {
            bm: self.bm as usize,
            bn: self.bn as usize,
            bk: self.bk as usize,
            tm: self.tm as usize,
            tn: self.tn as usize,
            pad: SIMT_PAD,
            stages: self.stages as usize,
            group: self.group.max(1) as usize,
            bias,
            b_vec,
            c_vec,
            linear: false,
        }
    }
}

/// Padding vectors per row of the transposed A tile of the SIMT kernel.
const SIMT_PAD: usize = 1;

impl fmt::Display for SimtShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy,
            group,
            stream_k,
        } = self;
        let kind = if *async_copy { 'a' } else { 's' };
        write!(f, "simt{bm}x{bn}x{bk}_{tm}x{tn}_{kind}{stages}")?;
        if *group > 1 {
            write!(f, "_g{group}")?;
        }
        match stream_k {
            None => {}
            Some(0) => f.write_str("_sk")?,
            Some(p) => write!(f, "_sk{p}")?,
        }
        Ok(())
    }
}

impl std::str::FromStr for SimtShape {
    type Err = String;

    /// Parses `simt<bm>x<bn>x<bk>_<tm>x<tn>_{s|a}<stages>[_g<group>][_sk[<cubes>]]` (as
    /// printed).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not simt<bm>x<bn>x<bk>_<tm>x<tn>_{{s|a}}<stages>[_g<group>][_sk[<cubes>]]"
            )
        };
        let rest = s.strip_prefix("simt").ok_or_else(bad)?;
        let mut parts = rest.split('_').peekable();
        let (block, unit, stages) = (
            parts.next().ok_or_else(bad)?,
            parts.next().ok_or_else(bad)?,
            parts.next().ok_or_else(bad)?,
        );
        let group = match parts.next_if(|g| g.starts_with('g')) {
            None => 0,
            Some(g) => match g[1..].parse::<u16>() {
                Ok(g) if g > 1 => g,
                _ => return Err(bad()),
            },
        };
        let stream_k = match parts.next() {
            None => None,
            Some("sk") => Some(0),
            Some(p) => match p.strip_prefix("sk").map(str::parse::<u16>) {
                Some(Ok(p)) if p > 1 => Some(p),
                _ => return Err(bad()),
            },
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let nums = |t: &str, count: usize| -> Result<Vec<u16>, String> {
            let v: Vec<u16> = t
                .split('x')
                .map(|x| x.parse::<u16>().map_err(|_| bad()))
                .collect::<Result<_, _>>()?;
            if v.len() == count { Ok(v) } else { Err(bad()) }
        };
        let b = nums(block, 3)?;
        let u = nums(unit, 2)?;
        let (async_copy, st) = match stages.split_at_checked(1) {
            Some(("s", x)) => (false, x),
            Some(("a", x)) => (true, x),
            _ => return Err(bad()),
        };
        let st = st.parse::<u16>().map_err(|_| bad())?;
        let mut shape = SimtShape::new(b[0], b[1], b[2], u[0], u[1], st).with_group(group);
        shape.stream_k = stream_k;
        Ok(if async_copy {
            shape.with_async(st)
        } else {
            shape
        })
    }
}

impl fmt::Display for MatmulVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatmulVariant::Naive => "naive",
            MatmulVariant::Tiled16 => "tiled16",
            MatmulVariant::Blocked64 => "blocked64",
            MatmulVariant::Blocked128 {
                double_buffer: false,
            } => "blocked128",
            MatmulVariant::Blocked128 {
                double_buffer: true,
            } => "blocked128_db",
            MatmulVariant::Simt(shape) => return shape.fmt(f),
            MatmulVariant::Tc(shape) => return shape.fmt(f),
            MatmulVariant::Cmma => "cmma",
        })
    }
}

impl std::str::FromStr for MatmulVariant {
    type Err = String;

    /// Parses a variant id as printed: `naive`, `tiled16`, `blocked64`, `blocked128`,
    /// `blocked128_db`, `cmma`, a [`SimtShape`] (`simt128x128x8_8x8_s2`) or a [`TcShape`]
    /// (`tc128x128x32_w2x4`).
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "naive" => MatmulVariant::Naive,
            "tiled16" => MatmulVariant::Tiled16,
            "blocked64" => MatmulVariant::Blocked64,
            "blocked128" => MatmulVariant::Blocked128 {
                double_buffer: false,
            },
            "blocked128_db" => MatmulVariant::Blocked128 {
                double_buffer: true,
            },
            "cmma" => MatmulVariant::Cmma,
            s if s.starts_with("simt") => MatmulVariant::Simt(s.parse()?),
            s if s.starts_with("tc") => MatmulVariant::Tc(s.parse()?),
            _ => return Err(format!("unknown matmul variant `{s}`")),
        })
    }
}

impl MatmulVariant {
    /// Every variant, slowest first (the SIMT kernel in its preset shapes).
    pub const ALL: [MatmulVariant; 22] = [
        MatmulVariant::Naive,
        MatmulVariant::Tiled16,
        MatmulVariant::Blocked64,
        MatmulVariant::Blocked128 {
            double_buffer: false,
        },
        MatmulVariant::Blocked128 {
            double_buffer: true,
        },
        MatmulVariant::Simt(SimtShape::S64),
        MatmulVariant::Simt(SimtShape::S128_SINGLE),
        MatmulVariant::Simt(SimtShape::S128),
        MatmulVariant::Simt(SimtShape::S128_WIDE),
        MatmulVariant::Simt(SimtShape::S128X256),
        MatmulVariant::Simt(SimtShape::S128X256_G8),
        MatmulVariant::Simt(SimtShape::S128X256_G8_SK),
        MatmulVariant::Simt(SimtShape::S128X256_A3),
        MatmulVariant::Cmma,
        MatmulVariant::Tc(TcShape::T64X128),
        MatmulVariant::Tc(TcShape::T128),
        MatmulVariant::Tc(TcShape::T128_W4X2),
        MatmulVariant::Tc(TcShape::T128X256),
        MatmulVariant::Tc(TcShape::T128_W4X2_A3),
        MatmulVariant::Tc(TcShape::T128X256_A3),
        MatmulVariant::Tc(TcShape::T128X256X64_A3_G8_MMA),
        MatmulVariant::Tc(TcShape::T128_W4X2_A3_TF32),
    ];

    /// How close this variant's entries must come to the f64 reference:
    /// [`Tolerance::matmul_tf32`] for the TF32 shapes, else [`Tolerance::matmul`].
    pub fn tolerance(&self, dtype: DType, k: usize, sum_abs: f64) -> Tolerance {
        match self {
            MatmulVariant::Tc(s) if s.tf32 => Tolerance::matmul_tf32(k, sum_abs),
            _ => Tolerance::matmul(dtype, k, sum_abs),
        }
    }

    /// Whether the device can run this variant for `dtype` (`cmma`: f16/bf16 on a device with
    /// tensor cores and 32-wide planes; the others: everywhere the dtype runs).
    pub fn runs_on(&self, caps: &Caps, dtype: DType) -> bool {
        match self {
            MatmulVariant::Cmma => {
                caps.tensor_cores
                    && matches!(dtype, DType::F16 | DType::BF16)
                    && caps.plane.fixed_width() == Some(32)
            }
            MatmulVariant::Simt(shape) => shape.check(caps, dtype).is_ok(),
            // `check` holds the TF32 conditions (f32 inputs, TF32 tensor cores).
            MatmulVariant::Tc(shape) if shape.tf32 => {
                caps.plane.fixed_width() == Some(32) && shape.check(caps, dtype).is_ok()
            }
            MatmulVariant::Tc(shape) => {
                MatmulVariant::Cmma.runs_on(caps, dtype) && shape.check(caps, dtype).is_ok()
            }
            _ => true,
        }
    }

    /// The automatic choice, from the H200 sweeps of 2026-12-01 (BENCHMARKS.md): the tiled
    /// tensor-core kernel for f16/bf16 where tensor cores exist — with `cp.async`,
    /// `tc128x256x64_w2x4_a3_g8_mma` (manual MMA) where 128 × 256 blocks fill the device, else
    /// `tc128x128x32_w4x2_a3` (register-staged `tc128x128x32_w4x2` without `cp.async`);
    /// `tc64x128x32_w2x2` when 128-blocks would not fill the device; the caller applies
    /// [`MatmulVariant::for_layout`] for operands that are not 16-byte vectors — otherwise the vectorized
    /// SIMT kernel (`simt128x256x8_8x16_s1_g8` — with its stream-K tail, `_sk`, where the device
    /// reports its SM count: 1.2–1.5% faster at 4096³ and 8192³ on the H200 —,
    /// `simt128x128x16_8x16_s1` or `simt64x64x16_4x4_s2`, the largest whose blocks fill the
    /// device) and 16-tiles for tiny outputs.
    pub fn select(caps: &Caps, dtype: DType, batch: usize, m: usize, n: usize) -> Self {
        let blocks = |bm: usize, bn: usize| batch * m.div_ceil(bm) * n.div_ceil(bn);
        let fill = caps.num_sms.map_or(64, |s| s as usize);
        if MatmulVariant::Cmma.runs_on(caps, dtype) {
            // The cp.async pipeline where the device has it (H200, 8192³, same process as
            // cuBLAS and cubek, BENCHMARKS.md Sessions 6-7: manual MMA with register double-
            // buffered fragments, 128 × 256 × 64 in three stages, cubes in strips of 8 block-
            // rows, f16 319.0, bf16 336.7 TFLOP/s; WMMA 128 × 256 × 32 f16 264.8, bf16 214.5
            // in session 6). `for_layout` swaps the async shapes
            // for the register-staged 128 × 128 when A or B rows are not 16-byte vectors.
            let fits = |s: TcShape| s.check(caps, dtype).is_ok();
            let shape = if blocks(128, 256) >= fill && fits(TcShape::T128X256X64_A3_G8_MMA) {
                TcShape::T128X256X64_A3_G8_MMA
            } else if blocks(128, 256) >= fill && fits(TcShape::T128X256_A3) {
                TcShape::T128X256_A3
            } else if blocks(128, 128) >= fill {
                if fits(TcShape::T128_W4X2_A3) {
                    TcShape::T128_W4X2_A3
                } else {
                    TcShape::T128_W4X2
                }
            } else {
                TcShape::T64X128
            };
            let v = MatmulVariant::Tc(shape);
            return if v.runs_on(caps, dtype) {
                v
            } else {
                MatmulVariant::Cmma
            };
        }
        let simt = |s: SimtShape| {
            let v = MatmulVariant::Simt(s);
            v.runs_on(caps, dtype).then_some(v)
        };
        if blocks(128, 256) >= fill {
            // The stream-K tail where the device reports its SM count.
            if let Some(v) =
                simt(SimtShape::S128X256_G8_SK).or_else(|| simt(SimtShape::S128X256_G8))
            {
                return v;
            }
        }
        if blocks(128, 128) >= fill {
            simt(SimtShape::S128_WIDE).unwrap_or(MatmulVariant::Blocked128 {
                double_buffer: false,
            })
        } else if blocks(64, 64) >= fill / 2 || m * n >= 64 * 64 {
            simt(SimtShape::S64).unwrap_or(MatmulVariant::Blocked64)
        } else {
            MatmulVariant::Tiled16
        }
    }

    /// The automatic choice adjusted to the operands' layout: the async tensor-core shapes copy
    /// A and B as 16-byte vectors, so when either operand cannot be read that way (`vec8`
    /// false) the register-staged 128 × 128 kernel (faster than the async shapes' own
    /// register-staged fallback) runs instead. Other variants are kept.
    pub fn for_layout(self, vec8: bool) -> Self {
        match self {
            MatmulVariant::Tc(s) if s.stages > 0 && !vec8 => MatmulVariant::Tc(TcShape::T128_W4X2),
            v => v,
        }
    }

    fn block(&self, bias: bool) -> Option<BlockConfig> {
        let (bm, bk, tm, pad, double_buffer) = match self {
            MatmulVariant::Tiled16 => (16, 16, 1, 1, false),
            MatmulVariant::Blocked64 => (64, 16, 4, 4, false),
            MatmulVariant::Blocked128 { double_buffer } => (128, 8, 8, 4, *double_buffer),
            MatmulVariant::Naive
            | MatmulVariant::Cmma
            | MatmulVariant::Simt(_)
            | MatmulVariant::Tc(_) => return None,
        };
        Some(BlockConfig {
            bm,
            bn: bm,
            bk,
            tm,
            tn: tm,
            pad,
            double_buffer,
            bias,
        })
    }

    /// Cubes along `(n, m)`: the output divided into the variant's `bm × bn` blocks.
    fn grid(&self, m: usize, n: usize) -> (usize, usize) {
        let (bm, bn) = match self {
            MatmulVariant::Naive | MatmulVariant::Tiled16 => (16, 16),
            MatmulVariant::Blocked64 | MatmulVariant::Cmma => (64, 64),
            MatmulVariant::Blocked128 { .. } => (128, 128),
            MatmulVariant::Simt(s) => (s.bm as usize, s.bn as usize),
            MatmulVariant::Tc(s) => (s.bm(), s.bn()),
        };
        (n.div_ceil(bn), m.div_ceil(bm))
    }
}

/// `c = a · b`: `[m, k] · [k, n] → [m, n]`, or batched `[batch, m, k] · [batch, k, n]` where
/// either batch may be 1 (broadcast). f32 accumulation; f32 products never use TF32.
///
/// Operands may have any strides (a transposed view of a row-major buffer is a valid `a` or
/// `b`); `c` is row-major, dense or with padded rows (a row pitch, as frameworks allocate).
/// See [`matmul_fused_into`] for the fused epilogue.
///
/// # Errors
/// [`Error::Shape`]: ranks other than 2 or 3, empty dimensions, inner dimensions that differ,
/// batches that neither match nor broadcast, a `c` of the wrong shape or dtype, strides that
/// reach past a buffer; [`Error::UnsupportedDType`] (bf16 on WGSL, integers);
/// [`Error::Unsupported`] when the grid exceeds the device's launch limits; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let a = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let b = DeviceTensor::from_slice(client, &[5.0f32, 6.0, 7.0, 8.0], &[2, 2])?;
/// let mut c = DeviceTensor::<f32>::empty(client, &[2, 2])?;
/// cubeport::matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut())?;
/// assert_eq!(c.to_vec(client)?, vec![19.0, 22.0, 43.0, 50.0]);
/// # Ok(()) }
/// ```
pub fn matmul_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    c: TensorMut<'_>,
) -> Result<(), Error> {
    matmul_impl(client, a, b, None, Activation::Identity, c, None)
}

/// `c = act(a · b + bias)` in one kernel: `bias` (optional) has shape `[n]` and is added to
/// every row before the activation; the product never round-trips through memory.
///
/// # Errors
/// As [`matmul_into`]; a bias not of shape `[n]` or of another dtype is [`Error::Shape`].
pub fn matmul_fused_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
) -> Result<(), Error> {
    matmul_impl(client, a, b, bias, act, c, None)
}

/// [`matmul_fused_into`] with a forced variant.
///
/// # Errors
/// As [`matmul_fused_into`]; [`Error::Unsupported`] when the device cannot run the variant for
/// this dtype ([`MatmulVariant::runs_on`]).
pub fn matmul_with<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
    variant: MatmulVariant,
) -> Result<(), Error> {
    matmul_impl(client, a, b, bias, act, c, Some(variant))
}

/// `a · b` into a new tensor (rank 2, or rank 3 when either input is).
///
/// # Errors
/// As [`matmul_into`].
pub fn matmul<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<E>,
    b: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    let (sa, sb) = (a.shape(), b.shape());
    let batch = if sa.len() == 3 || sb.len() == 3 {
        let ba = if sa.len() == 3 { sa[0] } else { 1 };
        let bb = if sb.len() == 3 { sb[0] } else { 1 };
        Some(ba.max(bb))
    } else {
        None
    };
    let m = sa.get(sa.len().saturating_sub(2)).copied().unwrap_or(0);
    let n = sb.last().copied().unwrap_or(0);
    let shape: Vec<usize> = batch.into_iter().chain([m, n]).collect();
    let mut c = DeviceTensor::<E>::empty(client, &shape)?;
    matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut())?;
    Ok(c)
}

fn matmul_impl<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
    forced: Option<MatmulVariant>,
) -> Result<(), Error> {
    const OP: &str = "matmul";
    let spec = MatmulSpec::new(
        &a.layout,
        &b.layout,
        bias.as_ref().map(|b| &b.layout),
        &c.layout,
    )
    .map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    let widths = Widths::of(&spec, a.handle, b.handle, c.handle);
    let variant = forced.unwrap_or_else(|| {
        MatmulVariant::select(&caps, spec.dtype, spec.batch, spec.m, spec.n)
            .for_layout(widths.vec8())
    });
    let unsupported = |reason: String| Error::Unsupported {
        op: OP,
        backend: caps.backend,
        reason,
    };
    match variant {
        MatmulVariant::Simt(shape) => shape.check(&caps, spec.dtype).map_err(unsupported)?,
        MatmulVariant::Tc(shape) => shape.check(&caps, spec.dtype).map_err(unsupported)?,
        _ => {}
    }
    if !variant.runs_on(&caps, spec.dtype) {
        return Err(unsupported(format!(
            "{variant} needs f16/bf16 and tensor cores with 32-wide planes; this is {} on a device \
             with tensor cores: {}",
            spec.dtype, caps.tensor_cores
        )));
    }
    // An async shape on operands whose rows are not 16-byte vectors runs register-staged.
    let variant = match variant {
        MatmulVariant::Tc(s) if !widths.vec8() => {
            MatmulVariant::Tc(s.register_fallback(&caps, spec.dtype))
        }
        MatmulVariant::Simt(s) if !widths.vec8() => {
            MatmulVariant::Simt(s.register_fallback(&caps, spec.dtype))
        }
        v => v,
    };
    let (gx, gy) = variant.grid(spec.m, spec.n);
    let grid = [gx, gy, spec.batch];
    for (axis, (&g, &max)) in grid.iter().zip(&caps.max_cube_count).enumerate() {
        if g > max as usize {
            return Err(unsupported(format!(
                "{g} cubes along grid axis {axis} exceed the device's {max} (m {}, n {}, batch {})",
                spec.m, spec.n, spec.batch
            )));
        }
    }
    // A placeholder bias keeps the kernel signature uniform; it is never read without `bias`.
    let bias_handle = bias.as_ref().map_or(a.handle, |b| b.handle);
    let bias_len = if spec.bias { spec.n } else { 1 };
    let handles = Handles {
        a: a.handle,
        b: b.handle,
        bias: bias_handle,
        bias_len,
        c: c.handle,
        widths,
    };
    let count = CubeCount::new_3d(grid[0] as u32, grid[1] as u32, grid[2] as u32);
    let mut key = LaunchKey::new(OP)
        .layout(&a.layout)
        .layout(&b.layout)
        .layout(&c.layout)
        .with((variant, widths, act.name()));
    if let Some(bias) = &bias {
        key = key.layout(&bias.layout);
    }
    crate::guard::launch_op(client, OP, key, || match spec.dtype {
        DType::F32 => launch::<R, f32>(client, &caps, &handles, &spec, variant, act.act(), count),
        DType::F16 => {
            launch::<R, half::f16>(client, &caps, &handles, &spec, variant, act.act(), count)
        }
        DType::BF16 => {
            launch::<R, half::bf16>(client, &caps, &handles, &spec, variant, act.act(), count)
        }
        other => Err(not_float(client, OP, other)),
    })
}

/// `width` when an operand can be read or written as `width`-wide vectors along its rows: unit
/// column stride, batch and row strides and the row length multiples of `width`, buffer offset
/// aligned to the vector; else 1.
fn vector_width(
    width: usize,
    [batch, row, col]: [usize; 3],
    row_len: usize,
    handle: &Handle,
    elem: usize,
) -> usize {
    let offset = handle.offset_start.unwrap_or(0);
    let fits = col == 1
        && batch.is_multiple_of(width)
        && row.is_multiple_of(width)
        && row_len.is_multiple_of(width)
        && offset.is_multiple_of((width * elem) as u64);
    if fits { width } else { 1 }
}

/// Vector widths of the global accesses, from the layouts: 4 for the SIMT kernel's B loads
/// (`nb`) and C stores (`nc`), 8 for the tensor-core kernels' A and B loads (`na8`, `nb8`: 16
/// bytes for f16/bf16); 1 where the layout says no.
#[derive(Clone, Copy, Hash)]
struct Widths {
    nb: usize,
    nc: usize,
    /// 2 where C's rows take column pairs (the manual-MMA epilogue), else 1.
    nc2: usize,
    na8: usize,
    nb8: usize,
    /// Elements per 16-byte vector.
    v16: usize,
}

impl Widths {
    fn of(spec: &MatmulSpec, a: &Handle, b: &Handle, c: &Handle) -> Self {
        let elem = spec.dtype.size();
        Widths {
            nb: vector_width(4, spec.b_strides, spec.n, b, elem),
            nc: vector_width(4, [0, spec.c_pitch, 1], spec.n, c, elem),
            nc2: vector_width(2, [0, spec.c_pitch, 1], spec.n, c, elem),
            na8: vector_width(16 / elem, spec.a_strides, spec.k, a, elem),
            nb8: vector_width(16 / elem, spec.b_strides, spec.n, b, elem),
            v16: 16 / elem,
        }
    }

    /// Whether A and B both move as 16-byte vectors (what the `cp.async` kernel copies).
    fn vec8(&self) -> bool {
        self.na8 == self.v16 && self.nb8 == self.v16
    }
}

struct Handles<'a> {
    a: &'a Handle,
    b: &'a Handle,
    bias: &'a Handle,
    bias_len: usize,
    c: &'a Handle,
    widths: Widths,
}

/// How a stream-K SIMT launch divides `tiles` output blocks of `iters` depth tiles each:
/// blocks `0..dp` whole, one per cube; the last `tail = tiles − dp` blocks as one stream of
/// `total = tail · iters` depth tiles in `runs` runs of `chunk` (the last shorter), one per
/// cube, so each run covers pieces of at most two blocks. At most `STREAM_K_SHARE · tail`
/// cubes share the tail, so a block has at most `STREAM_K_SHARE + 1` pieces for the fixup
/// cube to sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StreamKPlan {
    dp: usize,
    tail: usize,
    chunk: usize,
    total: usize,
    runs: usize,
}

impl StreamKPlan {
    /// The split of `tiles` blocks among `cubes` tail cubes, or `None` where whole blocks
    /// already fill the last wave (`tiles mod cubes = 0`) or the tail runs would not be shorter
    /// than a block.
    fn new(tiles: usize, iters: usize, cubes: usize) -> Option<Self> {
        let tail = tiles % cubes.max(1);
        let total = tail * iters;
        let chunk = total.div_ceil(cubes.min(STREAM_K_SHARE * tail).max(1));
        (tail > 0 && chunk < iters).then(|| StreamKPlan {
            dp: tiles - tail,
            tail,
            chunk,
            total,
            runs: total.div_ceil(chunk),
        })
    }

    /// Workspace slots (one `bm × bn` f32 block each): run `j`'s piece of tail block `t` is
    /// slot `j + t`, unique because runs and blocks both advance along the stream.
    fn slots(&self) -> usize {
        self.runs + self.tail
    }
}

/// Cubes per tail block at most in a stream-K split (see [`StreamKPlan`]): one cube sums a
/// block's pieces, so a last wave of one block among 132 SMs takes 8 of them (1/8 of a block
/// each) rather than all 132.
const STREAM_K_SHARE: usize = 8;

fn strides_arg<R: Runtime>(s: [usize; 3]) -> SequenceArg<R, usize> {
    let mut arg = SequenceArg::new();
    for v in s {
        arg.push(v);
    }
    arg
}

fn launch<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    h: &Handles<'_>,
    spec: &MatmulSpec,
    variant: MatmulVariant,
    act: Act,
    count: CubeCount,
) -> Result<(), Error> {
    let a_len = h.a.size_in_used() as usize / E::DTYPE.size();
    let b_len = h.b.size_in_used() as usize / E::DTYPE.size();
    let c_len = (spec.batch * spec.m - 1) * spec.c_pitch + spec.n;
    let (gx, gy) = variant.grid(spec.m, spec.n);
    // The stream-K plan and the depth of its tail tiles, which the plan's runs count in. Its
    // whole blocks run on a 1-D grid: beyond the device's first axis the plain launch runs.
    let stream_k = match variant {
        MatmulVariant::Simt(s) => s.stream_k_cubes(caps).and_then(|cubes| {
            let depth = s.tail_depth(caps, spec.dtype) as usize;
            StreamKPlan::new(spec.batch * gx * gy, spec.k.div_ceil(depth), cubes)
                .filter(|plan| plan.dp <= caps.max_cube_count[0] as usize)
                .map(|plan| (plan, depth))
        }),
        _ => None,
    };
    let Widths {
        nb,
        nc,
        nc2,
        na8,
        nb8,
        v16,
    } = h.widths;
    macro_rules! go {
        ($A:ty, $scale:expr) => {{
            let (sa, sb) = (
                strides_arg::<R>(spec.a_strides),
                strides_arg::<R>(spec.b_strides),
            );
            // SAFETY: `MatmulSpec::new` proved every element the strides address for
            // `z < batch, row < m, col < n, kk < k` lies inside its buffer, `c` rows of `n` at
            // `c_pitch` within its buffer and `bias` (when used) `n` elements; the kernels mask rows,
            // columns and depths beyond the problem and index nothing else. The grid was
            // checked against the device limits; `BlockConfig`/`CmmaConfig` meet their kernels'
            // divisibility preconditions (fixed in `MatmulVariant::block` and below).
            unsafe {
                let (a, b, bias, c) = (
                    ArrayArg::from_raw_parts(h.a.clone(), a_len),
                    ArrayArg::from_raw_parts(h.b.clone(), b_len),
                    ArrayArg::from_raw_parts(h.bias.clone(), h.bias_len),
                    ArrayArg::from_raw_parts(h.c.clone(), c_len),
                );
                match variant {
                    MatmulVariant::Naive => matmul_naive_kernel::launch_unchecked::<E, $A, R>(
                        client,
                        count,
                        CubeDim::new_2d(16, 16),
                        a,
                        b,
                        bias,
                        c,
                        spec.m,
                        spec.n,
                        spec.k,
                        sa,
                        sb,
                        spec.c_pitch,
                        $scale,
                        spec.bias,
                    ),
                    MatmulVariant::Cmma => matmul_cmma_kernel::launch_unchecked::<E, $A, R>(
                        client,
                        count,
                        CubeDim::new_2d(32, 4),
                        a,
                        b,
                        bias,
                        c,
                        spec.m,
                        spec.n,
                        spec.k,
                        sa,
                        sb,
                        spec.c_pitch,
                        $scale,
                        CmmaConfig {
                            planes_m: 2,
                            planes_n: 2,
                            bk: 32,
                            plane: 32,
                            bias: spec.bias,
                        },
                    ),
                    MatmulVariant::Simt(shape) if shape.async_copy => {
                        let cfg = shape.config(spec.bias, true, nc == 4);
                        // `SimtShape::check` established f32, `copy_async`, the stage count and
                        // divisibility; the caller swapped in the register-staged shape unless
                        // A and B rows are 16-byte vectors (`na8 = nb8 = 4`).
                        matmul_simt_async_kernel::launch_unchecked::<E, $A, R>(
                            client,
                            count,
                            CubeDim::new_1d(shape.units() as u32),
                            na8,
                            nc,
                            a,
                            b,
                            bias,
                            c,
                            spec.m,
                            spec.n,
                            spec.k,
                            sa,
                            sb,
                            spec.c_pitch,
                            $scale,
                            cfg,
                        )
                    }
                    MatmulVariant::Simt(shape) => {
                        let cfg = shape.config(spec.bias, nb == 4, nc == 4);
                        // `SimtShape::check` (run by the caller) established the config's
                        // divisibility preconditions; `nb`/`nc` are 4 only with the layouts
                        // the kernel's vector paths require. With stream-K, the plan meets
                        // its kernels' preconditions (`StreamKPlan::new`: `chunk < iters`),
                        // `ws` holds its `slots() · bm · bn` f32 pieces, and three kernels
                        // run in order on one stream: whole blocks `0..dp` (the plain kernel,
                        // `linear`, on `dp` cubes: the plan has `dp` within the first grid
                        // axis), the tail's pieces, their sums.
                        let units = shape.units() as u32;
                        let plain = |count: CubeCount, linear: bool, a, b, bias, c| {
                            matmul_simt_kernel::launch_unchecked::<E, $A, R>(
                                client,
                                count,
                                CubeDim::new_1d(units),
                                nb,
                                nc,
                                a,
                                b,
                                bias,
                                c,
                                spec.m,
                                spec.n,
                                spec.k,
                                strides_arg::<R>(spec.a_strides),
                                strides_arg::<R>(spec.b_strides),
                                spec.c_pitch,
                                $scale,
                                SimtConfig { linear, ..cfg },
                            )
                        };
                        match stream_k {
                            None => plain(count, false, a, b, bias, c),
                            Some((plan, depth)) => {
                                let ws_len = plan.slots() * shape.bm as usize * shape.bn as usize;
                                let tail_cfg = SimtConfig { bk: depth, ..cfg };
                                let ws = client.empty(ws_len * 4);
                                let x = plan.runs.min(caps.max_cube_count[0] as usize);
                                if plan.dp > 0 {
                                    plain(CubeCount::new_1d(plan.dp as u32), true, a, b, bias, c);
                                }
                                matmul_simt_sk_kernel::launch_unchecked::<E, R>(
                                    client,
                                    CubeCount::new_2d(x as u32, plan.runs.div_ceil(x) as u32),
                                    CubeDim::new_1d(units),
                                    nb,
                                    ArrayArg::from_raw_parts(h.a.clone(), a_len),
                                    ArrayArg::from_raw_parts(h.b.clone(), b_len),
                                    ArrayArg::from_raw_parts(ws.clone(), ws_len),
                                    spec.m,
                                    spec.n,
                                    spec.k,
                                    sa,
                                    sb,
                                    plan.dp,
                                    plan.chunk,
                                    plan.total,
                                    tail_cfg,
                                );
                                matmul_simt_fixup_kernel::launch_unchecked::<E, $A, R>(
                                    client,
                                    CubeCount::new_1d(plan.tail as u32),
                                    CubeDim::new_1d(units),
                                    nc,
                                    ArrayArg::from_raw_parts(ws.clone(), ws_len),
                                    ArrayArg::from_raw_parts(h.bias.clone(), h.bias_len),
                                    ArrayArg::from_raw_parts(h.c.clone(), c_len),
                                    spec.m,
                                    spec.n,
                                    spec.k,
                                    spec.c_pitch,
                                    $scale,
                                    plan.dp,
                                    plan.chunk,
                                    tail_cfg,
                                )
                            }
                        }
                    }
                    MatmulVariant::Tc(shape) if shape.mma && shape.stages > 0 && h.widths.vec8() => {
                        let cfg = shape.config(spec.dtype, spec.bias, true, true, nc2 == 2);
                        // As the async arm below, and `TcShape::check` established manual MMA
                        // and an even number of 16-deep steps; outputs go out as column pairs
                        // where C's rows allow (`nc2 = 2`), else as scalars.
                        matmul_tc_mma_kernel::launch_unchecked::<E, $A, R>(
                            client,
                            count,
                            CubeDim::new_1d(shape.units() as u32),
                            na8,
                            nb8,
                            nc2,
                            a,
                            b,
                            bias,
                            c,
                            spec.m,
                            spec.n,
                            spec.k,
                            sa,
                            sb,
                            spec.c_pitch,
                            $scale,
                            cfg,
                            shape.stages as usize,
                        )
                    }
                    MatmulVariant::Tc(shape) if shape.stages > 0 && h.widths.vec8() => {
                        let cfg = shape.config(spec.dtype, spec.bias, true, true, nc == 4);
                        // As below, and `TcShape::check` established `copy_async` and the
                        // stage count; A and B are read as the 16-byte vectors it copies.
                        matmul_tc_async_kernel::launch_unchecked::<E, E::Frag, $A, R>(
                            client,
                            count,
                            CubeDim::new_1d(shape.units() as u32),
                            na8,
                            nb8,
                            nc,
                            a,
                            b,
                            bias,
                            c,
                            spec.m,
                            spec.n,
                            spec.k,
                            sa,
                            sb,
                            spec.c_pitch,
                            $scale,
                            cfg,
                            shape.stages as usize,
                        )
                    }
                    MatmulVariant::Tc(shape) => {
                        let cfg =
                            shape.config(spec.dtype, spec.bias, na8 == v16, nb8 == v16, nc == 4);
                        // `TcShape::check` established the divisibility preconditions and
                        // `runs_on` the tensor cores (TF32 ones for f32); the vector sizes
                        // match the flags, `v16` is the shared vector.
                        matmul_tc_kernel::launch_unchecked::<E, E::Frag, $A, R>(
                            client,
                            count,
                            CubeDim::new_1d(shape.units() as u32),
                            na8,
                            nb8,
                            v16,
                            nc,
                            a,
                            b,
                            bias,
                            c,
                            spec.m,
                            spec.n,
                            spec.k,
                            sa,
                            sb,
                            spec.c_pitch,
                            $scale,
                            cfg,
                        )
                    }
                    blocked => {
                        let Some(cfg) = blocked.block(spec.bias) else {
                            return Err(Error::Unsupported {
                                op: "matmul",
                                backend: caps.backend,
                                reason: format!("{blocked} has no block configuration"),
                            });
                        };
                        matmul_blocked_kernel::launch_unchecked::<E, $A, R>(
                            client,
                            count,
                            CubeDim::new_2d((cfg.bn / cfg.tn) as u32, (cfg.bm / cfg.tm) as u32),
                            a,
                            b,
                            bias,
                            c,
                            spec.m,
                            spec.n,
                            spec.k,
                            sa,
                            sb,
                            spec.c_pitch,
                            $scale,
                            cfg,
                        )
                    }
                }
            }
        }};
    }
    match act {
        Act::Identity => go!(Identity, 1.0f32),
        Act::ReluScale(scale) => go!(ReluScale, scale),
        Act::GeluTanh => go!(GeluTanh, 1.0f32),
        Act::GeluErf => go!(GeluErf, 1.0f32),
    }
    Ok(())
}

/// The variant [`matmul_into`] picks for a `batch × m × n × k` product of contiguous
/// row-major operands on this device (for reports).
pub fn matmul_variant<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    batch: usize,
    (m, n, k): (usize, usize, usize),
) -> MatmulVariant {
    let vec8 = k.is_multiple_of(8) && n.is_multiple_of(8);
    MatmulVariant::select(&caps_of(client), dtype, batch, m, n).for_layout(vec8)
}

/// FLOPs of a `batch × m × n × k` product (2 per multiply-add).
pub fn matmul_flops(batch: usize, m: usize, n: usize, k: usize) -> u64 {
    2 * (batch * m * n * k) as u64
}

#[cfg(test)]
mod tests {
    use super::StreamKPlan;

    /// Walks every cube of a plan as `matmul_simt_sk_kernel` does and every tail block as
    /// `matmul_simt_fixup_kernel` does: each tail depth tile is computed exactly once, pieces
    /// land in distinct slots below `slots()`, each tail block has at least two pieces and the
    /// fixup sums exactly the slots that hold its block's pieces.
    #[test]
    fn stream_k_plans_cover_the_tail_once() {
        let mut planned = 0;
        for tiles in 1..300 {
            for iters in 1..40 {
                for cubes in (2..20).chain([132]) {
                    let Some(p) = StreamKPlan::new(tiles, iters, cubes) else {
                        let tail = tiles % cubes;
                        assert!(tail == 0 || (tail * iters).div_ceil(cubes) >= iters);
                        continue;
                    };
                    planned += 1;
                    assert_eq!(p.dp + p.tail, tiles);
                    assert!(p.runs <= cubes.min(super::STREAM_K_SHARE * p.tail));
                    assert!(p.chunk < iters);
                    let mut seen = vec![0u8; p.tail * iters];
                    let mut slot_of = vec![None; p.slots()];
                    for j in 0..p.runs {
                        let (mut it, end) = (
                            p.dp * iters + (j * p.chunk).min(p.total),
                            p.dp * iters + (j * p.chunk + p.chunk).min(p.total),
                        );
                        let mut pieces = 0;
                        while it < end {
                            let (blk, kt0) = (it / iters, it % iters);
                            let kt1 = (kt0 + end - it).min(iters);
                            for d in kt0..kt1 {
                                seen[(blk - p.dp) * iters + d] += 1;
                            }
                            let slot = j + blk - p.dp;
                            assert!(slot_of[slot].is_none(), "{p:?}: slot {slot} twice");
                            slot_of[slot] = Some(blk - p.dp);
                            it += kt1 - kt0;
                            pieces += 1;
                        }
                        assert!((1..=2).contains(&pieces), "{p:?}: run {j} has {pieces}");
                    }
                    assert!(seen.iter().all(|&s| s == 1), "{p:?}: {seen:?}");
                    for t in 0..p.tail {
                        let runs = t * iters / p.chunk..((t + 1) * iters - 1) / p.chunk + 1;
                        assert!(runs.len() >= 2, "{p:?}: block {t} in one piece");
                        assert!(runs.len() <= super::STREAM_K_SHARE + 1, "{p:?}: block {t}");
                        let summed: Vec<usize> = runs.map(|j| j + t).collect();
                        let held: Vec<usize> =
                            (0..p.slots()).filter(|&s| slot_of[s] == Some(t)).collect();
                        assert_eq!(summed, held, "{p:?}: block {t}");
                    }
                }
            }
        }
        assert!(planned > 1000, "{planned} plans");
    }
}
