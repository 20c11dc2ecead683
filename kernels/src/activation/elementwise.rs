use super::Activation;
use cubecl::prelude::*;

/// Comptime configuration of [`activation_bias_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActivationConfig {
    /// The bias repeats every `bias.len()` vectors (broadcast over rows) instead of matching
    /// the input element for element.
    pub broadcast: bool,
}

/// `output[i] = A(input[i] + bias[j], scale)` with `j = i` or `j = (i + offset) mod bias.len()`
/// when `config.broadcast`.
///
/// Mapping: 1-D grid-stride loop; unit `u` handles vectors `u, u + G, u + 2G, …` where
/// `G = CUBE_COUNT · CUBE_DIM`, so any cube count covers any length (the launcher caps it at the
/// device's limit). Each vector of `N` lanes is one 16-byte (f32×4, f16×8) access when `N` is the
/// widest size.
///
/// Preconditions (established by `cubeport::ops::activation`): `input.len() == output.len()`;
/// without broadcast `bias.len() == input.len()`; with broadcast `bias.len() ≥ 1` and the row
/// length divisible by `N`; `offset` is the vector index of `input[0]` within the full tensor
/// (non-zero only for the scalar tail launch).
#[cube(launch_unchecked)]
pub fn activation_bias_kernel<F: Float, N: Size, A: Activation>(
    input: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    scale: f32,
    offset: usize,
    #[comptime] config: ActivationConfig,
) {
    let len = output.len();
    let bias_len = bias.len();
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < len {
        let x = input[i];
        let b = if comptime!(config.broadcast) {
            bias[(i + offset) % bias_len]
        } else {
            bias[i]
        };
        let mut y = Vector::<F, N>::empty();
        #[unroll]
        for k in 0..N::value() {
            y[k] = F::cast_from(A::apply(f32::cast_from(x[k]) + f32::cast_from(b[k]), scale));
        }
        output[i] = y;
        i += grid;
    }
}

/// `output[i] = input[i]`: the device-copy anchor every memory-bound benchmark is measured
/// against (one read and one write per element, the same grid-stride mapping as
/// [`activation_bias_kernel()`]).
///
/// Preconditions: `input.len() == output.len()`.
#[cube(launch_unchecked)]
pub fn activation_copy_kernel<F: Float, N: Size>(
    input: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
) {
    let len = output.len();
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < len {
        output[i] = input[i];
        i += grid;
    }
}

/// [`activation_bias_kernel()`] over a stack of `rows` dense rows of `row_vecs` vectors whose
/// row pitches differ from the row length (padded rows, as frameworks allocate them): element
/// `(r, c)` is at vector `r · pitch + c` of each tensor; a bias pitch of 0 broadcasts one row.
///
/// Mapping: grid-stride over the `rows · row_vecs` vectors, row-major.
/// Preconditions: each array holds `(rows − 1) · pitch + row_vecs` vectors (bias: `row_vecs`
/// when its pitch is 0).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn activation_bias_rows_kernel<F: Float, N: Size, A: Activation>(
    input: &Array<Vector<F, N>>,
    bias: &Array<Vector<F, N>>,
    output: &mut Array<Vector<F, N>>,
    rows: usize,
    row_vecs: usize,
    in_pitch: usize,
    bias_pitch: usize,
    out_pitch: usize,
    scale: f32,
) {
    let len = rows * row_vecs;
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < len {
        let r = i / row_vecs;
        let c = i % row_vecs;
        let x = input[r * in_pitch + c];
        let b = bias[r * bias_pitch + c];
        let mut y = Vector::<F, N>::empty();
        #[unroll]
        for k in 0..N::value() {
            y[k] = F::cast_from(A::apply(f32::cast_from(x[k]) + f32::cast_from(b[k]), scale));
        }
        output[r * out_pitch + c] = y;
        i += grid;
    }
}
