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
