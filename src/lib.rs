//! # cubeport
//!
//! GPU compute kernels written once in [CubeCL](https://github.com/tracel-ai/cubecl)'s Rust kernel
//! language and run on CUDA and wgpu (Vulkan, lavapipe), each checked against an f64 CPU
//! reference.
//!
//! Every public op follows the same path: **validate** shapes, strides and dtypes on the host
//! (a typed [`Error`], never a panic) → **select** a variant from the device's [`Caps`] →
//! **launch**, then flush the queue so that a launch the runtime rejected comes back as
//! [`Error::Launch`] instead of as stale data.
//!
//! Two ways in:
//! * a framework that already holds cubecl handles (Burn's CubeCL backend, say) wraps them in
//!   [`TensorRef`] / [`TensorMut`] and calls the `*_into` ops: no copy;
//! * standalone code uses the small owned [`DeviceTensor`].
//!
//! ```no_run
//! use cubeport::{DeviceTensor, backends};
//! let client = backends::wgpu_client()?;
//! let x = DeviceTensor::from_slice(&client, &[1.0f32, -2.0, 3.0, -4.0], &[2, 2])?;
//! let bias = DeviceTensor::from_slice(&client, &[0.5f32, 0.25], &[2])?; // broadcast over rows
//! let y = cubeport::bias_gelu(&client, &x, &bias)?;
//! println!("{:?}", y.to_vec(&client)?);
//! # Ok::<(), cubeport::Error>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

/// The cubecl this crate was built with; use it so your handles and cubeport's agree.
pub use cubecl;
/// Backend discovery, client creation and capability probing.
pub use cubeport_backends as backends;
pub use cubeport_backends::{BackendError, BackendKind, Caps};

mod cache;
mod dtype;
mod error;
mod guard;
mod layout;
mod tensor;
mod transfer;

pub mod ops;
pub mod reference;
#[cfg(feature = "testing")]
pub mod testing;

pub use cache::{KERNEL_CACHE_ENV, kernel_cache_path, kernel_cache_root};
#[cfg(feature = "cuda")]
pub use cache::{cuda_client, cuda_client_on, kernel_cache_dir};
#[cfg(feature = "wgpu")]
pub use cache::{wgpu_client, wgpu_client_on, wgpu_kernel_cache_dir};
pub use dtype::{DType, Element, Scalar};
pub use error::{Error, ShapeError};
pub use guard::{CHECKED_ENV, Checking, checked_launch, checking, flush, set_checking, sync};
pub use layout::Layout;
pub use ops::activation::{
    Activation, ActivationVariant, GeluApprox, add, add_into, bias_activation_into,
    bias_activation_variant, bias_activation_with, bias_gelu, bias_gelu_into, bias_relu_scale,
    bias_relu_scale_into, copy_into,
};
pub use ops::attention::{
    AttentionOptions, AttentionVariant, Mask, attention, attention_into, attention_variant,
    attention_with,
};
pub use ops::gemv::{GemvVariant, Transpose, gemv, gemv_into, gemv_variant, gemv_with};
pub use ops::histogram::{
    Binning, HistogramVariant, bincount, histc, histogram, histogram_into, histogram_variant,
    histogram_with,
};
pub use ops::matmul::{
    MatmulPlan, MatmulVariant, NarrowMmaShape, SimtShape, TcShape, matmul, matmul_fused_into,
    matmul_into, matmul_plan, matmul_variant, matmul_with,
};
pub use ops::norm::{
    NormKind, NormVariant, add_rms_norm, add_rms_norm_into, add_rms_norm_with, layer_norm,
    layer_norm_into, layer_norm_with, norm_variant, rms_norm, rms_norm_into, rms_norm_with,
};
pub use ops::reduce::{ReduceVariant, reduce, reduce_into, reduce_variant, reduce_with};
pub use ops::softmax::{
    SoftmaxKind, SoftmaxVariant, log_softmax, log_softmax_into, softmax, softmax_into,
    softmax_variant, softmax_with,
};
pub use ops::transpose::{
    TransposeVariant, transpose, transpose_into, transpose_variant, transpose_with,
};
pub use ops::{ReducePath, RowGroup};
pub use reference::Reduction;
pub use tensor::{DeviceTensor, TensorMut, TensorRef};
pub use transfer::PinnedBuffer;

/// `Caps` of the backend a client belongs to. Read once per device and kept: an op asks for
/// them on every call.
pub fn caps_of<R: cubecl::Runtime>(client: &cubecl::prelude::ComputeClient<R>) -> Caps {
    use std::sync::RwLock;
    static CACHE: RwLock<Vec<(usize, Caps)>> = RwLock::new(Vec::new());
    let id = guard::device_identity(client);
    if let Ok(cache) = CACHE.read()
        && let Some((_, caps)) = cache.iter().find(|(i, _)| *i == id)
    {
        return caps.clone();
    }
    let caps = Caps::of(client, backend_of::<R>());
    if let Ok(mut cache) = CACHE.write()
        && !cache.iter().any(|(i, _)| *i == id)
    {
        cache.push((id, caps.clone()));
    }
    caps
}

/// The [`BackendKind`] of a cubecl runtime type.
pub fn backend_of<R: cubecl::Runtime>() -> BackendKind {
    #[cfg(feature = "cuda")]
    if std::any::TypeId::of::<R>() == std::any::TypeId::of::<cubecl::cuda::CudaRuntime>() {
        return BackendKind::Cuda;
    }
    BackendKind::Wgpu
}
