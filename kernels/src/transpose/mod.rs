//! Batched 2-D transposes: `output[b, c, r] = input[b, r, c]`.
//!
//! | kernel | mapping | memory pattern |
//! |---|---|---|
//! | [`transpose_naive_kernel()`] | one unit per element (grid-stride) | coalesced reads, writes strided by `rows` |
//! | [`transpose_tiled_kernel()`] | one cube per `tile × tile` tile, `CUBE_DIM = (tile, rows_per_step)` | coalesced reads and writes through shared memory; rows padded by `pad` words so the column reads of the tile hit distinct banks |

use cubecl::prelude::*;

/// One unit per element: reads row-major, writes transposed.
///
/// Preconditions: `input` and `output` hold `batch · rows · cols` elements (`batch` implied by
/// the length).
#[cube(launch_unchecked)]
pub fn transpose_naive_kernel<F: Numeric>(
    input: &Array<F>,
    output: &mut Array<F>,
    rows: usize,
    cols: usize,
) {
    let total = input.len();
    let plane = rows * cols;
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < total {
        let b = i / plane;
        let rc = i % plane;
        let r = rc / cols;
        let c = rc % cols;
        output[b * plane + c * rows + r] = input[i];
        i += grid;
    }
}

/// One cube per tile of `tile × tile` elements: the cube reads the tile's rows (coalesced),
/// stores them in shared memory of `tile × (tile + pad)` words, synchronizes, and writes the
/// tile's columns as rows of the output (coalesced). `pad = 1` moves each row of the tile to
/// the next bank, so reading a column touches `tile` different banks instead of one.
///
/// Mapping: linear `CUBE_POS` = `b · tiles_r · tiles_c + tr · tiles_c + tc` (cubes past the last
/// tile exit at once, uniformly); `UNIT_POS_X` walks the tile's columns, `UNIT_POS_Y` its rows
/// in `tile / step` unrolled steps of `step`, all loads issued before the first store. Tiles
/// wholly inside the matrix (all but the ragged edge) skip the per-element bounds checks.
/// Preconditions: `CUBE_DIM = (tile, step)`, `step` divides `tile`; both arrays hold
/// `batch · rows · cols` elements.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn transpose_tiled_kernel<F: Numeric>(
    input: &Array<F>,
    output: &mut Array<F>,
    rows: usize,
    cols: usize,
    tiles_r: usize,
    tiles_c: usize,
    tiles: usize,
    #[comptime] tile: usize,
    #[comptime] pad: usize,
    #[comptime] step: usize,
) {
    let cube = CUBE_POS;
    if cube >= tiles {
        terminate!();
    }
    let stride = comptime!(tile + pad);
    let mut smem = SharedMemory::<F>::new(comptime!(tile * (tile + pad)));
    let per_batch = tiles_r * tiles_c;
    let b = cube / per_batch;
    let t = cube % per_batch;
    let r0 = (t / tiles_c) * tile;
    let c0 = (t % tiles_c) * tile;
    let base = b * rows * cols;
    let x = UNIT_POS_X as usize;
    let y = UNIT_POS_Y as usize;
    let full = r0 + tile <= rows && c0 + tile <= cols;
    if full {
        let src = base + (r0 + y) * cols + c0 + x;
        #[unroll]
        for k in 0..comptime!(tile / step) {
            smem[(y + k * step) * stride + x] = input[src + k * step * cols];
        }
    } else {
        #[unroll]
        for k in 0..comptime!(tile / step) {
            let j = y + k * step;
            if r0 + j < rows && c0 + x < cols {
                smem[j * stride + x] = input[base + (r0 + j) * cols + c0 + x];
            }
        }
    }
    sync_cube();
    // Output row c0 + j holds input column c0 + j; its element x is input row r0 + x.
    if full {
        let dst = base + (c0 + y) * rows + r0 + x;
        #[unroll]
        for k in 0..comptime!(tile / step) {
            output[dst + k * step * rows] = smem[x * stride + y + k * step];
        }
    } else {
        #[unroll]
        for k in 0..comptime!(tile / step) {
            let j = y + k * step;
            if c0 + j < cols && r0 + x < rows {
                output[base + (c0 + j) * rows + r0 + x] = smem[x * stride + j];
            }
        }
    }
}
