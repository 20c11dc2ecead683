//! The activation functions, as a `#[cube]` trait so one kernel serves every one of them.
//! All arithmetic is in f32 whatever the storage type, so f16 loses nothing inside tanh/erf.

use cubecl::prelude::*;

/// One pointwise function `f(v, scale)` applied after the bias add.
#[cube]
pub trait Activation: 'static + Send + Sync {
    fn apply(v: f32, scale: f32) -> f32;
}

/// `v` (plain add: the vector-add kernel).
pub struct Identity;
/// `max(v, 0) · scale`; NaN propagates (as `torch.relu`).
pub struct ReluScale;
/// GELU, tanh approximation: `0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³)))`.
pub struct GeluTanh;
/// GELU, exact: `0.5·v·(1 + erf(v/√2))`.
pub struct GeluErf;

#[cube]
impl Activation for Identity {
    fn apply(v: f32, _scale: f32) -> f32 {
        v
    }
}

#[cube]
impl Activation for ReluScale {
    fn apply(v: f32, scale: f32) -> f32 {
        // `v < 0` is false for NaN, so NaN passes through instead of becoming 0.
        let r = select(v < 0.0, 0.0, v);
        r * scale
    }
}

#[cube]
impl Activation for GeluTanh {
    fn apply(v: f32, _scale: f32) -> f32 {
        let inner = 0.797_884_6 * (v + 0.044715 * v * v * v);
        // tanh saturates to ±1 in f32 beyond |9|; clamping keeps exp-based tanh
        // implementations (some Vulkan drivers) from overflowing to NaN.
        let t = f32::tanh(clamp(inner, -10.0, 10.0));
        0.5 * v * (1.0 + t)
    }
}

#[cube]
impl Activation for GeluErf {
    fn apply(v: f32, _scale: f32) -> f32 {
        0.5 * v * (1.0 + Erf::erf(v * 0.707_106_77))
    }
}
