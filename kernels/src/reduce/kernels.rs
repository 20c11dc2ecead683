use super::{GroupConfig, ReduceOp, group_reduce};
use cubecl::prelude::*;

/// `output[r] = O(input[r, ..])` for each contiguous row `r`.
///
/// Mapping: `CUBE_DIM = (cfg.group, cfg.groups_per_cube)`; the group of row
/// `r = CUBE_POS · groups_per_cube + UNIT_POS_Y` strides the row's `row_vecs` vectors with
/// `UNIT_POS_X` (coalesced), then [`group_reduce()`]s. Cubes past the last row still take part in
/// the cube barriers and write nothing.
///
/// Preconditions: `input.len() ≥ rows · row_vecs`, `output.len() ≥ rows`; `cfg` as documented on
/// [`GroupConfig`]; `inf = +∞`.
#[cube(launch_unchecked)]
pub fn reduce_rows_kernel<F: Float, G: Float, N: Size, O: ReduceOp>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<G>,
    rows: usize,
    row_vecs: usize,
    scale: f32,
    inf: f32,
    #[comptime] cfg: GroupConfig,
) {
    let row = CUBE_POS * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let mut acc = O::identity(inf);
    if row < rows {
        let base = row * row_vecs;
        let mut i = UNIT_POS_X as usize;
        while i < row_vecs {
            let v = input[base + i];
            #[unroll]
            for k in 0..N::value() {
                acc = O::combine(acc, f32::cast_from(v[k]));
            }
            i += CUBE_DIM_X as usize;
        }
    }
    let total = group_reduce::<O>(acc, inf, cfg);
    if row < rows && UNIT_POS_X == 0 {
        output[row] = G::cast_from(O::finalize(total, scale));
    }
}

/// Stage 1 of a whole-array reduction: each cube folds a grid-stride share of `input` (plus,
/// in cube 0, the `tail_len` scalars of `tail` that did not fill a vector) into
/// `partials[CUBE_POS]`.
///
/// Mapping: 1-D cubes of `cfg.group` units (`groups_per_cube == 1`).
/// Preconditions: `partials.len() ≥ CUBE_COUNT`; `tail_len ≤ min(tail.len(), cfg.group)`.
#[cube(launch_unchecked)]
pub fn reduce_partials_kernel<F: Float, N: Size, O: ReduceOp>(
    input: &Array<Vector<F, N>>,
    tail: &Array<F>,
    partials: &mut Array<f32>,
    tail_len: usize,
    inf: f32,
    #[comptime] cfg: GroupConfig,
) {
    let mut acc = O::identity(inf);
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let len = input.len();
    let mut i = ABSOLUTE_POS;
    while i < len {
        let v = input[i];
        #[unroll]
        for k in 0..N::value() {
            acc = O::combine(acc, f32::cast_from(v[k]));
        }
        i += grid;
    }
    if CUBE_POS == 0 && (UNIT_POS as usize) < tail_len {
        acc = O::combine(acc, f32::cast_from(tail[UNIT_POS as usize]));
    }
    let total = group_reduce::<O>(acc, inf, cfg);
    if UNIT_POS == 0 {
        partials[CUBE_POS] = total;
    }
}

/// `output[o, c, i] = O(input[o, c·chunk_len .. min((c+1)·chunk_len, len), i])`: reduction over
/// a middle (strided) axis of a dense `[outer, len, inner]` tensor, split into `chunks` chunks
/// of the reduced axis (1 chunk: the whole axis), vectorized along `inner`.
///
/// Mapping: 1-D grid-stride, one unit per output vector; consecutive units read consecutive
/// inner vectors, so every step of the loop over the axis is a coalesced row of loads. Splitting
/// the axis into chunks multiplies the units when `outer · inner` alone cannot fill the device;
/// a second launch with one chunk then reduces the `[outer, chunks, inner]` partials.
/// Preconditions: `output.len() = outer · chunks · inner_vecs` vectors, `input` holds
/// `outer · len · inner_vecs` vectors, `chunks · chunk_len ≥ len`.
#[cube(launch_unchecked)]
pub fn reduce_strided_kernel<F: Float, G: Float, N: Size, O: ReduceOp>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<G, N>>,
    len: usize,
    inner_vecs: usize,
    chunks: usize,
    chunk_len: usize,
    scale: f32,
    inf: f32,
) {
    let total = output.len();
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut pos = ABSOLUTE_POS;
    while pos < total {
        let inner = pos % inner_vecs;
        let t = pos / inner_vecs;
        let chunk = t % chunks;
        let outer = t / chunks;
        let start = chunk * chunk_len;
        let end = select(start + chunk_len < len, start + chunk_len, len);
        let base = outer * len * inner_vecs + inner;
        let mut acc = Vector::<f32, N>::empty();
        #[unroll]
        for k in 0..N::value() {
            acc[k] = O::identity(inf);
        }
        for j in start..end {
            let v = input[base + j * inner_vecs];
            #[unroll]
            for k in 0..N::value() {
                acc[k] = O::combine(acc[k], f32::cast_from(v[k]));
            }
        }
        let mut out = Vector::<G, N>::empty();
        #[unroll]
        for k in 0..N::value() {
            out[k] = G::cast_from(O::finalize(acc[k], scale));
        }
        output[pos] = out;
        pos += grid;
    }
}
