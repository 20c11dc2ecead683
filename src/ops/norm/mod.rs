//! RMSNorm and LayerNorm along the last axis, and the fused residual add + RMSNorm.
//!
//! | variant | mapping | backends |
//! |---|---|---|
//! | `plane<w>` | one plane per row (rows < 1024 vectors), shuffles | devices with a fixed plane width (advertised for automatic choice) |
//! | `plane64` … `plane1024` / `shared64` … `shared1024` | a group as wide as gives each unit about 4 vectors (rows of 256 or more vectors: 64–1024 units; 256 and more take a cube each; widest: 1024 units or the device's limit) | all (`plane…`: fixed plane width; up to the device's units per cube) |
//! | `shared32` | 32 units per row, shared-memory tree | all |
//! | `streamed_<group>` | any of the above, the row read twice instead of held in registers (forced) | as its group |
//!
//! Every variant is a row group ([`NormVariant::Rows`], [`NormVariant::Streamed`]): each unit
//! sums its part of the row, the group combines the sums in one reduction (LayerNorm's two
//! sums together), and a second pass writes. Rows of at most 16 vectors per unit stay
//! in registers between the passes (one read and one write per element, plus the residual and
//! the written sum for [`add_rms_norm_into`]); longer rows are read twice. Statistics are f32
//! for every storage type.
//!
//! Edge semantics ([`crate::reference::rms_norm`], [`crate::reference::layer_norm`]): a NaN
//! anywhere in a row makes the row NaN. RMSNorm of a row holding ±∞ (or whose mean square is
//! beyond f32) gives NaN at the infinite entries and `0 · w` elsewhere; LayerNorm of a row
//! holding ±∞ is NaN throughout. A variance beyond f32 gives 0 (`(x − mean) · 0`).

mod launch;
mod spec;

pub use spec::{NormKind, NormVariant};

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::{DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use launch::NormHandles;
use spec::{NormLayouts, NormSpec};

/// `output = input / √(mean(input²) + eps) · weight` along the last axis, statistics in f32.
///
/// Shapes: `input` and `output` identical, non-empty, dense or stacks of dense rows with a row
/// pitch ([`Layout::row_pitch`]); `weight` (optional: 1 everywhere) one dense row `[n]` of the
/// same dtype. `output` may be `input` itself (in place). `eps ≥ 0`, finite (PyTorch's default
/// is `f32::EPSILON` for f32, Llama uses `1e-5` or `1e-6`). Edge semantics as the
/// [module docs](self).
///
/// # Errors
/// [`Error::Shape`] (rank 0, empty, mismatched output, a weight not of shape `[n]` or of
/// another dtype, strides, an invalid `eps`); [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let w = DeviceTensor::from_slice(client, &[1.0f32, 0.5], &[2])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[2, 2])?;
/// cubeport::rms_norm_into(client, x.as_ref(), Some(w.as_ref()), y.as_mut(), 1e-6)?;
/// # Ok(()) }
/// ```
pub fn rms_norm_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    output: TensorMut<'_>,
    eps: f32,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Rms, input, output, eps).weight(weight);
    call.run(client, None)
}

/// `output = (input − mean) / √(var + eps) · weight + bias` along the last axis, with the biased
/// variance `var = mean((input − mean)²)` (as PyTorch's `layer_norm`), statistics in f32.
///
/// Shapes as [`rms_norm_into`]; `weight` (else 1) and `bias` (else 0) are optional dense rows
/// `[n]` of the input's dtype. Edge semantics as the [module docs](self).
///
/// # Errors
/// As [`rms_norm_into`]; a bias not of shape `[n]` or of another dtype is [`Error::Shape`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 5.0], &[2, 2])?;
/// let w = DeviceTensor::from_slice(client, &[1.0f32, 2.0], &[2])?;
/// let b = DeviceTensor::from_slice(client, &[0.0f32, 0.5], &[2])?;
/// let y = cubeport::layer_norm(client, &x, Some(&w), Some(&b), 1e-5)?;
/// # Ok(()) }
/// ```
pub fn layer_norm_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    bias: Option<TensorRef<'_>>,
    output: TensorMut<'_>,
    eps: f32,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Layer, input, output, eps)
        .weight(weight)
        .bias(bias);
    call.run(client, None)
}

