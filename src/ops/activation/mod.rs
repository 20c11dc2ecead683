//! Elementwise and fused activations: `y = act(x + bias)`, one memory pass.
//!
//! | op | math | variants | backends |
//! |---|---|---|---|
//! | [`add_into`] | `y = a + b` | `vecN` + scalar tail | all |
//! | [`bias_relu_scale_into`] | `y = max(x + bias, 0) · scale` | `vecN` + scalar tail | all |
//! | [`bias_gelu_into`] | `y = gelu(x + bias)`, tanh approximation or exact erf | `vecN` + scalar tail | all |
//! | [`copy_into`] | `y = x` (the bandwidth anchor) | `vecN` + scalar tail | all |
//!
//! `N` is the widest vector the device takes in one 16-byte access (f32: 4, f16: 8 on CUDA,
//! 4 on wgpu) that also divides the bias row when the bias is broadcast. Lengths the width
//! does not divide run the vectorized body plus a scalar launch over the last elements.
//! Arithmetic is f32 for every storage type. dtypes: f32 everywhere, f16 where the device
//! reports it (CUDA; wgpu with `SHADER_F16`), bf16 on CUDA only.
//!
//! Bias layout: either the input's shape (element-wise) or one row, shape `[last dim]`,
//! broadcast over all rows.

pub(crate) mod launch;
mod spec;

pub use spec::ActivationVariant;

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::{DeviceTensor, Element, Error, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use launch::Act;
use spec::ActivationSpec;

/// GELU flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeluApprox {
    /// `0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³)))` (PyTorch `approximate="tanh"`).
    Tanh,
    /// `0.5·v·(1 + erf(v/√2))` (PyTorch's default).
    Erf,
}

/// The pointwise function applied after the bias add.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Activation {
    /// `v`.
    Identity,
    /// `max(v, 0) · scale`.
    ReluScale {
        /// Multiplier applied after the ReLU.
        scale: f32,
    },
    /// `gelu(v)`.
    Gelu(GeluApprox),
}

impl Activation {
    /// Stable snake-case name used in tables and benchmark ids.
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Identity => "add",
            Activation::ReluScale { .. } => "bias_relu_scale",
            Activation::Gelu(GeluApprox::Tanh) => "bias_gelu_tanh",
            Activation::Gelu(GeluApprox::Erf) => "bias_gelu_erf",
        }
    }

    pub(crate) fn act(&self) -> Act {
        match *self {
            Activation::Identity => Act::Identity,
            Activation::ReluScale { scale } => Act::ReluScale(scale),
            Activation::Gelu(GeluApprox::Tanh) => Act::GeluTanh,
            Activation::Gelu(GeluApprox::Erf) => Act::GeluErf,
        }
    }
}

/// `output = act(input + bias)` in one pass, with the variant chosen for the device.
///
/// Edge semantics follow [`crate::reference::bias_activation`]: NaN propagates through every
/// activation (ReLU included, as `torch.relu`); ±inf behave as in f64 arithmetic
/// (`gelu(+inf) = +inf`, `gelu(-inf)` is NaN from `-inf · 0`, `relu(-inf) = 0`).
///
/// Shapes: `input` and `output` identical, dense row-major, non-empty; `bias` either the
/// input's shape or `[input.shape.last()]` (broadcast over rows). All three share one dtype.
///
/// # Errors
/// [`Error::Shape`] for an empty input, mismatched shapes or dtypes, a bias of another shape,
/// non-contiguous strides or a buffer smaller than its layout; [`Error::UnsupportedDType`] when
/// the device lacks the dtype (bf16 on wgpu, f16 without `SHADER_F16`); [`Error::Launch`] when
/// the runtime rejects the kernel.
///
/// # Example
/// ```no_run
/// # use cubeport::{Activation, DType, TensorRef, TensorMut};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>,
/// #     x: &cubeport::cubecl::server::Handle, b: &cubeport::cubecl::server::Handle,
/// #     y: &cubeport::cubecl::server::Handle) -> Result<(), cubeport::Error> {
/// cubeport::bias_activation_into(
///     client,
///     TensorRef::contiguous(x, &[32, 4096], DType::F32),
///     TensorRef::contiguous(b, &[4096], DType::F32),
///     TensorMut::contiguous(y, &[32, 4096], DType::F32),
///     Activation::ReluScale { scale: 0.5 },
/// )?;
/// # Ok(()) }
/// ```
pub fn bias_activation_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    bias: TensorRef<'_>,
    output: TensorMut<'_>,
    act: Activation,
) -> Result<(), Error> {
    bias_activation_impl(client, input, bias, output, act, None)
}

