//! Batched transpose of the last two axes: `output[.., c, r] = input[.., r, c]`.
//!
//! | variant | mapping | backends |
//! |---|---|---|
//! | `naive` | one unit per element: coalesced reads, writes strided by `rows` (the baseline naive GPU code loses with) | all |
//! | `tiled<T>_pad<P>` | a cube per `T × T` tile through shared memory; `P = 1` pads each tile row by one word so column reads do not conflict on banks | all |
//!
//! The automatic choice is `tiled64_pad1` (64 × 64 tiles, 16 elements per unit: 0.93× the device
//! copy on the H200, where `tiled32_pad1` reaches 0.84×), or `tiled32_pad1` on devices whose
//! cubes are narrower than 64. Values are moved, never computed: results are exact.

use crate::guard::LaunchKey;
use crate::ops::group::spread_cubes;
use crate::{DType, Error, Layout, ShapeError, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use cubeport_kernels::transpose::{transpose_naive_kernel, transpose_tiled_kernel};
use std::fmt;

/// A transpose variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The default variant.
pub const DEFAULT_TRANSPOSE: TransposeVariant = TransposeVariant::Tiled { tile: 64, pad: 1 };

/// The automatic choice on this device: [`DEFAULT_TRANSPOSE`] where a cube may be 64 wide and
/// hold its 64 × 65 tile, else `tiled32_pad1`.
pub fn transpose_variant(caps: &crate::Caps, dtype: DType) -> TransposeVariant {
    let fits = caps.max_cube_dim[0] >= 64 && 64 * 65 * dtype.size() <= caps.max_shared_bytes;
    if fits {
        DEFAULT_TRANSPOSE
    } else {
        TransposeVariant::Tiled { tile: 32, pad: 1 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TransposeSpec {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
    pub dtype: DType,
}

impl TransposeSpec {
    pub(crate) fn new(input: &Layout, output: &Layout) -> Result<Self, ShapeError> {
        let rank = input.shape.len();
        if rank < 2 {
            return Err(ShapeError::Rank {
                name: "input",
                expected: 2,
                shape: input.shape.clone(),
            });
        }
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
        let mut expected = input.shape.clone();
        expected.swap(rank - 2, rank - 1);
        if output.shape != expected {
            return Err(ShapeError::ShapeMismatch {
                name: "output",
                expected,
                got: output.shape.clone(),
            });
        }
        let (rows, cols) = (input.shape[rank - 2], input.shape[rank - 1]);
        Ok(Self {
            batch: input.num_elems() / (rows * cols),
            rows,
            cols,
            dtype: input.dtype,
        })
    }
}

/// `output[.., c, r] = input[.., r, c]` for a dense row-major input of rank ≥ 2 (leading axes
/// are a batch), with the tiled shared-memory variant.
///
/// Shapes: `output` is the input's shape with the last two axes swapped, dense, same dtype.
///
/// # Errors
/// [`Error::Shape`] (rank < 2, empty, output shape or dtype, strides, buffer sizes);
/// [`Error::UnsupportedDType`]; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let mut y = DeviceTensor::<f32>::empty(client, &[3, 2])?;
/// cubeport::transpose_into(client, x.as_ref(), y.as_mut())?; // [1, 4, 2, 5, 3, 6]
/// # Ok(()) }
/// ```
pub fn transpose_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
) -> Result<(), Error> {
    let variant = transpose_variant(&caps_of(client), input.layout.dtype);
    transpose_with(client, input, output, variant)
}

/// [`transpose_into`] with a chosen variant.
///
/// # Errors
/// As [`transpose_into`]; [`Error::Unsupported`] for a tile wider than the device's cubes.
pub fn transpose_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    output: TensorMut<'_>,
    variant: TransposeVariant,
) -> Result<(), Error> {
    const OP: &str = "transpose";
    let spec = TransposeSpec::new(&input.layout, &output.layout).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(crate::ops::unsupported_dtype(&caps, OP, spec.dtype));
    }
    if let TransposeVariant::Tiled { tile, pad } = variant {
        let step = tiled_step(tile);
        let fits = tile.is_power_of_two()
            && tile <= caps.max_cube_dim[0]
            && tile * step <= caps.max_units_per_cube;
        let smem = (tile * (tile + pad)) as usize * spec.dtype.size();
        if !fits || smem > caps.max_shared_bytes {
            return Err(Error::Unsupported {
                op: OP,
                backend: caps.backend,
                reason: format!("{variant} does not fit this device's cubes"),
            });
        }
    }
    let total = spec.batch * spec.rows * spec.cols;
    macro_rules! go {
        ($E:ty) => {
            match variant {
                // SAFETY: `TransposeSpec::new` proved both tensors dense with `total` elements;
                // every index the kernels form is below `batch · rows · cols`.
                TransposeVariant::Naive => unsafe {
                    transpose_naive_kernel::launch_unchecked::<$E, R>(
                        client,
                        CubeCount::new_1d(total.div_ceil(256).min(65_535) as u32),
                        CubeDim::new_1d(256),
                        ArrayArg::from_raw_parts(input.handle.clone(), total),
                        ArrayArg::from_raw_parts(output.handle.clone(), total),
                        spec.rows,
                        spec.cols,
                    )
                },
                TransposeVariant::Tiled { tile, pad } => {
                    let t = tile as usize;
                    let (tiles_r, tiles_c) = (spec.rows.div_ceil(t), spec.cols.div_ceil(t));
                    let tiles = spec.batch * tiles_r * tiles_c;
                    // SAFETY: as above; `tile` fits the cube (checked), and cubes past `tiles`
                    // exit before touching memory.
                    unsafe {
                        transpose_tiled_kernel::launch_unchecked::<$E, R>(
                            client,
                            spread_cubes(&caps, tiles),
                            CubeDim::new_2d(tile, tiled_step(tile)),
                            ArrayArg::from_raw_parts(input.handle.clone(), total),
                            ArrayArg::from_raw_parts(output.handle.clone(), total),
                            spec.rows,
                            spec.cols,
                            tiles_r,
                            tiles_c,
                            tiles,
                            t,
                            pad as usize,
                            tiled_step(tile) as usize,
                        )
                    }
                }
            }
        };
    }
    let key = LaunchKey::new(OP)
        .layout(&input.layout)
        .layout(&output.layout)
        .with(variant);
    crate::guard::launch_op(client, OP, key, || {
        match spec.dtype {
            DType::F32 => go!(f32),
            DType::F16 => go!(half::f16),
            DType::BF16 => go!(half::bf16),
            DType::U32 => go!(u32),
            DType::I32 => go!(i32),
        }
        Ok(())
    })
}

/// Rows a tiled cube covers per step: 256 units per cube, at most 8 rows (so each unit moves
/// `tile / step` ≥ 4 elements of a 32-wide tile), never more than the tile.
fn tiled_step(tile: u32) -> u32 {
    (256 / tile.max(1)).clamp(1, 8).min(tile.max(1))
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
    }
}
