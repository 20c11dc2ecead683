//! Matrix–vector products, f32 accumulation.
//!
//! | variant | kernel | mapping |
//! |---|---|---|
//! | `thread_row` | [`gemv_rows_kernel()`], group 1 | one unit per row of `A` (the seed's first version: uncoalesced) |
//! | `cube_row` | [`gemv_rows_kernel()`], group = cube | a cube per row, coalesced vector loads, block reduction (plane or shared) |
//! | `plane_row` | [`gemv_rows_kernel()`], group = plane | a plane per row, shuffle reduction, several rows per cube |
//! | `columns` (for `Aᵀ·x`) | [`gemv_cols_kernel()`] + a strided sum | units along columns, row chunks split over the grid, partial sums reduced in a second launch |

use crate::reduce::{GroupConfig, Sum, group_reduce};
use cubecl::prelude::*;

/// `y[r] = Σ_j a[r, j] · x[j]` for row-major `a` of `rows × row_vecs` vectors.
///
/// Mapping: as [`crate::reduce::reduce_rows_kernel()`], with `x` (small, cached) read alongside.
/// Preconditions: `a` holds `rows · row_vecs` vectors, `x` `row_vecs`, `y` `rows` scalars.
#[cube(launch_unchecked)]
pub fn gemv_rows_kernel<F: Float, N: Size>(
    a: &Array<Vector<F, N>>,
    x: &Array<Vector<F, N>>,
    y: &mut Array<F>,
    rows: usize,
    row_vecs: usize,
    inf: f32,
    #[comptime] cfg: GroupConfig,
) {
    let row = CUBE_POS * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let mut acc = 0.0f32;
    if row < rows {
        let base = row * row_vecs;
        let mut i = UNIT_POS_X as usize;
        while i < row_vecs {
            let av = a[base + i];
            let xv = x[i];
            #[unroll]
            for k in 0..N::value() {
                acc += f32::cast_from(av[k]) * f32::cast_from(xv[k]);
            }
            i += CUBE_DIM_X as usize;
        }
    }
    let total = group_reduce::<Sum>(acc, inf, cfg);
    if row < rows && UNIT_POS_X == 0 {
        y[row] = F::cast_from(total);
    }
}

/// Partial sums of `Aᵀ·x`: `partials[c, j] = Σ_{i in chunk c} a[i, j] · x[i]` for row-major
/// `a` of `rows × col_vecs` vectors, chunks of `chunk_rows` rows.
///
/// Mapping: 1-D grid-stride over `chunks · col_vecs` outputs; consecutive units take
/// consecutive column vectors, so each row of the chunk is read coalesced.
/// Preconditions: `partials` holds `ceil(rows / chunk_rows) · col_vecs` vectors.
#[cube(launch_unchecked)]
pub fn gemv_cols_kernel<F: Float, N: Size>(
    a: &Array<Vector<F, N>>,
    x: &Array<F>,
    partials: &mut Array<Vector<f32, N>>,
    rows: usize,
    col_vecs: usize,
    chunk_rows: usize,
) {
    let total = partials.len();
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut pos = ABSOLUTE_POS;
    while pos < total {
        let chunk = pos / col_vecs;
        let col = pos % col_vecs;
        let start = chunk * chunk_rows;
        let end = select(start + chunk_rows < rows, start + chunk_rows, rows);
        let mut acc = Vector::<f32, N>::empty().fill(0.0);
        for i in start..end {
            let av = a[i * col_vecs + col];
            let xi = f32::cast_from(x[i]);
            #[unroll]
            for k in 0..N::value() {
                acc[k] += f32::cast_from(av[k]) * xi;
            }
        }
        partials[pos] = acc;
        pos += grid;
    }
}
