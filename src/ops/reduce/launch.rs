//! Reduction launchers (the only `unsafe` of the family). They run a [`ReducePlan`], which only
//! [`super::spec::ReduceVariant::plan`] builds, so every configuration here was checked.

use super::spec::ReducePlan;
use crate::dtype::float_dispatch;
use crate::ops::group::{axis_chunks, grid_stride_cubes, spread_cubes};
use crate::ops::width_dividing;
use crate::reference::Reduction;
use crate::{Caps, DType, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::reduce::{self as k, GroupConfig, Max, Mean, Min, ReduceOp, Sum};

/// Stage-1 cubes of a whole-array reduction: enough to fill the device, one partial each.
pub(crate) fn partial_cubes(caps: &Caps, vecs: usize) -> usize {
    grid_stride_cubes(caps, vecs).min(caps.max_cube_count[0] as usize)
}

/// The tensors and element type of one reduction.
pub(crate) struct Operands<'a> {
    pub input: &'a Handle,
    pub output: &'a Handle,
    pub dtype: DType,
}

/// Launches `op` as `plan` says.
pub(crate) fn reduce<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    io: &Operands<'_>,
    plan: ReducePlan,
    op: Reduction,
) -> Result<(), Error> {
    float_dispatch!(io.dtype, E => {
        match op {
            Reduction::Sum => typed::<R, E, Sum>(client, caps, io, plan, op),
            Reduction::Mean => typed::<R, E, Mean>(client, caps, io, plan, op),
            Reduction::Max => typed::<R, E, Max>(client, caps, io, plan, op),
            Reduction::Min => typed::<R, E, Min>(client, caps, io, plan, op),
        }
        Ok(())
    }, other => Err(crate::ops::unsupported_dtype(caps, op.name(), other)))
}

fn typed<R: Runtime, E: Element, O: ReduceOp>(
    client: &ComputeClient<R>,
    caps: &Caps,
    io: &Operands<'_>,
    plan: ReducePlan,
    op: Reduction,
) {
    let (input, output, dtype) = (io.input, io.output, io.dtype);
    match plan {
        ReducePlan::Rows { rows, row_len, cfg } => {
            rows_launch::<R, E, E, O>(
                client,
                caps,
                input,
                output,
                rows,
                row_len,
                1.0 / row_len as f32,
                cfg,
                dtype,
            );
        }
        ReducePlan::Strided { outer, len, inner } => {
            let n = width_dividing(caps, dtype, inner);
            let outputs = outer * inner / n;
            // Split the reduced axis when the outputs alone cannot fill the device.
            let chunks = axis_chunks(caps, outputs, len / 16);
            if chunks == 1 {
                strided_launch::<R, E, E, O>(
                    client,
                    input,
                    output,
                    [outer, len, inner],
                    n,
                    1,
                    1.0 / len as f32,
                );
            } else {
                let chunk_len = len.div_ceil(chunks);
                let chunks = len.div_ceil(chunk_len);
                let partials = client.empty(outer * chunks * inner * 4);
                if op == Reduction::Mean {
                    // Stage 1 of a mean sums; stage 2 scales once by 1/len.
                    strided_launch::<R, E, f32, Sum>(
                        client,
                        input,
                        &partials,
                        [outer, len, inner],
                        n,
                        chunks,
                        1.0,
                    );
                } else {
                    strided_launch::<R, E, f32, O>(
                        client,
                        input,
                        &partials,
                        [outer, len, inner],
                        n,
                        chunks,
                        1.0,
                    );
                }
                strided_launch::<R, f32, E, O>(
                    client,
                    &partials,
                    output,
                    [outer, chunks, inner],
                    n,
                    1,
                    1.0 / len as f32,
                );
            }
        }
        ReducePlan::All { len, cfg } => {
            let n = caps
                .vector_sizes(dtype.size())
                .first()
                .copied()
                .unwrap_or(1);
            let (body, tail) = crate::ops::split_body_tail(len, n, dtype);
            let (n, body, tail) = if body == 0 {
                (1, len, 0)
            } else {
                (n, body, tail)
            };
            let cubes = partial_cubes(caps, body / n);
            let partials = client.empty(cubes * 4);
            let tail_handle = if tail > 0 {
                input.clone().offset_start((body * dtype.size()) as u64)
            } else {
                input.clone()
            };
            // SAFETY: the input holds `len = body + tail` dense elements; the tail view starts at
            // `body` (a multiple of 256 bytes, the strictest binding alignment) and holds `tail`
            // elements, fewer than the cube's 256 units; `partials` holds `cubes` f32; `cfg` is a
            // full cube checked by `RowGroup::config`.
            unsafe {
                k::reduce_partials_kernel::launch_unchecked::<E, O, R>(
                    client,
                    CubeCount::new_1d(cubes as u32),
                    CubeDim::new_1d(cfg.group),
                    n,
                    ArrayArg::from_raw_parts(input.clone(), body),
                    ArrayArg::from_raw_parts(tail_handle, tail.max(1).min(len)),
                    ArrayArg::from_raw_parts(partials.clone(), cubes),
                    tail,
                    f32::INFINITY,
                    cfg,
                )
            }
            rows_launch::<R, f32, E, O>(
                client,
                caps,
                &partials,
                output,
                1,
                cubes,
                1.0 / len as f32,
                cfg,
                DType::F32,
            );
        }
    }
}

