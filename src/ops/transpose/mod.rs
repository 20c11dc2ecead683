//! Batched transpose of the last two axes: `output[.., c, r] = input[.., r, c]`.
//!
//! | variant | mapping | backends |
//! |---|---|---|
//! | `naive` | one unit per element: coalesced reads, writes strided by `rows` (the baseline naive GPU code loses with) | all |
//! | `tiled<T>_pad<P>` | a cube per `T × T` tile through shared memory; `P = 1` pads each tile row by one word so column reads do not conflict on banks | all (`T` a power of two that fits the device's cubes) |
//!
//! The automatic choice is `tiled64_pad1` ([`DEFAULT_TRANSPOSE`]: 16 elements per unit keep
//! more loads in flight than `tiled32_pad1`'s 4), or `tiled32_pad1` on devices whose cubes are
//! narrower than 64. Values are moved, never computed: results are exact, and u32/i32 run too.

mod launch;
mod spec;

pub use spec::{DEFAULT_TRANSPOSE, TransposeVariant};

use crate::guard::LaunchKey;
use crate::{DeviceTensor, Error, Layout, Scalar, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::TransposeSpec;

const OP: &str = "transpose";

/// `output[.., c, r] = input[.., r, c]` for a dense row-major input of rank ≥ 2 (leading axes
/// are a batch), with the variant chosen for the device.
///
/// Shapes: `output` is the input's shape with the last two axes swapped, dense, same dtype
/// (any dtype: f32, f16, bf16, u32, i32; bits are moved unchanged, NaN payloads included).
///
/// # Errors
/// [`Error::Shape`] (rank < 2, empty, output shape or dtype, strides, buffer sizes);
/// [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[3, 2])?;
/// cubeport::transpose_into(client, x.as_ref(), y.as_mut())?; // [1, 4, 2, 5, 3, 6]
/// # Ok(()) }
/// ```
pub fn transpose_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
) -> Result<(), Error> {
    transpose_impl(client, input, output, None)
}

/// [`transpose_into`] with a forced variant.
///
/// # Errors
/// As [`transpose_into`]; [`Error::Unsupported`] for a tile that is not a power of two or does
/// not fit the device's cubes (it is never replaced by another variant).
pub fn transpose_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    variant: TransposeVariant,
) -> Result<(), Error> {
    transpose_impl(client, input, output, Some(variant))
}

/// The variant [`transpose_into`] runs for `input` (for reports).
///
/// # Errors
/// As [`transpose_into`]'s validation of `input`.
pub fn transpose_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
) -> Result<TransposeVariant, Error> {
    let out_shape = spec::output_shape(&input.layout.shape).map_err(Error::shape(OP))?;
    let output = Layout::dense_unbounded(&out_shape, input.layout.dtype);
    let spec = TransposeSpec::new(&input.layout, &output).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(crate::ops::unsupported_dtype(&caps, OP, spec.dtype));
    }
    Ok(TransposeVariant::select(&caps, &spec))
}

/// The transpose of the last two axes into a new tensor.
///
/// # Errors
/// As [`transpose_into`].
pub fn transpose<R: Runtime, S: Scalar>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<S>,
) -> Result<DeviceTensor<S>, Error> {
    let shape = spec::output_shape(input.shape()).map_err(Error::shape(OP))?;
    let mut out = DeviceTensor::<S>::empty(client, &shape)?;
    transpose_into(client, input.as_ref(), out.as_mut())?;
    Ok(out)
}

fn transpose_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    forced: Option<TransposeVariant>,
) -> Result<(), Error> {
    let spec = TransposeSpec::new(&input.layout, &output.layout).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(crate::ops::unsupported_dtype(&caps, OP, spec.dtype));
    }
    let variant = forced.unwrap_or_else(|| TransposeVariant::select(&caps, &spec));
    let plan = variant.plan(&caps, &spec, OP)?;
    let key = LaunchKey::new(OP)
        .layout(&input.layout)
        .layout(&output.layout)
        .with(variant);
    crate::guard::launch_op(client, OP, key, || {
        launch::transpose(client, &caps, input.handle, output.handle, &spec, plan);
        Ok(())
    })
}