/// The fused residual step of a pre-norm transformer: `sum = input + residual` (rounded to the
/// dtype) is written out, and `output = rms_norm(sum) · weight` in the same pass.
///
/// Shapes: `input`, `residual`, `sum` and `output` identical (each dense or with a row pitch),
/// `weight` as [`rms_norm_into`]. `sum` may be `residual` (the in-place update frameworks use)
/// or `input`; `output` must not alias `sum`.
///
/// # Errors
/// As [`rms_norm_into`], for `residual` and `sum` too.
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let mut h = DeviceTensor::from_slice(client, &[0.5f32, 0.5, 0.5, 0.5], &[2, 2])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[2, 2])?;
/// // h += x, y = rms_norm(h), in one kernel
/// let (h_in, h_out) = (h.clone(), h.as_mut());
/// cubeport::add_rms_norm_into(client, x.as_ref(), h_in.as_ref(), None, h_out, y.as_mut(), 1e-6)?;
/// # Ok(()) }
/// ```
pub fn add_rms_norm_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    residual: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    sum: TensorMut<'_>,
    output: TensorMut<'_>,
    eps: f32,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Rms, input, output, eps)
        .weight(weight)
        .residual(residual, sum);
    call.run(client, None)
}

/// [`rms_norm_into`] with a forced variant.
///
/// # Errors
/// As [`rms_norm_into`]; [`Error::Unsupported`] when the device cannot run the variant (it is
/// never replaced by another).
pub fn rms_norm_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    output: TensorMut<'_>,
    eps: f32,
    variant: NormVariant,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Rms, input, output, eps).weight(weight);
    call.run(client, Some(variant))
}

/// [`layer_norm_into`] with a forced variant.
///
/// # Errors
/// As [`rms_norm_with`].
pub fn layer_norm_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    bias: Option<TensorRef<'_>>,
    output: TensorMut<'_>,
    eps: f32,
    variant: NormVariant,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Layer, input, output, eps)
        .weight(weight)
        .bias(bias);
    call.run(client, Some(variant))
}

/// [`add_rms_norm_into`] with a forced variant.
///
/// # Errors
/// As [`rms_norm_with`].
#[allow(clippy::too_many_arguments)]
pub fn add_rms_norm_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    residual: TensorRef<'_>,
    weight: Option<TensorRef<'_>>,
    sum: TensorMut<'_>,
    output: TensorMut<'_>,
    eps: f32,
    variant: NormVariant,
) -> Result<(), Error> {
    let call = NormCall::new(NormKind::Rms, input, output, eps)
        .weight(weight)
        .residual(residual, sum);
    call.run(client, Some(variant))
}

/// The variant the normalization ops run for `input` (for reports): the row group depends on
/// the row length, dtype and device, not on the kind or the optional tensors.
///
/// # Errors
/// As [`rms_norm_into`]'s validation of `input`.
pub fn norm_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
) -> Result<NormVariant, Error> {
    const OP: &str = "norm";
    let output = Layout::dense_unbounded(&input.layout.shape, input.layout.dtype);
    let layouts = NormLayouts {
        input: &input.layout,
        residual: None,
        weight: None,
        bias: None,
        sum: None,
        output: &output,
    };
    let spec = NormSpec::new(&layouts, NormKind::Rms, 0.0).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    Ok(NormVariant::select(&caps, &spec))
}

/// RMSNorm along the last axis into a new tensor.
///
/// # Errors
/// As [`rms_norm_into`].
pub fn rms_norm<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    weight: Option<&DeviceTensor<E>>,
    eps: f32,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    rms_norm_into(
        client,
        input.as_ref(),
        weight.map(DeviceTensor::as_ref),
        out.as_mut(),
        eps,
    )?;
    Ok(out)
}

