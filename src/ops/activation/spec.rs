//! Pure validation of activation arguments: no device, so every error path is unit-tested.

use crate::ops::{gcd, unsupported};
use crate::{Caps, DType, Error, Layout, ShapeError};

/// How the bias lines up with the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BiasMode {
    /// `bias` has the input's shape: element `i` adds `bias[i]`.
    Full,
    /// `bias` is one row (`[row_len]`, the input's last dimension): element `i` adds
    /// `bias[i mod row_len]`.
    Rows { row_len: usize },
}

/// Row pitches of a problem whose tensors are stacks of padded rows (not all dense).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowPitch {
    pub rows: usize,
    pub cols: usize,
    pub input: usize,
    /// 0 when one bias row is broadcast.
    pub bias: usize,
    pub output: usize,
}

impl RowPitch {
    /// What every vector width must divide: the row length and every non-zero pitch.
    pub(crate) fn granule(&self) -> usize {
        [self.input, self.bias, self.output]
            .into_iter()
            .filter(|&p| p > 0)
            .fold(self.cols, gcd)
    }
}

/// A validated elementwise problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActivationSpec {
    pub len: usize,
    pub bias: BiasMode,
    pub dtype: DType,
    /// `Some` when a tensor has padded rows (then the row kernel runs).
    pub pitch: Option<RowPitch>,
}

impl ActivationSpec {
    /// Validates `input`, `bias` and `output` for `output = act(input + bias)`.
    /// All three dense, or (frameworks' padded allocations) stacks of dense rows with row
    /// pitches ([`Layout::row_pitch`]).
    pub(crate) fn new(input: &Layout, bias: &Layout, output: &Layout) -> Result<Self, ShapeError> {
        input.expect_nonempty("input")?;
        if !(input.is_contiguous() && bias.is_contiguous() && output.is_contiguous()) {
            return Self::pitched(input, bias, output);
        }
        input.expect_dense("input")?;
        bias.expect_dense("bias")?;
        output.expect_dense("output")?;
        output.expect_matches("output", input)?;
        if bias.dtype != input.dtype {
            return Err(ShapeError::DTypeMismatch {
                name: "bias",
                expected: input.dtype,
                got: bias.dtype,
            });
        }
        let row_len = input.shape.last().copied().unwrap_or(1);
        let mode = if bias.shape == input.shape {
            BiasMode::Full
        } else if bias.shape == [row_len] {
            BiasMode::Rows { row_len }
        } else {
            return Err(ShapeError::BiasShape {
                bias: bias.shape.clone(),
                input: input.shape.clone(),
            });
        };
        Ok(Self {
            len: input.num_elems(),
            bias: mode,
            dtype: input.dtype,
            pitch: None,
        })
    }

    fn pitched(input: &Layout, bias: &Layout, output: &Layout) -> Result<Self, ShapeError> {
        let (rows, cols, in_pitch) = input.expect_rows("input")?;
        let (_, _, out_pitch) = output.expect_rows("output")?;
        output.expect_matches("output", input)?;
        if bias.dtype != input.dtype {
            return Err(ShapeError::DTypeMismatch {
                name: "bias",
                expected: input.dtype,
                got: bias.dtype,
            });
        }
        let (mode, bias_pitch) = if bias.shape == input.shape {
            (BiasMode::Full, bias.expect_rows("bias")?.2)
        } else if bias.shape == [cols] {
            bias.expect_dense("bias")?;
            (BiasMode::Rows { row_len: cols }, 0)
        } else {
            return Err(ShapeError::BiasShape {
                bias: bias.shape.clone(),
                input: input.shape.clone(),
            });
        };
        Ok(Self {
            len: input.num_elems(),
            bias: mode,
            dtype: input.dtype,
            pitch: Some(RowPitch {
                rows,
                cols,
                input: in_pitch,
                bias: bias_pitch,
                output: out_pitch,
            }),
        })
    }

    /// Validates `input` and `output` for a plain copy.
    pub(crate) fn copy(input: &Layout, output: &Layout) -> Result<Self, ShapeError> {
        input.expect_nonempty("input")?;
        input.expect_dense("input")?;
        output.expect_dense("output")?;
        output.expect_matches("output", input)?;
        Ok(Self {
            len: input.num_elems(),
            bias: BiasMode::Full,
            dtype: input.dtype,
            pitch: None,
        })
    }
}

