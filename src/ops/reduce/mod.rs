//! Reductions: sum, mean, max, min over the whole tensor, the last axis, or any other axis.
//!
//! | shape | kernel | variants | backends |
//! |---|---|---|---|
//! | last axis (rows) | `reduce_rows_kernel` | [`ReduceVariant::Rows`]: `rows/plane<w>` (one plane per row, `w` = the device's fixed plane width), `rows/plane256` / `rows/shared256` (a cube per row, rows ≥ 1024 vectors), `rows/shared32` (no advertised plane ops) | all; plane groups need a fixed plane width |
//! | other axis | `reduce_strided_kernel` | [`ReduceVariant::Strided`] (`strided`): one unit per output, vectorized along the inner axis | all |
//! | everything | `reduce_partials_kernel` → `reduce_rows_kernel` | [`ReduceVariant::All`] (`all/plane`, `all/shared`): grid-stride partials (8 cubes per SM) then one cube | all; `all/plane` needs a fixed plane width |
//!
//! Accumulation is f32 for every storage type. The plane path is chosen when the device
//! advertises plane ops with a fixed width; every path can be forced with [`reduce_with`]
//! ([`ReduceVariant`]), on the kind of problem it serves.

mod launch;
mod spec;

pub use spec::ReduceVariant;

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::reference::Reduction;
use crate::{DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::ReduceSpec;

/// `output = op(input)` over `axis` (`None`: every element, output of one element).
///
/// Math: `sum = Σ x`, `mean = Σ x / n`, `max`, `min`, with `n` the reduced extent.
/// Shapes: `input` dense row-major and non-empty; `output` dense, same dtype, shaped as the input
/// without `axis` or with `axis` set to 1 (`[]` or `[1]` for `None`). f16/bf16 accumulate in f32.
/// Edge semantics ([`crate::reference::reduce`]): NaN propagates through all four; `max` of
/// `-inf`s is `-inf`.
///
/// # Errors
/// [`Error::Shape`] (empty input, axis out of range, output shape or dtype, non-contiguous,
/// buffer too small, more than 2³² elements); [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{DeviceTensor, reference::Reduction};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let rows = cubeport::reduce(client, &x, Some(1), Reduction::Sum)?; // [3, 7]
/// # Ok(()) }
/// ```
pub fn reduce_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: Option<usize>,
    op: Reduction,
) -> Result<(), Error> {
    reduce_impl(client, input, output, axis, op, None)
}

/// [`reduce_into`] with a forced variant, which must serve this kind of problem:
/// [`ReduceVariant::Rows`] for the innermost axis, [`ReduceVariant::All`] for `axis == None`,
/// [`ReduceVariant::Strided`] for any other axis.
///
/// # Errors
/// As [`reduce_into`]; [`Error::Unsupported`] when the variant serves another kind of problem
/// or the device cannot run its row group (it is never replaced by another variant).
pub fn reduce_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: Option<usize>,
    op: Reduction,
    variant: ReduceVariant,
) -> Result<(), Error> {
    reduce_impl(client, input, output, axis, op, Some(variant))
}

/// The variant [`reduce_into`] runs for `input` reduced over `axis` (for reports).
///
/// # Errors
/// As [`reduce_into`]'s validation of `input` and `axis`.
pub fn reduce_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
    axis: Option<usize>,
) -> Result<ReduceVariant, Error> {
    let name = "reduce";
    let out_shape = reduced_shape(&input.layout.shape, axis).map_err(Error::shape(name))?;
    let output = Layout::dense_unbounded(&out_shape, input.layout.dtype);
    let spec = ReduceSpec::new(&input.layout, &output, axis).map_err(Error::shape(name))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, name, spec.dtype)?;
    Ok(ReduceVariant::select(&caps, &spec))
}

fn reduce_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: Option<usize>,
    op: Reduction,
    forced: Option<ReduceVariant>,
) -> Result<(), Error> {
    let name = op.name();
    let spec = ReduceSpec::new(&input.layout, &output.layout, axis).map_err(Error::shape(name))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, name, spec.dtype)?;
    let variant = forced.unwrap_or_else(|| ReduceVariant::select(&caps, &spec));
    let plan = variant.plan(&caps, &spec, name)?;
    let key = LaunchKey::new(name)
        .layout(&input.layout)
        .layout(&output.layout)
        .with((axis, variant));
    let io = launch::Operands {
        input: input.handle,
        output: output.handle,
        dtype: spec.dtype,
    };
    crate::guard::launch_op(client, name, key, || {
        launch::reduce(client, &caps, &io, plan, op)
    })
}

/// The output shape of a reduction of `shape` over `axis`: the axis removed, `[1]` for `None`.
fn reduced_shape(shape: &[usize], axis: Option<usize>) -> Result<Vec<usize>, crate::ShapeError> {
    match axis {
        None => Ok(vec![1]),
        Some(a) if a < shape.len() => {
            let mut s = shape.to_vec();
            s.remove(a);
            Ok(s)
        }
        Some(axis) => Err(crate::ShapeError::AxisOutOfRange {
            axis,
            rank: shape.len(),
        }),
    }
}

/// `op(input)` over `axis` into a new tensor (the axis removed; `[1]` for `None`).
///
/// # Errors
/// As [`reduce_into`].
pub fn reduce<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    axis: Option<usize>,
    op: Reduction,
) -> Result<DeviceTensor<E>, Error> {
    let shape = reduced_shape(input.shape(), axis).map_err(Error::shape(op.name()))?;
    let mut out = DeviceTensor::<E>::empty(client, &shape)?;
    reduce_into(client, input.as_ref(), out.as_mut(), axis, op)?;
    Ok(out)
}
