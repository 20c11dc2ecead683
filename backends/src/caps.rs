//! What a device can do, read from `client.properties()`, never guessed.

use crate::BackendKind;
use cubecl::features::Plane;
use cubecl::ir::{ElemType, FloatKind, StorageType};
use cubecl::prelude::*;
use std::fmt;

/// Plane (warp / subgroup) facts of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneSupport {
    /// Smallest plane width the device may use (8 on lavapipe, 32 on NVIDIA).
    pub min: u32,
    /// Largest plane width the device may use (64 on some AMD).
    pub max: u32,
    /// Whether the runtime advertises plane operations (`Plane::Ops`). lavapipe does not,
    /// even though its subgroups work; cubeport trusts the advertisement.
    pub ops: bool,
}

impl PlaneSupport {
    /// The fixed plane width, when `min == max` (plane kernels need one).
    pub fn fixed_width(&self) -> Option<u32> {
        (self.min == self.max && self.min > 0).then_some(self.min)
    }
}

/// Device capabilities the variant selectors may rely on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Caps {
    /// Which backend the client belongs to.
    pub backend: BackendKind,
    /// cubecl's runtime name (`cuda`, `wgpu<wgsl>`, `wgpu<spirv>`).
    pub runtime_name: &'static str,
    /// Plane width and whether plane ops are advertised.
    pub plane: PlaneSupport,
    /// `half::f16` storage and arithmetic.
    pub f16: bool,
    /// `half::bf16` storage and arithmetic (never on WGSL).
    pub bf16: bool,
    /// Largest shared memory per cube, bytes.
    pub max_shared_bytes: usize,
    /// Largest cube count per dimension.
    pub max_cube_count: [u32; 3],
    /// Largest cube dimension per axis.
    pub max_cube_dim: [u32; 3],
    /// Largest number of units in one cube.
    pub max_units_per_cube: u32,
    /// Streaming multiprocessors, where the runtime reports them.
    pub num_sms: Option<u32>,
    /// Whether any cmma (tensor-core) configuration is available.
    pub tensor_cores: bool,
    /// Widest vector (in scalars) the runtime accepts.
    pub max_vector_size: usize,
    /// Largest single allocation, bytes.
    pub max_alloc_bytes: u64,
    /// Whether `client.profile` times on the device (`true`) or with host clocks.
    pub device_timing: bool,
    /// Whether kernels can copy global → shared memory asynchronously (`cp.async`, CUDA sm ≥ 80).
    pub copy_async: bool,
    /// Whether cubecl's manual MMA runs `m16n8k16` with f16 and bf16 inputs and f32
    /// accumulators (`mma.sync` + `ldmatrix`, CUDA sm ≥ 80).
    pub manual_mma: bool,
    /// Whether cmma runs TF32 inputs with f32 accumulators in 16 × 16 × 8 (WMMA, CUDA sm ≥ 80).
    pub tf32: bool,
    /// Whether float arithmetic is known to carry NaN through (`NaN + x` is NaN): CUDA, whose
    /// kernels are compiled without fast math. Not on wgpu, where WGSL lets drivers assume no
    /// NaN (lavapipe drops it from plain sums), so kernels there test with `is_nan`.
    pub ieee_nan: bool,
}

