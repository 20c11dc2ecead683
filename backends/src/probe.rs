//! Device discovery. Every vendor call that can panic (a missing libcuda, no Vulkan adapter)
//! runs inside `catch_unwind` here and nowhere else.

use crate::{BACKEND_ENV, BackendError, BackendKind};
#[cfg(any(feature = "cuda", feature = "wgpu"))]
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// The outcome of probing one backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendStatus {
    /// The backend probed.
    pub kind: BackendKind,
    /// `Ok(device description)` when a device answered, else why not.
    pub device: Result<String, BackendError>,
}

/// Probes every backend kind (compiled in or not). Results are cached for the process.
pub fn available() -> Vec<BackendStatus> {
    BackendKind::ALL
        .iter()
        .map(|&kind| BackendStatus {
            kind,
            device: probe(kind),
        })
        .collect()
}

/// Reads [`BACKEND_ENV`]: `Ok(None)` when unset or empty.
///
/// # Errors
/// [`BackendError::UnknownBackend`] when it names no backend.
pub fn backend_from_env() -> Result<Option<BackendKind>, BackendError> {
    match std::env::var(BACKEND_ENV) {
        Ok(v) if !v.trim().is_empty() => v.parse().map(Some),
        _ => Ok(None),
    }
}

/// Chooses the backend to use: `CUBEPORT_BACKEND` if set (and usable), else CUDA if compiled
/// in and a device answers, else wgpu. Never panics.
///
/// # Errors
/// The forced backend's error, or [`BackendError::NoneUsable`] listing why each one failed.
pub fn discover() -> Result<BackendKind, BackendError> {
    if let Some(kind) = backend_from_env()? {
        return probe(kind).map(|_| kind);
    }
    let mut why = Vec::new();
    for kind in BackendKind::ALL {
        match probe(kind) {
            Ok(_) => return Ok(kind),
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(BackendError::NoneUsable(why.join("; ")))
}

/// Probes one backend (cached). `Ok` carries a one-line device description.
pub(crate) fn probe(kind: BackendKind) -> Result<String, BackendError> {
    static CUDA: OnceLock<Result<String, BackendError>> = OnceLock::new();
    static WGPU: OnceLock<Result<String, BackendError>> = OnceLock::new();
    if !kind.is_compiled() {
        return Err(BackendError::NotCompiled(kind));
    }
    match kind {
        BackendKind::Cuda => CUDA.get_or_init(probe_cuda).clone(),
        BackendKind::Wgpu => WGPU.get_or_init(probe_wgpu).clone(),
    }
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub(crate) fn no_device(kind: BackendKind, reason: impl Into<String>) -> BackendError {
    let hint = match kind {
        BackendKind::Cuda => crate::CUDA_HINT,
        BackendKind::Wgpu => crate::WGPU_HINT,
    };
    BackendError::NoDevice {
        kind,
        reason: reason.into(),
        hint,
    }
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the runtime panicked".to_string())
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[cfg(feature = "cuda")]
fn probe_cuda() -> Result<String, BackendError> {
    use cudarc::driver::{result, sys};
    let kind = BackendKind::Cuda;
    // SAFETY: only tries to dlopen libcuda; no symbol is called.
    if !unsafe { sys::is_culib_present() } {
        return Err(no_device(
            kind,
            "libcuda (the NVIDIA driver library) was not found",
        ));
    }
    // SAFETY: as above, for libnvrtc, which cubecl's JIT needs.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(no_device(
            kind,
            "libnvrtc (CUDA's runtime compiler) was not found",
        ));
    }
    let count = catch_unwind(|| {
        result::init().map_err(|e| format!("cuInit failed: {e:?}"))?;
        result::device::get_count().map_err(|e| format!("cuDeviceGetCount failed: {e:?}"))
    })
    .map_err(|p| no_device(kind, panic_text(p.as_ref())))?
    .map_err(|e| no_device(kind, e))?;
    if count < 1 {
        return Err(no_device(kind, "the driver reports no CUDA device"));
    }
    let headers = cubecl::cuda::install::cuda_path()
        .map(|p| p.join("include").join("cuda.h"))
        .filter(|p| p.exists());
    if headers.is_none() {
        return Err(no_device(
            kind,
            "CUDA toolkit headers (include/cuda.h) were not found",
        ));
    }
    let name = catch_unwind(|| {
        let dev = result::device::get(0).map_err(|e| format!("{e:?}"))?;
        result::device::get_name(dev).map_err(|e| format!("{e:?}"))
    })
    .ok()
    .and_then(Result::ok)
    .unwrap_or_else(|| "CUDA device 0".to_string());
    Ok(format!("{name} ({count} device(s))"))
}

#[cfg(not(feature = "cuda"))]
fn probe_cuda() -> Result<String, BackendError> {
    Err(BackendError::NotCompiled(BackendKind::Cuda))
}

#[cfg(feature = "wgpu")]
fn probe_wgpu() -> Result<String, BackendError> {
    use ::wgpu;
    let kind = BackendKind::Wgpu;
    let adapters = catch_unwind(|| {
        // cubecl-wgpu runs on the primary APIs (Vulkan, Metal, DX12), never on GL: an
        // OpenGL-only adapter (llvmpipe through EGL, say) must not count.
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
            .into_iter()
            .map(|a| {
                let info = a.get_info();
                format!("{} [{:?}, {:?}]", info.name, info.backend, info.device_type)
            })
            .collect::<Vec<_>>()
    })
    .map_err(|p| no_device(kind, panic_text(p.as_ref())))?;
    if adapters.is_empty() {
        return Err(no_device(kind, "wgpu found no adapter"));
    }
    Ok(adapters.join(", "))
}

#[cfg(not(feature = "wgpu"))]
fn probe_wgpu() -> Result<String, BackendError> {
    Err(BackendError::NotCompiled(BackendKind::Wgpu))
}

/// A CUDA client on device `CUBEPORT_DEVICE` (default 0), or why there is none. Never panics.
///
/// # Errors
/// [`BackendError::NoDevice`] when the driver, a device or the toolkit headers are missing;
/// [`BackendError::NoSuchDevice`] / [`BackendError::BadOrdinal`] for a bad `CUBEPORT_DEVICE`.
#[cfg(feature = "cuda")]
pub fn cuda_client()
-> Result<cubecl::prelude::ComputeClient<cubecl::cuda::CudaRuntime>, BackendError> {
    crate::devices::cuda_client_on(crate::device_from_env()?)
}

/// A wgpu client on adapter `CUBEPORT_DEVICE` when it is set, else on cubecl's default adapter
/// (`CUBECL_WGPU_DEFAULT_DEVICE` overrides), or why there is none. Never panics.
///
/// # Errors
/// [`BackendError::NoDevice`] when no adapter answers; [`BackendError::NoSuchDevice`] /
/// [`BackendError::BadOrdinal`] for a bad `CUBEPORT_DEVICE`.
#[cfg(feature = "wgpu")]
pub fn wgpu_client()
-> Result<cubecl::prelude::ComputeClient<cubecl::wgpu::WgpuRuntime>, BackendError> {
    use cubecl::prelude::Runtime;
    use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
    if std::env::var(crate::DEVICE_ENV).is_ok_and(|v| !v.trim().is_empty()) {
        return crate::devices::wgpu_client_on(crate::device_from_env()?);
    }
    probe(BackendKind::Wgpu)?;
    catch_unwind(AssertUnwindSafe(|| {
        WgpuRuntime::client(&WgpuDevice::default())
    }))
    .map_err(|p| no_device(BackendKind::Wgpu, panic_text(p.as_ref())))
}
