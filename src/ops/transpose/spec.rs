//! Pure validation and selection of transposes: no device, so every error path is unit-tested.

use crate::ops::unsupported;
use crate::{Caps, DType, Error, Layout, ShapeError};
use std::fmt;

/// A transpose variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransposeVariant {
    /// One unit per element.
    Naive,
    /// Shared-memory tiles of `tile × tile`, rows padded by `pad` words.
    Tiled {
        /// Tile edge: a power of two, at most the device's cube width (units per cube row).
        tile: u32,
        /// Padding words per tile row (1 avoids bank conflicts; 0 shows them).
        pad: u32,
    },
}

impl fmt::Display for TransposeVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransposeVariant::Naive => f.write_str("naive"),
            TransposeVariant::Tiled { tile, pad } => write!(f, "tiled{tile}_pad{pad}"),
        }
    }
}

/// The default variant: 64 × 64 tiles move 16 elements per unit, enough to keep the memory
/// system busy, where 32 × 32 tiles leave bandwidth unused.
pub const DEFAULT_TRANSPOSE: TransposeVariant = TransposeVariant::Tiled { tile: 64, pad: 1 };

/// A validated transpose problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TransposeSpec {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
    pub dtype: DType,
}

/// `shape` with its last two axes swapped, or why it has fewer than two.
pub(crate) fn output_shape(shape: &[usize]) -> Result<Vec<usize>, ShapeError> {
    let rank = shape.len();
    if rank < 2 {
        return Err(ShapeError::Rank {
            name: "input",
            expected: 2,
            shape: shape.to_vec(),
        });
    }
    let mut out = shape.to_vec();
    out.swap(rank - 2, rank - 1);
    Ok(out)
}

impl TransposeSpec {
    pub(crate) fn new(input: &Layout, output: &Layout) -> Result<Self, ShapeError> {
        let expected = output_shape(&input.shape)?;
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
        if output.shape != expected {
            return Err(ShapeError::ShapeMismatch {
                name: "output",
                expected,
                got: output.shape.clone(),
            });
        }
        let rank = input.shape.len();
        let (rows, cols) = (input.shape[rank - 2], input.shape[rank - 1]);
        Ok(Self {
            batch: input.num_elems() / (rows * cols),
            rows,
            cols,
            dtype: input.dtype,
        })
    }
}

/// What the launcher runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransposePlan {
    Naive,
    /// A cube of `tile × step` units per tile, each moving `tile / step` elements.
    Tiled {
        tile: u32,
        pad: u32,
        step: u32,
    },
}

/// Rows a tiled cube covers per step: 256 units per cube, at most 8 rows (so each unit moves
/// `tile / step` ≥ 4 elements of a 32-wide tile), never more than the tile.
fn tiled_step(tile: u32) -> u32 {
    (256 / tile.max(1)).clamp(1, 8).min(tile.max(1))
}

impl TransposeVariant {
    /// The automatic choice: [`DEFAULT_TRANSPOSE`] where a cube may be 64 wide and hold its
    /// 64 × 65 tile, else `tiled32_pad1`.
    pub(crate) fn select(caps: &Caps, spec: &TransposeSpec) -> Self {
        let fits =
            caps.max_cube_dim[0] >= 64 && 64 * 65 * spec.dtype.size() <= caps.max_shared_bytes;
        if fits {
            DEFAULT_TRANSPOSE
        } else {
            TransposeVariant::Tiled { tile: 32, pad: 1 }
        }
    }

    /// The launch plan, or [`Error::Unsupported`] for a tile that is not a power of two or does
    /// not fit the device's cubes and shared memory.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &TransposeSpec,
        op: &'static str,
    ) -> Result<TransposePlan, Error> {
        let TransposeVariant::Tiled { tile, pad } = self else {
            return Ok(TransposePlan::Naive);
        };
        let step = tiled_step(tile);
        let fits = tile.is_power_of_two()
            && tile <= caps.max_cube_dim[0]
            && tile * step <= caps.max_units_per_cube;
        let smem = (tile as usize) * (tile as usize + pad as usize) * spec.dtype.size();
        if !fits || smem > caps.max_shared_bytes {
            return Err(unsupported(
                caps,
                op,
                format!("{self} does not fit this device's cubes"),
            ));
        }
        Ok(TransposePlan::Tiled { tile, pad, step })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(shape: &[usize]) -> Layout {
        crate::layout::dense(shape, DType::F32)
    }

    #[test]
    fn validates() {
        assert_eq!(
            TransposeSpec::new(&dense(&[2, 3, 5]), &dense(&[2, 5, 3])).unwrap(),
            TransposeSpec {
                batch: 2,
                rows: 3,
                cols: 5,
                dtype: DType::F32
            }
        );
        assert!(matches!(
            TransposeSpec::new(&dense(&[5]), &dense(&[5])).unwrap_err(),
            ShapeError::Rank { .. }
        ));
        assert!(matches!(
            TransposeSpec::new(&dense(&[3, 5]), &dense(&[3, 5])).unwrap_err(),
            ShapeError::ShapeMismatch { .. }
        ));
        assert!(matches!(
            TransposeSpec::new(&dense(&[0, 5]), &dense(&[5, 0])).unwrap_err(),
            ShapeError::Empty { .. }
        ));
        let f16 = crate::layout::dense(&[5, 3], DType::F16);
        assert!(matches!(
            TransposeSpec::new(&dense(&[3, 5]), &f16).unwrap_err(),
            ShapeError::DTypeMismatch { .. }
        ));
    }

    #[test]
    fn steps_fit_a_256_unit_cube() {
        assert_eq!(tiled_step(64), 4);
        assert_eq!(tiled_step(32), 8);
        assert_eq!(tiled_step(8), 8);
        assert_eq!(tiled_step(4), 4);
        assert_eq!(output_shape(&[2, 3, 5]), Ok(vec![2, 5, 3]));
    }
}
