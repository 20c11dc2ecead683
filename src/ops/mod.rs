//! Public ops, one module per kernel family. Each family has `spec.rs` (pure validation),
//! `launch.rs` (the only `unsafe`) and `mod.rs` (the public functions and their docs).

pub mod activation;
pub mod gemv;
mod group;
pub mod reduce;
pub mod softmax;

pub use group::{ReducePath, RowGroup};

use crate::Error;
use cubecl::prelude::*;

/// Flushes the client's queue and turns a launch error that cubecl only reports there into
/// [`Error::Launch`], so an op never returns success for a kernel that did not run.
pub(crate) fn flush_checked<R: Runtime>(
    client: &ComputeClient<R>,
    op: &'static str,
) -> Result<(), Error> {
    client.flush().map_err(|e| Error::launch(op, e))
}

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
