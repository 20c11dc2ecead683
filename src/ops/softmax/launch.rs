//! The softmax launcher (the only `unsafe` of the family). It runs a [`SoftmaxPlan`], which only
//! [`super::spec::SoftmaxVariant::plan`] builds.

use super::spec::{SoftmaxPlan, SoftmaxSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::spread_cubes;
use crate::ops::launcher::launch_shared;
use crate::{Caps, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::softmax::softmax_rows_kernel;

/// Launches `output = softmax(input)` (or log-softmax, as the spec's kind says).
pub(crate) fn softmax<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    output: &Handle,
    spec: &SoftmaxSpec,
    plan: SoftmaxPlan,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, caps, input, output, spec, plan);
        Ok(())
    }, other => Err(crate::ops::unsupported_dtype(caps, spec.kind.name(), other)))
}

fn typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    output: &Handle,
    spec: &SoftmaxSpec,
    plan: SoftmaxPlan,
) {
    let (n, group) = (plan.vector, plan.cfg.group);
    let cubes = spec.rows.div_ceil(group.groups_per_cube as usize);
    let span = |pitch: usize| (spec.rows - 1) * pitch + spec.row_len;
    // SAFETY: `SoftmaxSpec::new` proved both tensors stacks of `rows` (≥ 1) dense rows of
    // `row_len` at their pitches, inside their buffers (`span` elements); `n` divides `row_len`
    // and both pitches (`SoftmaxSpec::vector`); `group` was checked by `RowGroup::config`; a
    // non-zero `cached` covers `row_len / n` vectors with `group.group` units.
    unsafe {
        launch_shared!(
            softmax_rows_kernel::SoftmaxRowsKernel::<E>,
            client,
            spread_cubes(caps, cubes),
            CubeDim::new_2d(group.group, group.groups_per_cube),
            n,
            [
                (Array<Vector<E, softmax_rows_kernel::N>>, ArrayArg::from_raw_parts(input.clone(), span(spec.in_pitch))),
                (Array<Vector<E, softmax_rows_kernel::N>>, ArrayArg::from_raw_parts(output.clone(), span(spec.out_pitch))),
                (usize, spec.rows),
                (usize, spec.row_len / n),
                (usize, spec.in_pitch / n),
                (usize, spec.out_pitch / n),
                (f32, f32::INFINITY),
            ],
            [plan.cfg]
        )
    }
}
