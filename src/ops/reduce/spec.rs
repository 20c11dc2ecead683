//! Pure validation and selection of reductions: no device, so every error path and every
//! choice is unit-tested.

use crate::ops::group::CUBE_UNITS;
use crate::ops::{ReducePath, RowGroup, unsupported, width_dividing};
use crate::{Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::reduce::GroupConfig;
use std::fmt;

/// Where the reduced axis sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduceShape {
    /// Everything: `len` elements to one value.
    All { len: usize },
    /// Contiguous rows: `rows × row_len`, reduce each row.
    Rows { rows: usize, row_len: usize },
    /// A middle axis of `[outer, len, inner]` (inner > 1).
    Strided {
        outer: usize,
        len: usize,
        inner: usize,
    },
}

impl ReduceShape {
    fn name(&self) -> &'static str {
        match self {
            ReduceShape::All { .. } => "a whole-tensor",
            ReduceShape::Rows { .. } => "an innermost-axis",
            ReduceShape::Strided { .. } => "a strided-axis",
        }
    }
}

/// A validated reduction problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReduceSpec {
    pub shape: ReduceShape,
    pub dtype: DType,
}

impl ReduceSpec {
    /// `axis == None`: the whole tensor to an output of one element. Otherwise the output has the
    /// input's shape with `axis` removed or set to 1.
    pub(crate) fn new(
        input: &Layout,
        output: &Layout,
        axis: Option<usize>,
    ) -> Result<Self, ShapeError> {
        input.expect_nonempty("input")?;
        input.expect_dense("input")?;
        output.expect_dense("output")?;
        if output.dtype != input.dtype {
            return Err(ShapeError::DTypeMismatch {
                name: "output",
                expected: input.dtype,
                got: output.dtype,
            });
        }
        let rank = input.shape.len();
        let shape = match axis {
            None => {
                if output.num_elems() != 1 {
                    return Err(ShapeError::ShapeMismatch {
                        name: "output",
                        expected: vec![1],
                        got: output.shape.clone(),
                    });
                }
                ReduceShape::All {
                    len: input.num_elems(),
                }
            }
            Some(axis) => {
                if axis >= rank {
                    return Err(ShapeError::AxisOutOfRange { axis, rank });
                }
                let mut removed = input.shape.clone();
                removed.remove(axis);
                let mut kept = input.shape.clone();
                kept[axis] = 1;
                if output.shape != removed && output.shape != kept {
                    return Err(ShapeError::ShapeMismatch {
                        name: "output",
                        expected: removed,
                        got: output.shape.clone(),
                    });
                }
                let len = input.shape[axis];
                let inner: usize = input.shape[axis + 1..].iter().product();
                let outer: usize = input.shape[..axis].iter().product();
                if inner == 1 {
                    ReduceShape::Rows {
                        rows: outer,
                        row_len: len,
                    }
                } else {
                    ReduceShape::Strided { outer, len, inner }
                }
            }
        };
        Ok(Self {
            shape,
            dtype: input.dtype,
        })
    }
}

/// A reduction variant. Each serves one kind of problem (the reduced axis innermost, every
/// element, or another axis); forcing one on another kind is [`Error::Unsupported`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceVariant {
    /// The reduced axis is innermost (contiguous rows): `reduce_rows_kernel`, one row group per
    /// row.
    Rows(RowGroup),
    /// Every element to one value: grid-stride partials (a cube of 256 units each), then one
    /// cube over the partials; both stages combine along the path.
    All(ReducePath),
    /// Any other axis: `reduce_strided_kernel`, one unit per output vector, the reduced axis
    /// split over the grid when the outputs alone cannot fill the device.
    Strided,
}

impl fmt::Display for ReduceVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReduceVariant::Rows(group) => write!(f, "rows/{group}"),
            ReduceVariant::All(path) => write!(f, "all/{path}"),
            ReduceVariant::Strided => f.write_str("strided"),
        }
    }
}

/// What the launcher runs: the problem's extents with the checked comptime configuration of
/// its kernel. Built only by [`ReduceVariant::plan`], so a launcher never sees a variant that
/// does not fit its problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReducePlan {
    Rows {
        rows: usize,
        row_len: usize,
        cfg: GroupConfig,
    },
    All {
        len: usize,
        cfg: GroupConfig,
    },
    Strided {
        outer: usize,
        len: usize,
        inner: usize,
    },
}

impl ReduceVariant {
    /// The automatic choice: the row group [`RowGroup::select`] picks for the row's vectors;
    /// a whole-tensor reduction takes that group's combine path at a full cube.
    pub(crate) fn select(caps: &Caps, spec: &ReduceSpec) -> Self {
        let vecs = |len: usize| len / width_dividing(caps, spec.dtype, len);
        match spec.shape {
            ReduceShape::Rows { row_len, .. } => {
                ReduceVariant::Rows(RowGroup::select(caps, vecs(row_len)))
            }
            ReduceShape::All { len } => ReduceVariant::All(RowGroup::select(caps, vecs(len)).path),
            ReduceShape::Strided { .. } => ReduceVariant::Strided,
        }
    }

