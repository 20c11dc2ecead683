//! The pad copy that lets the `cp.async` kernels run ragged problems: an operand whose rows
//! are not 16-byte vectors (odd `k` or `n`, a transposed view, a misaligned offset) is copied
//! once into a dense buffer whose row pitch is the next multiple of the vector, the columns past
//! the row zero-filled. The product then keeps its asynchronous 16-byte pipeline: the kernels'
//! last vector of a row straddles the true row end and reads the zeros, and their depth and
//! column masks still use the true `k` and `n`.

use cubecl::prelude::*;

/// `out[z, r, c] = input[z·s₀ + r·s₁ + c·s₂]` for `c < cols`, `0` for `cols ≤ c < pitch`,
/// with `out` dense `[batch, rows, pitch]` and written as `NV`-wide vectors (`pitch` a multiple
/// of `NV`). `strides` are the source's `[batch, row, col]` element strides; `total` is
/// `batch · rows · pitch / NV`. 1-D grid-stride over the output vectors, so any grid size
/// covers it; consecutive units write consecutive vectors of a row (coalesced stores, and
/// coalesced reads when the source rows are contiguous).
#[cube(launch_unchecked)]
pub fn matmul_pad_kernel<F: Float, NV: Size>(
    input: &Array<F>,
    out: &mut Array<Vector<F, NV>>,
    rows: usize,
    cols: usize,
    pitch: usize,
    strides: Sequence<usize>,
    total: usize,
) {
    let nv = NV::value();
    let vecs_per_row = pitch / nv;
    let step = CUBE_COUNT * CUBE_DIM as usize;
    let mut v = ABSOLUTE_POS;
    while v < total {
        let zr = v / vecs_per_row;
        let c0 = (v % vecs_per_row) * nv;
        let (z, r) = (zr / rows, zr % rows);
        let base = z * strides[0] + r * strides[1];
        let mut t = Vector::<F, NV>::empty();
        #[unroll]
        for e in 0..nv {
            let c = c0 + e;
            let mut x = F::new(0.0);
            if c < cols {
                x = input[base + c * strides[2]];
            }
            t[e] = x;
        }
        out[v] = t;
        v += step;
    }
}
