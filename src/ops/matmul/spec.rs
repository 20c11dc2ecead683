//! Matmul validation: shapes, strides, batch broadcast, dtypes, bias — no device access.

use crate::{DType, Layout, ShapeError};

/// A validated product `C[z] = A[z]·B[z]` (+ bias), with operands addressed by strides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MatmulSpec {
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// `[batch, row, col]` element strides of A (batch stride 0 when broadcast).
    pub a_strides: [usize; 3],
    /// Same for B.
    pub b_strides: [usize; 3],
    /// Row pitch of `c` (elements): `n` when dense, larger for padded rows.
    pub c_pitch: usize,
    pub dtype: DType,
    pub bias: bool,
    /// Bytes from the start of each buffer (A, B, C) to its view: vector accesses need it
    /// aligned.
    pub offsets: [u64; 3],
}

/// `(batch, rows, cols, [batch, row, col] strides)` of a rank-2 or rank-3 operand.
fn operand(
    name: &'static str,
    l: &Layout,
) -> Result<(usize, usize, usize, [usize; 3]), ShapeError> {
    let rank = l.shape.len();
    if !(2..=3).contains(&rank) {
        return Err(ShapeError::Rank {
            name,
            expected: 2,
            shape: l.shape.clone(),
        });
    }
    if l.strides.len() != rank {
        return Err(ShapeError::StridesRank {
            name,
            rank,
            strides: l.strides.len(),
        });
    }
    l.expect_nonempty(name)?;
    let (batch, bs) = if rank == 3 {
        (l.shape[0], l.strides[0])
    } else {
        (1, 0)
    };
    let (rows, cols) = (l.shape[rank - 2], l.shape[rank - 1]);
    let strides = [
        if batch == 1 { 0 } else { bs },
        l.strides[rank - 2],
        l.strides[rank - 1],
    ];
    // The furthest element any index reaches must lie inside the buffer.
    let last = (batch - 1) * strides[0] + (rows - 1) * strides[1] + (cols - 1) * strides[2];
    let needed = ((last + 1) * l.dtype.size()) as u64;
    if needed > l.buffer_bytes {
        return Err(ShapeError::BufferTooSmall {
            name,
            needed,
            got: l.buffer_bytes,
        });
    }
    if last >= crate::layout::MAX_ELEMS {
        return Err(ShapeError::TooLarge {
            name,
            elems: last + 1,
            max: crate::layout::MAX_ELEMS,
        });
    }
    Ok((batch, rows, cols, strides))
}

impl MatmulSpec {
    pub(crate) fn new(
        a: &Layout,
        b: &Layout,
        bias: Option<&Layout>,
        c: &Layout,
        offsets: [u64; 3],
    ) -> Result<Self, ShapeError> {
        let (ba, m, k, a_strides) = operand("a", a)?;
        let (bb, kb, n, b_strides) = operand("b", b)?;
        if b.dtype != a.dtype {
            return Err(ShapeError::DTypeMismatch {
                name: "b",
                expected: a.dtype,
                got: b.dtype,
            });
        }
        if kb != k {
            let mut expected = b.shape.clone();
            let r = expected.len();
            expected[r - 2] = k;
            return Err(ShapeError::ShapeMismatch {
                name: "b",
                expected,
                got: b.shape.clone(),
            });
        }
        if ba != bb && ba != 1 && bb != 1 {
            let mut expected = b.shape.clone();
            expected[0] = ba;
            return Err(ShapeError::ShapeMismatch {
                name: "b",
                expected,
                got: b.shape.clone(),
            });
        }
        let batch = ba.max(bb);
        let out_shape = if a.shape.len() == 3 || b.shape.len() == 3 {
            vec![batch, m, n]
        } else {
            vec![m, n]
        };
        let (_, _, c_pitch) = c.expect_rows("c")?;
        c.expect_matches(
            "c",
            &Layout {
                shape: out_shape.clone(),
                strides: Layout::contiguous_strides(&out_shape),
                dtype: a.dtype,
                buffer_bytes: c.buffer_bytes,
            },
        )?;
        if let Some(bias) = bias {
            bias.expect_dense("bias")?;
            if bias.dtype != a.dtype {
                return Err(ShapeError::DTypeMismatch {
                    name: "bias",
                    expected: a.dtype,
                    got: bias.dtype,
                });
            }
            if bias.shape != [n] {
                return Err(ShapeError::BiasShape {
                    bias: bias.shape.clone(),
                    input: out_shape,
                });
            }
        }
        Ok(Self {
            batch,
            m,
            n,
            k,
            a_strides,
            b_strides,
            c_pitch,
            dtype: a.dtype,
            bias: bias.is_some(),
            offsets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;

    fn f32s(shape: &[usize]) -> Layout {
        dense(shape, DType::F32)
    }

    #[test]
    fn validates() {
        let s =
            MatmulSpec::new(&f32s(&[3, 5]), &f32s(&[5, 7]), None, &f32s(&[3, 7]), [0; 3]).unwrap();
        assert_eq!((s.batch, s.m, s.n, s.k), (1, 3, 7, 5));
        assert_eq!(s.a_strides, [0, 5, 1]);
        // Batched with a broadcast B.
        let s = MatmulSpec::new(
            &f32s(&[4, 3, 5]),
            &f32s(&[5, 7]),
            None,
            &f32s(&[4, 3, 7]),
            [0; 3],
        )
        .unwrap();
        assert_eq!((s.batch, s.b_strides), (4, [0, 7, 1]));
        // Transposed A through strides.
        let mut at = f32s(&[5, 3]);
        at.shape = vec![3, 5];
        at.strides = vec![1, 3];
        let s = MatmulSpec::new(&at, &f32s(&[5, 7]), None, &f32s(&[3, 7]), [0; 3]).unwrap();
        assert_eq!(s.a_strides, [0, 1, 3]);
        // Errors.
        let err = |a: &[usize], b: &[usize], c: &[usize]| {
            MatmulSpec::new(&f32s(a), &f32s(b), None, &f32s(c), [0; 3]).unwrap_err()
        };
        assert!(matches!(
            err(&[3, 5], &[4, 7], &[3, 7]),
            ShapeError::ShapeMismatch { name: "b", .. }
        ));
        assert!(matches!(
            err(&[3, 0], &[0, 7], &[3, 7]),
            ShapeError::Empty { .. }
        ));
        assert!(matches!(err(&[3], &[3, 7], &[7]), ShapeError::Rank { .. }));
        assert!(matches!(
            err(&[2, 3, 5], &[4, 5, 7], &[4, 3, 7]),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            err(&[3, 5], &[5, 7], &[3, 8]),
            ShapeError::ShapeMismatch { name: "c", .. }
        ));
        let bias = f32s(&[6]);
        assert!(matches!(
            MatmulSpec::new(
                &f32s(&[3, 5]),
                &f32s(&[5, 7]),
                Some(&bias),
                &f32s(&[3, 7]),
                [0; 3]
            )
            .unwrap_err(),
            ShapeError::BiasShape { .. }
        ));
        let mut small = f32s(&[5, 7]);
        small.buffer_bytes -= 4;
        assert!(matches!(
            MatmulSpec::new(&f32s(&[3, 5]), &small, None, &f32s(&[3, 7]), [0; 3]).unwrap_err(),
            ShapeError::BufferTooSmall { .. }
        ));
        assert!(matches!(
            MatmulSpec::new(
                &f32s(&[3, 5]),
                &dense(&[5, 7], DType::F16),
                None,
                &f32s(&[3, 7]),
                [0; 3]
            )
            .unwrap_err(),
            ShapeError::DTypeMismatch { .. }
        ));
    }
}
