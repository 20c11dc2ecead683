//! Device choice: every device of a backend by ordinal, clients on a chosen one, and cubecl's
//! persistent kernel cache.

use crate::{BackendError, BackendKind};
#[cfg(any(feature = "cuda", feature = "wgpu"))]
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Environment variable that picks the device ordinal of the default clients
/// ([`crate::cuda_client`], [`crate::wgpu_client`]); `cubeport devices` lists the ordinals.
pub const DEVICE_ENV: &str = "CUBEPORT_DEVICE";

/// One device of a backend, as `cubeport devices` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The backend.
    pub kind: BackendKind,
    /// The ordinal that `cuda_client_on` / `wgpu_client_on` and `CUBEPORT_DEVICE` take.
    pub ordinal: usize,
    /// Name and kind of device, as the driver reports them.
    pub name: String,
}

/// [`DEVICE_ENV`] as an ordinal: `Ok(0)` when unset.
///
/// # Errors
/// [`BackendError::BadOrdinal`] when it is not a number.
pub fn device_from_env() -> Result<usize, BackendError> {
    match std::env::var(DEVICE_ENV) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map_err(|_| BackendError::BadOrdinal(v.clone())),
        _ => Ok(0),
    }
}

/// Every device of `kind`, by ordinal (empty when the backend has none or is not compiled in).
pub fn devices(kind: BackendKind) -> Vec<DeviceInfo> {
    match kind {
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => cuda_devices(),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => wgpu_adapters()
            .into_iter()
            .enumerate()
            .map(|(ordinal, a)| DeviceInfo {
                kind,
                ordinal,
                name: format!("{} [{:?}, {:?}]", a.name, a.backend, a.device_type),
            })
            .collect(),
        #[allow(unreachable_patterns)]
        _ => Vec::new(),
    }
}

fn no_such(kind: BackendKind, ordinal: usize, count: usize) -> BackendError {
    BackendError::NoSuchDevice {
        kind,
        ordinal,
        count,
    }
}

