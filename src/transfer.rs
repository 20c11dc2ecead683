//! Host ↔ device copies that bypass cubecl 0.10's upload path where it is slow.
//!
//! cubecl 0.10 copies an upload three times on the host before the driver sees it
//! (`create_from_slice`: `to_vec`, another `to_vec`, a realignment to 16 bytes) and then issues
//! one pageable `cuMemcpyHtoDAsync` from its single device thread, which the driver stages
//! synchronously there. On CUDA, cubeport instead copies large uploads straight from the
//! caller's slice with `cuMemcpyHtoD` on the caller's thread, into a buffer cubecl allocated:
//! one pass, no host copy, and the device thread stays free for other threads' launches. Reads
//! into a [`PinnedBuffer`] go the same way the other direction.
//!
//! Ordering: cubecl allocates from a per-stream pool, so a new buffer may reuse memory that an
//! earlier kernel of the calling thread's stream still reads; the upload therefore waits for
//! that stream (not for other threads' streams, so an upload can overlap their kernels). A read
//! waits for the whole device, since another thread's stream may have written the buffer.

use crate::{Error, Scalar};
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::marker::PhantomData;

/// Uploads at least this large take the direct path on CUDA (below it the fixed cost of a
/// stream sync outweighs the host copies cubecl makes).
#[cfg(feature = "cuda")]
const DIRECT_MIN_BYTES: usize = 1 << 20;

#[cfg(feature = "cuda")]
mod cuda {
    use crate::Error;
    use cubecl::cuda::CudaRuntime;
    use cubecl::prelude::*;
    use cubecl::server::Handle;
    use cudarc::driver::{result, sys};

    fn driver(what: &'static str) -> impl Fn(result::DriverError) -> Error {
        move |e| Error::Transfer {
            message: format!("{what}: {e:?}"),
        }
    }

    /// The device address of `handle` (with its offset) and the CUDA context that owns it (the
    /// device's primary context, which cubecl uses), made current on this thread.
    pub(super) fn address(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
    ) -> Result<sys::CUdeviceptr, Error> {
        let managed = client
            .get_resource(handle.clone())
            .map_err(|e| Error::launch("transfer", e))?;
        let ptr = managed.resource().ptr;
        // Stream-ordered (pool) allocations report no owning context, but every pointer knows
        // its device; cubecl runs on that device's primary context.
        let mut ordinal: i32 = -1;
        // SAFETY: `ptr` is a live device allocation of cubecl's (kept alive by `handle`); the
        // attribute writes one int into `ordinal`.
        unsafe {
            sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
            .result()
            .map_err(driver("cuPointerGetAttribute"))?;
        }
        let ctx = primary_context(ordinal)?;
        // SAFETY: `ctx` is the retained primary context of a live device.
        unsafe { result::ctx::set_current(ctx) }.map_err(driver("cuCtxSetCurrent"))?;
        Ok(ptr)
    }

    /// The primary context of device `ordinal`, retained once per process (as cubecl retains it:
    /// it lives as long as the process).
    fn primary_context(ordinal: i32) -> Result<sys::CUcontext, Error> {
        use std::sync::Mutex;
        static RETAINED: Mutex<Vec<(i32, usize)>> = Mutex::new(Vec::new());
        let mut retained = RETAINED.lock().map_err(|_| Error::Transfer {
            message: "a thread panicked while retaining a CUDA context".into(),
        })?;
        if let Some(&(_, ctx)) = retained.iter().find(|(o, _)| *o == ordinal) {
            return Ok(ctx as sys::CUcontext);
        }
        let dev = result::device::get(ordinal).map_err(driver("cuDeviceGet"))?;
        // SAFETY: `dev` is a valid device; the retained context is never released.
        let ctx = unsafe { result::primary_ctx::retain(dev) }
            .map_err(driver("cuDevicePrimaryCtxRetain"))?;
        retained.push((ordinal, ctx as usize));
        Ok(ctx)
    }

