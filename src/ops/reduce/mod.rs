//! Reductions: sum, mean, max, min over the whole tensor, the last axis, or any other axis.
//!
//! | shape | kernel | variants | backends |
//! |---|---|---|---|
//! | last axis (rows) | `reduce_rows_kernel` | `plane<w>` (one plane per row, `w` = the device's fixed plane width), `plane256`/`shared256` (a cube per row, rows ≥ 1024 vectors), `shared32` (no advertised plane ops) | all |
//! | other axis | `reduce_strided_kernel` | one unit per output, vectorized along the inner axis | all |
//! | everything | `reduce_partials_kernel` → `reduce_rows_kernel` | grid-stride partials (8 cubes per SM) then one cube; plane or shared | all |
//!
//! Accumulation is f32 for every storage type. The plane path is chosen when the device
//! advertises plane ops with a fixed width; every path can be forced with [`reduce_with`].

mod launch;
mod spec;

use crate::guard::LaunchKey;
use crate::ops::{RowGroup, expect_dtype_supported, width_dividing};
use crate::reference::Reduction;
use crate::{DeviceTensor, Element, Error, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::{ReduceShape, ReduceSpec};

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

/// [`reduce_into`] with a forced row-group variant (ignored for a strided axis).
///
/// # Errors
/// As [`reduce_into`]; [`Error::Unsupported`] when the device cannot run the variant.
pub fn reduce_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: Option<usize>,
    op: Reduction,
    variant: RowGroup,
) -> Result<(), Error> {
    reduce_impl(client, input, output, axis, op, Some(variant))
}

/// The variant [`reduce_into`] picks for a tensor of `shape` reduced over `axis`.
pub fn reduce_variant<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    dtype: crate::DType,
    axis: Option<usize>,
) -> String {
    let caps = caps_of(client);
    let row_len = axis.map_or(shape.iter().product(), |a| {
        shape.get(a).copied().unwrap_or(1)
    });
    let inner: usize = axis.map_or(1, |a| shape.get(a + 1..).map_or(1, |s| s.iter().product()));
    if inner > 1 {
        return "strided".to_string();
    }
    let group = RowGroup::select(&caps, row_len / width_dividing(&caps, dtype, row_len));
    if axis.is_none() {
        format!("all/{:?}", group.path).to_lowercase()
    } else {
        format!("rows/{group}")
    }
}

fn reduce_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: Option<usize>,
    op: Reduction,
    forced: Option<RowGroup>,
) -> Result<(), Error> {
    let name = op.name();
    let spec = ReduceSpec::new(&input.layout, &output.layout, axis).map_err(Error::shape(name))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, name, spec.dtype)?;
    let group = forced.unwrap_or_else(|| {
        let row_len = match spec.shape {
            ReduceShape::Rows { row_len, .. } => row_len,
            ReduceShape::All { len } => len,
            ReduceShape::Strided { len, .. } => len,
        };
        RowGroup::select(&caps, row_len / width_dividing(&caps, spec.dtype, row_len))
    });
    let key = LaunchKey::new(name)
        .layout(&input.layout)
        .layout(&output.layout)
        .with((axis, group));
    crate::guard::launch_op(client, name, key, || {
        launch::reduce(
            client,
            &caps,
            input.handle,
            output.handle,
            &spec,
            group,
            op,
            name,
        )
    })
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
    let shape = match axis {
        None => vec![1],
        Some(a) if a < input.shape().len() => {
            let mut s = input.shape().to_vec();
            s.remove(a);
            s
        }
        Some(a) => {
            return Err(Error::Shape {
                op: op.name(),
                source: crate::ShapeError::AxisOutOfRange {
                    axis: a,
                    rank: input.shape().len(),
                },
            });
        }
    };
    let mut out = DeviceTensor::<E>::empty(client, &shape)?;
    reduce_into(client, input.as_ref(), out.as_mut(), axis, op)?;
    Ok(out)
}
