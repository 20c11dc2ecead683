//! Observes panics that cubecl swallows.
//!
//! cubecl 0.10 runs kernel expansion and backend compilation on its device threads under
//! `catch_unwind`: a panic there (WGSL has no `sync_plane`, no bf16, vectors of at most 4, …) is
//! logged and dropped, `flush()` still returns `Ok`, and the kernel silently never runs. cubeport
//! wraps the process's panic hook once (the previous hook still runs) to count panics raised
//! from cubecl's own source files, and every op compares the count around its launch and flush.
//! A hook installed after cubeport's replaces it; cubeport then sees only `flush` errors.
//! The count is process-wide: a panic that another thread's launch provokes on the same device
//! while an op is in flight is reported by that op too. That errs on the safe side (an error,
//! never silent garbage); the suite keeps its deliberate provocation in a separate binary.

use crate::Error;
use cubecl::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

static PANICS: AtomicU64 = AtomicU64::new(0);
static LAST: Mutex<String> = Mutex::new(String::new());
static INSTALL: Once = Once::new();

fn install() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.location().is_some_and(|l| l.file().contains("cubecl")) {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                if let Ok(mut last) = LAST.lock() {
                    *last = format!(
                        "{message} (at {})",
                        info.location().map_or(String::new(), |l| l.to_string())
                    );
                }
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

/// Runs `launch` (one or more cubecl kernel launches), then flushes the queue, and turns what
/// cubecl reports late or not at all into [`Error::Launch`]: errors queued until `flush`, and
/// panics its device threads swallowed while expanding or compiling the kernels. Use it around
/// your own cubecl launches too, to get the same guarantee as cubeport's ops.
///
/// # Errors
/// [`Error::Launch`] if `flush` fails or cubecl panicked during the call; any error `launch`
/// itself returns.
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
    let before = PANICS.load(Ordering::SeqCst);
    let out = launch()?;
    client.flush().map_err(|e| Error::launch(op, e))?;
    if PANICS.load(Ordering::SeqCst) != before {
        let last = LAST.lock().map(|l| l.clone()).unwrap_or_default();
        return Err(Error::Launch {
            op,
            message: format!("cubecl panicked while expanding or compiling the kernel: {last}"),
        });
    }
    Ok(out)
}
