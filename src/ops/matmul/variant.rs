//! The matmul variants: ids (`Display` / `FromStr`), the preset list, tolerances and what each
//! variant needs from the device.

use super::{SimtShape, TcShape};
use crate::reference::Tolerance;
use crate::{Caps, DType};
use std::fmt;

/// A matmul variant (see the module table). Which kernel a variant runs for given operands, with
/// which vector widths, is decided by one function ([`crate::matmul_plan`] reports it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MatmulVariant {
    /// One unit per output.
    Naive,
    /// 16 × 16 shared tiles.
    Tiled16,
    /// Few rows (decode-like `m`): B streamed once as vectors, A broadcast, the depth split
    /// over the grid where that fills the device (f32 partial sums, summed in order by a
    /// second pass). Bound by B's bytes; any `m` runs, each 16 rows streaming B again.
    Skinny,
    /// Few columns (`n` up to 16 per column group): a unit per row of A holding all of the
    /// group's outputs, A streamed once as vectors, B read at one address per plane, the depth
    /// split over the grid where that fills the device (summed in order by the skinny kernel's
    /// second pass). Bound by A's bytes; any `n` runs, each 16 columns streaming A again.
    Narrow,
    /// `Narrow` with A staged through shared memory: the cube loads each tile of its rows
    /// with whole 128-byte lines per instruction, then each unit reads its row from there.
    NarrowStaged,
    /// Few columns as `Narrow`, A read across the lanes of a plane: each plane owns 4 rows of
    /// A and its lanes split their depths, so every load instruction reads whole lines of one
    /// row; each B row a lane loads serves the plane's 4 rows; the outputs are summed across
    /// the lanes (plane ops, or shared memory where the device has none). Forced only until it
    /// is timed.
    NarrowPlane,
    /// Few columns on tensor cores (f16/bf16 with manual MMA, up to 16 columns per column
    /// group): each cube's 16 or 32 rows of A stream straight from global memory into m16n8k16
    /// fragments, its planes splitting the depth (summed in shared memory), the depth also split
    /// over the grid where that fills the device. A is read once; a ragged or transposed A is
    /// first copied into 16-byte rows. [`NarrowMmaShape::AUTO`] sizes the cubes from the
    /// problem and the device; a given shape fixes them (for timing).
    NarrowMma(NarrowMmaShape),
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

