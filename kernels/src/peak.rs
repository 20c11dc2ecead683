//! A compute-bound kernel for the roofline's compute ceiling: each unit runs `iters` rounds of
//! 8 independent FMA chains in registers (enough independent work to hide the FMA latency) and
//! stores one sum so nothing is optimized away.

use cubecl::prelude::*;

/// `out[unit] = Σ` of 8 chains (in `F`; `a`, `b` given in f32) `x ← x·a + b`, `iters` rounds each: `16 · iters` FLOPs per unit.
/// Preconditions: `out.len() ≥ CUBE_COUNT · CUBE_DIM`.
#[cube(launch_unchecked)]
pub fn fma_peak_kernel<F: Float>(out: &mut Array<F>, a: f32, b: f32, iters: u32) {
    let a = F::cast_from(a);
    let b = F::cast_from(b);
    let seed = F::cast_from(ABSOLUTE_POS % 7) * F::new(0.001);
    let mut x0 = seed;
    let mut x1 = seed + F::new(0.1);
    let mut x2 = seed + F::new(0.2);
    let mut x3 = seed + F::new(0.3);
    let mut x4 = seed + F::new(0.4);
    let mut x5 = seed + F::new(0.5);
    let mut x6 = seed + F::new(0.6);
    let mut x7 = seed + F::new(0.7);
    for _ in 0..iters {
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x2 = fma(x2, a, b);
        x3 = fma(x3, a, b);
        x4 = fma(x4, a, b);
        x5 = fma(x5, a, b);
        x6 = fma(x6, a, b);
        x7 = fma(x7, a, b);
    }
    out[ABSOLUTE_POS] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
