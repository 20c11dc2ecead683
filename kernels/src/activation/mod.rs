//! Elementwise and fused activations: `y = act(x + bias) · scale`.
//!
//! | variant | kernel | needs |
//! |---|---|---|
//! | vectorized grid-stride | [`activation_bias_kernel()`] with `N = 4/2/1` (f32), `8/4/2/1` (f16) | any backend |
//! | scalar tail | the same kernel with `N = 1` on the last `len % N` elements | any backend |

mod elementwise;
mod ops;

pub use elementwise::*;
pub use ops::*;