    /// Copies `src` into the start of `handle`'s buffer, synchronously.
    pub(super) fn write(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
        src: &[u8],
    ) -> Result<(), Error> {
        let ptr = address(client, handle)?;
        // The pool may hand out memory an earlier kernel of this stream still reads.
        crate::sync(client)?;
        // SAFETY: `handle` holds at least `src.len()` bytes at `ptr` (the caller allocated it
        // for `src`), nothing on this stream uses them any more, and the copy is synchronous.
        unsafe { result::memcpy_htod_sync(ptr, src) }.map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies the start of `handle`'s buffer into `dst`, synchronously, after every launch
    /// queued so far on the device has finished.
    pub(super) fn read(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
        dst: &mut [u8],
    ) -> Result<(), Error> {
        crate::flush(client)?;
        let ptr = address(client, handle)?;
        result::ctx::synchronize().map_err(driver("cuCtxSynchronize"))?;
        // SAFETY: `handle` holds at least `dst.len()` bytes (checked by the caller), all work
        // that writes them has finished, and the copy is synchronous.
        unsafe { result::memcpy_dtoh_sync(dst, ptr) }.map_err(driver("cuMemcpyDtoH"))?;
        crate::guard::after_read("read")
    }

    /// Page-locked host memory, portable across contexts.
    pub(super) fn alloc_pinned(
        client: &ComputeClient<CudaRuntime>,
        bytes: usize,
    ) -> Result<*mut u8, Error> {
        // Any allocation of the client tells which context to make current.
        let probe = client.empty(4);
        address(client, &probe)?;
        // SAFETY: a context is current; the memory is zeroed before anyone reads it.
        let ptr = unsafe { result::malloc_host(bytes.max(1), sys::CU_MEMHOSTALLOC_PORTABLE) }
            .map_err(driver("cuMemHostAlloc"))?;
        // SAFETY: `ptr` points to at least `bytes` writable bytes.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(ptr.cast())
    }

    pub(super) fn free_pinned(ptr: *mut u8) {
        // SAFETY: `ptr` came from `alloc_pinned` and is freed once (by `PinnedBuffer::drop`).
        let _ = unsafe { result::free_host(ptr.cast()) };
    }
}

/// The CUDA client behind a generic one, when `R` is CUDA.
#[cfg(feature = "cuda")]
fn as_cuda<R: Runtime>(
    client: &ComputeClient<R>,
) -> Option<&ComputeClient<cubecl::cuda::CudaRuntime>> {
    (client as &dyn std::any::Any).downcast_ref()
}

/// Uploads `data` into a new buffer: directly on CUDA for large uploads, else through cubecl.
pub(crate) fn upload<R: Runtime>(client: &ComputeClient<R>, data: &[u8]) -> Result<Handle, Error> {
    #[cfg(feature = "cuda")]
    if data.len() >= DIRECT_MIN_BYTES
        && let Some(cuda_client) = as_cuda(client)
    {
        let handle = client.empty(data.len());
        cuda::write(cuda_client, &handle, data)?;
        return Ok(handle);
    }
    Ok(client.create_from_slice(data))
}

/// Host memory the device can copy from and to directly (page-locked, "pinned", on CUDA; plain
/// memory on backends without pinned allocations, where it behaves like a `Vec`). Uploads from
/// it ([`crate::DeviceTensor::from_pinned`]) and reads into it
/// ([`crate::DeviceTensor::read_into`]) run at the interconnect's rate on CUDA, with no host
/// copy. Allocating it is slow (the OS locks the pages): allocate once and reuse.
///
/// ```no_run
/// use cubeport::{DeviceTensor, PinnedBuffer, backends};
/// let client = backends::cuda_client()?;
/// let mut staging = PinnedBuffer::<f32>::new(&client, 1 << 20)?;
/// staging.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
/// let x = DeviceTensor::from_pinned(&client, &staging, &[1024, 1024])?;
/// x.read_into(&client, &mut staging)?;
/// # Ok::<(), cubeport::Error>(())
/// ```
pub struct PinnedBuffer<E: Scalar> {
    ptr: *mut u8,
    len: usize,
    /// `Some` when the memory is a plain allocation (no pinned memory on this backend).
    plain: Option<Vec<E>>,
    _elem: PhantomData<E>,
}

// SAFETY: the buffer owns its memory exclusively (like a `Vec<E>`), and `E: Scalar` is `Send +
// Sync` plain data.
unsafe impl<E: Scalar> Send for PinnedBuffer<E> {}
// SAFETY: as above; shared access is read-only through `Deref`.
unsafe impl<E: Scalar> Sync for PinnedBuffer<E> {}

impl<E: Scalar> PinnedBuffer<E> {
    /// `len` zeroed elements of page-locked memory for `client`'s device (plain memory where the
    /// backend has no pinned allocations; [`PinnedBuffer::is_pinned`] tells which).
    ///
    /// # Errors
    /// [`Error::Transfer`] when the driver refuses the allocation.
    pub fn new<R: Runtime>(client: &ComputeClient<R>, len: usize) -> Result<Self, Error> {
        let bytes = len
            .checked_mul(E::DTYPE.size())
            .ok_or_else(|| Error::Transfer {
                message: format!("{len} elements overflow the address space"),
            })?;
        #[cfg(feature = "cuda")]
        if let Some(cuda_client) = as_cuda(client) {
            let ptr = cuda::alloc_pinned(cuda_client, bytes)?;
            return Ok(Self {
                ptr,
                len,
                plain: None,
                _elem: PhantomData,
            });
        }
        let _ = (client, bytes);
        Ok(Self {
            ptr: std::ptr::null_mut(),
            len,
            plain: Some(vec![<E as bytemuck::Zeroable>::zeroed(); len]),
            _elem: PhantomData,
        })
    }