impl fmt::Display for MatmulVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatmulVariant::Naive => "naive",
            MatmulVariant::Tiled16 => "tiled16",
            MatmulVariant::Skinny => "skinny",
            MatmulVariant::Narrow => "narrow",
            MatmulVariant::NarrowStaged => "narrow_staged",
            MatmulVariant::NarrowPlane => "narrow_plane",
            MatmulVariant::NarrowMma(shape) => return shape.fmt(f),
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

    /// Parses a variant id as printed: `naive`, `tiled16`, `skinny`, `narrow`, `narrow_staged`,
    /// `narrow_plane`, `narrow_mma`, `blocked64`, `blocked128`, `blocked128_db`, `cmma`, a
    /// [`SimtShape`] (`simt128x128x8_8x8_s2`) or a [`TcShape`] (`tc128x128x32_w2x4`).
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "naive" => MatmulVariant::Naive,
            "tiled16" => MatmulVariant::Tiled16,
            "skinny" => MatmulVariant::Skinny,
            "narrow" => MatmulVariant::Narrow,
            "narrow_staged" => MatmulVariant::NarrowStaged,
            "narrow_plane" => MatmulVariant::NarrowPlane,
            s if s.starts_with("narrow_mma") => MatmulVariant::NarrowMma(s.parse()?),
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
    /// [`MatmulVariant::NarrowMma`] with its cubes sized automatically.
    pub const NARROW_MMA: MatmulVariant = MatmulVariant::NarrowMma(NarrowMmaShape::AUTO);

    /// Every variant, slowest first (the SIMT and tensor-core kernels in their preset shapes).
    pub const ALL: [MatmulVariant; 40] = [
        MatmulVariant::Naive,
        MatmulVariant::Tiled16,
        MatmulVariant::Skinny,
        MatmulVariant::Narrow,
        MatmulVariant::NarrowStaged,
        MatmulVariant::NarrowPlane,
        MatmulVariant::NARROW_MMA,
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
        MatmulVariant::Tc(TcShape::T64X128_P2),
        MatmulVariant::Tc(TcShape::T64X128_P2_V4),
        MatmulVariant::Tc(TcShape::T128X128X16_P4),
        MatmulVariant::Tc(TcShape::T128X128X32_SC),
        MatmulVariant::Tc(TcShape::T128X256X16_SC),
        MatmulVariant::Tc(TcShape::T128X128X32_SC_R2),
        MatmulVariant::Tc(TcShape::T128),
        MatmulVariant::Tc(TcShape::T128_W4X2),
        MatmulVariant::Tc(TcShape::T128X256),
        MatmulVariant::Tc(TcShape::T128_W4X2_A3),
        MatmulVariant::Tc(TcShape::T128X256_A3),
        MatmulVariant::Tc(TcShape::T128X256X64_A3_G8_MMA),
        MatmulVariant::Tc(TcShape::T128X128X64_A3_MMA),
        MatmulVariant::Tc(TcShape::T128X128X64_A3_ST_MMA),
        MatmulVariant::Tc(TcShape::T64X128X64_A3_MMA),
        MatmulVariant::Tc(TcShape::T128_W4X2_A3_TF32),
        MatmulVariant::Tc(TcShape::T16X128_SPLIT),
        MatmulVariant::Tc(TcShape::T32X128_SPLIT),
        MatmulVariant::Tc(TcShape::T64X64_SPLIT),
        MatmulVariant::Tc(TcShape::T64X64_A6_SPLIT),
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
    /// tensor cores and 32-wide planes; the shapes: [`SimtShape::check`] and
    /// [`TcShape::check`] and, for tensor-core shapes, the tensor cores; the others:
    /// everywhere the dtype runs). The same test the plan applies to a forced variant.
    pub fn runs_on(&self, caps: &Caps, dtype: DType) -> bool {
        self.requirements(caps, dtype).is_ok()
    }

    /// Why the device cannot run this variant for `dtype`, if it cannot (see
    /// [`MatmulVariant::runs_on`]): what a benchmark prints for a forced variant it leaves out.
    ///
    /// # Errors
    /// The reason, naming the variant and the missing capability.
    ///
    /// ```
    /// use cubeport::{Caps, DType, MatmulVariant};
    /// let h100 = Caps::cuda_h100_model();
    /// assert!(MatmulVariant::Cmma.requirements(&h100, DType::F16).is_ok());
    /// let why = MatmulVariant::Cmma.requirements(&h100, DType::F32).unwrap_err();
    /// assert!(why.contains("f16/bf16"));
    /// ```
    pub fn requirements(&self, caps: &Caps, dtype: DType) -> Result<(), String> {
        // Tensor-core kernels are warp-wide; the f16/bf16 ones also need cmma for their dtype.
        let tensor_cores = |halves: bool| {
            let ok = caps.plane.fixed_width() == Some(32)
                && (!halves || (caps.tensor_cores && matches!(dtype, DType::F16 | DType::BF16)));
            if ok {
                return Ok(());
            }
            Err(format!(
                "{self} needs {}tensor cores with 32-wide planes; this is {dtype} on a device \
                 with tensor cores: {}, plane width {:?}",
                if halves { "f16/bf16 and " } else { "" },
                caps.tensor_cores,
                caps.plane.fixed_width()
            ))
        };
        match self {
            MatmulVariant::Cmma => tensor_cores(true),
            MatmulVariant::NarrowMma(shape) => {
                shape.check(caps)?;
                tensor_cores(true)?;
                if caps.manual_mma {
                    Ok(())
                } else {
                    Err(format!(
                        "{self} needs manual MMA (mma.sync m16n8k16, f16/bf16 → f32), which the device lacks"
                    ))
                }
            }
            MatmulVariant::Simt(shape) => shape.check(caps, dtype),
            // `check` holds the TF32 conditions (f32 inputs, TF32 tensor cores).
            MatmulVariant::Tc(shape) => {
                shape.check(caps, dtype)?;
                tensor_cores(!shape.tf32)
            }
            MatmulVariant::Naive
            | MatmulVariant::Tiled16
            | MatmulVariant::Skinny
            | MatmulVariant::Narrow
            | MatmulVariant::NarrowStaged
            | MatmulVariant::NarrowPlane
            | MatmulVariant::Blocked64
            | MatmulVariant::Blocked128 { .. } => Ok(()),
        }
    }
}

