//! Softmax and log-softmax along the last axis.
//!
//! | variant | mapping | backends |
//! |---|---|---|
//! | `plane<w>` | one plane per row (rows < 1024 vectors), shuffles | devices with a fixed plane width (advertised for automatic choice) |
//! | `plane256` / `shared256` | one cube per long row | all |
//! | `shared32` | 32 units per row, shared-memory tree | all |
//!
//! One online pass computes each unit's (max, Σexp); the group combines them; a second pass
//! writes the result. Rows of at most 16 vectors per unit stay in registers between the passes
//! (one read, one write); longer rows are read twice (the second read mostly hits L2).

use crate::guard::LaunchKey;
use crate::ops::group::spread_cubes;
use crate::ops::{RowGroup, expect_dtype_supported};
use crate::ops::{gcd, width_dividing};
use crate::{
    DType, DeviceTensor, Element, Error, Layout, ShapeError, TensorMut, TensorRef, caps_of,
};
use cubecl::prelude::*;
use cubeport_kernels::softmax::{SoftmaxConfig, softmax_rows_kernel};

/// Most vectors a unit keeps in registers between the two passes (more would spill).
const MAX_CACHED: usize = 16;

/// A validated softmax problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SoftmaxSpec {
    pub rows: usize,
    pub row_len: usize,
    /// Row pitches (elements) of input and output: `row_len` when dense; larger for padded rows.
    pub in_pitch: usize,
    pub out_pitch: usize,
    pub dtype: DType,
}

impl SoftmaxSpec {
    pub(crate) fn new(input: &Layout, output: &Layout, axis: usize) -> Result<Self, ShapeError> {
        let rank = input.shape.len();
        if axis >= rank {
            return Err(ShapeError::AxisOutOfRange { axis, rank });
        }
        if axis + 1 != rank {
            return Err(ShapeError::AxisNotInnermost { axis, rank });
        }
        input.expect_nonempty("input")?;
        let (rows, row_len, in_pitch) = input.expect_rows("input")?;
        let (_, _, out_pitch) = output.expect_rows("output")?;
        output.expect_matches("output", input)?;
        Ok(Self {
            rows,
            row_len,
            in_pitch,
            out_pitch,
            dtype: input.dtype,
        })
    }
}

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
    softmax_impl(client, input, output, axis, false, None)
}

/// `output = log_softmax(input) = x − max − ln Σ exp(x − max)` along the last axis.
///
/// # Errors
/// As [`softmax_into`].
pub fn log_softmax_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
) -> Result<(), Error> {
    softmax_impl(client, input, output, axis, true, None)
}

/// [`softmax_into`] / [`log_softmax_into`] (`log`) with a forced row-group variant.
///
/// # Errors
/// As [`softmax_into`]; [`Error::Unsupported`] when the device cannot run the variant.
pub fn softmax_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
    log: bool,
    variant: RowGroup,
) -> Result<(), Error> {
    softmax_impl(client, input, output, axis, log, Some(variant))
}

/// The variant [`softmax_into`] picks for rows of `row_len`.
pub fn softmax_variant<R: Runtime>(
    client: &ComputeClient<R>,
    row_len: usize,
    dtype: DType,
) -> RowGroup {
    let caps = caps_of(client);
    RowGroup::select(&caps, row_len / width_dividing(&caps, dtype, row_len))
}

/// Softmax along the last axis into a new tensor.
///
/// # Errors
/// As [`softmax_into`].
pub fn softmax<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, input.shape())?;
    softmax_into(
        client,
        input.as_ref(),
        out.as_mut(),
        input.shape().len().saturating_sub(1),
    )?;
    Ok(out)
}

fn softmax_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    axis: usize,
    log: bool,
    forced: Option<RowGroup>,
) -> Result<(), Error> {
    let op = if log { "log_softmax" } else { "softmax" };
    let spec = SoftmaxSpec::new(&input.layout, &output.layout, axis).map_err(Error::shape(op))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, op, spec.dtype)?;
    let n = width_dividing(
        &caps,
        spec.dtype,
        gcd(gcd(spec.row_len, spec.in_pitch), spec.out_pitch),
    );
    let group = forced.unwrap_or_else(|| RowGroup::select(&caps, spec.row_len / n));
    let cfg = group.config(&caps, op)?;
    let cubes = spec.rows.div_ceil(cfg.groups_per_cube as usize);
    // Rows that fit in the group's registers are read once; longer rows are read twice (the
    // second read mostly from L2).
    let per_unit = (spec.row_len / n).div_ceil(cfg.group as usize);
    let cached = if per_unit <= MAX_CACHED { per_unit } else { 0 };
    let kcfg = SoftmaxConfig {
        group: cfg,
        log,
        cached,
    };
    let span = |pitch: usize| (spec.rows - 1) * pitch + spec.row_len;
    macro_rules! go {
        ($E:ty) => {
            // SAFETY: `SoftmaxSpec::new` proved both tensors stacks of `rows` dense rows of
            // `row_len` at their pitches, inside their buffers (`span` elements); `n` divides
            // `row_len` and both pitches; `cfg` was checked by `RowGroup::config`; a non-zero `cached`
            // covers `row_len / n` vectors with `cfg.group` units.
            unsafe {
                softmax_rows_kernel::launch_unchecked::<$E, R>(
                    client,
                    spread_cubes(&caps, cubes),
                    CubeDim::new_2d(cfg.group, cfg.groups_per_cube),
                    n,
                    ArrayArg::from_raw_parts(input.handle.clone(), span(spec.in_pitch)),
                    ArrayArg::from_raw_parts(output.handle.clone(), span(spec.out_pitch)),
                    spec.rows,
                    spec.row_len / n,
                    spec.in_pitch / n,
                    spec.out_pitch / n,
                    f32::INFINITY,
                    kcfg,
                )
            }
        };
    }
    let key = LaunchKey::new(op)
        .layout(&input.layout)
        .layout(&output.layout)
        .with((axis, group));
    crate::guard::launch_op(client, op, key, || {
        match spec.dtype {
            DType::F32 => go!(f32),
            DType::F16 => go!(half::f16),
            DType::BF16 => go!(half::bf16),
            other => return Err(crate::ops::unsupported_dtype(&caps, op, other)),
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(shape: &[usize]) -> Layout {
        crate::layout::dense(shape, DType::F32)
    }

    #[test]
    fn validates_axis() {
        let x = dense(&[3, 4]);
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 2).unwrap_err(),
            ShapeError::AxisOutOfRange { axis: 2, rank: 2 }
        );
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 0).unwrap_err(),
            ShapeError::AxisNotInnermost { axis: 0, rank: 2 }
        );
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 1).unwrap(),
            SoftmaxSpec {
                rows: 3,
                row_len: 4,
                in_pitch: 4,
                out_pitch: 4,
                dtype: DType::F32
            }
        );
        assert!(matches!(
            SoftmaxSpec::new(&x, &dense(&[4, 3]), 1).unwrap_err(),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            SoftmaxSpec::new(&dense(&[3, 0]), &dense(&[3, 0]), 1).unwrap_err(),
            ShapeError::Empty { .. }
        ));
    }
}