/// `output[r] = O(input[r, ..])` over contiguous rows, `I` in, `G` out.
#[allow(clippy::too_many_arguments)]
fn rows_launch<R: Runtime, I: Element, G: Element, O: ReduceOp>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    output: &Handle,
    rows: usize,
    row_len: usize,
    scale: f32,
    cfg: GroupConfig,
    in_dtype: DType,
) {
    let n = width_dividing(caps, in_dtype, row_len);
    let cubes = rows.div_ceil(cfg.groups_per_cube as usize);
    // SAFETY: the caller proved `input` holds `rows·row_len` dense elements and `output` `rows`;
    // `n` divides `row_len`; `cfg` came from `RowGroup::config`, which checked the group against
    // the plane width and the cube size.
    unsafe {
        k::reduce_rows_kernel::launch_unchecked::<I, G, O, R>(
            client,
            spread_cubes(caps, cubes),
            CubeDim::new_2d(cfg.group, cfg.groups_per_cube),
            n,
            ArrayArg::from_raw_parts(input.clone(), rows * row_len),
            ArrayArg::from_raw_parts(output.clone(), rows),
            rows,
            row_len / n,
            scale,
            f32::INFINITY,
            cfg,
        )
    }
}

/// `output[o, c, i] = O(input[o, chunk c of len, i])` for a dense `[outer, len, inner]` input.
fn strided_launch<R: Runtime, I: Element, G: Element, O: ReduceOp>(
    client: &ComputeClient<R>,
    input: &Handle,
    output: &Handle,
    [outer, len, inner]: [usize; 3],
    n: usize,
    chunks: usize,
    scale: f32,
) {
    let chunk_len = len.div_ceil(chunks);
    let outputs = outer * chunks * inner / n;
    // SAFETY: the caller proved (or allocated) `input` dense with `outer·len·inner` elements and
    // `output` with `outer·chunks·inner`; `n` divides `inner`; `chunks·chunk_len ≥ len`.
    unsafe {
        k::reduce_strided_kernel::launch_unchecked::<I, G, O, R>(
            client,
            CubeCount::new_1d(outputs.div_ceil(256).min(65_535) as u32),
            CubeDim::new_1d(256),
            n,
            ArrayArg::from_raw_parts(input.clone(), outer * len * inner),
            ArrayArg::from_raw_parts(output.clone(), outer * chunks * inner),
            len,
            inner / n,
            chunks,
            chunk_len,
            scale,
            f32::INFINITY,
        )
    }
}
