//! Backend kinds, device discovery and capability probing for cubeport.
//!
//! This crate is the one place where cubeport touches vendor runtimes before a kernel runs:
//! it decides which backends are compiled in and which have a device that answers, creates
//! `ComputeClient`s without panicking, and reads [`Caps`] from `client.properties()`.
//! cubecl 0.10 panics when a driver or adapter is missing; every such panic is contained here
//! and returned as a [`BackendError`] that says what to install.
//!
//! ```no_run
//! let kind = cubeport_backends::discover()?; // CUBEPORT_BACKEND, else CUDA, else wgpu
//! println!("using {kind}");
//! # Ok::<(), cubeport_backends::BackendError>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod caps;
mod devices;
mod probe;

pub use caps::{Caps, PlaneSupport};
pub use probe::{BackendStatus, available, backend_from_env, discover};

#[cfg(feature = "wgpu")]
pub use devices::wgpu_client_on;
pub use devices::{DEVICE_ENV, DeviceInfo, device_from_env, devices, with_kernel_cache};
#[cfg(feature = "cuda")]
pub use devices::{cuda_capability, cuda_client_on};
#[cfg(feature = "cuda")]
pub use probe::cuda_client;
#[cfg(feature = "wgpu")]
pub use probe::wgpu_client;

use std::fmt;
use std::str::FromStr;

/// Environment variable that forces a backend (`cuda` or `wgpu`).
pub const BACKEND_ENV: &str = "CUBEPORT_BACKEND";

/// A cubecl backend cubeport can run on. Exists under every feature set, so asking for a
/// backend that was not compiled in is a [`BackendError::NotCompiled`], not a build error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BackendKind {
    /// NVIDIA CUDA through cubecl-cuda (NVRTC JIT).
    Cuda,
    /// wgpu (Vulkan, Metal, DX12; Mesa lavapipe on CPU-only machines) through cubecl-wgpu.
    Wgpu,
}

impl BackendKind {
    /// Every kind, in discovery preference order.
    pub const ALL: [BackendKind; 2] = [BackendKind::Cuda, BackendKind::Wgpu];

    /// Stable lowercase name, as accepted by [`BACKEND_ENV`] and printed in tables.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Wgpu => "wgpu",
        }
    }

    /// Whether this build of cubeport contains the backend.
    pub fn is_compiled(self) -> bool {
        match self {
            BackendKind::Cuda => cfg!(feature = "cuda"),
            BackendKind::Wgpu => cfg!(feature = "wgpu"),
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = BackendError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cuda" => Ok(BackendKind::Cuda),
            "wgpu" | "vulkan" => Ok(BackendKind::Wgpu),
            _ => Err(BackendError::UnknownBackend(s.to_string())),
        }
    }
}

/// Why a backend cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend's cargo feature was off when cubeport was built.
    #[error("backend {0} was not compiled in (enable cubeport's `{0}` feature)")]
    NotCompiled(BackendKind),
    /// The backend is compiled in but no usable device answered.
    #[error("no {kind} device: {reason}. {hint}")]
    NoDevice {
        /// The backend that was probed.
        kind: BackendKind,
        /// What the probe saw.
        reason: String,
        /// What to install or set to make it work.
        hint: &'static str,
    },
    /// `CUBEPORT_BACKEND` (or a CLI flag) named no known backend.
    #[error("unknown backend {0:?}: expected `cuda` or `wgpu`")]
    UnknownBackend(String),
    /// A device ordinal past the last device of the backend.
    #[error(
        "no {kind} device with ordinal {ordinal}: {count} device(s) exist (see `cubeport devices`)"
    )]
    NoSuchDevice {
        /// The backend.
        kind: BackendKind,
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the backend has.
        count: usize,
    },
    /// `CUBEPORT_DEVICE` is not a device ordinal.
    #[error("CUBEPORT_DEVICE={0:?} is not a device ordinal (a number; see `cubeport devices`)")]
    BadOrdinal(String),
    /// No backend at all is usable.
    #[error("no usable backend: {0}")]
    NoneUsable(String),
}

/// Hint printed when CUDA is compiled in but unusable.
pub const CUDA_HINT: &str = "Install the NVIDIA driver (libcuda) and the CUDA toolkit headers \
     (CUDA_PATH or /usr/local/cuda; cubecl's NVRTC JIT needs them)";
/// Hint printed when wgpu finds no adapter.
pub const WGPU_HINT: &str = "Install a Vulkan driver and loader: on Debian \
     `apt-get install mesa-vulkan-drivers libvulkan1` (lavapipe runs on any CPU)";
