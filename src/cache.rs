//! The persistent kernel cache and the clients that use it.
//!
//! cubecl 0.10 can keep what NVRTC compiled (PTX) on disk, keyed by a kernel's name and
//! compile-time arguments, but not by its source or the GPU. cubeport switches that cache on for
//! the clients it creates, in a directory whose name carries everything else a compiled kernel
//! depends on: cubeport's version, a hash of the kernel sources taken at build time
//! ([`cubeport_kernels::SOURCE_HASH`]) and the device's compute capability. A build with
//! changed kernels, or another GPU, therefore never loads stale code; old directories are
//! simply unused.
//!
//! * Location: `$CUBEPORT_KERNEL_CACHE` if it is a path, else `$XDG_CACHE_HOME/cubeport`, else
//!   `$HOME/.cache/cubeport`; below it `kernels-<version>-<source hash>/sm_<major><minor>/`
//!   (cubecl adds `cuda/<cubecl version>/ptx/`). [`kernel_cache_dir`] tells.
//! * Clear it: delete that directory (`rm -rf ~/.cache/cubeport`).
//! * Disable it: `CUBEPORT_KERNEL_CACHE=off`. A cache set in cubecl's own configuration
//!   (`cubecl.toml`) wins over cubeport's.
//! * cubecl's setting is process-wide and read when a device's client is created, so cubeport
//!   sets its directory only around its own clients' creation
//!   ([`crate::backends::with_kernel_cache`]): clients that other code (Burn) creates keep their
//!   own configuration and never load kernels keyed by cubeport's sources.
//! * wgpu: cubecl 0.10 keeps the SPIR-V it compiles (the `wgpu-spirv` feature: its SPIR-V
//!   compiler and optimizer, which take most of a first launch's time on lavapipe) under
//!   `kernels-<version>-<source hash>/wgpu/` (cubecl adds `vulkan/<cubecl version>/spirv/`),
//!   keyed by the kernel and a hash of the device's features and limits; the Vulkan driver still
//!   compiles that SPIR-V (Mesa and NVIDIA keep their own caches). WGSL is not kept.

use crate::Error;
use std::path::{Path, PathBuf};

/// Environment variable: a directory for the kernel cache, or `off` to disable it.
pub const KERNEL_CACHE_ENV: &str = "CUBEPORT_KERNEL_CACHE";

/// The cache directory for a cubeport version, kernel-source hash and device tag under `base`
/// (pure: the naming rule, tested on its own).
pub fn kernel_cache_path(base: &Path, version: &str, source_hash: &str, device: &str) -> PathBuf {
    base.join(format!("kernels-{version}-{source_hash}"))
        .join(device)
}

/// The root the kernel cache lives under, or `None` when it is disabled or no home directory is
/// known.
pub fn kernel_cache_root() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match env(KERNEL_CACHE_ENV) {
        Some(v) if v.eq_ignore_ascii_case("off") || v == "0" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => env("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("cubeport")),
    }
}

/// The kernel cache directory of CUDA device `ordinal` (`None`: disabled, or no such device).
#[cfg(feature = "cuda")]
pub fn kernel_cache_dir(ordinal: usize) -> Option<PathBuf> {
    let (major, minor) = crate::backends::cuda_capability(ordinal).ok()?;
    cache_dir(&format!("sm_{major}{minor}"))
}

/// This build's cache directory for `device` (`None`: disabled).
#[cfg(any(feature = "cuda", feature = "wgpu"))]
fn cache_dir(device: &str) -> Option<PathBuf> {
    Some(kernel_cache_path(
        &kernel_cache_root()?,
        env!("CARGO_PKG_VERSION"),
        cubeport_kernels::SOURCE_HASH,
        device,
    ))
}

/// A CUDA client on device `CUBEPORT_DEVICE` (default 0) with the persistent kernel cache on.
/// Never panics.
///
/// ```no_run
/// let client = cubeport::cuda_client()?;
/// # Ok::<(), cubeport::Error>(())
/// ```
///
/// # Errors
/// [`Error::Backend`] when CUDA is unusable or the ordinal does not exist.
#[cfg(feature = "cuda")]
pub fn cuda_client() -> Result<cubecl::prelude::ComputeClient<cubecl::cuda::CudaRuntime>, Error> {
    cuda_client_on(crate::backends::device_from_env()?)
}