#[cfg(feature = "cuda")]
fn cuda_devices() -> Vec<DeviceInfo> {
    use cudarc::driver::result;
    if crate::probe::probe(BackendKind::Cuda).is_err() {
        return Vec::new();
    }
    let names = catch_unwind(|| -> Result<Vec<String>, result::DriverError> {
        let count = result::device::get_count()?;
        (0..count)
            .map(|i| {
                let dev = result::device::get(i)?;
                let name = result::device::get_name(dev)?;
                let (major, minor) = cuda_capability_of(dev)?;
                Ok(format!("{name} (sm_{major}{minor})"))
            })
            .collect()
    });
    match names {
        Ok(Ok(names)) => names
            .into_iter()
            .enumerate()
            .map(|(ordinal, name)| DeviceInfo {
                kind: BackendKind::Cuda,
                ordinal,
                name,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(feature = "cuda")]
fn cuda_capability_of(
    dev: cudarc::driver::sys::CUdevice,
) -> Result<(i32, i32), cudarc::driver::result::DriverError> {
    use cudarc::driver::{result, sys::CUdevice_attribute as A};
    // SAFETY: `dev` came from `cuDeviceGet` after `cuInit`.
    unsafe {
        Ok((
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            result::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }
}

/// Compute capability `(major, minor)` of CUDA device `ordinal`.
///
/// # Errors
/// As [`cuda_client_on`].
#[cfg(feature = "cuda")]
pub fn cuda_capability(ordinal: usize) -> Result<(i32, i32), BackendError> {
    crate::probe::probe(BackendKind::Cuda)?;
    let count = cuda_devices().len();
    if ordinal >= count {
        return Err(no_such(BackendKind::Cuda, ordinal, count));
    }
    catch_unwind(|| {
        let dev = cudarc::driver::result::device::get(ordinal as i32).ok()?;
        cuda_capability_of(dev).ok()
    })
    .ok()
    .flatten()
    .ok_or_else(|| no_such(BackendKind::Cuda, ordinal, count))
}

/// A CUDA client on device `ordinal`. Never panics.
///
/// # Errors
/// [`BackendError::NoDevice`] when the driver or toolkit is missing;
/// [`BackendError::NoSuchDevice`] (naming how many exist) for an ordinal past the last device.
#[cfg(feature = "cuda")]
pub fn cuda_client_on(
    ordinal: usize,
) -> Result<cubecl::prelude::ComputeClient<cubecl::cuda::CudaRuntime>, BackendError> {
    use cubecl::cuda::{CudaDevice, CudaRuntime};
    use cubecl::prelude::Runtime;
    crate::probe::probe(BackendKind::Cuda)?;
    let count = cuda_devices().len();
    if ordinal >= count {
        return Err(no_such(BackendKind::Cuda, ordinal, count));
    }
    catch_unwind(AssertUnwindSafe(|| {
        CudaRuntime::client(&CudaDevice::new(ordinal))
    }))
    .map_err(|p| crate::probe::no_device(BackendKind::Cuda, crate::probe::panic_text(p.as_ref())))
}

/// What wgpu reports of one adapter.
#[cfg(feature = "wgpu")]
pub(crate) fn wgpu_adapters() -> Vec<::wgpu::AdapterInfo> {
    use ::wgpu;
    catch_unwind(|| {
        // cubecl-wgpu runs on the primary APIs (Vulkan, Metal, DX12), never on GL.
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
            .into_iter()
            .map(|a| a.get_info())
            .collect()
    })
    .unwrap_or_default()
}

/// The cubecl device of the `ordinal`-th adapter: cubecl numbers adapters within their type.
#[cfg(feature = "wgpu")]
fn wgpu_device_of(
    adapters: &[::wgpu::AdapterInfo],
    ordinal: usize,
) -> Option<cubecl::wgpu::WgpuDevice> {
    use ::wgpu::DeviceType;
    use cubecl::wgpu::WgpuDevice;
    let info = adapters.get(ordinal)?;
    let same = adapters[..ordinal]
        .iter()
        .filter(|a| a.device_type == info.device_type)
        .count();
    match info.device_type {
        DeviceType::DiscreteGpu => Some(WgpuDevice::DiscreteGpu(same)),
        DeviceType::IntegratedGpu => Some(WgpuDevice::IntegratedGpu(same)),
        DeviceType::VirtualGpu => Some(WgpuDevice::VirtualGpu(same)),
        // cubecl takes only the first CPU adapter (lavapipe).
        DeviceType::Cpu if same == 0 => Some(WgpuDevice::Cpu),
        _ => None,
    }
}

/// A wgpu client on the `ordinal`-th adapter of [`devices`]`(Wgpu)`. Never panics.
///
/// # Errors
/// [`BackendError::NoDevice`] when wgpu finds no adapter or cubecl cannot open this one;
/// [`BackendError::NoSuchDevice`] (naming how many exist) for an ordinal past the last adapter.
#[cfg(feature = "wgpu")]
pub fn wgpu_client_on(
    ordinal: usize,
) -> Result<cubecl::prelude::ComputeClient<cubecl::wgpu::WgpuRuntime>, BackendError> {
    use cubecl::prelude::Runtime;
    use cubecl::wgpu::WgpuRuntime;
    crate::probe::probe(BackendKind::Wgpu)?;
    let adapters = wgpu_adapters();
    if ordinal >= adapters.len() {
        return Err(no_such(BackendKind::Wgpu, ordinal, adapters.len()));
    }
    let device = wgpu_device_of(&adapters, ordinal).ok_or_else(|| {
        crate::probe::no_device(
            BackendKind::Wgpu,
            format!(
                "cubecl cannot select adapter {ordinal} ({})",
                adapters[ordinal].name
            ),
        )
    })?;
    catch_unwind(AssertUnwindSafe(|| WgpuRuntime::client(&device))).map_err(|p| {
        crate::probe::no_device(BackendKind::Wgpu, crate::probe::panic_text(p.as_ref()))
    })
}

/// Serializes [`with_kernel_cache`]: the setting it changes is process-wide.
static CACHE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `create` (a client's creation) with cubecl's persistent compilation cache in `dir`,
/// then puts cubecl's configuration back as it was — unless that configuration (a
/// `cubecl.toml` or a program's own `CubeClRuntimeConfig`) already sets a cache, which wins and
/// is left alone. cubecl reads the setting once, when a device's server is created, so the
/// client keeps the directory, while clients other code creates later (Burn's, say) do not
/// inherit a cache keyed by cubeport's kernel sources. Calls are serialized, so a CUDA and a
/// wgpu client created at once on two threads each get their own directory. Returns `create`'s
/// result and whether `dir` was in use. (A client the program created earlier on the same
/// device is reused by cubecl as it was created.)
///
/// ```
/// // Any creation works; cubeport passes `cuda_client_on(i)` or `wgpu_client_on(i)`.
/// let dir = std::env::temp_dir().join("my-kernels");
/// let (made, in_use) = cubeport_backends::with_kernel_cache(dir, || 42);
/// assert_eq!(made, 42);
/// assert!(in_use, "no cubecl.toml sets a cache here");
/// ```
pub fn with_kernel_cache<T>(dir: std::path::PathBuf, create: impl FnOnce() -> T) -> (T, bool) {
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig, cache::CacheConfig};
    use std::sync::Arc;
    /// Puts the configuration found back, also if `create` unwinds.
    struct Restore(Option<Arc<CubeClRuntimeConfig>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            *CubeClRuntimeConfig::storage().lock() = self.0.take();
        }
    }
    // The guarded value is `()`: a poisoned lock has nothing half-written.
    let _serial = CACHE_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Loads the user's configuration (file and environment) the way cubecl would.
    let current = CubeClRuntimeConfig::get();
    match &current.compilation.cache {
        Some(cache) => {
            let in_use = matches!(cache, CacheConfig::File(d) if *d == dir);
            (create(), in_use)
        }
        None => {
            let mut config = (*current).clone();
            config.compilation.cache = Some(CacheConfig::File(dir));
            let restore = Restore(Some(current));
            *CubeClRuntimeConfig::storage().lock() = Some(Arc::new(config));
            let made = create();
            drop(restore);
            (made, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig, cache::CacheConfig};
    use std::path::PathBuf;
    use std::sync::Arc;

    fn configured() -> Option<PathBuf> {
        match &CubeClRuntimeConfig::get().compilation.cache {
            Some(CacheConfig::File(d)) => Some(d.clone()),
            _ => None,
        }
    }

    // One test: cubecl's configuration is process-wide, and no other test here touches it.
    #[test]
    fn the_cache_directory_is_set_only_while_a_client_is_created_and_never_over_the_users() {
        let (a, b, user) = (
            PathBuf::from("/tmp/cubeport-a"),
            PathBuf::from("/tmp/cubeport-b"),
            PathBuf::from("/tmp/user-cache"),
        );
        assert_eq!(
            configured(),
            None,
            "no cubecl.toml with a cache where the tests run"
        );
        // The client's creation sees the directory; the configuration is put back after it.
        assert_eq!(
            with_kernel_cache(a.clone(), configured),
            (Some(a.clone()), true)
        );
        assert_eq!(configured(), None);
        assert_eq!(with_kernel_cache(b.clone(), configured), (Some(b), true));
        // Also when the creation unwinds.
        let unwound = std::panic::catch_unwind(|| with_kernel_cache(a.clone(), || panic!("x")));
        assert!(unwound.is_err());
        assert_eq!(configured(), None);
        // A directory from the user's own configuration wins and stays.
        let mut config = (*CubeClRuntimeConfig::get()).clone();
        config.compilation.cache = Some(CacheConfig::File(user.clone()));
        *CubeClRuntimeConfig::storage().lock() = Some(Arc::new(config.clone()));
        assert_eq!(
            with_kernel_cache(a.clone(), configured),
            (Some(user.clone()), false)
        );
        assert_eq!(configured(), Some(user.clone()));
        assert_eq!(
            with_kernel_cache(user.clone(), configured),
            (Some(user), true)
        );
        // So does any other cache location the user chose.
        config.compilation.cache = Some(CacheConfig::Target);
        *CubeClRuntimeConfig::storage().lock() = Some(Arc::new(config));
        assert_eq!(with_kernel_cache(a, configured), (None, false));
    }
}
