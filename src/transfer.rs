//! Host ↔ device copies that bypass cubecl 0.10's transfer path where it is slow.
//!
//! cubecl 0.10 copies an upload three times on the host before the driver sees it
//! (`create_from_slice`: `to_vec`, another `to_vec`, a realignment to 16 bytes) and then issues
//! one pageable `cuMemcpyHtoDAsync` from its single device thread, which the driver stages
//! synchronously there; a read lands in cubecl's pinned pool and is copied out twice more. On
//! CUDA, cubeport moves large pageable transfers itself, on the caller's thread: the data goes
//! through two page-locked chunks of cubeport's own, the host copying one chunk while the DMA
//! engine moves the other on a stream of cubeport's own (one host pass in all, overlapped with
//! the DMA), and cubecl's device thread stays free for other threads' launches. Transfers from
//! and into a [`PinnedBuffer`] are single direct DMAs, with no host copy. On other runtimes
//! (wgpu) large transfers go through cubecl in pieces that stay in the CPU's caches: an upload's
//! pieces are placed into the whole buffer by a copy kernel ([`upload_pieces`]), a read takes
//! slices of the buffer ([`read_pieces`]).
//!
//! Ordering: cubecl allocates from a per-stream pool, so a new buffer may reuse memory that an
//! earlier kernel of the calling thread's stream still reads; the upload therefore waits for
//! that stream (not for other threads' streams, so an upload can overlap their kernels). A read
//! waits for the whole device, since another thread's stream may have written the buffer.

use crate::{Error, Scalar};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::staging::copy_words_kernel;
use std::marker::PhantomData;