/// The cube shape of [`MatmulVariant::NarrowMma`]: rows of A per cube (16 or 32), planes per
/// cube (each a slice of the depth, 1 to 16) and 32-deep steps each lane loads ahead (1 to 8);
/// 0 leaves a field to the plan. Id: `narrow_mma` (all automatic) or
/// `narrow_mma_r<rows>_w<planes>_s<steps>`.
///
/// ```
/// use cubeport::{MatmulVariant, NarrowMmaShape};
/// let v: MatmulVariant = "narrow_mma_r16_w8_s2".parse().unwrap();
/// assert_eq!(v, MatmulVariant::NarrowMma(NarrowMmaShape { rows: 16, warps: 8, steps: 2 }));
/// assert_eq!(MatmulVariant::NARROW_MMA.to_string(), "narrow_mma");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NarrowMmaShape {
    /// Rows of A per cube: 16 or 32 (0: the plan's choice).
    pub rows: u8,
    /// Planes per cube: 1 to 16 (0: the plan's choice).
    pub warps: u8,
    /// 32-deep steps loaded ahead per lane: 1 to 8 (0: the plan's choice).
    pub steps: u8,
}

impl NarrowMmaShape {
    /// Every field left to the plan.
    pub const AUTO: NarrowMmaShape = NarrowMmaShape {
        rows: 0,
        warps: 0,
        steps: 0,
    };

    /// Why the device cannot run this shape, if it cannot.
    fn check(&self, caps: &Caps) -> Result<(), String> {
        let ok = matches!(self.rows, 0 | 16 | 32)
            && self.warps <= 16
            && self.steps <= 8
            && 32 * self.warps as u32 <= caps.max_units_per_cube;
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{self}: rows 16 or 32, planes 1 to 16 within the device's cube size, steps 1 to 8"
            ))
        }
    }
}

impl fmt::Display for NarrowMmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == NarrowMmaShape::AUTO {
            return f.write_str("narrow_mma");
        }
        write!(
            f,
            "narrow_mma_r{}_w{}_s{}",
            self.rows, self.warps, self.steps
        )
    }
}

impl std::str::FromStr for NarrowMmaShape {
    type Err = String;

    /// `narrow_mma` or `narrow_mma_r<rows>_w<planes>_s<steps>`.
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "narrow_mma" {
            return Ok(NarrowMmaShape::AUTO);
        }
        let bad = || format!("`{s}` is not narrow_mma or narrow_mma_r<rows>_w<planes>_s<steps>");
        let rest = s.strip_prefix("narrow_mma_r").ok_or_else(bad)?;
        let (rows, rest) = rest.split_once("_w").ok_or_else(bad)?;
        let (warps, steps) = rest.split_once("_s").ok_or_else(bad)?;
        let num = |v: &str| v.parse::<u8>().map_err(|_| bad());
        Ok(NarrowMmaShape {
            rows: num(rows)?,
            warps: num(warps)?,
            steps: num(steps)?,
        })
    }
}
