//! Tile shapes of the tensor-core kernels ([`MatmulVariant::Tc`](super::MatmulVariant::Tc)):
//! ids, presets and the device checks.

use crate::{Caps, DType};
use cubeport_kernels::matmul::TcConfig;
use std::fmt;

/// Shape of the tiled tensor-core kernels ([`MatmulVariant::Tc`](super::MatmulVariant::Tc)):
/// `warps_m × warps_n` planes per cube, each `frags_m × frags_n` fragments of 16 × 16, `bk`-deep
/// shared tiles, and how the tiles reach shared memory: through registers, two stages
/// (`stages = 0`), or by `cp.async` with `stages` (2–4; 2–8 with manual MMA) tiles in flight. Written
/// `tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>`, with `_a<stages>` for the async pipeline
/// (`bm = 16·frags_m·warps_m`, `bn = 16·frags_n·warps_n`), which [`str::parse`] reads back. The
/// async pipeline copies A and B rows as 16-byte vectors (contiguous rows; `k`, `n` and the
/// strides multiples of 8; aligned buffers); other layouts are first copied into padded
/// buffers, which the plan names ([`crate::matmul_plan`]).
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
    /// `cp.async` stages (2–4; 2–8 with manual MMA), or 0 for the register-staged kernel.
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
    /// The depth split over the grid where the output blocks alone would not fill the device
    /// (few rows: decode shapes): each cube multiplies one chunk of the depth into f32
    /// partial sums, which a second pass adds in a fixed order (deterministic) before the
    /// epilogue. The value is the cubes per SM the chunks aim for (0: no split); the plan picks
    /// the chunks (none where the blocks fill the device); manual-MMA kernel only. Written
    /// `_split<cubes per SM>` after `_mma`.
    pub split: u16,
    /// The register-staged kernel's epilogue in this many passes (0 or 1: one), each staging
    /// `frags_m / passes` fragment rows of every plane's f32 accumulators in shared memory, a
    /// `passes`-th of the memory of one pass: what lets a block fit devices with little shared
    /// memory (Vulkan's 48 KiB). Divides `frags_m`; register-staged kernel only. Written
    /// `_p<passes>` before `_tf32`.
    pub passes: u16,
    /// The manual-MMA kernel's epilogue through shared memory (`_st`): the block's outputs
    /// staged there and written out a whole row segment per plane store, where the stores
    /// straight from the accumulators write 16 bytes in each of eight rows; what products of
    /// little depth (whose time is the output's) want. Takes `bm × (bn + 8)` elements of shared
    /// memory beside the pipeline's. Written `_st` after `_split`.
    pub staged: bool,
    /// The register-staged kernel's load width in elements (0: 16 bytes, on every device: on
    /// Vulkan, whose vectors stop at 4, a 16-byte vector of halves is two 8-byte accesses, and
    /// that still ran faster than 4-wide loads). A narrower width that divides 16 bytes'
    /// elements (2 or 4 for halves, 2 for f32) forces it, to time one width against another.
    /// Written `_v<load>` before `_tf32`.
    pub load: u16,
    /// The register-staged kernel's epilogue one fragment at a time through a 16 × 16 f32
    /// scratch tile per plane (as the `cp.async` kernel's) instead of the block's accumulators
    /// staged at once: 1 KiB a plane, so 128 × 128 × 32 or 128 × 256 × 16 blocks fit Vulkan's
    /// 48 KiB. Not with `passes`. Written `_sc` before `_v`.
    pub scratch: bool,
    /// The register-staged kernel keeps two tiles in flight in registers instead of one, so a
    /// tile's loads have two tiles' products to arrive (for drivers that wait at a load's first
    /// use with few cubes resident). Register-staged kernel only. Written `_r2` after `_sc`.
    pub deep_prefetch: bool,
}