/// Threads per cube of the elementwise kernels: 8 warps on NVIDIA, 32 subgroups on lavapipe.
pub(crate) const CUBE_DIM: u32 = 256;
/// Largest grid of the grid-stride kernels; more cubes add scheduling cost, not bandwidth.
pub(crate) const MAX_CUBES: u32 = 65_535;

/// The launch plan of an elementwise kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActivationVariant {
    /// Lanes per access (`Vector<F, N>`); 1 is the scalar kernel.
    pub vector: usize,
    /// Units per cube.
    pub cube_dim: u32,
    /// Upper bound on the number of cubes (grid-stride loop covers the rest).
    pub max_cubes: u32,
}

impl std::fmt::Display for ActivationVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.vector == 1 {
            write!(f, "scalar")
        } else {
            write!(f, "vec{}", self.vector)
        }
    }
}

impl ActivationVariant {
    /// Picks the widest vector the device allows (16-byte accesses) that also divides the bias
    /// row when the bias is broadcast; a length that the width does not divide gets a scalar
    /// tail launch.
    pub(crate) fn select(caps: &Caps, spec: &ActivationSpec) -> Self {
        let vector = match (spec.pitch, spec.bias) {
            (Some(p), _) => crate::ops::width_dividing(caps, spec.dtype, p.granule()),
            (None, BiasMode::Full) => caps
                .vector_sizes(spec.dtype.size())
                .first()
                .copied()
                .unwrap_or(1),
            (None, BiasMode::Rows { row_len }) => {
                crate::ops::width_dividing(caps, spec.dtype, row_len)
            }
        };
        let cube_dim = CUBE_DIM.min(caps.max_units_per_cube.max(1));
        let max_cubes = MAX_CUBES.min(caps.max_cube_count[0].max(1));
        Self {
            vector,
            cube_dim,
            max_cubes,
        }
    }

    /// [`crate::ops::split_body_tail`] at this variant's vector width.
    pub(crate) fn split(&self, len: usize, dtype: DType) -> (usize, usize) {
        crate::ops::split_body_tail(len, self.vector, dtype)
    }

