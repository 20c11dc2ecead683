//! The histogram launcher (the only `unsafe` of the family). It runs a [`HistConfig`] that only
//! [`super::spec::HistogramVariant::plan`] builds.

use super::spec::HistogramSpec;
use crate::dtype::float_dispatch;
use crate::ops::group::{grid_stride_cubes, spread_cubes};
use crate::ops::{split_body_tail, width_dividing};
use crate::{Caps, DType};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::histogram::{HistConfig, fill_u32_kernel, histogram_kernel};

/// Zeroes `counts`, then counts `input` into it as `cfg` says.
pub(crate) fn histogram<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    counts: &Handle,
    spec: &HistogramSpec,
    cfg: HistConfig,
) {
    let fill_cubes = spec.bins.div_ceil(256).min(1024);
    // SAFETY: `HistogramSpec::new` proved `counts` dense with `bins` u32 words.
    unsafe {
        fill_u32_kernel::launch_unchecked::<R>(
            client,
            spread_cubes(caps, fill_cubes),
            CubeDim::new_1d(256),
            ArrayArg::from_raw_parts(counts.clone(), spec.bins),
            spec.bins,
            0u32,
        );
    }
    let vector = width_dividing(caps, spec.dtype, spec.len);
    let (body, tail) = split_body_tail(spec.len, vector, spec.dtype);
    let mut parts = vec![Part {
        offset: 0,
        len: body,
        vector,
    }];
    if tail > 0 {
        parts.push(Part {
            offset: body,
            len: tail,
            vector: 1,
        });
    }
    for part in parts {
        // i32 is read as u32: negative values become ≥ 2^31 and fall outside every bin.
        float_dispatch!(spec.dtype, E => typed::<R, E>(client, caps, input, counts, spec, cfg, part),
            DType::U32 | DType::I32 => typed::<R, u32>(client, caps, input, counts, spec, cfg, part),
        )
    }
}

/// One launch over `len` elements from `offset`, read `vector` at a time.
#[derive(Debug, Clone, Copy)]
struct Part {
    offset: usize,
    len: usize,
    vector: usize,
}

fn typed<R: Runtime, T: Scalar>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    counts: &Handle,
    spec: &HistogramSpec,
    cfg: HistConfig,
    part: Part,
) {
    let Part {
        offset,
        len,
        vector,
    } = part;
    let vecs = len / vector;
    // Each unit takes `cfg.batch` vectors per step: the grid for that many fewer.
    let cubes = grid_stride_cubes(caps, vecs.div_ceil(cfg.batch));
    let handle = if offset == 0 {
        input.clone()
    } else {
        input
            .clone()
            .offset_start((offset * spec.dtype.size()) as u64)
    };
    // SAFETY: `input` holds `spec.len` dense elements of `T`'s size; this part covers `len` of
    // them from `offset` (a multiple of 256 bytes when non-zero, `split_body_tail`), `vector`
    // divides `len`; `counts` holds `bins` words; `cfg.shared_bins == bins` when shared, and
    // `plan` checked that they fit.
    unsafe {
        histogram_kernel::launch_unchecked::<T, R>(
            client,
            spread_cubes(caps, cubes),
            CubeDim::new_1d(256),
            vector,
            ArrayArg::from_raw_parts(handle, len),
            ArrayArg::from_raw_parts(counts.clone(), spec.bins),
            vecs,
            spec.bins as u32,
            spec.lo,
            spec.hi,
            spec.scale,
            cfg,
        )
    }
}