/// LayerNorm along the last axis into a new tensor.
///
/// # Errors
/// As [`layer_norm_into`].
pub fn layer_norm<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    weight: Option<&DeviceTensor<E>>,
    bias: Option<&DeviceTensor<E>>,
    eps: f32,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    layer_norm_into(
        client,
        input.as_ref(),
        weight.map(DeviceTensor::as_ref),
        bias.map(DeviceTensor::as_ref),
        out.as_mut(),
        eps,
    )?;
    Ok(out)
}

/// The residual add and RMSNorm into new tensors: `(input + residual, rms_norm(input +
/// residual) · weight)`.
///
/// # Errors
/// As [`add_rms_norm_into`].
pub fn add_rms_norm<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    residual: &DeviceTensor<E>,
    weight: Option<&DeviceTensor<E>>,
    eps: f32,
) -> Result<(DeviceTensor<E>, DeviceTensor<E>), Error> {
    let mut sum = DeviceTensor::<E>::empty(client, input.shape())?;
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    add_rms_norm_into(
        client,
        input.as_ref(),
        residual.as_ref(),
        weight.map(DeviceTensor::as_ref),
        sum.as_mut(),
        out.as_mut(),
        eps,
    )?;
    Ok((sum, out))
}

/// One normalization call: the tensors and scalars every public form reduces to.
struct NormCall<'a> {
    kind: NormKind,
    input: TensorRef<'a>,
    residual: Option<(TensorRef<'a>, TensorMut<'a>)>,
    weight: Option<TensorRef<'a>>,
    bias: Option<TensorRef<'a>>,
    output: TensorMut<'a>,
    eps: f32,
}

impl<'a> NormCall<'a> {
    fn new(kind: NormKind, input: TensorRef<'a>, output: TensorMut<'a>, eps: f32) -> Self {
        Self {
            kind,
            input,
            residual: None,
            weight: None,
            bias: None,
            output,
            eps,
        }
    }

    fn weight(mut self, weight: Option<TensorRef<'a>>) -> Self {
        self.weight = weight;
        self
    }

    fn bias(mut self, bias: Option<TensorRef<'a>>) -> Self {
        self.bias = bias;
        self
    }

    fn residual(mut self, residual: TensorRef<'a>, sum: TensorMut<'a>) -> Self {
        self.residual = Some((residual, sum));
        self
    }

    fn op(&self) -> &'static str {
        match (self.kind, self.residual.is_some()) {
            (NormKind::Rms, true) => "add_rms_norm",
            (NormKind::Layer, true) => "add_layer_norm",
            (kind, false) => kind.name(),
        }
    }

    /// validate → select (or the forced variant) → plan → launch.
    fn run<R: Runtime>(
        self,
        client: &ComputeClient<R>,
        forced: Option<NormVariant>,
    ) -> Result<(), Error> {
        let op = self.op();
        let layouts = NormLayouts {
            input: &self.input.layout,
            residual: self.residual.as_ref().map(|(r, _)| &r.layout),
            weight: self.weight.as_ref().map(|w| &w.layout),
            bias: self.bias.as_ref().map(|b| &b.layout),
            sum: self.residual.as_ref().map(|(_, s)| &s.layout),
            output: &self.output.layout,
        };
        let spec = NormSpec::new(&layouts, self.kind, self.eps).map_err(Error::shape(op))?;
        let caps = caps_of(client);
        expect_dtype_supported(&caps, op, spec.dtype)?;
        let variant = forced.unwrap_or_else(|| NormVariant::select(&caps, &spec));
        let plan = variant.plan(&caps, &spec, op)?;
        let mut key = LaunchKey::new(op)
            .layout(layouts.input)
            .layout(layouts.output)
            .with((variant, spec.weight, spec.bias));
        if let Some((r, s)) = &self.residual {
            key = key.layout(&r.layout).layout(&s.layout);
        }
        let handles = NormHandles {
            input: self.input.handle,
            residual: self.residual.as_ref().map(|(r, _)| r.handle),
            weight: self.weight.as_ref().map(|w| w.handle),
            bias: self.bias.as_ref().map(|b| b.handle),
            sum: self.residual.as_ref().map(|(_, s)| s.handle),
            output: self.output.handle,
        };
        crate::guard::launch_op(client, op, key, || {
            launch::norm(client, &caps, &handles, &spec, plan)
        })
    }
}
