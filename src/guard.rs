//! How cubeport makes sure that a launch it handed to cubecl ran.
//!
//! cubecl 0.10 queues a launch and runs it later on the device's runner thread. Two kinds of
//! failure come back late or not at all:
//! * errors the runtime queues per stream (a compilation error, a launch the driver refused),
//!   returned by the next `flush`, `sync` or read on that stream;
//! * panics while expanding or compiling a kernel (WGSL has no `sync_plane`, no bf16, …): the
//!   runner thread catches and drops them, `flush()` returns `Ok`, and the kernel silently never
//!   runs.
//!
//! Both happen when a kernel is compiled, and cubecl compiles a kernel the first time it is
//! launched on a device. So in the default [`Checking::FirstLaunch`] mode an op flushes only the
//! first time it launches a given kernel configuration on a device (its key: the op, the
//! operands' shapes, strides and dtype, and any forced variant); later launches of a
//! configuration that already ran are queued without a round trip to the runner thread, which
//! is most of a small op's cost. A failure of such a later launch (a lost device, say) is
//! returned at the latest by the next [`sync`], [`flush`], [`DeviceTensor::to_vec`] or
//! first-launch op on the same thread, never as silent stale data through cubeport.
//! [`Checking::EveryOp`] (or `CUBEPORT_CHECKED=1`) flushes after every op, as a debugging aid
//! that ties every failure to the op that caused it.
//!
//! Panics are charged to the thread whose launch caused them: the runner thread executes each
//! task under the submitting thread's cubecl `StreamId`, and cubeport's panic hook (installed
//! once; the previous hook still runs) files the panic under that stream. A panic provoked by
//! one thread's launch is therefore never reported by another thread's op. A hook installed
//! after cubeport's replaces it; cubeport then sees only the runtime's queued errors.
//!
//! [`DeviceTensor::to_vec`]: crate::DeviceTensor::to_vec

use crate::Error;
use cubecl::prelude::*;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, Once, RwLock};

/// When cubeport's ops wait for the runtime to confirm a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Checking {
    /// Flush (and check) the first launch of each kernel configuration on a device; queue the
    /// rest. Failures of queued launches surface at the next [`sync`], [`flush`], read or
    /// first-launch op on the same thread. The default.
    FirstLaunch,
    /// Flush and check after every op: each failure is returned by the op that caused it, at
    /// the cost of one round trip to the runner thread per op. `CUBEPORT_CHECKED=1` selects it.
    EveryOp,
}

/// Environment variable that selects [`Checking::EveryOp`] when set to `1`.
pub const CHECKED_ENV: &str = "CUBEPORT_CHECKED";

const MODE_UNSET: u8 = 0;
const MODE_FIRST: u8 = 1;
const MODE_EVERY: u8 = 2;
static MODE: AtomicU8 = AtomicU8::new(MODE_UNSET);

/// Sets the [`Checking`] mode of every op in the process from now on (overrides
/// `CUBEPORT_CHECKED`).
///
/// ```
/// cubeport::set_checking(cubeport::Checking::EveryOp);
/// assert_eq!(cubeport::checking(), cubeport::Checking::EveryOp);
/// cubeport::set_checking(cubeport::Checking::FirstLaunch);
/// ```
pub fn set_checking(mode: Checking) {
    let v = match mode {
        Checking::FirstLaunch => MODE_FIRST,
        Checking::EveryOp => MODE_EVERY,
    };
    MODE.store(v, Ordering::Relaxed);
}

/// The [`Checking`] mode in force: the last [`set_checking`], else `CUBEPORT_CHECKED=1` →
/// [`Checking::EveryOp`], else [`Checking::FirstLaunch`].
pub fn checking() -> Checking {
    let mut v = MODE.load(Ordering::Relaxed);
    if v == MODE_UNSET {
        let every = std::env::var(CHECKED_ENV).is_ok_and(|s| s.trim() == "1");
        v = if every { MODE_EVERY } else { MODE_FIRST };
        // A racing `set_checking` wins over the environment.
        let _ = MODE.compare_exchange(MODE_UNSET, v, Ordering::Relaxed, Ordering::Relaxed);
        v = MODE.load(Ordering::Relaxed);
    }
    if v == MODE_EVERY {
        Checking::EveryOp
    } else {
        Checking::FirstLaunch
    }
}

/// Panics swallowed on a runner thread, filed under the submitting thread's stream, not yet
/// reported. `ANY_PENDING` lets the per-op check skip the lock in the normal case.
static PENDING: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
static ANY_PENDING: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// cubecl 0.10 names its device runner threads `DS<stage>-<type>-<index>`; a panic there is
/// caught and dropped by the runner, while a panic on any other thread reaches its caller.
fn on_runner_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with("DSU-") || n.starts_with("DSD-"))
}

fn install() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if on_runner_thread() {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                let at = info.location().map_or(String::new(), |l| l.to_string());
                // Inside a task the runner thread runs under the submitter's stream.
                let stream = cubecl::stream_id::StreamId::current().value;
                if let Ok(mut pending) = PENDING.lock() {
                    pending.push((stream, format!("{message} (at {at})")));
                    ANY_PENDING.store(true, Ordering::SeqCst);
                }
            }
            previous(info);
        }));
    });
}

