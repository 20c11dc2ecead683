//! Public ops, one module per kernel family (matmul aside, which is being reshaped separately).
//! Each family has the same shape:
//! * `spec.rs`: pure validation into a `<Family>Spec`, the `<Family>Variant` with
//!   `select(&Caps, &Spec)` (the automatic choice) and `plan` (what a forced or selected variant
//!   runs, or [`crate::Error::Unsupported`]), all without a device, so they are unit-tested;
//! * `launch.rs`: the only `unsafe`, running a plan that validation and `plan` established;
//!   runtime dtypes become element types through one macro, `crate::dtype::float_dispatch!`;
//! * `mod.rs`: the public functions and their docs: `<op>_into`, `<op>_with` (forced variant),
//!   `<op>_variant` (the variant `<op>_into` runs) and the owned `<op>`.
//!
//! Every op runs validate → select → plan → launch in that order.

pub mod activation;
pub mod attention;
pub mod gemv;
mod group;
pub mod histogram;
pub(crate) mod launcher;
pub mod matmul;
pub mod norm;
pub mod reduce;
pub mod softmax;
pub mod transpose;

pub use group::{ReducePath, RowGroup};

use crate::Error;

/// Widest vector width (≤ 16 bytes, ≤ the device's) dividing `len`.
pub(crate) fn width_dividing(caps: &crate::Caps, dtype: crate::DType, len: usize) -> usize {
    caps.vector_sizes(dtype.size())
        .into_iter()
        .find(|&n| len.is_multiple_of(n))
        .unwrap_or(1)
}

/// Greatest common divisor (vector widths must divide row lengths and row pitches alike).
pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Splits `len` elements into a body of whole `vector`-wide vectors and a scalar tail. With a
/// tail, the body is cut at a multiple of 256 bytes so the tail's buffer offset meets every
/// backend's binding-offset alignment.
pub(crate) fn split_body_tail(len: usize, vector: usize, dtype: crate::DType) -> (usize, usize) {
    if vector == 1 || len.is_multiple_of(vector) {
        return (len, 0);
    }
    let granule = (256 / dtype.size()).max(vector);
    let body = len / granule * granule;
    (body, len - body)
}

/// Fails with [`Error::UnsupportedDType`] unless `dtype` is a float the device can run (what
/// every float op needs).
pub(crate) fn expect_dtype_supported(
    caps: &crate::Caps,
    op: &'static str,
    dtype: crate::DType,
) -> Result<(), Error> {
    if dtype.is_float() && dtype.is_supported_by(caps) {
        Ok(())
    } else {
        Err(unsupported_dtype(caps, op, dtype))
    }
}

/// [`Error::UnsupportedDType`] for an integer `dtype` reaching a float launcher (validation
/// rejects it first; this arm keeps the dispatch total without a panic).
pub(crate) fn not_float<R: cubecl::Runtime>(
    client: &cubecl::prelude::ComputeClient<R>,
    op: &'static str,
    dtype: crate::DType,
) -> Error {
    unsupported_dtype(&crate::caps_of(client), op, dtype)
}

/// [`Error::Unsupported`]: this device cannot run what `op` was asked (a forced variant it or
/// the input rules out, a size beyond its limits). Never a reason to pick another variant
/// silently.
pub(crate) fn unsupported(
    caps: &crate::Caps,
    op: &'static str,
    reason: impl Into<String>,
) -> Error {
    Error::Unsupported {
        op,
        backend: caps.backend,
        reason: reason.into(),
    }
}

/// [`Error::UnsupportedDType`] for `dtype` in `op` on this device.
pub(crate) fn unsupported_dtype(
    caps: &crate::Caps,
    op: &'static str,
    dtype: crate::DType,
) -> Error {
    Error::UnsupportedDType {
        op,
        dtype,
        backend: caps.backend,
        runtime: caps.runtime_name,
    }
}
