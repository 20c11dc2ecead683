//! The plain kernel: one unit per output, operands read from global memory.

use super::common::epilogue;
use crate::activation::Activation;
use cubecl::prelude::*;

/// One output per unit. `CUBE_DIM = (16, 16)`, cubes `(⌈n/16⌉, ⌈m/16⌉, batch)`.
/// Preconditions: strides address in-bounds elements for every `(z, row < m, col < n, kk < k)`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_naive_kernel<F: Float, A: Activation>(
    a: &Array<F>,
    b: &Array<F>,
    bias: &Array<F>,
    c: &mut Array<F>,
    m: usize,
    n: usize,
    k: usize,
    a_strides: Sequence<usize>,
    b_strides: Sequence<usize>,
    c_pitch: usize,
    scale: f32,
    #[comptime] with_bias: bool,
) {
    let col = CUBE_POS_X as usize * CUBE_DIM_X as usize + UNIT_POS_X as usize;
    let row = CUBE_POS_Y as usize * CUBE_DIM_Y as usize + UNIT_POS_Y as usize;
    let z = CUBE_POS_Z as usize;
    if row < m && col < n {
        let a_base = z * a_strides[0] + row * a_strides[1];
        let b_base = z * b_strides[0] + col * b_strides[2];
        let mut acc = 0.0f32;
        for kk in 0..k {
            acc += f32::cast_from(a[a_base + kk * a_strides[2]])
                * f32::cast_from(b[b_base + kk * b_strides[1]]);
        }
        c[(z * m + row) * c_pitch + col] = epilogue::<F, A>(acc, bias, col, scale, with_bias);
    }
}