/// Pageable transfers at least this large take cubeport's staged path on CUDA (below it the
/// fixed cost of a stream sync outweighs the host copies cubecl makes).
#[cfg(feature = "cuda")]
const STAGED_MIN_BYTES: usize = 1 << 20;

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
    ) -> Result<(sys::CUdeviceptr, i32), Error> {
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
        Ok((ptr, ordinal))
    }

    /// `handle`'s address and device (see [`address`]), once the calling thread's stream no
    /// longer uses the memory: cubecl's pool may hand out memory an earlier kernel of this
    /// stream still reads.
    fn writable(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
    ) -> Result<(sys::CUdeviceptr, i32), Error> {
        let target = address(client, handle)?;
        crate::sync(client)?;
        Ok(target)
    }

    /// `handle`'s address and device (see [`address`]), once every launch queued so far on the
    /// device has finished (another thread's stream may have written the buffer).
    fn readable(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
    ) -> Result<(sys::CUdeviceptr, i32), Error> {
        crate::flush(client)?;
        let source = address(client, handle)?;
        result::ctx::synchronize().map_err(driver("cuCtxSynchronize"))?;
        Ok(source)
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
        let (ptr, _) = writable(client, handle)?;
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
        let (ptr, _) = readable(client, handle)?;
        // SAFETY: `handle` holds at least `dst.len()` bytes (checked by the caller), all work
        // that writes them has finished, and the copy is synchronous.
        unsafe { result::memcpy_dtoh_sync(dst, ptr) }.map_err(driver("cuMemcpyDtoH"))?;
        crate::guard::after_read("read")
    }

    /// Two page-locked chunks and a stream of cubeport's own per device, through which pageable
    /// transfers are pipelined: the host copies one chunk while the DMA engine moves the other.
    /// The driver's own pageable path stages through a small pinned buffer synchronously, and
    /// cubecl's read path copies the data twice more on the host; this keeps one host pass.
    struct Staging {
        stream: sys::CUstream,
        bufs: [*mut u8; 2],
        events: [sys::CUevent; 2],
    }

    // SAFETY: the stream, events and pinned chunks are driver objects usable from any thread;
    // the `Mutex` around each `Staging` makes their use exclusive.
    unsafe impl Send for Staging {}

    /// Bytes per staging chunk: large enough that a chunk's DMA (~0.2 ms at 50 GB/s) amortises
    /// its launch, small enough to keep 16 MiB pinned per device.
    const CHUNK: usize = 8 << 20;

    type Shared = std::sync::Arc<std::sync::Mutex<Staging>>;

    fn poisoned<T>(_: T) -> Error {
        Error::Transfer {
            message: "a thread panicked during a staged transfer".into(),
        }
    }

    /// The staging chunks of device `ordinal` (its context current), made on first use and kept
    /// for the process, like cubecl's own pools.
    fn staging(ordinal: i32) -> Result<Shared, Error> {
        use std::sync::{Arc, Mutex};
        static ALL: Mutex<Vec<(i32, Shared)>> = Mutex::new(Vec::new());
        let mut all = ALL.lock().map_err(poisoned)?;
        if let Some((_, s)) = all.iter().find(|(o, _)| *o == ordinal) {
            return Ok(s.clone());
        }
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(driver("cuStreamCreate"))?;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let events = [
            result::event::create(flags).map_err(driver("cuEventCreate"))?,
            result::event::create(flags).map_err(driver("cuEventCreate"))?,
        ];
        let mut bufs = [std::ptr::null_mut(); 2];
        for b in &mut bufs {
            // SAFETY: the device's context is current (the caller went through `address`).
            *b = unsafe { result::malloc_host(CHUNK, sys::CU_MEMHOSTALLOC_PORTABLE) }
                .map_err(driver("cuMemHostAlloc"))?
                .cast();
        }
        let s = Arc::new(Mutex::new(Staging {
            stream,
            bufs,
            events,
        }));
        all.push((ordinal, s.clone()));
        Ok(s)
    }

    /// Runs `body` with device `ordinal`'s staging chunks to itself, its stream idle on entry
    /// (should an earlier transfer have failed half way) and again on return, also when `body`
    /// fails half way: the caller may then free the device buffer, which cubecl's pool may hand
    /// out again, so no copy queued into or out of it may still be running.
    fn with_staging(
        ordinal: i32,
        body: impl FnOnce(&Staging) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let shared = staging(ordinal)?;
        let st = shared.lock().map_err(poisoned)?;
        let sync = || {
            // SAFETY: the stream is a live stream of cubeport's, used only under this lock.
            unsafe { result::stream::synchronize(st.stream) }.map_err(driver("cuStreamSynchronize"))
        };
        sync()?;
        let done = body(&st);
        done.and(sync())
    }

    /// Copies pageable `src` into the start of `handle`'s buffer through the staging chunks;
    /// returns once the data is on the device.
    pub(super) fn write_staged(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
        src: &[u8],
    ) -> Result<(), Error> {
        let (ptr, ordinal) = writable(client, handle)?;
        with_staging(ordinal, |st| {
            for (i, chunk) in src.chunks(CHUNK).enumerate() {
                let b = i % 2;
                // SAFETY: the chunks hold CHUNK bytes each and are ours under the staging lock;
                // chunk `b` is refilled only after the event behind its last DMA has completed;
                // `handle` holds at least `src.len()` bytes at `ptr`.
                unsafe {
                    result::event::synchronize(st.events[b])
                        .map_err(driver("cuEventSynchronize"))?;
                    par_copy(chunk.as_ptr(), st.bufs[b], chunk.len(), false);
                    let staged = std::slice::from_raw_parts(st.bufs[b], chunk.len());
                    let dst = ptr + (i * CHUNK) as sys::CUdeviceptr;
                    result::memcpy_htod_async(dst, staged, st.stream)
                        .map_err(driver("cuMemcpyHtoDAsync"))?;
                    result::event::record(st.events[b], st.stream)
                        .map_err(driver("cuEventRecord"))?;
                }
            }
            Ok(())
        })
    }

    /// Copies the first `len` bytes of `handle`'s buffer to `dst` through the staging chunks,
    /// after every launch queued so far on the device has finished.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `len` bytes (it may be uninitialised).
    pub(super) unsafe fn read_staged(
        client: &ComputeClient<CudaRuntime>,
        handle: &Handle,
        dst: *mut u8,
        len: usize,
    ) -> Result<(), Error> {
        let (ptr, ordinal) = readable(client, handle)?;
        let chunks = len.div_ceil(CHUNK);
        let size = |i: usize| CHUNK.min(len - i * CHUNK);
        with_staging(ordinal, |st| {
            // SAFETY: as in `write_staged`; chunk `i` is copied out only after the event
            // recorded behind its DMA has completed, and refilled (chunk `i + 2`) only after
            // that copy.
            let issue = |i: usize| unsafe {
                let b = i % 2;
                let staged = std::slice::from_raw_parts_mut(st.bufs[b], size(i));
                let src = ptr + (i * CHUNK) as sys::CUdeviceptr;
                result::memcpy_dtoh_async(staged, src, st.stream)
                    .map_err(driver("cuMemcpyDtoHAsync"))?;
                result::event::record(st.events[b], st.stream).map_err(driver("cuEventRecord"))
            };
            for i in 0..chunks.min(2) {
                issue(i)?;
            }
            for i in 0..chunks {
                let b = i % 2;
                // SAFETY: see above; `dst` holds `len` writable bytes (the caller's contract).
                unsafe {
                    result::event::synchronize(st.events[b])
                        .map_err(driver("cuEventSynchronize"))?;
                    par_copy(st.bufs[b], dst.add(i * CHUNK), size(i), true);
                }
                if i + 2 < chunks {
                    issue(i + 2)?;
                }
            }
            Ok(())
        })?;
        crate::guard::after_read("read")
    }

    /// Maps the pages of `len` bytes at `dst` in one system call (Linux 5.14+): a fresh `Vec`
    /// otherwise takes one page fault per page on the copy, which in virtual machines costs
    /// more than the copy itself. Best effort: where the kernel refuses, the copy faults the
    /// pages in as usual.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `len` bytes.
    unsafe fn prefault(dst: *mut u8, len: usize) {
        #[cfg(target_os = "linux")]
        {
            static PAGE_SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
            // SAFETY: sysconf reads a constant of the system.
            let page =
                *PAGE_SIZE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
                    p if p > 0 => p as usize,
                    _ => 4096,
                });
            let start = (dst as usize).next_multiple_of(page);
            let end = (dst as usize + len) / page * page;
            if end > start {
                // SAFETY: the range lies inside the caller's writable allocation; populating
                // pages changes no contents.
                let _ = unsafe {
                    libc::madvise(
                        start as *mut libc::c_void,
                        end - start,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (dst, len);
    }

    /// Copies `len` bytes from `src` to `dst` in 1 MiB pieces on cubeport's copy threads (one
    /// core's `memcpy` runs at a fraction of the DMA engine's rate), first populating each
    /// piece of `dst` when `fresh`.
    ///
    /// The threads are a private rayon pool that runs nothing but these pieces: the caller
    /// holds the staging lock, so pieces on a shared pool could wait behind workers that are
    /// themselves waiting for that lock, or the caller could steal a job that takes it again.
    /// A caller that is itself a rayon worker copies on its own thread for the same reason.
    ///
    /// # Safety
    /// `src` must be valid for reads and `dst` for writes of `len` bytes, not overlapping.
    unsafe fn par_copy(src: *const u8, dst: *mut u8, len: usize, fresh: bool) {
        use rayon::prelude::*;
        use std::sync::OnceLock;
        const PIECE: usize = 1 << 20;
        static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
        let (src, dst) = (src as usize, dst as usize);
        let piece = |p: usize| {
            let (off, n) = (p * PIECE, PIECE.min(len - p * PIECE));
            let (s, d) = ((src + off) as *const u8, (dst + off) as *mut u8);
            // SAFETY: each piece lies inside the caller's ranges and the pieces are disjoint.
            unsafe {
                if fresh {
                    prefault(d, n);
                }
                std::ptr::copy_nonoverlapping(s, d, n);
            }
        };
        let pieces = len.div_ceil(PIECE);
        let pool = POOL.get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("cubeport-copy-{i}"))
                .build()
                .ok()
        });
        match pool {
            Some(pool) if pieces > 1 && rayon::current_thread_index().is_none() => {
                pool.install(|| (0..pieces).into_par_iter().for_each(piece));
            }
            _ => (0..pieces).for_each(piece),
        }
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

    #[cfg(test)]
    mod tests {
        /// Every byte arrives, for lengths of one piece, several, and a ragged last piece,
        /// into fresh and reused memory, from a plain thread and from inside a rayon worker.
        #[test]
        fn par_copy_copies_every_byte() {
            let check = |len: usize, fresh: bool| {
                let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4099) as u8).collect();
                let mut dst: Vec<u8> = Vec::with_capacity(len);
                // SAFETY: `dst` has room for `len` bytes; all of them are written before
                // `set_len`, and u8 has no invalid values.
                unsafe {
                    super::par_copy(src.as_ptr(), dst.as_mut_ptr(), len, fresh);
                    dst.set_len(len);
                }
                assert!(dst == src, "len {len} fresh {fresh}");
            };
            for len in [1usize, 4096, (1 << 20) + 3, (5 << 20) - 1] {
                check(len, true);
                check(len, false);
            }
            rayon::scope(|_| check((3 << 20) + 5, true));
        }
    }
}

