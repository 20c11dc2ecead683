//! Matrix–vector products `y = A·x` and `y = Aᵀ·x` for a dense row-major `A`.
//!
//! | variant | for | mapping | backends |
//! |---|---|---|---|
//! | `thread_row` | `A·x` | one unit per row (uncoalesced; the seed's first version, kept for comparison) | all |
//! | `plane_row` | `A·x` | one plane per row, vector loads, shuffle reduction | fixed plane width |
//! | `cube_row` | `A·x` | one cube per row, vector loads, plane or shared reduction | all |
//! | `columns` | `Aᵀ·x` | units along columns, rows split in chunks over the grid, partials summed by a second launch | all |
//!
//! Automatic choice for `A·x`: `thread_row` for rows under 32 elements; `plane_row` where plane
//! ops are advertised; `cube_row` (shared) otherwise. Accumulation is f32.

use crate::guard::LaunchKey;
use crate::ops::group::{CUBE_UNITS, spread_cubes};
use crate::ops::width_dividing;
use crate::ops::{ReducePath, RowGroup, expect_dtype_supported};
use crate::{Caps, DType, Element, Error, Layout, ShapeError, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use cubeport_kernels::gemv::{gemv_cols_kernel, gemv_rows_kernel};
use cubeport_kernels::reduce::{Sum, reduce_strided_kernel};
use std::fmt;

/// Whether `A` is used as stored or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transpose {
    /// `y = A·x`.
    No,
    /// `y = Aᵀ·x`.
    Yes,
}

/// A GEMV variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemvVariant {
    /// One unit per row.
    ThreadRow,
    /// A plane per row.
    PlaneRow,
    /// A cube per row, combining along `path`.
    CubeRow(ReducePath),
    /// Column-parallel with row chunks (the `Aᵀ·x` kernel).
    Columns,
}

impl fmt::Display for GemvVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GemvVariant::ThreadRow => f.write_str("thread_row"),
            GemvVariant::PlaneRow => f.write_str("plane_row"),
            GemvVariant::CubeRow(ReducePath::Plane) => f.write_str("cube_row_plane"),
            GemvVariant::CubeRow(ReducePath::Shared) => f.write_str("cube_row_shared"),
            GemvVariant::Columns => f.write_str("columns"),
        }
    }
}

