//! The row group shared by reduce, softmax and gemv: how many units reduce one row, and whether
//! they combine through plane shuffles or a shared-memory tree.
//!
//! [`RowGroup`] stays one public type rather than a copy per family because the three families
//! run the same `#[cube]` combine (`cubeport_kernels::reduce::GroupConfig`) with the same
//! device constraints; each family's own variant ([`crate::ReduceVariant::Rows`],
//! [`crate::SoftmaxVariant::Rows`], [`crate::GemvVariant::CubeRow`]) wraps it, so a forced
//! variant still names its family and `config` checks it in one place.

use crate::{Caps, Error};
use cubeport_kernels::reduce::GroupConfig;
use std::fmt;

/// How the units of a row group combine their partial results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReducePath {
    /// Plane (warp/subgroup) shuffles; needs a fixed plane width.
    Plane,
    /// A shared-memory tree; runs everywhere.
    Shared,
}

/// A row-group variant: `group` units per row, combining along `path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowGroup {
    /// Combine path.
    pub path: ReducePath,
    /// Units per row (a power of two up to 1024; a multiple of the plane width on the plane
    /// path). Groups up to 256 share cubes of 256 units; larger groups take a cube each.
    pub group: u32,
}

/// Units per cube of the row kernels (groups of up to this many share a cube).
pub(crate) const CUBE_UNITS: u32 = 256;
/// Largest row group: one cube of 1024 units per row (every backend cubeport runs on allows
/// 1024 units per cube; `config` checks the device's own limit).
pub(crate) const MAX_GROUP: u32 = 1024;

impl fmt::Display for ReducePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReducePath::Plane => "plane",
            ReducePath::Shared => "shared",
        })
    }
}

impl fmt::Display for RowGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.path, self.group)
    }
}

impl RowGroup {
    /// The automatic choice for rows of `row_vecs` vectors: a whole cube per long row, a plane
    /// (or, without advertised plane ops, 32 units and a shared tree) per short row.
    pub(crate) fn select(caps: &Caps, row_vecs: usize) -> Self {
        let plane = caps.plane.ops && Self::plane_width_ok(caps).is_some();
        let path = if plane {
            ReducePath::Plane
        } else {
            ReducePath::Shared
        };
        let group = if row_vecs >= 1024 {
            CUBE_UNITS
        } else if let (ReducePath::Plane, Some(w)) = (path, Self::plane_width_ok(caps)) {
            w
        } else {
            32
        };
        Self { path, group }
    }

    fn plane_width_ok(caps: &Caps) -> Option<u32> {
        caps.plane
            .fixed_width()
            .filter(|w| w.is_power_of_two() && *w <= CUBE_UNITS)
    }

    /// The widest group this device runs: the largest power of two up to [`MAX_GROUP`] and the
    /// device's units per cube.
    pub(crate) fn widest(caps: &Caps) -> u32 {
        1 << MAX_GROUP.min(caps.max_units_per_cube.max(1)).ilog2()
    }

    /// The comptime configuration, or why this device cannot run the variant. Forcing the plane
    /// path where plane ops are not advertised is allowed when the width is fixed (lavapipe's
    /// subgroups work unadvertised); the caller takes that risk.
    pub(crate) fn config(&self, caps: &Caps, op: &'static str) -> Result<GroupConfig, Error> {
        let unsupported = |reason: String| crate::ops::unsupported(caps, op, reason);
        let max = Self::widest(caps);
        if !self.group.is_power_of_two() || self.group > max {
            return Err(unsupported(format!(
                "group {} is not a power of two ≤ {max}",
                self.group
            )));
        }
        let plane_width = match self.path {
            ReducePath::Shared => 1,
            ReducePath::Plane => {
                let w = Self::plane_width_ok(caps).ok_or_else(|| {
                    unsupported(format!(
                        "plane path needs a fixed plane width, device reports {}..{}",
                        caps.plane.min, caps.plane.max
                    ))
                })?;
                if !self.group.is_multiple_of(w) {
                    return Err(unsupported(format!(
                        "group {} is not a multiple of the plane width {w}",
                        self.group
                    )));
                }
                w
            }
        };
        Ok(GroupConfig {
            group: self.group,
            groups_per_cube: (CUBE_UNITS / self.group).max(1),
            plane: self.path == ReducePath::Plane,
            plane_width,
        })
    }
}

/// SMs (compute units) assumed where the device does not report its count (wgpu's adapters do
/// not), for the grid-stride kernels: about as many as the largest current GPUs have (130 to
/// 300 compute units), so those kernels fill them. On a smaller device the extra cubes
/// only shorten each cube's loop; too few leave a large one mostly idle (the earlier 256 cubes
/// of 256 units gave a 132-SM GPU two cubes per SM, a quarter of the units it can hold). The
/// matmul plan's block-count heuristics keep their own, smaller assumption (64), where too
/// many blocks per tile shape would pick tiles too small.
pub(crate) const UNKNOWN_SMS: usize = 256;

/// `per_sm` cubes for every SM of the device (`UNKNOWN_SMS` where it reports none).
pub(crate) fn resident_cubes(caps: &Caps, per_sm: usize) -> usize {
    caps.num_sms.map_or(UNKNOWN_SMS, |s| s as usize) * per_sm
}

/// Cubes of 256 units for a grid-stride pass over `vecs` vectors: one per 256 vectors, up to
/// 8 per SM.
pub(crate) fn grid_stride_cubes(caps: &Caps, vecs: usize) -> usize {
    vecs.div_ceil(256).clamp(1, resident_cubes(caps, 8))
}

/// Most chunks a split axis (a strided reduction's, `Aᵀ·x`'s rows) is cut into: the second
/// pass sums each output's chunks one after another in a single unit.
const MAX_CHUNKS: usize = 4096;

/// SMs assumed by [`axis_chunks`] where the device reports none: fewer than `UNKNOWN_SMS`,
/// since four times as many chunks (shorter ones, and a longer second pass) made the strided
/// sum and `Aᵀ·x` slower on wgpu-Vulkan (BENCHMARKS.md, wgpu-Vulkan vs CUDA).
const UNKNOWN_SMS_CHUNKS: usize = 64;

/// Chunks to cut a reduced axis into when `outputs` units alone cannot fill the device (4
/// cubes of 256 units per SM): at least 1, at most `MAX_CHUNKS` and `max`.
pub(crate) fn axis_chunks(caps: &Caps, outputs: usize, max: usize) -> usize {
    let sms = caps.num_sms.map_or(UNKNOWN_SMS_CHUNKS, |s| s as usize);
    (256 * 4 * sms)
        .div_ceil(outputs.max(1))
        .min(MAX_CHUNKS)
        .clamp(1, max.max(1))
}

/// A 1-D count of `cubes` cubes, spread over y when x would exceed the device limit (kernels
/// use the linear `CUBE_POS`, so extra cubes past the work simply idle).
pub(crate) fn spread_cubes(caps: &Caps, cubes: usize) -> cubecl::prelude::CubeCount {
    let max_x = caps.max_cube_count[0].max(1) as usize;
    let cubes = cubes.max(1);
    if cubes <= max_x {
        cubecl::prelude::CubeCount::new_1d(cubes as u32)
    } else {
        cubecl::prelude::CubeCount::new_2d(max_x as u32, cubes.div_ceil(max_x) as u32)
    }
}