    /// Whether this variant runs problems of `shape`'s kind (pure, so unit-tested).
    pub(crate) fn serves(self, shape: ReduceShape) -> bool {
        matches!(
            (self, shape),
            (ReduceVariant::Rows(_), ReduceShape::Rows { .. })
                | (ReduceVariant::All(_), ReduceShape::All { .. })
                | (ReduceVariant::Strided, ReduceShape::Strided { .. })
        )
    }

    /// The launch plan of this variant for `spec`, or [`Error::Unsupported`] when the variant
    /// serves another kind of problem ([`Self::serves`]) or the device cannot run its row
    /// group.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &ReduceSpec,
        op: &'static str,
    ) -> Result<ReducePlan, Error> {
        let mismatch = || {
            let kind = spec.shape.name();
            unsupported(
                caps,
                op,
                format!("variant {self} cannot run {kind} reduction"),
            )
        };
        if !self.serves(spec.shape) {
            return Err(mismatch());
        }
        match (self, spec.shape) {
            (ReduceVariant::Rows(group), ReduceShape::Rows { rows, row_len }) => {
                Ok(ReducePlan::Rows {
                    rows,
                    row_len,
                    cfg: group.config(caps, op)?,
                })
            }
            (ReduceVariant::All(path), ReduceShape::All { len }) => {
                let group = RowGroup {
                    path,
                    group: CUBE_UNITS,
                };
                Ok(ReducePlan::All {
                    len,
                    cfg: group.config(caps, op)?,
                })
            }
            (ReduceVariant::Strided, ReduceShape::Strided { outer, len, inner }) => {
                Ok(ReducePlan::Strided { outer, len, inner })
            }
            _ => Err(mismatch()), // excluded by `serves` above
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(shape: &[usize]) -> Layout {
        crate::layout::dense(shape, DType::F32)
    }

    #[test]
    fn classifies_axes() {
        let x = dense(&[4, 5, 6]);
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[4, 5]), Some(2)).unwrap().shape,
            ReduceShape::Rows {
                rows: 20,
                row_len: 6
            }
        );
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[4, 1, 6]), Some(1))
                .unwrap()
                .shape,
            ReduceShape::Strided {
                outer: 4,
                len: 5,
                inner: 6
            }
        );
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[5, 6]), Some(0)).unwrap().shape,
            ReduceShape::Strided {
                outer: 1,
                len: 4,
                inner: 30
            }
        );
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[1]), None).unwrap().shape,
            ReduceShape::All { len: 120 }
        );
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[]), None).unwrap().shape,
            ReduceShape::All { len: 120 }
        );
    }

    #[test]
    fn rejects_bad_axis_and_outputs() {
        let x = dense(&[4, 5]);
        assert_eq!(
            ReduceSpec::new(&x, &dense(&[4]), Some(2)).unwrap_err(),
            ShapeError::AxisOutOfRange { axis: 2, rank: 2 }
        );
        assert!(matches!(
            ReduceSpec::new(&x, &dense(&[5]), Some(1)).unwrap_err(),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            ReduceSpec::new(&x, &dense(&[2]), None).unwrap_err(),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            ReduceSpec::new(&dense(&[0, 5]), &dense(&[0]), Some(1)).unwrap_err(),
            ShapeError::Empty { .. }
        ));
        let mut strided = x.clone();
        strided.strides = vec![1, 4];
        assert!(matches!(
            ReduceSpec::new(&strided, &dense(&[4]), Some(1)).unwrap_err(),
            ShapeError::NotContiguous { .. }
        ));
    }

    #[test]
    fn each_variant_serves_one_kind_of_problem() {
        let x = dense(&[4, 5, 6]);
        let rows = ReduceSpec::new(&x, &dense(&[4, 5]), Some(2)).unwrap().shape;
        let strided = ReduceSpec::new(&x, &dense(&[4, 6]), Some(1)).unwrap().shape;
        let all = ReduceSpec::new(&x, &dense(&[1]), None).unwrap().shape;
        let shared32 = ReduceVariant::Rows(RowGroup {
            path: ReducePath::Shared,
            group: 32,
        });
        let whole = ReduceVariant::All(ReducePath::Plane);
        let serves = |v: ReduceVariant| [rows, strided, all].map(|shape| v.serves(shape));
        assert_eq!(serves(shared32), [true, false, false]);
        assert_eq!(serves(ReduceVariant::Strided), [false, true, false]);
        assert_eq!(serves(whole), [false, false, true]);
    }

    #[test]
    fn variant_ids() {
        let group = RowGroup {
            path: ReducePath::Plane,
            group: 32,
        };
        assert_eq!(ReduceVariant::Rows(group).to_string(), "rows/plane32");
        assert_eq!(
            ReduceVariant::All(ReducePath::Shared).to_string(),
            "all/shared"
        );
        assert_eq!(ReduceVariant::Strided.to_string(), "strided");
    }
}