/// Returns (and forgets) the swallowed panics of the calling thread's stream as one error.
fn take_pending(op: &'static str) -> Result<(), Error> {
    if !ANY_PENDING.load(Ordering::SeqCst) {
        return Ok(());
    }
    let stream = cubecl::stream_id::StreamId::current().value;
    let mine: Vec<String> = match PENDING.lock() {
        Ok(mut pending) => {
            let (mine, others): (Vec<_>, Vec<_>) =
                pending.drain(..).partition(|(s, _)| *s == stream);
            *pending = others;
            ANY_PENDING.store(!pending.is_empty(), Ordering::SeqCst);
            mine.into_iter().map(|(_, m)| m).collect()
        }
        Err(_) => return Ok(()),
    };
    match mine.last() {
        None => Ok(()),
        Some(last) => Err(Error::Launch {
            op,
            message: format!(
                "cubecl panicked while expanding or compiling a kernel ({} panic(s) on this \
                 thread's stream; last: {last})",
                mine.len()
            ),
        }),
    }
}

/// Identity of the device a client talks to: every client of one device shares one
/// `ServerUtilities` (an `Arc` that lives as long as the process), so the address of its
/// properties tells devices apart without a call to the runner thread.
pub(crate) fn device_identity<R: Runtime>(client: &ComputeClient<R>) -> usize {
    client.properties() as *const _ as usize
}

/// Kernel configurations whose first launch on a device was flushed and came back clean.
static SEEN: RwLock<Option<HashSet<(usize, u64)>>> = RwLock::new(None);
/// Past this many configurations the set starts over (each costs one more flush, never a
/// missed check).
const SEEN_LIMIT: usize = 1 << 16;

/// A key for one kernel configuration of an op: hash everything the launched kernels'
/// compile-time parameters derive from.
pub(crate) struct LaunchKey(std::collections::hash_map::DefaultHasher);

impl LaunchKey {
    pub(crate) fn new(op: &'static str) -> Self {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        op.hash(&mut h);
        LaunchKey(h)
    }

    /// Adds an operand: shape, strides and dtype (not the buffer, which does not change the
    /// kernel).
    pub(crate) fn layout(mut self, layout: &crate::Layout) -> Self {
        layout.shape.hash(&mut self.0);
        layout.strides.hash(&mut self.0);
        layout.dtype.hash(&mut self.0);
        self
    }

    /// Adds any other value the kernel's configuration depends on.
    pub(crate) fn with(mut self, value: impl Hash) -> Self {
        value.hash(&mut self.0);
        self
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// Runs one op's launches under the [`Checking`] mode in force: see the module docs.
pub(crate) fn launch_op<R: Runtime, T>(
    client: &ComputeClient<R>,
    op: &'static str,
    key: LaunchKey,
    launch: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    install();
    take_pending(op)?;
    let every = checking() == Checking::EveryOp;
    let id = (device_identity(client), key.finish());
    let seen = !every
        && SEEN
            .read()
            .is_ok_and(|s| s.as_ref().is_some_and(|s| s.contains(&id)));
    let out = launch()?;
    if !seen {
        client.flush().map_err(|e| Error::launch(op, e))?;
        take_pending(op)?;
        if !every && let Ok(mut s) = SEEN.write() {
            let s = s.get_or_insert_with(HashSet::new);
            if s.len() >= SEEN_LIMIT {
                s.clear();
            }
            s.insert(id);
        }
    }
    Ok(out)
}

/// Runs `launch` (one or more cubecl kernel launches), then flushes the queue, and turns what
/// cubecl reports late or not at all into [`Error::Launch`]: errors queued until `flush`, and
/// panics its runner thread swallowed while expanding or compiling the kernels launched from
/// this thread. Use it around your own cubecl launches to get the guarantee of
/// [`Checking::EveryOp`] for them.
///
/// # Errors
/// [`Error::Launch`] if `flush` fails or cubecl panicked on this thread's stream; any error
/// `launch` itself returns.
///
/// # Example
/// ```no_run
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// cubeport::checked_launch(client, "my_kernel", || {
///     // my_kernel::launch::<f32, R>(client, …);
///     Ok(())
/// })?;
/// # Ok(()) }
/// ```
pub fn checked_launch<R: Runtime, T>(
    client: &ComputeClient<R>,
    op: &'static str,
    launch: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    install();
    take_pending(op)?;
    let out = launch()?;
    client.flush().map_err(|e| Error::launch(op, e))?;
    take_pending(op)?;
    Ok(out)
}

/// Submits everything this thread queued on `client` to the device without waiting for it,
/// and returns any failure the runtime reported so far for this thread's launches.
///
/// # Errors
/// [`Error::Launch`] for a queued launch failure or a swallowed compile panic of this thread.
pub fn flush<R: Runtime>(client: &ComputeClient<R>) -> Result<(), Error> {
    install();
    client.flush().map_err(|e| Error::launch("flush", e))?;
    take_pending("flush")
}

/// Waits until the device has finished everything this thread queued on `client`, and returns
/// any failure of it: the point where [`Checking::FirstLaunch`]'s deferred checks surface.
///
/// ```no_run
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>, x: &cubeport::DeviceTensor<f32>, b: &cubeport::DeviceTensor<f32>) -> Result<(), cubeport::Error> {
/// for _ in 0..1000 {
///     let _y = cubeport::add(client, x, b)?; // queued, no round trip after the first
/// }
/// cubeport::sync(client)?; // every launch above ran, or this is the error
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::Launch`] for a failed launch or a swallowed compile panic of this thread.
pub fn sync<R: Runtime>(client: &ComputeClient<R>) -> Result<(), Error> {
    install();
    cubecl::future::block_on(client.sync()).map_err(|e| Error::launch("sync", e))?;
    take_pending("sync")
}

/// The deferred checks of a read: swallowed panics of this thread's earlier launches.
pub(crate) fn after_read(op: &'static str) -> Result<(), Error> {
    install();
    take_pending(op)
}
