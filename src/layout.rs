use crate::{DType, ShapeError};

/// Largest element count a kernel indexes (cubecl's default 32-bit addressing).
pub const MAX_ELEMS: usize = u32::MAX as usize;

/// Shape, strides (in elements), dtype and buffer size of a tensor argument: everything
/// validation needs, with no device handle, so every check runs on the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Extent of each dimension.
    pub shape: Vec<usize>,
    /// Distance in elements between neighbours along each dimension.
    pub strides: Vec<usize>,
    /// Element type.
    pub dtype: DType,
    /// Bytes available in the underlying buffer.
    pub buffer_bytes: u64,
}

impl Layout {
    /// Dense row-major strides for `shape`.
    pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
        let mut strides = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1].max(1);
        }
        strides
    }

    /// Number of elements (1 for rank 0).
    pub fn num_elems(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the layout is dense row-major (dimensions of extent 1 may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1;
        for (&dim, &stride) in self.shape.iter().zip(&self.strides).rev() {
            if dim != 1 && stride != expected {
                return false;
            }
            expected *= dim;
        }
        true
    }

    /// The row pitch when the tensor is a stack of dense rows: the last dimension has stride 1
    /// and all leading dimensions collapse into one row index with a single stride `pitch ≥
    /// cols` (frameworks pad rows for alignment: Burn's CUDA backend stores a `[67, 1003]` f32
    /// tensor with strides `[1024, 1]`). Returns `(rows, cols, pitch)`; a dense tensor has
    /// `pitch == cols`. `None` for any other layout or rank 0.
    pub fn row_pitch(&self) -> Option<(usize, usize, usize)> {
        let rank = self.shape.len();
        if rank == 0 || self.strides.len() != rank {
            return None;
        }
        let cols = self.shape[rank - 1];
        if cols != 1 && self.strides[rank - 1] != 1 {
            return None;
        }
        let rows: usize = self.shape[..rank - 1].iter().product();
        if rank == 1 || rows <= 1 {
            return Some((rows.max(1), cols, cols));
        }
        // The innermost leading dimension of extent > 1 sets the pitch; the ones above it must
        // be dense multiples of it.
        let mut pitch = None;
        let mut expected = 0;
        for d in (0..rank - 1).rev() {
            if self.shape[d] == 1 {
                continue;
            }
            match pitch {
                None => {
                    pitch = Some(self.strides[d]);
                    expected = self.strides[d] * self.shape[d];
                }
                Some(_) => {
                    if self.strides[d] != expected {
                        return None;
                    }
                    expected *= self.shape[d];
                }
            }
        }
        let pitch = pitch.unwrap_or(cols);
        (pitch >= cols).then_some((rows, cols, pitch))
    }

    /// Like [`Layout::expect_dense`] for a stack of dense rows with a row pitch
    /// ([`Layout::row_pitch`]); returns `(rows, cols, pitch)`.
    pub(crate) fn expect_rows(
        &self,
        name: &'static str,
    ) -> Result<(usize, usize, usize), ShapeError> {
        if self.strides.len() != self.shape.len() {
            return Err(ShapeError::StridesRank {
                name,
                rank: self.shape.len(),
                strides: self.strides.len(),
            });
        }
        let Some((rows, cols, pitch)) = self.row_pitch() else {
            return Err(ShapeError::NotContiguous {
                name,
                shape: self.shape.clone(),
                strides: self.strides.clone(),
            });
        };
        let span = if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1) * pitch + cols
        };
        if span > MAX_ELEMS {
            return Err(ShapeError::TooLarge {
                name,
                elems: span,
                max: MAX_ELEMS,
            });
        }
        let needed = (span * self.dtype.size()) as u64;
        if needed > self.buffer_bytes {
            return Err(ShapeError::BufferTooSmall {
                name,
                needed,
                got: self.buffer_bytes,
            });
        }
        Ok((rows, cols, pitch))
    }

    /// Checks rank of strides, contiguity, size limits and buffer size.
    pub(crate) fn expect_dense(&self, name: &'static str) -> Result<(), ShapeError> {
        if self.strides.len() != self.shape.len() {
            return Err(ShapeError::StridesRank {
                name,
                rank: self.shape.len(),
                strides: self.strides.len(),
            });
        }
        if !self.is_contiguous() {
            return Err(ShapeError::NotContiguous {
                name,
                shape: self.shape.clone(),
                strides: self.strides.clone(),
            });
        }
        let elems = self.num_elems();
        if elems > MAX_ELEMS {
            return Err(ShapeError::TooLarge {
                name,
                elems,
                max: MAX_ELEMS,
            });
        }
        let needed = (elems * self.dtype.size()) as u64;
        if needed > self.buffer_bytes {
            return Err(ShapeError::BufferTooSmall {
                name,
                needed,
                got: self.buffer_bytes,
            });
        }
        Ok(())
    }

    /// Checks an arbitrarily strided view: strides of the right rank, unit stride along the
    /// last dimension (vector reads along rows), the furthest element inside the buffer and
    /// the 32-bit index range. With `exclusive`, no two indices may reach the same element (an
    /// output written in parallel). Returns the span in elements (furthest index + 1).
    pub(crate) fn expect_strided(
        &self,
        name: &'static str,
        exclusive: bool,
    ) -> Result<usize, ShapeError> {
        let rank = self.shape.len();
        let not_contiguous = || ShapeError::NotContiguous {
            name,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
        };
        if self.strides.len() != rank {
            return Err(ShapeError::StridesRank {
                name,
                rank,
                strides: self.strides.len(),
            });
        }
        if rank == 0 || (self.shape[rank - 1] > 1 && self.strides[rank - 1] != 1) {
            return Err(not_contiguous());
        }
        if self.num_elems() == 0 {
            return Ok(0);
        }
        if exclusive {
            // Sorted by stride, each dimension must step past everything the smaller ones reach.
            let mut dims: Vec<(usize, usize)> = self
                .strides
                .iter()
                .copied()
                .zip(self.shape.iter().copied())
                .filter(|&(_, n)| n > 1)
                .collect();
            dims.sort_unstable();
            let mut reach = 1;
            for (stride, n) in dims {
                if stride < reach {
                    return Err(not_contiguous());
                }
                reach += stride * (n - 1);
            }
        }
        let last: usize = self
            .shape
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n - 1) * s)
            .sum();
        if last >= MAX_ELEMS {
            return Err(ShapeError::TooLarge {
                name,
                elems: last + 1,
                max: MAX_ELEMS,
            });
        }
        let needed = ((last + 1) * self.dtype.size()) as u64;
        if needed > self.buffer_bytes {
            return Err(ShapeError::BufferTooSmall {
                name,
                needed,
                got: self.buffer_bytes,
            });
        }
        Ok(last + 1)
    }

    pub(crate) fn expect_nonempty(&self, name: &'static str) -> Result<(), ShapeError> {
        if self.num_elems() == 0 {
            return Err(ShapeError::Empty {
                name,
                shape: self.shape.clone(),
            });
        }
        Ok(())
    }

    /// Same shape and dtype as `other`.
    pub(crate) fn expect_matches(
        &self,
        name: &'static str,
        other: &Layout,
    ) -> Result<(), ShapeError> {
        if self.dtype != other.dtype {
            return Err(ShapeError::DTypeMismatch {
                name,
                expected: other.dtype,
                got: self.dtype,
            });
        }
        if self.shape != other.shape {
            return Err(ShapeError::ShapeMismatch {
                name,
                expected: other.shape.clone(),
                got: self.shape.clone(),
            });
        }
        Ok(())
    }
}