impl Caps {
    /// Reads the capabilities of `client`.
    pub fn of<R: Runtime>(client: &ComputeClient<R>, backend: BackendKind) -> Self {
        let props = client.properties();
        let hw = &props.hardware;
        let float = |kind| StorageType::Scalar(ElemType::Float(kind));
        let supports = |kind| props.supports_type(float(kind));
        let (cx, cy, cz) = hw.max_cube_count;
        let (dx, dy, dz) = hw.max_cube_dim;
        Caps {
            backend,
            runtime_name: R::name(client),
            plane: PlaneSupport {
                min: hw.plane_size_min,
                max: hw.plane_size_max,
                ops: props.features.plane.contains(Plane::Ops),
            },
            f16: supports(FloatKind::F16),
            bf16: supports(FloatKind::BF16),
            max_shared_bytes: hw.max_shared_memory_size,
            max_cube_count: [cx, cy, cz],
            max_cube_dim: [dx, dy, dz],
            max_units_per_cube: hw.max_units_per_cube,
            num_sms: hw.num_streaming_multiprocessors,
            tensor_cores: !props.features.matmul.cmma.is_empty(),
            max_vector_size: hw.max_vector_size,
            max_alloc_bytes: props.memory.max_page_size,
            device_timing: matches!(props.timing_method, cubecl::benchmark::TimingMethod::Device),
            copy_async: props.features.copy_async,
            tf32: props.features.matmul.cmma.iter().any(|c| {
                (c.m, c.n, c.k) == (16, 16, 8)
                    && c.a_type == float(FloatKind::TF32)
                    && c.b_type == float(FloatKind::TF32)
                    && c.cd_type == float(FloatKind::F32)
            }),
            ieee_nan: backend == BackendKind::Cuda,
            manual_mma: [FloatKind::F16, FloatKind::BF16].into_iter().all(|kind| {
                props.features.matmul.mma.iter().any(|c| {
                    (c.m, c.n, c.k) == (16, 8, 16)
                        && c.a_type == float(kind)
                        && c.b_type == float(kind)
                        && c.cd_type == float(FloatKind::F32)
                })
            }),
        }
    }

    /// What cubecl-cuda reports for an H100 (sm_90, 132 SMs; the values `cubeport devices`
    /// printed there), so the automatic choices for CUDA can be tested on machines without an
    /// NVIDIA GPU. A model for host-side tests, not a device: launches need [`Caps::of`].
    #[doc(hidden)]
    pub fn cuda_h100_model() -> Self {
        Caps {
            backend: BackendKind::Cuda,
            runtime_name: "cuda",
            plane: PlaneSupport {
                min: 32,
                max: 32,
                ops: true,
            },
            f16: true,
            bf16: true,
            max_shared_bytes: 227 << 10,
            max_cube_count: [i32::MAX as u32, 65535, 65535],
            max_cube_dim: [1024, 1024, 64],
            max_units_per_cube: 1024,
            num_sms: Some(132),
            tensor_cores: true,
            max_vector_size: 255,
            max_alloc_bytes: 35788 << 20,
            device_timing: false,
            copy_async: true,
            manual_mma: true,
            tf32: true,
            ieee_nan: true,
        }
    }

    /// Vector widths (in scalars) worth using for elements of `elem_bytes` bytes, widest first:
    /// at most 16 bytes per access and at most [`Caps::max_vector_size`] lanes.
    pub fn vector_sizes(&self, elem_bytes: usize) -> Vec<usize> {
        let widest = (16 / elem_bytes.max(1)).min(self.max_vector_size).max(1);
        let mut sizes = Vec::new();
        let mut n = widest.next_power_of_two();
        if n > widest {
            n /= 2;
        }
        while n >= 1 {
            sizes.push(n);
            n /= 2;
        }
        sizes
    }
}

impl fmt::Display for Caps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plane = if self.plane.min == self.plane.max {
            format!("{}", self.plane.min)
        } else {
            format!("{}..{}", self.plane.min, self.plane.max)
        };
        write!(
            f,
            "{} ({}): plane {plane}{}, shared {} KiB, f16 {}, bf16 {}, tensor cores {}, SMs {}, \
             max vector {}, max alloc {} MiB, cube count {:?}, timing {}",
            self.backend,
            self.runtime_name,
            if self.plane.ops {
                " (ops advertised)"
            } else {
                " (ops not advertised)"
            },
            self.max_shared_bytes / 1024,
            yes(self.f16),
            yes(self.bf16),
            yes(self.tensor_cores),
            self.num_sms.map_or("?".to_string(), |n| n.to_string()),
            if self.max_vector_size > 64 {
                "any".to_string()
            } else {
                self.max_vector_size.to_string()
            },
            self.max_alloc_bytes >> 20,
            self.max_cube_count,
            if self.device_timing { "device" } else { "host" },
        )
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