impl GemvVariant {
    /// The automatic choice.
    pub fn select(caps: &Caps, cols: usize, transpose: Transpose) -> Self {
        if transpose == Transpose::Yes {
            return GemvVariant::Columns;
        }
        let group = RowGroup::select(caps, 1);
        if cols < 32 {
            GemvVariant::ThreadRow
        } else if group.path == ReducePath::Plane {
            GemvVariant::PlaneRow
        } else {
            GemvVariant::CubeRow(ReducePath::Shared)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GemvSpec {
    pub rows: usize,
    pub cols: usize,
    pub transpose: Transpose,
    pub dtype: DType,
}

impl GemvSpec {
    pub(crate) fn new(
        a: &Layout,
        x: &Layout,
        y: &Layout,
        transpose: Transpose,
    ) -> Result<Self, ShapeError> {
        if a.shape.len() != 2 {
            return Err(ShapeError::Rank {
                name: "a",
                expected: 2,
                shape: a.shape.clone(),
            });
        }
        a.expect_nonempty("a")?;
        a.expect_dense("a")?;
        x.expect_dense("x")?;
        y.expect_dense("y")?;
        let (rows, cols) = (a.shape[0], a.shape[1]);
        let (x_len, y_len) = if transpose == Transpose::No {
            (cols, rows)
        } else {
            (rows, cols)
        };
        for (name, t) in [("x", x), ("y", y)] {
            if t.dtype != a.dtype {
                return Err(ShapeError::DTypeMismatch {
                    name,
                    expected: a.dtype,
                    got: t.dtype,
                });
            }
        }
        if x.shape != [x_len] {
            return Err(ShapeError::ShapeMismatch {
                name: "x",
                expected: vec![x_len],
                got: x.shape.clone(),
            });
        }
        if y.shape != [y_len] {
            return Err(ShapeError::ShapeMismatch {
                name: "y",
                expected: vec![y_len],
                got: y.shape.clone(),
            });
        }
        Ok(Self {
            rows,
            cols,
            transpose,
            dtype: a.dtype,
        })
    }
}

/// `y = A·x` (`Transpose::No`; `a` is `[m, k]`, `x` `[k]`, `y` `[m]`) or `y = Aᵀ·x`
/// (`Transpose::Yes`; `x` `[m]`, `y` `[k]`), f32 accumulation, variant chosen for the device.
///
/// # Errors
/// [`Error::Shape`] (rank of `a` not 2, empty `a`, `x`/`y` lengths or dtypes, strides, buffer
/// sizes); [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{DeviceTensor, ops::gemv::Transpose};
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
/// cannot run.
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

fn gemv_impl<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    x: TensorRef<'_>,
    y: TensorMut<'_>,
    transpose: Transpose,
    forced: Option<GemvVariant>,
) -> Result<(), Error> {
    const OP: &str = "gemv";
    let spec =
        GemvSpec::new(&a.layout, &x.layout, &y.layout, transpose).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    let variant = forced.unwrap_or_else(|| GemvVariant::select(&caps, spec.cols, transpose));
    let unsupported = |reason: &str| Error::Unsupported {
        op: OP,
        backend: caps.backend,
        reason: reason.to_string(),
    };
    let group = match (variant, transpose) {
        (GemvVariant::Columns, Transpose::Yes) => None,
        (GemvVariant::Columns, Transpose::No) | (_, Transpose::Yes) => {
            return Err(unsupported(
                "`columns` computes Aᵀ·x only; the row variants compute A·x only",
            ));
        }
        (GemvVariant::ThreadRow, _) => Some(RowGroup {
            path: ReducePath::Shared,
            group: 1,
        }),
        (GemvVariant::PlaneRow, _) => {
            let w = caps
                .plane
                .fixed_width()
                .ok_or_else(|| unsupported("plane_row needs a fixed plane width"))?;
            Some(RowGroup {
                path: ReducePath::Plane,
                group: w,
            })
        }
        (GemvVariant::CubeRow(path), _) => Some(RowGroup {
            path,
            group: CUBE_UNITS,
        }),
    };
    let key = LaunchKey::new(OP)
        .layout(&a.layout)
        .layout(&x.layout)
        .layout(&y.layout)
        .with((transpose, group));
    crate::guard::launch_op(client, OP, key, || match spec.dtype {
        DType::F32 => launch::<R, f32>(client, &caps, &a, &x, &y, &spec, group),
        DType::F16 => launch::<R, half::f16>(client, &caps, &a, &x, &y, &spec, group),
        DType::BF16 => launch::<R, half::bf16>(client, &caps, &a, &x, &y, &spec, group),
        other => Err(crate::ops::unsupported_dtype(&caps, OP, other)),
    })
}

fn launch<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    a: &TensorRef<'_>,
    x: &TensorRef<'_>,
    y: &TensorMut<'_>,
    spec: &GemvSpec,
    group: Option<RowGroup>,
) -> Result<(), Error> {
    let (rows, cols) = (spec.rows, spec.cols);
    let n = width_dividing(caps, spec.dtype, cols);
    match group {
        Some(group) => {
            let cfg = group.config(caps, "gemv")?;
            let cubes = rows.div_ceil(cfg.groups_per_cube as usize);
            // SAFETY: `GemvSpec::new` proved `a` dense `rows × cols`, `x` `cols`, `y` `rows`;
            // `n` divides `cols`; `cfg` was checked by `RowGroup::config`.
            unsafe {
                gemv_rows_kernel::launch_unchecked::<E, R>(
                    client,
                    spread_cubes(caps, cubes),
                    CubeDim::new_2d(cfg.group, cfg.groups_per_cube),
                    n,
                    ArrayArg::from_raw_parts(a.handle.clone(), rows * cols),
                    ArrayArg::from_raw_parts(x.handle.clone(), cols),
                    ArrayArg::from_raw_parts(y.handle.clone(), rows),
                    rows,
                    cols / n,
                    f32::INFINITY,
                    cfg,
                )
            }
        }
        None => {
            // Enough (chunk, column-vector) pairs to fill the device, chunks of ≥ 16 rows.
            let col_vecs = cols / n;
            let target = 256 * caps.num_sms.map_or(256, |s| s as usize * 4);
            let chunks = target.div_ceil(col_vecs).clamp(1, rows.div_ceil(16).max(1));
            let chunk_rows = rows.div_ceil(chunks);
            let chunks = rows.div_ceil(chunk_rows);
            let partials = client.empty(chunks * cols * 4);
            let outputs = chunks * col_vecs;
            // SAFETY: `a` is dense `rows × cols` with `n | cols`; `x` holds `rows` scalars;
            // `partials` holds `chunks · cols` f32 = `chunks · col_vecs` vectors.
            unsafe {
                gemv_cols_kernel::launch_unchecked::<E, R>(
                    client,
                    CubeCount::new_1d(outputs.div_ceil(256).min(65_535) as u32),
                    CubeDim::new_1d(256),
                    n,
                    ArrayArg::from_raw_parts(a.handle.clone(), rows * cols),
                    ArrayArg::from_raw_parts(x.handle.clone(), rows),
                    ArrayArg::from_raw_parts(partials.clone(), chunks * cols),
                    rows,
                    col_vecs,
                    chunk_rows,
                )
            }
            // SAFETY: `partials` is dense `[1, chunks, cols]`, `y` holds `cols`; `n | cols`.
            unsafe {
                reduce_strided_kernel::launch_unchecked::<f32, E, Sum, R>(
                    client,
                    CubeCount::new_1d(col_vecs.div_ceil(256).min(65_535) as u32),
                    CubeDim::new_1d(256),
                    n,
                    ArrayArg::from_raw_parts(partials.clone(), chunks * cols),
                    ArrayArg::from_raw_parts(y.handle.clone(), cols),
                    chunks,
                    col_vecs,
                    1,
                    chunks,
                    1.0,
                    f32::INFINITY,
                )
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(shape: &[usize]) -> Layout {
        crate::layout::dense(shape, DType::F32)
    }

    #[test]
    fn validates_shapes() {
        let a = dense(&[3, 5]);
        assert!(GemvSpec::new(&a, &dense(&[5]), &dense(&[3]), Transpose::No).is_ok());
        assert!(GemvSpec::new(&a, &dense(&[3]), &dense(&[5]), Transpose::Yes).is_ok());
        assert!(matches!(
            GemvSpec::new(&a, &dense(&[4]), &dense(&[3]), Transpose::No).unwrap_err(),
            ShapeError::ShapeMismatch { name: "x", .. }
        ));
        assert!(matches!(
            GemvSpec::new(&a, &dense(&[5]), &dense(&[5]), Transpose::No).unwrap_err(),
            ShapeError::ShapeMismatch { name: "y", .. }
        ));
        assert!(matches!(
            GemvSpec::new(&dense(&[15]), &dense(&[5]), &dense(&[3]), Transpose::No).unwrap_err(),
            ShapeError::Rank { .. }
        ));
        assert!(matches!(
            GemvSpec::new(&dense(&[0, 5]), &dense(&[5]), &dense(&[0]), Transpose::No).unwrap_err(),
            ShapeError::Empty { .. }
        ));
    }
}