    /// Whether the memory is page-locked (CUDA) rather than a plain allocation.
    pub fn is_pinned(&self) -> bool {
        self.plain.is_none()
    }
}

impl<E: Scalar> std::ops::Deref for PinnedBuffer<E> {
    type Target = [E];
    fn deref(&self) -> &[E] {
        match &self.plain {
            Some(v) => v,
            // SAFETY: `ptr` holds `len` initialised (zeroed, then written) elements of `E`,
            // aligned to a page, owned by `self`.
            None => unsafe { std::slice::from_raw_parts(self.ptr.cast::<E>(), self.len) },
        }
    }
}

impl<E: Scalar> std::ops::DerefMut for PinnedBuffer<E> {
    fn deref_mut(&mut self) -> &mut [E] {
        match &mut self.plain {
            Some(v) => v,
            // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
            None => unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<E>(), self.len) },
        }
    }
}

impl<E: Scalar> Drop for PinnedBuffer<E> {
    fn drop(&mut self) {
        #[cfg(feature = "cuda")]
        if self.plain.is_none() && !self.ptr.is_null() {
            cuda::free_pinned(self.ptr);
        }
    }
}

impl<E: Scalar> std::fmt::Debug for PinnedBuffer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("pinned", &self.is_pinned())
            .finish()
    }
}

/// Reads the first `dst.len()` bytes of `handle` into `dst` (direct on CUDA, through cubecl's
/// read elsewhere).
pub(crate) fn download<R: Runtime>(
    client: &ComputeClient<R>,
    handle: &Handle,
    dst: &mut [u8],
) -> Result<(), Error> {
    #[cfg(feature = "cuda")]
    if let Some(cuda_client) = as_cuda(client) {
        return cuda::read(cuda_client, handle, dst);
    }
    let bytes = client.read_one(handle.clone()).map_err(|e| Error::Read {
        message: format!("{e:?}").lines().next().unwrap_or("").to_string(),
    })?;
    crate::guard::after_read("read")?;
    let n = dst.len().min(bytes.len());
    dst[..n].copy_from_slice(&bytes[..n]);
    Ok(())
}
