//! The normalization launcher (the only `unsafe` of the family). It runs a [`NormPlan`], which
//! only [`super::spec::NormVariant::plan`] builds.

use super::spec::{NormPlan, NormSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::spread_cubes;
use crate::ops::launcher::launch_shared;
use crate::{Caps, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::norm::norm_rows_kernel;

/// The device buffers of one call; absent optional ones are `None`.
pub(crate) struct NormHandles<'a> {
    pub input: &'a Handle,
    pub residual: Option<&'a Handle>,
    pub weight: Option<&'a Handle>,
    pub bias: Option<&'a Handle>,
    pub sum: Option<&'a Handle>,
    pub output: &'a Handle,
}

/// Launches the normalization `spec` describes.
pub(crate) fn norm<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    h: &NormHandles<'_>,
    spec: &NormSpec,
    plan: NormPlan,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, caps, h, spec, plan);
        Ok(())
    }, other => Err(crate::ops::unsupported_dtype(caps, spec.kind.name(), other)))
}

fn typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    h: &NormHandles<'_>,
    spec: &NormSpec,
    plan: NormPlan,
) {
    let (n, group) = (plan.vector, plan.cfg.group);
    let cubes = spec.rows.div_ceil(group.groups_per_cube as usize);
    let span = |pitch: usize| (spec.rows - 1) * pitch + spec.row_len;
    let [in_pitch, res_pitch, sum_pitch, out_pitch] = spec.pitches;
    let mut pitches = SequenceArg::new();
    for p in spec.pitches {
        pitches.push(p / n);
    }
    // Absent arrays are stood in for by a present one of the same access (never read or
    // written: the kernel's comptime flags say so) with that one's own length.
    let residual = h
        .residual
        .map_or((h.input, span(in_pitch)), |r| (r, span(res_pitch)));
    let sum = h
        .sum
        .map_or((h.output, span(out_pitch)), |s| (s, span(sum_pitch)));
    let weight = h
        .weight
        .map_or((h.input, span(in_pitch)), |w| (w, spec.row_len));
    let bias = h
        .bias
        .map_or((h.input, span(in_pitch)), |b| (b, spec.row_len));
    let len = spec.row_len as f32;
    // SAFETY: `NormSpec::new` proved every tensor a stack of `rows` (≥ 1) dense rows of
    // `row_len` at its pitch inside its buffer (`span` elements), weight and bias dense rows of
    // `row_len`, all of one float dtype; `n` divides `row_len` and every pitch
    // (`NormSpec::vector`); `group` was checked by `RowGroup::config`; a non-zero `cached`
    // covers `row_len / n` vectors with `group.group` units; stand-ins are never accessed.
    unsafe {
        launch_shared!(
            norm_rows_kernel::NormRowsKernel::<E>,
            client,
            spread_cubes(caps, cubes),
            CubeDim::new_2d(group.group, group.groups_per_cube),
            n,
            [
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(h.input.clone(), span(in_pitch))),
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(residual.0.clone(), residual.1)),
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(weight.0.clone(), weight.1)),
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(bias.0.clone(), bias.1)),
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(sum.0.clone(), sum.1)),
                (Array<Vector<E, norm_rows_kernel::N>>, ArrayArg::from_raw_parts(h.output.clone(), span(out_pitch))),
                (usize, spec.rows),
                (usize, spec.row_len / n),
                (Sequence<usize>, pitches),
                (f32, 1.0 / len.sqrt()),
                (f32, 1.0 / len),
                (f32, spec.eps),
                (f32, f32::INFINITY),
            ],
            [plan.cfg]
        )
    }
}
