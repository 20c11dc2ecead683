//! Pure validation and selection of GEMV: no device, so every error path is unit-tested.

use crate::ops::group::CUBE_UNITS;
use crate::ops::{ReducePath, RowGroup, unsupported};
use crate::{Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::reduce::GroupConfig;
use std::fmt;

/// Whether `A` is used as stored or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transpose {
    /// `y = A·x`.
    No,
    /// `y = Aᵀ·x`.
    Yes,
}

/// A GEMV variant. The row variants compute `A·x`, [`GemvVariant::Columns`] computes `Aᵀ·x`;
/// forcing one on the other product is [`Error::Unsupported`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GemvVariant {
    /// One unit per row (uncoalesced; the baseline the others are measured against).
    ThreadRow,
    /// A plane per row; needs a fixed plane width.
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
            GemvVariant::CubeRow(path) => write!(f, "cube_row_{path}"),
            GemvVariant::Columns => f.write_str("columns"),
        }
    }
}

/// A validated GEMV problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GemvSpec {
    pub rows: usize,
    pub cols: usize,
    pub transpose: Transpose,
    pub dtype: DType,
}

/// The lengths of `x` and `y` for `a` of `[rows, cols]`.
fn vector_lens(rows: usize, cols: usize, transpose: Transpose) -> (usize, usize) {
    match transpose {
        Transpose::No => (cols, rows),
        Transpose::Yes => (rows, cols),
    }
}

/// `a`'s `[rows, cols]`, or why `a` is not a matrix.
fn matrix_dims(a: &[usize]) -> Result<(usize, usize), ShapeError> {
    match *a {
        [rows, cols] => Ok((rows, cols)),
        _ => Err(ShapeError::Rank {
            name: "a",
            expected: 2,
            shape: a.to_vec(),
        }),
    }
}

/// The shape of `y` for `a` of shape `a`.
pub(crate) fn output_shape(a: &[usize], transpose: Transpose) -> Result<[usize; 1], ShapeError> {
    let (rows, cols) = matrix_dims(a)?;
    Ok([vector_lens(rows, cols, transpose).1])
}

impl GemvSpec {
    pub(crate) fn new(
        a: &Layout,
        x: &Layout,
        y: &Layout,
        transpose: Transpose,
    ) -> Result<Self, ShapeError> {
        let (rows, cols) = matrix_dims(&a.shape)?;
        a.expect_nonempty("a")?;
        a.expect_dense("a")?;
        x.expect_dense("x")?;
        y.expect_dense("y")?;
        let (x_len, y_len) = vector_lens(rows, cols, transpose);
        for (name, t) in [("x", x), ("y", y)] {
            if t.dtype != a.dtype {
                return Err(ShapeError::DTypeMismatch {
                    name,
                    expected: a.dtype,
                    got: t.dtype,
                });
            }
        }
        for (name, t, len) in [("x", x, x_len), ("y", y, y_len)] {
            if t.shape != [len] {
                return Err(ShapeError::ShapeMismatch {
                    name,
                    expected: vec![len],
                    got: t.shape.clone(),
                });
            }
        }
        Ok(Self {
            rows,
            cols,
            transpose,
            dtype: a.dtype,
        })
    }
}

/// What the launcher runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GemvPlan {
    /// `gemv_rows_kernel` with this checked row group.
    Rows(GroupConfig),
    /// `gemv_cols_kernel` and the strided sum of its partials.
    Columns,
}

impl GemvVariant {
    /// The automatic choice: `columns` for `Aᵀ·x`; for `A·x`, `thread_row` when rows are
    /// shorter than a plane could share, `plane_row` where plane ops are advertised,
    /// `cube_row_shared` elsewhere.
    pub(crate) fn select(caps: &Caps, spec: &GemvSpec) -> Self {
        if spec.transpose == Transpose::Yes {
            return GemvVariant::Columns;
        }
        if spec.cols < 32 {
            GemvVariant::ThreadRow
        } else if RowGroup::select(caps, 1).path == ReducePath::Plane {
            GemvVariant::PlaneRow
        } else {
            GemvVariant::CubeRow(ReducePath::Shared)
        }
    }

    /// Whether this variant computes `spec`'s product (pure, so unit-tested).
    pub(crate) fn serves(self, transpose: Transpose) -> bool {
        (self == GemvVariant::Columns) == (transpose == Transpose::Yes)
    }

    /// The launch plan of this variant for `spec`, or [`Error::Unsupported`] when it computes
    /// the other product ([`Self::serves`]) or the device cannot run its row group.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &GemvSpec,
        op: &'static str,
    ) -> Result<GemvPlan, Error> {
        if !self.serves(spec.transpose) {
            let product = match spec.transpose {
                Transpose::No => "A·x",
                Transpose::Yes => "Aᵀ·x",
            };
            return Err(unsupported(
                caps,
                op,
                format!("variant {self} does not compute {product}"),
            ));
        }
        let group = match self {
            GemvVariant::Columns => return Ok(GemvPlan::Columns),
            GemvVariant::ThreadRow => RowGroup {
                path: ReducePath::Shared,
                group: 1,
            },
            GemvVariant::PlaneRow => {
                let width = caps
                    .plane
                    .fixed_width()
                    .ok_or_else(|| unsupported(caps, op, "plane_row needs a fixed plane width"))?;
                RowGroup {
                    path: ReducePath::Plane,
                    group: width,
                }
            }
            GemvVariant::CubeRow(path) => RowGroup {
                path,
                group: CUBE_UNITS,
            },
        };
        Ok(GemvPlan::Rows(group.config(caps, op)?))
    }
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
        let f16 = crate::layout::dense(&[3], DType::F16);
        assert!(matches!(
            GemvSpec::new(&a, &dense(&[5]), &f16, Transpose::No).unwrap_err(),
            ShapeError::DTypeMismatch { name: "y", .. }
        ));
    }

    #[test]
    fn output_shapes() {
        assert_eq!(output_shape(&[3, 5], Transpose::No), Ok([3]));
        assert_eq!(output_shape(&[3, 5], Transpose::Yes), Ok([5]));
        assert!(matches!(
            output_shape(&[2, 3, 5], Transpose::No),
            Err(ShapeError::Rank { .. })
        ));
    }

    #[test]
    fn row_variants_compute_a_x_only() {
        for v in [
            GemvVariant::ThreadRow,
            GemvVariant::PlaneRow,
            GemvVariant::CubeRow(ReducePath::Plane),
            GemvVariant::CubeRow(ReducePath::Shared),
        ] {
            assert!(v.serves(Transpose::No) && !v.serves(Transpose::Yes), "{v}");
        }
        assert!(GemvVariant::Columns.serves(Transpose::Yes));
        assert!(!GemvVariant::Columns.serves(Transpose::No));
        assert_eq!(
            GemvVariant::CubeRow(ReducePath::Shared).to_string(),
            "cube_row_shared"
        );
    }
}
