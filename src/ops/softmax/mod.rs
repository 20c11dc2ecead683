//! Softmax and log-softmax along the last axis.
//!
//! | variant | mapping | backends |
//! |---|---|---|
//! | `plane<w>` | one plane per row (rows < 1024 vectors), shuffles | devices with a fixed plane width (advertised for automatic choice) |
//! | `plane256` / `shared256` | one cube per long row | all (`plane256`: fixed plane width) |
//! | `shared32` | 32 units per row, shared-memory tree | all |
//!
//! Every variant is a [`SoftmaxVariant::Rows`] row group. One online pass computes each unit's
//! (max, Σexp); the group combines them; a second pass writes the result. Rows of at most 16
//! vectors per unit stay in registers between the passes (one read, one write); longer rows are
//! read twice (the second read mostly hits L2).

mod launch;
mod spec;

pub use spec::{SoftmaxKind, SoftmaxVariant};

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::{DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::SoftmaxSpec;

/// `output = softmax(input)` along `axis` (must be the last): `y = exp(x − max) / Σ exp(x − max)`
/// per row, computed in f32.
///
/// Shapes: `input`, `output` identical, non-empty, dense or stacks of dense rows with a row
/// pitch (padded rows, as frameworks allocate them; see [`Layout::row_pitch`]). Edge semantics
/// ([`crate::reference::softmax`]): a row of all `-inf` gives NaN, `-inf` entries of a finite row
/// give 0, NaN anywhere in a row makes the row NaN.
///
/// # Errors
/// [`Error::Shape`] (axis out of range or not innermost, empty, mismatched output, strides);
/// [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{DeviceTensor, DType};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[2, 2])?;
/// cubeport::softmax_into(client, x.as_ref(), y.as_mut(), 1)?;
/// # Ok(()) }
/// ```
pub fn softmax_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
) -> Result<(), Error> {
    softmax_impl(client, input, output, axis, SoftmaxKind::Softmax, None)
}

/// `output = log_softmax(input) = x − max − ln Σ exp(x − max)` along `axis` (must be the last),
/// computed in f32. Shapes and edge semantics as [`softmax_into`]
/// ([`crate::reference::log_softmax`]: `-inf` entries of a finite row stay `-inf`).
///
/// # Errors
/// As [`softmax_into`].
pub fn log_softmax_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
) -> Result<(), Error> {
    softmax_impl(client, input, output, axis, SoftmaxKind::LogSoftmax, None)
}

/// [`softmax_into`] or [`log_softmax_into`] (`kind`) with a forced variant.
///
/// # Errors
/// As [`softmax_into`]; [`Error::Unsupported`] when the device cannot run the variant (it is
/// never replaced by another).
pub fn softmax_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
    kind: SoftmaxKind,
    variant: SoftmaxVariant,
) -> Result<(), Error> {
    softmax_impl(client, input, output, axis, kind, Some(variant))
}

/// The variant [`softmax_into`] and [`log_softmax_into`] run for `input` along `axis` (for
/// reports).
///
/// # Errors
/// As [`softmax_into`]'s validation of `input` and `axis`.
pub fn softmax_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
    axis: usize,
) -> Result<SoftmaxVariant, Error> {
    const OP: &str = "softmax";
    let output = Layout::dense_unbounded(&input.layout.shape, input.layout.dtype);
    let spec = SoftmaxSpec::new(&input.layout, &output, axis, SoftmaxKind::Softmax)
        .map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    Ok(SoftmaxVariant::select(&caps, &spec))
}

/// Softmax along the last axis into a new tensor.
///
/// # Errors
/// As [`softmax_into`].
pub fn softmax<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    owned(client, input, SoftmaxKind::Softmax)
}

/// Log-softmax along the last axis into a new tensor.
///
/// # Errors
/// As [`log_softmax_into`].
pub fn log_softmax<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    owned(client, input, SoftmaxKind::LogSoftmax)
}

fn owned<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    kind: SoftmaxKind,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    // A rank-0 input gets axis 0, which validation rejects as out of range.
    let axis = input.shape().len().saturating_sub(1);
    softmax_impl(client, input.as_ref(), out.as_mut(), axis, kind, None)?;
    Ok(out)
}

fn softmax_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
    kind: SoftmaxKind,
    forced: Option<SoftmaxVariant>,
) -> Result<(), Error> {
    let op = kind.name();
    let spec =
        SoftmaxSpec::new(&input.layout, &output.layout, axis, kind).map_err(Error::shape(op))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, op, spec.dtype)?;
    let variant = forced.unwrap_or_else(|| SoftmaxVariant::select(&caps, &spec));
    let plan = variant.plan(&caps, &spec, op)?;
    let key = LaunchKey::new(op)
        .layout(&input.layout)
        .layout(&output.layout)
        .with((axis, variant));
    crate::guard::launch_op(client, op, key, || {
        launch::softmax(client, &caps, input.handle, output.handle, &spec, plan)
    })
}
