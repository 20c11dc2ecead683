//! Public ops, one module per kernel family. Each family has `spec.rs` (pure validation),
//! `launch.rs` (the only `unsafe`) and `mod.rs` (the public functions and their docs).

pub mod activation;
pub mod gemv;
mod group;
pub mod reduce;
pub mod softmax;
pub mod transpose;

pub use group::{ReducePath, RowGroup};

use crate::Error;

/// Fails with [`Error::UnsupportedDType`] when the device cannot run `dtype`.
pub(crate) fn expect_dtype_supported(
    caps: &crate::Caps,
    op: &'static str,
    dtype: crate::DType,
) -> Result<(), Error> {
    if dtype.is_supported_by(caps) {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            op,
            dtype,
            backend: caps.backend,
            runtime: caps.runtime_name,
        })
    }
}
