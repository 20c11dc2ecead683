//! Matrix–vector products `y = A·x` and `y = Aᵀ·x` for a dense row-major `A`.
//!
//! | variant | for | mapping | backends |
//! |---|---|---|---|
//! | `thread_row` | `A·x` | one unit per row (uncoalesced; kept as the baseline) | all |
//! | `plane_row` | `A·x` | one plane per row, vector loads, shuffle reduction | fixed plane width |
//! | `cube_row_plane` / `cube_row_shared` | `A·x` | one cube per row, vector loads, plane or shared reduction | all (`_plane`: fixed plane width) |
//! | `columns` | `Aᵀ·x` | units along columns, rows split in chunks over the grid, partials summed by a second launch | all |
//!
//! Automatic choice for `A·x`: `thread_row` for rows under 32 elements; `plane_row` where plane
//! ops are advertised; `cube_row_shared` otherwise. Accumulation is f32.

mod launch;
mod spec;

pub use spec::{GemvVariant, Transpose};

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::{DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::GemvSpec;

const OP: &str = "gemv";

/// `y = A·x` (`Transpose::No`; `a` is `[m, k]`, `x` `[k]`, `y` `[m]`) or `y = Aᵀ·x`
/// (`Transpose::Yes`; `x` `[m]`, `y` `[k]`), f32 accumulation, variant chosen for the device.
///
/// Shapes: `a` dense rank 2 and non-empty; `x`, `y` dense rank 1; all three one dtype. Edge
/// semantics ([`crate::reference::gemv`]): NaN and ±inf propagate as in f64 sums of products.
///
/// # Errors
/// [`Error::Shape`] (rank of `a` not 2, empty `a`, `x`/`y` lengths or dtypes, strides, buffer
/// sizes); [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{DeviceTensor, Transpose};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let a = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 0.0, -1.0], &[3])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[2])?;
/// cubeport::gemv_into(client, a.as_ref(), x.as_ref(), y.as_mut(), Transpose::No)?; // [-2, -2]
/// # Ok(()) }
/// ```
pub fn gemv_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    x: TensorRef<'_>,
    y: TensorMut<'_>,
    transpose: Transpose,
) -> Result<(), Error> {
    gemv_impl(client, a, x, y, transpose, None)
}

/// [`gemv_into`] with a forced variant (`Columns` only for `Transpose::Yes`, the others only for
/// `Transpose::No`).
///
/// # Errors
/// As [`gemv_into`]; [`Error::Unsupported`] for a variant the device or the transpose mode
/// cannot run (it is never replaced by another).
pub fn gemv_with<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    x: TensorRef<'_>,
    y: TensorMut<'_>,
    transpose: Transpose,
    variant: GemvVariant,
) -> Result<(), Error> {
    gemv_impl(client, a, x, y, transpose, Some(variant))
}

/// The variant [`gemv_into`] runs for `a` (for reports).
///
/// # Errors
/// As [`gemv_into`]'s validation of `a`.
pub fn gemv_variant<R: Runtime>(
    client: &ComputeClient<R>,
    a: &TensorRef<'_>,
    transpose: Transpose,
) -> Result<GemvVariant, Error> {
    let [y_len] = spec::output_shape(&a.layout.shape, transpose).map_err(Error::shape(OP))?;
    let x_len = a.layout.num_elems() / y_len.max(1);
    let dtype = a.layout.dtype;
    let (x, y) = (
        Layout::dense_unbounded(&[x_len], dtype),
        Layout::dense_unbounded(&[y_len], dtype),
    );
    let spec = GemvSpec::new(&a.layout, &x, &y, transpose).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    Ok(GemvVariant::select(&caps, &spec))
}

/// `A·x` (`Transpose::No`) or `Aᵀ·x` (`Transpose::Yes`) into a new rank-1 tensor.
///
/// # Errors
/// As [`gemv_into`].
pub fn gemv<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<E>,
    x: &DeviceTensor<E>,
    transpose: Transpose,
) -> Result<DeviceTensor<E>, Error> {
    let y_shape = spec::output_shape(a.shape(), transpose).map_err(Error::shape(OP))?;
    let mut y = DeviceTensor::<E>::empty(client, &y_shape)?;
    gemv_into(client, a.as_ref(), x.as_ref(), y.as_mut(), transpose)?;
    Ok(y)
}

fn gemv_impl<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    x: TensorRef<'_>,
    y: TensorMut<'_>,
    transpose: Transpose,
    forced: Option<GemvVariant>,
) -> Result<(), Error> {
    let spec =
        GemvSpec::new(&a.layout, &x.layout, &y.layout, transpose).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    let variant = forced.unwrap_or_else(|| GemvVariant::select(&caps, &spec));
    let plan = variant.plan(&caps, &spec, OP)?;
    let key = LaunchKey::new(OP)
        .layout(&a.layout)
        .layout(&x.layout)
        .layout(&y.layout)
        .with((transpose, variant));
    let io = launch::Operands {
        a: a.handle,
        x: x.handle,
        y: y.handle,
    };
    crate::guard::launch_op(client, OP, key, || {
        launch::gemv(client, &caps, &io, &spec, plan)
    })
}
