use cubecl::prelude::*;

/// A reduction: identity, combine, and a final step (`Mean` scales by `1/len`).
/// `inf` is `+∞` passed in as a kernel argument (CUDA C has no literal for it).
#[cube]
pub trait ReduceOp: 'static + Send + Sync {
    fn identity(inf: f32) -> f32;
    fn combine(a: f32, b: f32) -> f32;
    fn finalize(acc: f32, scale: f32) -> f32;
}

/// `Σ x`.
pub struct Sum;
/// `Σ x / len`.
pub struct Mean;
/// `max x`; NaN wins (as `torch.max`).
pub struct Max;
/// `min x`; NaN wins (as `torch.min`).
pub struct Min;

#[cube]
impl ReduceOp for Sum {
    fn identity(_inf: f32) -> f32 {
        f32::new(0.0)
    }
    fn combine(a: f32, b: f32) -> f32 {
        a + b
    }
    fn finalize(acc: f32, _scale: f32) -> f32 {
        acc
    }
}

#[cube]
impl ReduceOp for Mean {
    fn identity(_inf: f32) -> f32 {
        f32::new(0.0)
    }
    fn combine(a: f32, b: f32) -> f32 {
        a + b
    }
    fn finalize(acc: f32, scale: f32) -> f32 {
        acc * scale
    }
}

#[cube]
impl ReduceOp for Max {
    fn identity(inf: f32) -> f32 {
        -inf
    }
    fn combine(a: f32, b: f32) -> f32 {
        // NaN in either operand wins (fmax would drop it), tested with is_nan rather than
        // comparisons, which drivers that assume no NaN (WGSL allows it) may fold.
        select(a.is_nan(), a, select(b > a || b.is_nan(), b, a))
    }
    fn finalize(acc: f32, _scale: f32) -> f32 {
        acc
    }
}

#[cube]
impl ReduceOp for Min {
    fn identity(inf: f32) -> f32 {
        inf
    }
    fn combine(a: f32, b: f32) -> f32 {
        select(a.is_nan(), a, select(b < a || b.is_nan(), b, a))
    }
    fn finalize(acc: f32, _scale: f32) -> f32 {
        acc
    }
}
