//! Pure validation of reductions.

use crate::{DType, Layout, ShapeError};

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
}