/// The CUDA client behind a generic one, when `R` is CUDA.
#[cfg(feature = "cuda")]
fn as_cuda<R: Runtime>(
    client: &ComputeClient<R>,
) -> Option<&ComputeClient<cubecl::cuda::CudaRuntime>> {
    (client as &dyn std::any::Any).downcast_ref()
}

/// Uploads pageable `data` into a new buffer: pipelined through pinned staging chunks on CUDA
/// for large uploads, in cache-sized pieces elsewhere ([`upload_pieces`]), else through cubecl.
pub(crate) fn upload<R: Runtime>(client: &ComputeClient<R>, data: &[u8]) -> Result<Handle, Error> {
    #[cfg(feature = "cuda")]
    if data.len() >= STAGED_MIN_BYTES
        && let Some(cuda_client) = as_cuda(client)
    {
        let handle = client.empty(data.len());
        cuda::write_staged(cuda_client, &handle, data)?;
        return Ok(handle);
    }
    if data.len() >= PIECES_MIN_BYTES {
        return upload_pieces(client, data);
    }
    Ok(client.create_from_slice(data))
}

/// Transfers at least this large go in pieces where cubecl moves them (every runtime but CUDA).
/// Below it the allocator already reuses its memory for cubecl's copies (on lavapipe, 4 MiB
/// whole ran faster than in pieces, 16 MiB slower).
const PIECES_MIN_BYTES: usize = 8 << 20;
/// The size of one piece: small enough that cubecl's three host copies of it stay in the CPU's
/// caches and reuse the allocator's memory.
const PIECE_BYTES: usize = 1 << 20;

