//! cubeport's `#[cube]` kernels. No host code lives here: no `Runtime`, no `ComputeClient`,
//! no allocation, no shape checks. Each kernel documents its thread mapping and the
//! preconditions its host launcher in the `cubeport` crate establishes.
//!
//! Kernels adapt to the device through comptime parameters and the runtime `PLANE_DIM`;
//! none assumes a plane width of 32.
#![allow(missing_docs)] // the #[cube] macro generates undocumented items

pub mod activation;
pub mod attention;
pub mod gemv;
pub mod histogram;
pub mod matmul;
pub mod norm;
pub mod peak;
pub mod reduce;
pub mod softmax;
pub mod staging;
pub mod transpose;

/// A hash of this crate's kernel sources, computed at build time: part of the persistent kernel
/// cache's directory name, so a changed kernel body never loads stale compiled code.
pub const SOURCE_HASH: &str = env!("CUBEPORT_KERNELS_SOURCE_HASH");
