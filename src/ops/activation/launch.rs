//! Launchers: the only `unsafe` of the family. They accept only a validated spec and a variant.

use super::spec::{ActivationSpec, ActivationVariant, BiasMode, RowPitch};
use crate::dtype::float_dispatch;
use crate::ops::launcher::launch_shared;
use crate::ops::not_float;
use crate::{DType, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::activation::{
    self as k, ActivationConfig, GeluErf, GeluTanh, Identity, ReluScale,
};
use k::{activation_bias_kernel as kb, activation_bias_rows_kernel as kr};

/// Which `#[cube]` activation to instantiate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Act {
    Identity,
    ReluScale(f32),
    GeluTanh,
    GeluErf,
}

/// One kernel launch over `len` elements starting `offset` elements into the tensors.
struct Part {
    offset: usize,
    len: usize,
    vector: usize,
}

fn parts(spec: &ActivationSpec, variant: &ActivationVariant) -> Vec<Part> {
    let (body, tail) = variant.split(spec.len, spec.dtype);
    let mut parts = Vec::with_capacity(2);
    if body > 0 {
        parts.push(Part {
            offset: 0,
            len: body,
            vector: variant.vector,
        });
    }
    if tail > 0 {
        parts.push(Part {
            offset: body,
            len: tail,
            vector: 1,
        });
    }
    parts
}

fn slice(handle: &Handle, offset_elems: usize, dtype: DType) -> Handle {
    if offset_elems == 0 {
        handle.clone()
    } else {
        handle
            .clone()
            .offset_start((offset_elems * dtype.size()) as u64)
    }
}

/// Launches `output = act(input + bias)`.
pub(crate) fn bias_activation<R: Runtime>(
    client: &ComputeClient<R>,
    input: &Handle,
    bias: &Handle,
    output: &Handle,
    spec: &ActivationSpec,
    variant: &ActivationVariant,
    act: Act,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, input, bias, output, spec, variant, act);
        Ok(())
    }, other => Err(not_float(client, "activation", other)))
}

fn typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &Handle,
    bias: &Handle,
    output: &Handle,
    spec: &ActivationSpec,
    variant: &ActivationVariant,
    act: Act,
) {
    if let Some(p) = spec.pitch {
        return rows_typed::<R, E>(client, input, bias, output, p, variant, act);
    }
    let config = ActivationConfig {
        broadcast: matches!(spec.bias, BiasMode::Rows { .. }),
    };
    for part in parts(spec, variant) {
        let x = slice(input, part.offset, spec.dtype);
        let out = slice(output, part.offset, spec.dtype);
        let (b, b_len, offset) = match spec.bias {
            BiasMode::Full => (slice(bias, part.offset, spec.dtype), part.len, 0),
            // The tail indexes the row with its own offset; vectors of the body never straddle
            // rows because `select` made the width divide the row length.
            BiasMode::Rows { row_len } => (bias.clone(), row_len, part.offset / part.vector),
        };
        let count = CubeCount::new_1d(variant.cube_count(part.len / part.vector));
        let dim = CubeDim::new_1d(variant.cube_dim);
        macro_rules! go {
            ($A:ty, $scale:expr) => {
                // SAFETY: `ActivationSpec::new` proved input, output (and a full bias) are dense
                // with at least `spec.len` elements in their buffers, so every handle covers
                // `part.offset + part.len` elements; a row bias has exactly `row_len` elements,
                // divisible by `part.vector`. The kernel indexes below `output.len()` and
                // `bias.len()` only, and the grid-stride loop needs no bound on the cube count.
                unsafe {
                    launch_shared!(
                        kb::ActivationBiasKernel::<E, $A>,
                        client,
                        count,
                        dim,
                        part.vector,
                        [
                            (Array<Vector<E, kb::N>>, ArrayArg::from_raw_parts(x, part.len)),
                            (Array<Vector<E, kb::N>>, ArrayArg::from_raw_parts(b, b_len)),
                            (Array<Vector<E, kb::N>>, ArrayArg::from_raw_parts(out, part.len)),
                            (f32, $scale),
                            (usize, offset),
                        ],
                        [config]
                    )
                }
            };
        }
        match act {
            Act::Identity => go!(Identity, 1.0f32),
            Act::ReluScale(scale) => go!(ReluScale, scale),
            Act::GeluTanh => go!(GeluTanh, 1.0f32),
            Act::GeluErf => go!(GeluErf, 1.0f32),
        }
    }
}