impl Layout {
    /// A dense layout whose buffer is never the limit: the output a `*_variant` query assumes
    /// when it has no output tensor (selection reads shapes and dtypes, never buffer sizes).
    pub(crate) fn dense_unbounded(shape: &[usize], dtype: DType) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: Layout::contiguous_strides(shape),
            dtype,
            buffer_bytes: u64::MAX,
        }
    }
}

/// A dense layout whose buffer holds exactly its elements (unit tests of the specs).
#[cfg(test)]
pub(crate) fn dense(shape: &[usize], dtype: DType) -> Layout {
    Layout {
        shape: shape.to_vec(),
        strides: Layout::contiguous_strides(shape),
        dtype,
        buffer_bytes: (shape.iter().product::<usize>() * dtype.size()).max(dtype.size()) as u64,
    }
}

#[cfg(test)]
mod pitch_tests {
    use super::*;

    fn layout(shape: &[usize], strides: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            dtype: DType::F32,
            buffer_bytes: u64::MAX,
        }
    }

    #[test]
    fn row_pitch() {
        assert_eq!(
            layout(&[67, 1003], &[1024, 1]).row_pitch(),
            Some((67, 1003, 1024))
        );
        assert_eq!(layout(&[3, 4], &[4, 1]).row_pitch(), Some((3, 4, 4)));
        assert_eq!(layout(&[2, 3, 5], &[24, 8, 1]).row_pitch(), Some((6, 5, 8)));
        assert_eq!(layout(&[2, 3, 5], &[30, 8, 1]).row_pitch(), None); // batch not dense over rows
        assert_eq!(layout(&[3, 4], &[1, 3]).row_pitch(), None); // transposed
        assert_eq!(layout(&[3, 4], &[2, 1]).row_pitch(), None); // overlapping rows
        assert_eq!(layout(&[7], &[1]).row_pitch(), Some((1, 7, 7)));
        let mut small = layout(&[67, 1003], &[1024, 1]);
        small.buffer_bytes = (66 * 1024 + 1002) * 4;
        assert!(matches!(
            small.expect_rows("x"),
            Err(ShapeError::BufferTooSmall { .. })
        ));
        small.buffer_bytes += 4;
        assert_eq!(small.expect_rows("x"), Ok((67, 1003, 1024)));
    }
}
