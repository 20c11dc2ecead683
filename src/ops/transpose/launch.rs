//! The transpose launcher (the only `unsafe` of the family). It runs a [`TransposePlan`], which
//! only [`super::spec::TransposeVariant::plan`] builds.

use super::spec::{TransposePlan, TransposeSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::spread_cubes;
use crate::{Caps, DType};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::transpose::{transpose_naive_kernel, transpose_tiled_kernel};

/// Launches `output[.., c, r] = input[.., r, c]`. Values are moved, never computed, so the
/// integer dtypes run the same kernels.
pub(crate) fn transpose<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    output: &Handle,
    spec: &TransposeSpec,
    plan: TransposePlan,
) {
    float_dispatch!(spec.dtype, E => typed::<R, E>(client, caps, input, output, spec, plan),
        DType::U32 => typed::<R, u32>(client, caps, input, output, spec, plan),
        DType::I32 => typed::<R, i32>(client, caps, input, output, spec, plan),
    )
}

fn typed<R: Runtime, E: Numeric>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    output: &Handle,
    spec: &TransposeSpec,
    plan: TransposePlan,
) {
    let total = spec.batch * spec.rows * spec.cols;
    match plan {
        // SAFETY: `TransposeSpec::new` proved both tensors dense with `total` elements; every
        // index the kernels form is below `batch · rows · cols`.
        TransposePlan::Naive => unsafe {
            transpose_naive_kernel::launch_unchecked::<E, R>(
                client,
                CubeCount::new_1d(total.div_ceil(256).min(65_535) as u32),
                CubeDim::new_1d(256),
                ArrayArg::from_raw_parts(input.clone(), total),
                ArrayArg::from_raw_parts(output.clone(), total),
                spec.rows,
                spec.cols,
            )
        },
        TransposePlan::Tiled { tile, pad, step } => {
            let t = tile as usize;
            let (tiles_r, tiles_c) = (spec.rows.div_ceil(t), spec.cols.div_ceil(t));
            let tiles = spec.batch * tiles_r * tiles_c;
            // SAFETY: as above; `plan` checked that `tile × step` fits the cube and the padded
            // tile the shared memory; cubes past `tiles` exit before touching memory.
            unsafe {
                transpose_tiled_kernel::launch_unchecked::<E, R>(
                    client,
                    spread_cubes(caps, tiles),
                    CubeDim::new_2d(tile, step),
                    ArrayArg::from_raw_parts(input.clone(), total),
                    ArrayArg::from_raw_parts(output.clone(), total),
                    spec.rows,
                    spec.cols,
                    tiles_r,
                    tiles_c,
                    tiles,
                    t,
                    pad as usize,
                    step as usize,
                )
            }
        }
    }
}