/// The padded-rows path: one launch of the row kernel at `variant.vector` (which divides the
/// row length and every pitch).
#[allow(clippy::too_many_arguments)]
fn rows_typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &Handle,
    bias: &Handle,
    output: &Handle,
    p: RowPitch,
    variant: &ActivationVariant,
    act: Act,
) {
    let n = variant.vector;
    let span = |pitch: usize| (p.rows - 1) * pitch + p.cols;
    let bias_len = if p.bias == 0 { p.cols } else { span(p.bias) };
    let count = CubeCount::new_1d(variant.cube_count(p.rows * p.cols / n));
    let dim = CubeDim::new_1d(variant.cube_dim);
    macro_rules! go {
        ($A:ty, $scale:expr) => {
            // SAFETY: `ActivationSpec::pitched` proved each tensor a stack of `rows` dense rows
            // of `cols` at its pitch inside its buffer (`span` elements; a broadcast bias holds
            // `cols`); `n` divides `cols` and every pitch, so every vector index the kernel
            // forms, `r · pitch/n + c`, is below the array lengths given here.
            unsafe {
                launch_shared!(
                    kr::ActivationBiasRowsKernel::<E, $A>,
                    client,
                    count,
                    dim,
                    n,
                    [
                        (Array<Vector<E, kr::N>>, ArrayArg::from_raw_parts(input.clone(), span(p.input))),
                        (Array<Vector<E, kr::N>>, ArrayArg::from_raw_parts(bias.clone(), bias_len)),
                        (Array<Vector<E, kr::N>>, ArrayArg::from_raw_parts(output.clone(), span(p.output))),
                        (usize, p.rows),
                        (usize, p.cols / n),
                        (usize, p.input / n),
                        (usize, p.bias / n),
                        (usize, p.output / n),
                        (f32, $scale),
                    ],
                    []
                )
            }
        };
    }
    match act {
        Act::Identity => go!(Identity, 1.0f32),
        Act::ReluScale(scale) => go!(ReluScale, scale),
        Act::GeluTanh => go!(GeluTanh, 1.0f32),
        Act::GeluErf => go!(GeluErf, 1.0f32),
    }
}

/// Launches `output = input`.
pub(crate) fn copy<R: Runtime>(
    client: &ComputeClient<R>,
    input: &Handle,
    output: &Handle,
    spec: &ActivationSpec,
    variant: &ActivationVariant,
) -> Result<(), Error> {
    fn typed<R: Runtime, E: Element>(
        client: &ComputeClient<R>,
        input: &Handle,
        output: &Handle,
        spec: &ActivationSpec,
        variant: &ActivationVariant,
    ) {
        for part in parts(spec, variant) {
            let count = CubeCount::new_1d(variant.cube_count(part.len / part.vector));
            // SAFETY: `ActivationSpec::copy` proved both buffers hold `spec.len` dense elements.
            unsafe {
                k::activation_copy_kernel::launch_unchecked::<E, R>(
                    client,
                    count,
                    CubeDim::new_1d(variant.cube_dim),
                    part.vector,
                    ArrayArg::from_raw_parts(slice(input, part.offset, spec.dtype), part.len),
                    ArrayArg::from_raw_parts(slice(output, part.offset, spec.dtype), part.len),
                )
            }
        }
    }
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, input, output, spec, variant);
        Ok(())
    }, other => Err(not_float(client, "copy", other)))
}