    /// The variant itself once checked against the problem and the device (an elementwise
    /// launch needs nothing more): [`Error::Unsupported`] for
    /// a width that is not a power of two, wider than 16 bytes or than the device takes, or that
    /// does not divide a broadcast bias row (or the row pitches), and for an empty cube or grid.
    /// A cube wider than the device allows is left to the runtime, which rejects the launch
    /// ([`Error::Launch`]); the suite relies on that to provoke a launch failure.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &ActivationSpec,
        op: &'static str,
    ) -> Result<Self, Error> {
        let reason = if !self.vector.is_power_of_two() || self.vector * spec.dtype.size() > 16 {
            format!("{self} is not a power of two of at most 16 bytes")
        } else if self.vector > caps.max_vector_size {
            format!(
                "vector width {} exceeds the device's {}",
                self.vector, caps.max_vector_size
            )
        } else if !self.divides(spec) {
            format!("{self} does not divide the bias row or the row pitches")
        } else if self.cube_dim == 0 || self.max_cubes == 0 {
            format!("{self} has an empty cube or grid")
        } else {
            return Ok(self);
        };
        Err(unsupported(caps, op, reason))
    }

    /// Whether the vector width divides what every vector must not straddle (pure, so
    /// unit-tested).
    pub(crate) fn divides(&self, spec: &ActivationSpec) -> bool {
        match (spec.pitch, spec.bias) {
            (Some(p), _) => p.granule().is_multiple_of(self.vector),
            (None, BiasMode::Full) => true,
            (None, BiasMode::Rows { row_len }) => row_len.is_multiple_of(self.vector),
        }
    }

    /// Cubes for `units` work items, capped.
    pub(crate) fn cube_count(&self, units: usize) -> u32 {
        let cubes = units.div_ceil(self.cube_dim as usize).max(1);
        cubes.min(self.max_cubes as usize) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(shape: &[usize], dtype: DType) -> Layout {
        crate::layout::dense(shape, dtype)
    }

    #[test]
    fn accepts_full_and_row_bias() {
        let x = dense(&[3, 5], DType::F32);
        let full = ActivationSpec::new(&x, &x, &x).unwrap();
        assert_eq!(full.bias, BiasMode::Full);
        assert_eq!(full.len, 15);
        let row = ActivationSpec::new(&x, &dense(&[5], DType::F32), &x).unwrap();
        assert_eq!(row.bias, BiasMode::Rows { row_len: 5 });
    }

    #[test]
    fn rejects_empty_input() {
        let x = dense(&[0, 4], DType::F32);
        let err = ActivationSpec::new(&x, &x, &x).unwrap_err();
        assert!(matches!(err, ShapeError::Empty { name: "input", .. }));
    }

    #[test]
    fn rejects_output_shape_mismatch() {
        let x = dense(&[8], DType::F32);
        let err = ActivationSpec::new(&x, &x, &dense(&[7], DType::F32)).unwrap_err();
        assert!(matches!(
            err,
            ShapeError::ShapeMismatch { name: "output", .. }
        ));
    }

    #[test]
    fn rejects_bias_shape() {
        let x = dense(&[4, 6], DType::F32);
        for bias in [&[4][..], &[6, 4], &[7], &[1, 6]] {
            let err = ActivationSpec::new(&x, &dense(bias, DType::F32), &x).unwrap_err();
            assert!(
                matches!(err, ShapeError::BiasShape { .. }),
                "{bias:?}: {err:?}"
            );
        }
    }

    #[test]
    fn rejects_dtype_mismatch() {
        let x = dense(&[4], DType::F32);
        let err = ActivationSpec::new(&x, &dense(&[4], DType::F16), &x).unwrap_err();
        assert!(matches!(
            err,
            ShapeError::DTypeMismatch { name: "bias", .. }
        ));
        let err = ActivationSpec::new(&x, &x, &dense(&[4], DType::F16)).unwrap_err();
        assert!(matches!(
            err,
            ShapeError::DTypeMismatch { name: "output", .. }
        ));
    }

    #[test]
    fn rejects_strided_and_short_buffers() {
        let x = dense(&[4, 4], DType::F32);
        let mut t = x.clone();
        t.strides = vec![1, 4];
        assert!(matches!(
            ActivationSpec::new(&t, &x, &x).unwrap_err(),
            ShapeError::NotContiguous { .. }
        ));
        let mut r = x.clone();
        r.strides = vec![1];
        assert!(matches!(
            ActivationSpec::new(&r, &x, &x).unwrap_err(),
            ShapeError::StridesRank { .. }
        ));
        let mut s = x.clone();
        s.buffer_bytes = 63;
        assert!(matches!(
            ActivationSpec::new(&x, &x, &s).unwrap_err(),
            ShapeError::BufferTooSmall {
                name: "output",
                needed: 64,
                got: 63
            }
        ));
    }

    #[test]
    fn rejects_more_than_u32_elements() {
        let x = dense(&[1 << 16, 1 << 16], DType::F16);
        assert!(matches!(
            ActivationSpec::new(&x, &x, &x).unwrap_err(),
            ShapeError::TooLarge { .. }
        ));
    }

    #[test]
    fn forced_width_must_divide_the_bias_row() {
        let x = dense(&[4, 6], DType::F32);
        let row = ActivationSpec::new(&x, &dense(&[6], DType::F32), &x).unwrap();
        let full = ActivationSpec::new(&x, &x, &x).unwrap();
        let v = |vector| ActivationVariant {
            vector,
            cube_dim: 256,
            max_cubes: 1,
        };
        assert!(v(2).divides(&row));
        assert!(!v(4).divides(&row));
        assert!(v(4).divides(&full));
    }

    #[test]
    fn split_keeps_tail_offset_aligned() {
        let v = ActivationVariant {
            vector: 4,
            cube_dim: 256,
            max_cubes: 65535,
        };
        assert_eq!(v.split(4096, DType::F32), (4096, 0));
        assert_eq!(v.split(4097, DType::F32), (4096, 1));
        assert_eq!(v.split(3, DType::F32), (0, 3));
        assert_eq!(v.split(130, DType::F32), (128, 2));
        let h = ActivationVariant {
            vector: 8,
            cube_dim: 256,
            max_cubes: 65535,
        };
        assert_eq!(h.split(300, DType::F16), (256, 44));
    }
}