/// [`bias_activation_into`] with a forced variant (for benchmarks and tests of each path).
///
/// # Errors
/// As [`bias_activation_into`]; [`Error::Unsupported`] for a variant this input or device cannot
/// run (a vector width that does not divide a broadcast bias row or the row pitches, or wider
/// than the device takes); it is never replaced by another.
pub fn bias_activation_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    bias: TensorRef<'_>,
    output: TensorMut<'_>,
    act: Activation,
    variant: ActivationVariant,
) -> Result<(), Error> {
    bias_activation_impl(client, input, bias, output, act, Some(variant))
}

fn bias_activation_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    bias: TensorRef<'_>,
    output: TensorMut<'_>,
    act: Activation,
    forced: Option<ActivationVariant>,
) -> Result<(), Error> {
    let op = act.name();
    let spec = ActivationSpec::new(&input.layout, &bias.layout, &output.layout)
        .map_err(Error::shape(op))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, op, spec.dtype)?;
    let variant = forced
        .unwrap_or_else(|| ActivationVariant::select(&caps, &spec))
        .plan(&caps, &spec, op)?;
    let key = LaunchKey::new(op)
        .layout(&input.layout)
        .layout(&bias.layout)
        .layout(&output.layout)
        .with(forced);
    crate::guard::launch_op(client, op, key, || {
        launch::bias_activation(
            client,
            input.handle,
            bias.handle,
            output.handle,
            &spec,
            &variant,
            act.act(),
        )
    })
}

/// The variant [`bias_activation_into`] would pick for these arguments (for reports).
///
/// # Errors
/// As [`bias_activation_into`]'s validation.
pub fn bias_activation_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
    bias: &TensorRef<'_>,
) -> Result<ActivationVariant, Error> {
    let spec = ActivationSpec::new(&input.layout, &bias.layout, &input.layout)
        .map_err(Error::shape("select"))?;
    Ok(ActivationVariant::select(&caps_of(client), &spec))
}

/// `output = a + b` (vector add), element for element.
///
/// # Errors
/// As [`bias_activation_into`], with `b` required to have `a`'s shape or be one row of it.
pub fn add_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    output: TensorMut<'_>,
) -> Result<(), Error> {
    bias_activation_into(client, a, b, output, Activation::Identity)
}

/// `output = max(input + bias, 0) · scale`, fused.
///
/// # Errors
/// As [`bias_activation_into`].
pub fn bias_relu_scale_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    bias: TensorRef<'_>,
    output: TensorMut<'_>,
    scale: f32,
) -> Result<(), Error> {
    bias_activation_into(client, input, bias, output, Activation::ReluScale { scale })
}

/// `output = gelu(input + bias)`, fused; `approx` picks tanh or exact erf.
///
/// # Errors
/// As [`bias_activation_into`].
pub fn bias_gelu_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    bias: TensorRef<'_>,
    output: TensorMut<'_>,
    approx: GeluApprox,
) -> Result<(), Error> {
    bias_activation_into(client, input, bias, output, Activation::Gelu(approx))
}

/// `output = input`, with the same vectorized grid-stride mapping as the activations: the
/// device-copy anchor of memory-bound benchmarks.
///
/// # Errors
/// As [`bias_activation_into`] without the bias checks.
pub fn copy_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
) -> Result<(), Error> {
    const OP: &str = "copy";
    let spec = ActivationSpec::copy(&input.layout, &output.layout).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    let variant = ActivationVariant::select(&caps, &spec);
    let key = LaunchKey::new(OP)
        .layout(&input.layout)
        .layout(&output.layout);
    crate::guard::launch_op(client, OP, key, || {
        launch::copy(client, input.handle, output.handle, &spec, &variant)
    })
}

fn owned<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    bias: &DeviceTensor<E>,
    act: Activation,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    bias_activation_into(client, input.as_ref(), bias.as_ref(), out.as_mut(), act)?;
    Ok(out)
}

/// `a + b` into a new tensor.
///
/// # Errors
/// As [`add_into`].
pub fn add<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<E>,
    b: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    owned(client, a, b, Activation::Identity)
}

/// `max(input + bias, 0) · scale` into a new tensor.
///
/// # Errors
/// As [`bias_relu_scale_into`].
pub fn bias_relu_scale<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    bias: &DeviceTensor<E>,
    scale: f32,
) -> Result<DeviceTensor<E>, Error> {
    owned(client, input, bias, Activation::ReluScale { scale })
}

/// `gelu(input + bias)` (tanh approximation) into a new tensor.
///
/// # Errors
/// As [`bias_gelu_into`].
pub fn bias_gelu<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    bias: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    owned(client, input, bias, Activation::Gelu(GeluApprox::Tanh))
}