impl TcShape {
    /// 128 × 128 blocks, 32-deep tiles, 2 × 4 planes of 4 × 2 fragments (64 × 32 per plane).
    pub const T128: TcShape = TcShape::new(2, 4, 4, 2, 32);
    /// 128 × 128 blocks, 32-deep tiles, 4 × 2 planes of 2 × 4 fragments (32 × 64 per plane):
    /// the automatic register-staged choice for f16/bf16 (no `cp.async`, or rows that are not
    /// 16-byte vectors).
    pub const T128_W4X2: TcShape = TcShape::new(4, 2, 2, 4, 32);
    /// 128 × 256 blocks, 32-deep tiles, 2 × 4 planes of 4 × 4 fragments (64 × 64 per plane).
    pub const T128X256: TcShape = TcShape::new(2, 4, 4, 4, 32);
    /// 64 × 128 blocks, 32-deep tiles, 2 × 2 planes of 2 × 4 fragments: outputs too small to
    /// fill the device with 128 × 128 blocks.
    pub const T64X128: TcShape = TcShape::new(2, 2, 2, 4, 32);
    /// [`TcShape::T64X128`] with its epilogue in two passes: 44544 bytes of shared memory for
    /// halves, under Vulkan's 48 KiB (one pass takes 61440).
    pub const T64X128_P2: TcShape = TcShape::T64X128.with_passes(2);
    /// 128 × 128 blocks, 16-deep tiles, 2 × 4 planes of 4 × 2 fragments, register-staged with
    /// the epilogue in four passes: 37888 bytes of shared memory for halves, the automatic
    /// choice on Vulkan (no `cp.async`, 48 KiB) where 128 × 128 blocks make two waves.
    pub const T128X128X16_P4: TcShape = TcShape::new(2, 4, 4, 2, 16).with_passes(4);
    /// 128 × 128 blocks, 32-deep tiles, 2 × 4 planes of 4 × 2 fragments, register-staged with
    /// the epilogue through per-plane scratch tiles (`_sc`): 46080 bytes for halves, under
    /// Vulkan's 48 KiB. Not chosen automatically until timed there.
    pub const T128X128X32_SC: TcShape = TcShape::new(2, 4, 4, 2, 32).with_scratch();
    /// 128 × 256 blocks, 16-deep tiles, 2 × 4 planes of 4 × 4 fragments, register-staged with
    /// the per-plane scratch epilogue: 37376 bytes for halves. Not chosen automatically until
    /// timed on Vulkan.
    pub const T128X256X16_SC: TcShape = TcShape::new(2, 4, 4, 4, 16).with_scratch();
    /// [`TcShape::T128X128X32_SC`] with two tiles in flight in registers (`_r2`). In
    /// [`MatmulVariant::ALL`](super::MatmulVariant::ALL) so the suite runs the two-set loop;
    /// not chosen automatically until timed on Vulkan.
    pub const T128X128X32_SC_R2: TcShape = TcShape::T128X128X32_SC.with_deep_prefetch();
    /// [`TcShape::T64X128_P2`] loading 4 elements at a time (`_v4`): in
    /// [`MatmulVariant::ALL`](super::MatmulVariant::ALL) so the suite runs loads narrower than
    /// the shared tiles' padding.
    pub const T64X128_P2_V4: TcShape = TcShape::T64X128_P2.with_load(4);
    /// [`TcShape::T128_W4X2`] with a three-stage `cp.async` pipeline.
    pub const T128_W4X2_A3: TcShape = TcShape::T128_W4X2.with_async(3);
    /// [`TcShape::T128X256`] (2 × 4 planes of 64 × 64) with a three-stage `cp.async` pipeline.
    pub const T128X256_A3: TcShape = TcShape::T128X256.with_async(3);
    /// [`TcShape::T128X256_A3`] with manual MMA fragments (`ldmatrix` for bf16 as for f16).
    pub const T128X256_A3_MMA: TcShape = TcShape::T128X256_A3.with_mma();
    /// 128 × 256 blocks of 2 × 4 planes (64 × 64 each), 64-deep tiles, three `cp.async`
    /// stages, manual MMA, cubes in the launch order.
    pub const T128X256X64_A3_MMA: TcShape = TcShape::new(2, 4, 4, 4, 64).with_async(3).with_mma();
    /// [`TcShape::T128X256X64_A3_MMA`] with cubes walking column strips 8 block-rows tall
    /// (`_g8`): the automatic choice for f16 and bf16 on large products.
    pub const T128X256X64_A3_G8_MMA: TcShape = TcShape::T128X256X64_A3_MMA.with_group(8);
    /// 128 × 128 blocks, 64-deep tiles, 2 × 2 planes of 4 × 4 fragments (the planes of
    /// [`TcShape::T128X256X64_A3_MMA`]), three `cp.async` stages, manual MMA: f16/bf16 outputs
    /// that 128 × 128 blocks fill but 128 × 256 ones do not.
    pub const T128X128X64_A3_MMA: TcShape = TcShape::new(2, 2, 4, 4, 64).with_async(3).with_mma();
    /// [`TcShape::T128X128X64_A3_MMA`] with its epilogue through shared memory (`_st`). In
    /// [`MatmulVariant::ALL`](super::MatmulVariant::ALL) so the suite runs the staged epilogue;
    /// not chosen automatically until timed.
    pub const T128X128X64_A3_ST_MMA: TcShape = TcShape::T128X128X64_A3_MMA.with_staged();
    /// 64 × 128 blocks, 64-deep tiles, 2 × 2 planes of 2 × 4 fragments, three `cp.async`
    /// stages, manual MMA: f16/bf16 outputs too small for 128 × 128 blocks to fill the device.
    pub const T64X128X64_A3_MMA: TcShape = TcShape::new(2, 2, 2, 4, 64).with_async(3).with_mma();
    /// [`TcShape::T128_W4X2_A3`] on TF32 tensor cores for f32 inputs (the opt-in; see
    /// [`TcShape::tf32`]).
    pub const T128_W4X2_A3_TF32: TcShape = TcShape::T128_W4X2_A3.with_tf32();
    /// 16 × 128 blocks (1 × 4 planes of one 16-row fragment row), 64-deep tiles, three
    /// `cp.async` stages, manual MMA, split depth: f16/bf16 products of at most 16 rows.
    pub const T16X128_SPLIT: TcShape = TcShape::new(1, 4, 1, 2, 64)
        .with_async(3)
        .with_mma()
        .with_split(2);
    /// 32 × 128 blocks (1 × 4 planes of 32 × 32), otherwise as [`TcShape::T16X128_SPLIT`]:
    /// 17–32 rows.
    pub const T32X128_SPLIT: TcShape = TcShape::new(1, 4, 2, 2, 64)
        .with_async(3)
        .with_mma()
        .with_split(2);
    /// 64 × 64 blocks (2 × 2 planes of 32 × 32), 64-deep tiles, three `cp.async` stages,
    /// manual MMA, the depth split until about one cube per SM: 33–64 rows.
    pub const T64X64_SPLIT: TcShape = TcShape::new(2, 2, 2, 2, 64)
        .with_async(3)
        .with_mma()
        .with_split(1);
    /// [`TcShape::T64X64_SPLIT`] with six `cp.async` stages: more of B in flight per cube where
    /// few cubes share the device (decode shapes). In [`MatmulVariant::ALL`](super::MatmulVariant::ALL)
    /// so the suite runs the pipelines deeper than four stages; not chosen automatically until
    /// timed.
    pub const T64X64_A6_SPLIT: TcShape = TcShape::new(2, 2, 2, 2, 64)
        .with_async(6)
        .with_mma()
        .with_split(1);

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
            split: 0,
            passes: 0,
            staged: false,
            load: 0,
            scratch: false,
            deep_prefetch: false,
        }
    }

    /// Passes of the register-staged epilogue (at least 1; see [`TcShape::passes`]).
    pub fn epilogue_passes(&self) -> usize {
        self.passes.max(1) as usize
    }

    /// The same tiles with the register-staged epilogue in `passes` passes (see
    /// [`TcShape::passes`]).
    pub const fn with_passes(self, passes: u16) -> Self {
        TcShape { passes, ..self }
    }

    /// The same tiles with the manual-MMA epilogue through shared memory (see
    /// [`TcShape::staged`]).
    pub const fn with_staged(self) -> Self {
        TcShape {
            staged: true,
            ..self
        }
    }

    /// The same tiles with the depth split over the grid (see [`TcShape::split`]).
    pub const fn with_split(self, cubes_per_sm: u16) -> Self {
        TcShape {
            split: cubes_per_sm,
            ..self
        }
    }

    /// The split shape for a product of `m` rows: the smallest block height that holds them
    /// (16, 32 or 64 rows); `None` beyond 64 rows.
    pub fn split_for(m: usize) -> Option<TcShape> {
        match m {
            0..=16 => Some(TcShape::T16X128_SPLIT),
            17..=32 => Some(TcShape::T32X128_SPLIT),
            33..=64 => Some(TcShape::T64X64_SPLIT),
            _ => None,
        }
    }

    /// The same tiles for f32 inputs on TF32 tensor cores (see [`TcShape::tf32`]).
    pub const fn with_tf32(self) -> Self {
        TcShape { tf32: true, ..self }
    }

    /// The same register-staged tiles with the epilogue through per-plane scratch tiles (see
    /// [`TcShape::scratch`]).
    pub const fn with_scratch(self) -> Self {
        TcShape {
            scratch: true,
            ..self
        }
    }

    /// The same register-staged tiles with two tiles in flight in registers (see
    /// [`TcShape::deep_prefetch`]).
    pub const fn with_deep_prefetch(self) -> Self {
        TcShape {
            deep_prefetch: true,
            ..self
        }
    }

    /// The same register-staged tiles loaded `load` elements at a time (see [`TcShape::load`]).
    pub const fn with_load(self, load: u16) -> Self {
        TcShape { load, ..self }
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

    pub(super) fn units(&self) -> usize {
        32 * self.warps_m as usize * self.warps_n as usize
    }

    /// Shared memory one cube takes, bytes: the register-staged kernel holds two stages of
    /// padded A and B tiles and f32 staging of the block's outputs (a `passes`-th of them with
    /// `_p`, one 16 × 16 tile per plane with `_sc`); the async one
    /// `stages` stages and one 16 × 16 f32 scratch tile per plane (the manual-MMA one no scratch).
    pub fn shared_bytes(&self, dtype: DType) -> usize {
        let (bm, bn, bk) = (self.bm(), self.bn(), self.bk as usize);
        // Rows padded by one 16-byte vector.
        let pad = 16 / dtype.size();
        let stage = (bm * (bk + pad) + bk * (bn + pad)) * dtype.size();
        if self.stages == 0 && self.scratch {
            2 * stage + (self.units() / 32) * 256 * 4
        } else if self.stages == 0 {
            2 * stage + bm / self.epilogue_passes() * (bn + 4) * 4
        } else if self.mma {
            let staged = if self.staged { bm * (bn + pad) } else { 0 };
            self.stages as usize * stage + staged * dtype.size()
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
            split,
            passes,
            staged,
            load,
            scratch,
            deep_prefetch,
        } = *self;
        // Deeper pipelines keep more of B in flight per cube; only the manual-MMA kernel is
        // built for them. None is chosen automatically: at decode shapes they measured slower
        // than three stages (BENCHMARKS, decode shapes).
        let most = if mma { 8 } else { 4 };
        if stages == 1 || stages > most {
            return Err(format!(
                "{self}: async stages must be 2 to 4 (2 to 8 with manual MMA)"
            ));
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
        if passes > 1 && (stages > 0 || !frags_m.is_multiple_of(passes)) {
            return Err(format!(
                "{self}: an epilogue in passes (_p) is a register-staged option whose passes divide the fragment rows"
            ));
        }
        if scratch && (stages > 0 || passes > 1) {
            return Err(format!(
                "{self}: the per-plane scratch epilogue (_sc) is a register-staged option, not with passes (_p)"
            ));
        }
        if deep_prefetch && stages > 0 {
            return Err(format!(
                "{self}: two tiles in registers (_r2) is a register-staged option, not with cp.async stages (_a)"
            ));
        }
        let v16 = (16 / dtype.size()) as u16;
        if load > 0 && (stages > 0 || load < 2 || load >= v16 || !v16.is_multiple_of(load)) {
            return Err(format!(
                "{self}: a forced load width (_v) is a register-staged option narrower than a 16-byte vector ({v16} elements) that divides it, at least 2"
            ));
        }
        if split > 0 && !mma {
            return Err(format!(
                "{self}: the split depth (_split) is a manual-MMA option (_mma)"
            ));
        }
        if staged && (!mma || split > 0) {
            return Err(format!(
                "{self}: the staged epilogue (_st) is a manual-MMA option (_mma) without a split depth"
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
        let passes = self.epilogue_passes();
        if !(bm * bk / vec).is_multiple_of(units)
            || !(bk * bn / vec).is_multiple_of(units)
            || !(bm / passes * bn / 4).is_multiple_of(units)
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
        let shared = self.shared_bytes(dtype);
        if shared > caps.max_shared_bytes {
            return Err(format!(
                "{self}: {shared} bytes of shared memory exceed the device's {}",
                caps.max_shared_bytes
            ));
        }
        Ok(())
    }

    pub(super) fn config(
        &self,
        dtype: DType,
        bias: bool,
        a_vec: bool,
        b_vec: bool,
        c_vec: bool,
    ) -> TcConfig {
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
            split: false,
            c_passes: self.epilogue_passes(),
            staged_c: self.staged,
            plane_scratch: self.scratch,
            deep_prefetch: self.deep_prefetch,
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
        if self.split > 0 {
            write!(f, "_split{}", self.split)?;
        }
        if self.staged {
            write!(f, "_st")?;
        }
        if self.passes > 1 {
            write!(f, "_p{}", self.passes)?;
        }
        if self.scratch {
            write!(f, "_sc")?;
        }
        if self.deep_prefetch {
            write!(f, "_r2")?;
        }
        if self.load > 0 {
            write!(f, "_v{}", self.load)?;
        }
        if self.tf32 {
            write!(f, "_tf32")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TcShape {
    type Err = String;

    /// Parses `tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>[_a<stages>][_g<group>][_mma][_split<n>][_st][_p<passes>][_sc][_r2][_v<load>][_tf32]`
    /// (as printed).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not tc<bm>x<bn>x<bk>_w<warps_m>x<warps_n>[_a<stages>][_g<group>][_mma][_split<n>][_st][_p<passes>][_sc][_r2][_v<load>][_tf32]"
            )
        };
        let (s_body, tf32) = match s.strip_suffix("_tf32") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let (s_body, load) = match s_body.rsplit_once("_v") {
            Some((b, n)) => match n.parse::<u16>() {
                Ok(n) if n > 0 => (b, n),
                _ => return Err(bad()),
            },
            None => (s_body, 0),
        };
        let (s_body, deep_prefetch) = match s_body.strip_suffix("_r2") {
            Some(b) => (b, true),
            None => (s_body, false),
        };
        let (s_body, scratch) = match s_body.strip_suffix("_sc") {
            Some(b) => (b, true),
            None => (s_body, false),
        };
        let (s_body, passes) = match s_body.rsplit_once("_p") {
            Some((b, n)) => match n.parse::<u16>() {
                Ok(n) if n > 1 => (b, n),
                _ => return Err(bad()),
            },
            None => (s_body, 0),
        };
        let (s_body, staged) = match s_body.strip_suffix("_st") {
            Some(b) => (b, true),
            None => (s_body, false),
        };
        let (s_body, split) = match s_body.rsplit_once("_split") {
            Some((b, n)) => match n.parse::<u16>() {
                Ok(n) if n > 0 => (b, n),
                _ => return Err(bad()),
            },
            None => (s_body, 0),
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
        shape.split = split;
        shape.passes = passes;
        shape.staged = staged;
        shape.load = load;
        shape.scratch = scratch;
        shape.deep_prefetch = deep_prefetch;
        if shape.bm() != b[0] as usize || shape.bn() != b[1] as usize {
            return Err(format!(
                "{s}: bm must be a multiple of 16·warps_m, bn of 16·warps_n"
            ));
        }
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vulkan's 48 KiB: the register-staged 64 × 128 shape fits only with its epilogue in two
    /// passes; its id round-trips; passes must divide the fragment rows of a register-staged
    /// shape.
    #[test]
    fn epilogue_passes_fit_small_shared_memory() {
        assert_eq!(TcShape::T64X128.shared_bytes(DType::F16), 61_440);
        assert_eq!(TcShape::T64X128_P2.shared_bytes(DType::F16), 44_544);
        assert_eq!(TcShape::T64X128_P2.to_string(), "tc64x128x32_w2x2_p2");
        let st = TcShape::T128X128X64_A3_ST_MMA;
        assert_eq!(st.to_string(), "tc128x128x64_w2x2_a3_mma_st");
        assert_eq!("tc128x128x64_w2x2_a3_mma_st".parse::<TcShape>(), Ok(st));
        assert_eq!(
            st.shared_bytes(DType::F16),
            TcShape::T128X128X64_A3_MMA.shared_bytes(DType::F16) + 128 * 136 * 2
        );
        let caps = Caps::cuda_h100_model();
        assert!(st.check(&caps, DType::F16).is_ok());
        for bad in [
            "tc128x128x32_w4x2_a3_st",
            "tc16x128x64_w1x4_a3_mma_split2_st",
        ] {
            let shape: TcShape = bad.parse().unwrap();
            assert!(shape.check(&caps, DType::F16).is_err(), "{bad}");
        }
        assert_eq!("tc64x128x32_w2x2_p2".parse(), Ok(TcShape::T64X128_P2));
        assert_eq!("tc64x128x32_w2x2_p2_v4".parse(), Ok(TcShape::T64X128_P2_V4));
        assert_eq!(TcShape::T64X128_P2_V4.to_string(), "tc64x128x32_w2x2_p2_v4");
        assert_eq!(
            "tc128x128x32_w4x2_v8_tf32"
                .parse::<TcShape>()
                .map(|s| s.load),
            Ok(8)
        );
        assert!("tc64x128x32_w2x2_p1".parse::<TcShape>().is_err());
        assert!(TcShape::T128_W4X2.with_passes(2).shared_bytes(DType::F16) > 48 << 10);
        assert_eq!(TcShape::T128X128X16_P4.shared_bytes(DType::F16), 37_888);
        assert_eq!(TcShape::T128X128X16_P4.to_string(), "tc128x128x16_w2x4_p4");
    }

    /// Deep pipelines: ids round-trip; six stages of the 64 × 64 × 64 shape (about 110 KiB)
    /// fit the 227 KiB of shared memory an sm_90 cube can take.
    #[test]
    fn deep_pipelines_round_trip() {
        assert_eq!(
            TcShape::T64X64_A6_SPLIT.to_string(),
            "tc64x64x64_w2x2_a6_mma_split1"
        );
        assert_eq!(
            "tc64x64x64_w2x2_a6_mma_split1".parse(),
            Ok(TcShape::T64X64_A6_SPLIT)
        );
        assert!(TcShape::T64X64_A6_SPLIT.shared_bytes(DType::F16) < 227 << 10);
    }

    /// The per-plane scratch epilogue (`_sc`): ids round-trip, shared memory is the two
    /// stages plus 1 KiB a plane (both shapes under Vulkan's 48 KiB), and it is refused with
    /// `cp.async` stages or epilogue passes.
    #[test]
    fn scratch_epilogue_shapes() {
        let caps = Caps::cuda_h100_model();
        for (shape, id, bytes) in [
            (TcShape::T128X128X32_SC, "tc128x128x32_w2x4_sc", 46_080),
            (TcShape::T128X256X16_SC, "tc128x256x16_w2x4_sc", 37_376),
        ] {
            assert_eq!(shape.to_string(), id);
            assert_eq!(id.parse::<TcShape>(), Ok(shape));
            assert_eq!(shape.shared_bytes(DType::F16), bytes);
            assert!(shape.check(&caps, DType::F16).is_ok());
        }
        assert_eq!(
            "tc128x128x32_w2x4_sc_v4".parse::<TcShape>(),
            Ok(TcShape::T128X128X32_SC.with_load(4))
        );
        for bad in ["tc128x128x32_w2x4_a3_sc", "tc128x128x32_w2x4_p2_sc"] {
            let err = bad
                .parse::<TcShape>()
                .unwrap()
                .check(&caps, DType::F16)
                .unwrap_err();
            assert!(err.contains("_sc"), "{bad}: {err}");
        }
    }

    /// Two tiles in registers (`_r2`): ids round-trip beside `_sc`, `_p` and `_v`, shared
    /// memory is unchanged, and it is refused with `cp.async` stages.
    #[test]
    fn deep_prefetch_shapes() {
        let caps = Caps::cuda_h100_model();
        let deep = TcShape::T128X128X32_SC_R2;
        assert_eq!(deep.to_string(), "tc128x128x32_w2x4_sc_r2");
        assert_eq!("tc128x128x32_w2x4_sc_r2".parse::<TcShape>(), Ok(deep));
        assert_eq!(
            "tc128x128x16_w2x4_p4_r2_v4".parse::<TcShape>(),
            Ok(TcShape::T128X128X16_P4.with_deep_prefetch().with_load(4))
        );
        assert_eq!(deep.shared_bytes(DType::F16), 46_080);
        assert!(deep.check(&caps, DType::F16).is_ok());
        let err = "tc128x128x32_w2x2_a3_r2"
            .parse::<TcShape>()
            .unwrap()
            .check(&caps, DType::F16)
            .unwrap_err();
        assert!(err.contains("_r2"), "{err}");
    }

    /// A forced load width (`_v`) runs on the register-staged kernel where it divides a
    /// 16-byte vector of the dtype; every other use is refused.
    #[test]
    fn load_width_checks() {
        let caps = Caps::cuda_h100_model();
        assert!(TcShape::T64X128_P2_V4.check(&caps, DType::F16).is_ok());
        assert!(TcShape::T64X128_P2_V4.check(&caps, DType::BF16).is_ok());
        assert!(
            TcShape::T64X128_P2
                .with_load(2)
                .check(&caps, DType::F16)
                .is_ok()
        );
        for (bad, dtype) in [
            ("tc64x128x32_w2x2_p2_v3", DType::F16),
            ("tc64x128x32_w2x2_p2_v16", DType::F16),
            ("tc64x128x32_w2x2_p2_v8", DType::F16),
            ("tc128x128x32_w4x2_a3_v4", DType::F16),
            ("tc128x128x32_w4x2_v8_tf32", DType::F32),
        ] {
            let shape: TcShape = bad.parse().unwrap();
            let err = shape.check(&caps, dtype).unwrap_err();
            assert!(err.contains("_v"), "{bad}: {err}");
        }
        assert!(
            "tc64x128x32_w2x2_v1"
                .parse::<TcShape>()
                .map(|s| s.check(&caps, DType::F16))
                .unwrap()
                .is_err()
        );
        assert!("tc64x128x32_w2x2_v0".parse::<TcShape>().is_err());
        assert!("tc64x128x32_w2x2_vx".parse::<TcShape>().is_err());
    }
}