/// A CUDA client on device `ordinal` with the persistent kernel cache on. Never panics.
///
/// # Errors
/// [`Error::Backend`] with [`crate::BackendError::NoSuchDevice`] (naming how many devices exist)
/// for an ordinal past the last device, or why CUDA is unusable.
#[cfg(feature = "cuda")]
pub fn cuda_client_on(
    ordinal: usize,
) -> Result<cubecl::prelude::ComputeClient<cubecl::cuda::CudaRuntime>, Error> {
    Ok(with_cache(kernel_cache_dir(ordinal), || {
        crate::backends::cuda_client_on(ordinal)
    })?)
}

/// Creates a client with the kernel cache in `dir` (none: as cubecl is configured).
#[cfg(any(feature = "cuda", feature = "wgpu"))]
fn with_cache<T>(dir: Option<PathBuf>, create: impl FnOnce() -> T) -> T {
    match dir {
        Some(dir) => crate::backends::with_kernel_cache(dir, create).0,
        None => create(),
    }
}

/// The kernel cache directory of wgpu clients (`None`: disabled). Only builds with the
/// `wgpu-spirv` feature write to it; the SPIR-V is keyed by the device's properties, so every
/// adapter shares the directory.
///
/// ```
/// match cubeport::wgpu_kernel_cache_dir() {
///     Some(dir) => assert!(dir.ends_with("wgpu")),
///     None => println!("kernel cache disabled (CUBEPORT_KERNEL_CACHE=off)"),
/// }
/// ```
#[cfg(feature = "wgpu")]
pub fn wgpu_kernel_cache_dir() -> Option<PathBuf> {
    cache_dir("wgpu")
}

/// A wgpu client on adapter `CUBEPORT_DEVICE` if set, else on cubecl's default adapter, with the
/// persistent kernel cache on ([`wgpu_kernel_cache_dir`]).
///
/// # Errors
/// [`Error::Backend`] when wgpu is unusable or the ordinal does not exist.
#[cfg(feature = "wgpu")]
pub fn wgpu_client() -> Result<cubecl::prelude::ComputeClient<cubecl::wgpu::WgpuRuntime>, Error> {
    Ok(with_cache(
        wgpu_kernel_cache_dir(),
        crate::backends::wgpu_client,
    )?)
}

/// A wgpu client on the `ordinal`-th adapter that `cubeport devices` lists, with the persistent
/// kernel cache on.
///
/// # Errors
/// [`Error::Backend`] with [`crate::BackendError::NoSuchDevice`] for an ordinal past the last
/// adapter, or why wgpu is unusable.
#[cfg(feature = "wgpu")]
pub fn wgpu_client_on(
    ordinal: usize,
) -> Result<cubecl::prelude::ComputeClient<cubecl::wgpu::WgpuRuntime>, Error> {
    Ok(with_cache(wgpu_kernel_cache_dir(), || {
        crate::backends::wgpu_client_on(ordinal)
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_source_hash_gives_a_new_cache_directory() {
        let base = Path::new("/tmp/c");
        let a = kernel_cache_path(base, "0.1.0", "00aa", "sm_90");
        assert_ne!(a, kernel_cache_path(base, "0.1.0", "00ab", "sm_90"));
        assert_ne!(a, kernel_cache_path(base, "0.1.1", "00aa", "sm_90"));
        assert_ne!(a, kernel_cache_path(base, "0.1.0", "00aa", "sm_80"));
        assert_eq!(a, kernel_cache_path(base, "0.1.0", "00aa", "sm_90"));
        assert!(a.starts_with(base));
        // The build-time hash of this build's kernels is part of the name.
        assert_eq!(cubeport_kernels::SOURCE_HASH.len(), 16);
    }

    #[test]
    fn the_cache_can_be_disabled_or_moved() {
        // Environment is process-wide; this test alone touches KERNEL_CACHE_ENV.
        // SAFETY: no other test reads or writes this variable.
        unsafe { std::env::set_var(KERNEL_CACHE_ENV, "off") };
        assert_eq!(kernel_cache_root(), None);
        // SAFETY: as above.
        unsafe { std::env::set_var(KERNEL_CACHE_ENV, "/var/tmp/kc") };
        assert_eq!(kernel_cache_root(), Some(PathBuf::from("/var/tmp/kc")));
        // SAFETY: as above.
        unsafe { std::env::remove_var(KERNEL_CACHE_ENV) };
    }
}