/// Uploads `data` in [`PIECE_BYTES`] pieces, each placed into the new buffer by a copy kernel.
///
/// cubecl 0.10 copies an upload three times on the host into fresh allocations
/// (`create_from_slice`), and then the runtime copies it once more into its staging memory.
/// For a large tensor each of those allocations is new memory from the OS that page-faults on
/// first touch, which made a 256 MiB upload through wgpu run under 1 GB/s. Piece by piece, the
/// allocations are small enough for the allocator to hand the same memory back each time, and
/// the copies stay in cache. The buffer is rounded up to 16 bytes (the copy kernel's vector;
/// the last piece is zero-padded), which readers of the tensor never see.
///
/// Ordering: cubecl's write of each piece flushes the stream first and is queued before the
/// stream's later launches, so each copy kernel reads its piece, and a piece's memory returns
/// to the stream's pool only behind the kernel that reads it.
fn upload_pieces<R: Runtime>(client: &ComputeClient<R>, data: &[u8]) -> Result<Handle, Error> {
    const VEC: usize = 16;
    let out = client.empty(data.len().next_multiple_of(VEC));
    let mut last = Vec::new();
    for (i, piece) in data.chunks(PIECE_BYTES).enumerate() {
        let piece = if piece.len() % VEC == 0 {
            piece
        } else {
            last.extend_from_slice(piece);
            last.resize(piece.len().next_multiple_of(VEC), 0);
            &last[..]
        };
        let src = client.create_from_slice(piece);
        let count = piece.len() / VEC;
        let key = crate::guard::LaunchKey::new("upload");
        crate::guard::launch_op(client, "DeviceTensor::from_slice", key, || {
            // SAFETY: `src` holds `count` vectors of four words; `out` holds the whole upload
            // rounded up to vectors, and this piece's vectors start at `i · PIECE_BYTES / VEC`
            // (`PIECE_BYTES` is a multiple of `VEC`), ending at or before its end.
            unsafe {
                copy_words_kernel::launch_unchecked::<R>(
                    client,
                    CubeCount::new_1d(count.div_ceil(256).min(65_535) as u32),
                    CubeDim::new_1d(256),
                    VEC / 4,
                    ArrayArg::from_raw_parts(src, count * VEC / 4),
                    ArrayArg::from_raw_parts(out.clone(), out.size_in_used() as usize / 4),
                    i * PIECE_BYTES / VEC,
                    count,
                );
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// Uploads `data`, which lies in page-locked memory on CUDA, into a new buffer: one direct DMA
/// on CUDA, as [`upload`] elsewhere.
pub(crate) fn upload_pinned<R: Runtime>(
    client: &ComputeClient<R>,
    data: &[u8],
) -> Result<Handle, Error> {
    #[cfg(feature = "cuda")]
    if let Some(cuda_client) = as_cuda(client) {
        let handle = client.empty(data.len());
        cuda::write(cuda_client, &handle, data)?;
        return Ok(handle);
    }
    upload(client, data)
}

/// The first `len` elements of `handle` as a new `Vec`: pipelined through pinned staging chunks
/// on CUDA for large reads (one host pass into the `Vec`), in pieces elsewhere
/// ([`read_pieces`]), else through cubecl's read.
pub(crate) fn download_vec<R: Runtime, E: Scalar>(
    client: &ComputeClient<R>,
    handle: &Handle,
    len: usize,
) -> Result<Vec<E>, Error> {
    // `E::DTYPE.size()` is `size_of::<E>()` for every `Scalar`; the raw write below relies on it.
    let bytes = len
        .checked_mul(std::mem::size_of::<E>())
        .ok_or_else(|| Error::Read {
            message: format!("{len} elements overflow the address space"),
        })?;
    debug_assert_eq!(E::DTYPE.size(), std::mem::size_of::<E>());
    #[cfg(feature = "cuda")]
    if bytes >= STAGED_MIN_BYTES
        && let Some(cuda_client) = as_cuda(client)
    {
        let mut out: Vec<E> = Vec::with_capacity(len);
        // SAFETY: `out` has room for `len` elements (`bytes` bytes); `read_staged` writes all of
        // them before returning Ok, and any bit pattern is a valid `E` (`Scalar: Pod`).
        unsafe {
            cuda::read_staged(cuda_client, handle, out.as_mut_ptr().cast(), bytes)?;
            out.set_len(len);
        }
        return Ok(out);
    }
    if bytes >= PIECES_MIN_BYTES {
        let mut out: Vec<E> = Vec::with_capacity(len);
        // SAFETY: `out` has room for `len` elements (`bytes` bytes); `read_pieces` writes all of
        // them before returning Ok, and any bit pattern is a valid `E` (`Scalar: Pod`).
        unsafe {
            read_pieces(client, handle, out.as_mut_ptr().cast(), bytes)?;
            out.set_len(len);
        }
        crate::guard::after_read("DeviceTensor::to_vec")?;
        return Ok(out);
    }
    let read = client.read_one(handle.clone()).map_err(read_error)?;
    // A swallowed compile panic of an earlier queued op leaves stale data behind.
    crate::guard::after_read("DeviceTensor::to_vec")?;
    // Take cubecl's buffer as it is where its allocation allows, else copy once.
    match read.try_into_vec::<E>() {
        Ok(mut v) if v.len() >= len => {
            v.truncate(len);
            Ok(v)
        }
        Ok(v) => Err(short_read(v.len(), len, "elements")),
        Err(read) => {
            let all: &[E] = bytemuck::try_cast_slice(&read[..]).map_err(|e| Error::Read {
                message: e.to_string(),
            })?;
            all.get(..len)
                .map(<[E]>::to_vec)
                .ok_or_else(|| short_read(all.len(), len, "elements"))
        }
    }
}

fn read_error(e: impl std::fmt::Debug) -> Error {
    Error::Read {
        message: format!("{e:?}").lines().next().unwrap_or("").to_string(),
    }
}

/// Pieces a piecewise read requests at once (one round trip to the runner thread each).
const PIECES_PER_READ: usize = 8;

/// Reads the first `bytes` bytes of `handle` into `dst` in [`PIECE_BYTES`] pieces, the next
/// batch of pieces in flight while this one is copied out.
///
/// cubecl 0.10 reads a buffer through one staging buffer of its whole size, which the runtime
/// allocates (and the driver maps) anew for a large tensor; pieces reuse the staging pool's
/// memory, and each one's copy into `dst` stays in cache.
///
/// # Safety
/// `dst` must be valid for writes of `bytes` bytes.
unsafe fn read_pieces<R: Runtime>(
    client: &ComputeClient<R>,
    handle: &Handle,
    dst: *mut u8,
    bytes: usize,
) -> Result<(), Error> {
    let short = |got: usize| short_read(got, bytes, "bytes");
    let used = handle.size_in_used() as usize;
    if used < bytes {
        return Err(short(used));
    }
    let batch = PIECE_BYTES * PIECES_PER_READ;
    let request = |at: usize| {
        let pieces = (at..(at + batch).min(bytes))
            .step_by(PIECE_BYTES)
            .map(|off| {
                let end = (off + PIECE_BYTES).min(bytes);
                handle
                    .clone()
                    .offset_start(off as u64)
                    .offset_end((used - end) as u64)
            })
            .collect();
        client.read_async(pieces)
    };
    let mut next = Some(request(0));
    let mut at = 0;
    while let Some(pending) = next.take() {
        if at + batch < bytes {
            next = Some(request(at + batch));
        }
        let pieces = cubecl::future::block_on(pending).map_err(read_error)?;
        for piece in pieces {
            let n = piece.len().min(bytes - at);
            // SAFETY: `at + n <= bytes`, inside `dst` by the caller's promise; `piece` holds at
            // least `n` bytes and does not overlap `dst` (it is the runtime's staging memory).
            unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), dst.add(at), n) };
            at += n;
        }
    }
    if at == bytes { Ok(()) } else { Err(short(at)) }
}

/// The error of a read that returned fewer `unit`s (elements or bytes) than the tensor holds.
fn short_read(got: usize, want: usize, unit: &str) -> Error {
    Error::Read {
        message: format!("the runtime returned {got} {unit}, {want} expected"),
    }
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
    if dst.len() >= PIECES_MIN_BYTES {
        // SAFETY: `dst` is valid for writes of its whole length.
        unsafe { read_pieces(client, handle, dst.as_mut_ptr(), dst.len())? };
        return crate::guard::after_read("read");
    }
    let bytes = client.read_one(handle.clone()).map_err(read_error)?;
    crate::guard::after_read("read")?;
    let n = dst.len().min(bytes.len());
    dst[..n].copy_from_slice(&bytes[..n]);
    Ok(())
}
