//! Pure validation and selection of softmax: no device, so every error path is unit-tested.

use crate::ops::{RowGroup, gcd, width_dividing};
use crate::{Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::softmax::SoftmaxConfig;
use std::fmt;

/// Most vectors a unit keeps in registers between the two passes (more would spill).
const MAX_CACHED: usize = 16;

/// Which function of the row the op computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SoftmaxKind {
    /// `exp(x − max) / Σ exp(x − max)`.
    Softmax,
    /// `x − max − ln Σ exp(x − max)`.
    LogSoftmax,
}

impl SoftmaxKind {
    /// Both kinds (for tests and benchmarks).
    pub const ALL: [SoftmaxKind; 2] = [SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax];

    /// The op's name: `softmax` or `log_softmax`.
    pub fn name(self) -> &'static str {
        match self {
            SoftmaxKind::Softmax => "softmax",
            SoftmaxKind::LogSoftmax => "log_softmax",
        }
    }
}

impl fmt::Display for SoftmaxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A softmax variant: how units group over a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SoftmaxVariant {
    /// `softmax_rows_kernel` with this row group: one online pass for (max, Σexp) per unit,
    /// the group's combine, then a pass that writes.
    Rows(RowGroup),
}

impl fmt::Display for SoftmaxVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoftmaxVariant::Rows(group) => group.fmt(f),
        }
    }
}

/// A validated softmax problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SoftmaxSpec {
    pub rows: usize,
    pub row_len: usize,
    /// Row pitches (elements) of input and output: `row_len` when dense; larger for padded rows.
    pub in_pitch: usize,
    pub out_pitch: usize,
    pub dtype: DType,
    pub kind: SoftmaxKind,
}

impl SoftmaxSpec {
    pub(crate) fn new(
        input: &Layout,
        output: &Layout,
        axis: usize,
        kind: SoftmaxKind,
    ) -> Result<Self, ShapeError> {
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
            kind,
        })
    }

    /// The vector width: the widest the device takes that divides the row and both pitches.
    pub(crate) fn vector(&self, caps: &Caps) -> usize {
        let granule = gcd(gcd(self.row_len, self.in_pitch), self.out_pitch);
        width_dividing(caps, self.dtype, granule)
    }
}

/// What the launcher runs: the vector width and the checked comptime configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SoftmaxPlan {
    pub vector: usize,
    pub cfg: SoftmaxConfig,
}

impl SoftmaxVariant {
    /// The automatic choice: [`RowGroup::select`] for the row's vectors.
    pub(crate) fn select(caps: &Caps, spec: &SoftmaxSpec) -> Self {
        SoftmaxVariant::Rows(RowGroup::select(caps, spec.row_len / spec.vector(caps)))
    }

    /// The launch plan of this variant for `spec`, or [`Error::Unsupported`] when the device
    /// cannot run its row group.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &SoftmaxSpec,
        op: &'static str,
    ) -> Result<SoftmaxPlan, Error> {
        let SoftmaxVariant::Rows(group) = self;
        let cfg = group.config(caps, op)?;
        let vector = spec.vector(caps);
        Ok(SoftmaxPlan {
            vector,
            cfg: SoftmaxConfig {
                group: cfg,
                log: spec.kind == SoftmaxKind::LogSoftmax,
                cached: cached_vectors(spec.row_len / vector, cfg.group),
            },
        })
    }
}

/// Vectors each unit keeps in registers between the passes: rows that fit (at most
/// [`MAX_CACHED`] per unit) are read once; longer rows are read twice, the second read mostly
/// from L2. `0` means streamed.
fn cached_vectors(row_vecs: usize, group: u32) -> usize {
    let per_unit = row_vecs.div_ceil(group.max(1) as usize);
    if per_unit <= MAX_CACHED { per_unit } else { 0 }
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
        let kind = SoftmaxKind::Softmax;
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 2, kind).unwrap_err(),
            ShapeError::AxisOutOfRange { axis: 2, rank: 2 }
        );
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 0, kind).unwrap_err(),
            ShapeError::AxisNotInnermost { axis: 0, rank: 2 }
        );
        assert_eq!(
            SoftmaxSpec::new(&x, &x, 1, SoftmaxKind::LogSoftmax).unwrap(),
            SoftmaxSpec {
                rows: 3,
                row_len: 4,
                in_pitch: 4,
                out_pitch: 4,
                dtype: DType::F32,
                kind: SoftmaxKind::LogSoftmax,
            }
        );
        assert!(matches!(
            SoftmaxSpec::new(&x, &dense(&[4, 3]), 1, kind).unwrap_err(),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            SoftmaxSpec::new(&dense(&[3, 0]), &dense(&[3, 0]), 1, kind).unwrap_err(),
            ShapeError::Empty { .. }
        ));
    }

    #[test]
    fn caches_rows_that_fit_in_registers() {
        assert_eq!(cached_vectors(256, 32), 8);
        assert_eq!(cached_vectors(16 * 32, 32), 16);
        assert_eq!(cached_vectors(16 * 32 + 1, 32), 0);
        assert_eq!(cached_vectors(1, 256), 1);
    }
}
