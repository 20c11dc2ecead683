use std::fmt;

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16 (`half::f16`).
    F16,
    /// bfloat16 (`half::bf16`); CUDA only (WGSL has no bf16).
    BF16,
    /// 32-bit unsigned integer (histogram counts and bin indices).
    U32,
    /// 32-bit signed integer (bin indices; negative values fall outside every bin).
    I32,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::U32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// Machine epsilon (distance from 1.0 to the next value); 0 for integers (exact).
    pub fn epsilon(self) -> f64 {
        match self {
            DType::F32 => f32::EPSILON as f64,
            DType::F16 => 9.765_625e-4,
            DType::BF16 => 7.812_5e-3,
            DType::U32 | DType::I32 => 0.0,
        }
    }

    /// Whether this is a floating-point type (the float ops accept only these).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// Whether the device described by `caps` can store and compute with this dtype.
    pub fn is_supported_by(self, caps: &crate::Caps) -> bool {
        match self {
            DType::F32 | DType::U32 | DType::I32 => true,
            DType::F16 => caps.f16,
            DType::BF16 => caps.bf16,
        }
    }

    /// The dtype of cubecl's storage type, as framework tensors built on cubecl carry it (Burn's
    /// `DType` converts into `cubecl::ir::StorageType`); `None` for types cubeport has no kernels
    /// for.
    ///
    /// ```
    /// use cubeport::{DType, cubecl::ir::{ElemType, FloatKind, StorageType}};
    /// assert_eq!(DType::from_cubecl(StorageType::Scalar(ElemType::Float(FloatKind::F32))), Some(DType::F32));
    /// ```
    pub fn from_cubecl(storage: cubecl::ir::StorageType) -> Option<DType> {
        use cubecl::ir::{ElemType, FloatKind, IntKind, StorageType, UIntKind};
        match storage {
            StorageType::Scalar(ElemType::Float(FloatKind::F32)) => Some(DType::F32),
            StorageType::Scalar(ElemType::Float(FloatKind::F16)) => Some(DType::F16),
            StorageType::Scalar(ElemType::Float(FloatKind::BF16)) => Some(DType::BF16),
            StorageType::Scalar(ElemType::UInt(UIntKind::U32)) => Some(DType::U32),
            StorageType::Scalar(ElemType::Int(IntKind::I32)) => Some(DType::I32),
            _ => None,
        }
    }

    /// Lowercase name (`f32`, `f16`, `bf16`).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::U32 => "u32",
            DType::I32 => "i32",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
}

/// A host scalar type a [`crate::DeviceTensor`] can hold: the [`Element`] floats, `u32`, `i32`.
pub trait Scalar:
    cubecl::prelude::CubePrimitive
    + bytemuck::Pod
    + Copy
    + Send
    + Sync
    + fmt::Debug
    + sealed::Sealed
    + 'static
{
    /// The runtime tag of this type.
    const DTYPE: DType;
}

/// A floating-point [`Scalar`] the float kernels accept: `f32`, `half::f16`, `half::bf16`.
pub trait Element: Scalar + cubecl::prelude::Float {
    /// The tensor-core fragment type for this input: itself for f16/bf16, TF32 for f32 (used
    /// only by the opt-in `_tf32` matmul shapes).
    type Frag: cubecl::prelude::Float;
    /// Exact widening to f64.
    fn to_f64(self) -> f64;
    /// Rounding narrowing from f64.
    fn from_f64(v: f64) -> Self;
}

impl Scalar for f32 {
    const DTYPE: DType = DType::F32;
}

impl Element for f32 {
    type Frag = cubecl::prelude::tf32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Scalar for half::f16 {
    const DTYPE: DType = DType::F16;
}

impl Element for half::f16 {
    type Frag = half::f16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(v: f64) -> Self {
        half::f16::from_f64(v)
    }
}

impl Scalar for half::bf16 {
    const DTYPE: DType = DType::BF16;
}

impl Element for half::bf16 {
    type Frag = half::bf16;
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn from_f64(v: f64) -> Self {
        half::bf16::from_f64(v)
    }
}

impl Scalar for u32 {
    const DTYPE: DType = DType::U32;
}

impl Scalar for i32 {
    const DTYPE: DType = DType::I32;
}

/// Runs `$body` with the type alias `$E` bound to the host type of a float `DType` (`f32`,
/// `half::f16`, `half::bf16`); every other dtype falls through to the arms after the body. The
/// one place that turns a runtime dtype into a kernel's element type, so adding a float type
/// means editing this macro, not every launcher.
///
/// ```ignore
/// float_dispatch!(spec.dtype, E => typed::<R, E>(client, &spec),
///     other => Err(crate::ops::unsupported_dtype(&caps, OP, other)))
/// ```
/// Extra arms may claim non-float dtypes first (`DType::U32 => typed::<R, u32>(..), ..`); the
/// match stays exhaustive, so a new `DType` variant is a compile error here, not a panic.
macro_rules! float_dispatch {
    ($dtype:expr, $E:ident => $body:expr, $($other:pat => $arm:expr),+ $(,)?) => {
        match $dtype {
            $crate::DType::F32 => {
                type $E = f32;
                $body
            }
            $crate::DType::F16 => {
                type $E = ::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $E = ::half::bf16;
                $body
            }
            $($other => $arm),+
        }
    };
}
pub(crate) use float_dispatch;
