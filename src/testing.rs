//! Test and benchmark support (feature `testing`): seeded inputs, poisoned outputs, and the
//! skip rule. Tests, benches and the CLI share these so that "checked" means the same
//! everywhere.

use crate::{DeviceTensor, Element, Error};
use cubecl::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::reference::{Comparison, Tolerance, compare, compare_each};

/// The id ([`crate::MatmulPlan`]'s `Display`) of the last matmul plan this thread launched:
/// tests compare it with the plan [`crate::matmul_plan`] reported.
pub fn last_matmul_plan() -> Option<String> {
    crate::ops::matmul::last_plan()
}

/// Sets the vectors each unit of the histogram kernel loads before binning them, for every
/// histogram launched after (0, the start value: the built-in batch). For benchmarks timing
/// one batch against another on the same device; each batch compiles its own kernel.
///
/// ```
/// cubeport::testing::set_histogram_batch(8);
/// cubeport::testing::set_histogram_batch(0);
/// ```
pub fn set_histogram_batch(batch: usize) {
    crate::ops::histogram::spec::BATCH_OVERRIDE.store(batch, std::sync::atomic::Ordering::Relaxed);
}

/// Environment variable that turns every skip into a failure (set it on GPU machines).
pub const STRICT_ENV: &str = "CUBEPORT_STRICT";

/// Whether `CUBEPORT_STRICT` is set to a true value.
pub fn strict() -> bool {
    env_flag(STRICT_ENV)
}

/// Whether the environment variable `var` is set to a true value (anything but empty, `0` or
/// `false`): the rule of every on/off switch of the tests, benches and examples.
pub fn env_flag(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Reports a skipped test by name: prints `SKIP <test> <backend>: <reason>` to stderr and
/// returns; panics instead under `CUBEPORT_STRICT=1`.
#[allow(clippy::panic)] // a test helper: failing is its job under strict mode
pub fn skip(test: &str, backend: &str, reason: &str) {
    let line = format!("SKIP {test} {backend}: {reason}");
    if strict() {
        panic!("{line} (CUBEPORT_STRICT is set, so a skip fails)");
    }
    // Written to the stderr handle, not through `eprintln!`, so libtest's output capture
    // cannot hide it: a skip must be visible by name in every run.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Elements per ChaCha8 stream in [`seeded_uniform`].
const SEEDED_CHUNK: usize = 1 << 16;

/// `n` values uniform in `[lo, hi)` from ChaCha8 seeded with `seed`; never all zeros.
///
/// Element `i` comes from stream `i / 65536` of the generator (stream 0 for the first 65536,
/// so short inputs are one plain ChaCha8 sequence), which lets the chunks be generated in
/// parallel: the values depend on `seed` and `n` only, not on the thread count.
pub fn seeded_uniform(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    use rayon::prelude::*;
    let mut out = vec![0f32; n];
    out.par_chunks_mut(SEEDED_CHUNK)
        .enumerate()
        .for_each(|(stream, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(stream as u64);
            for v in chunk {
                *v = rng.random_range(lo..hi);
            }
        });
    out
}

/// `seeded_uniform`, rounded to `E`.
pub fn seeded<E: Element>(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<E> {
    use rayon::prelude::*;
    seeded_uniform(seed, n, lo, hi)
        .into_par_iter()
        .map(|v| E::from_f64(v as f64))
        .collect()
}

/// A value no op produces from cubeport's test inputs, written into outputs before a launch so
/// that an element the kernel forgot to write fails the comparison.
pub fn poison<E: Element>() -> E {
    E::from_f64(-31_337.0)
}

/// Widens to f64 for comparison with a reference.
pub fn to_f64<E: Element>(v: &[E]) -> Vec<f64> {
    use rayon::prelude::*;
    v.par_iter().map(|&x| Element::to_f64(x)).collect()
}

/// A device tensor of `shape` filled with [`poison`].
///
/// # Errors
/// As [`DeviceTensor::from_slice`].
pub fn poisoned<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    shape: &[usize],
) -> Result<DeviceTensor<E>, Error> {
    let n = shape.iter().product();
    DeviceTensor::from_slice(client, &vec![poison::<E>(); n], shape)
}

/// Waits for every launch queued on `client`; a failure the runtime reports is
/// [`Error::Launch`] (op `"sync"`).
///
/// # Errors
/// The runtime's error, rendered.
pub fn sync<R: Runtime>(client: &ComputeClient<R>) -> Result<(), Error> {
    crate::sync(client)
}

/// Work to run once per backend with that backend's client (a generic closure, which Rust
/// closures cannot express).
pub trait BackendVisitor {
    /// Runs on `client`, a client of backend `kind`.
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: crate::BackendKind);
}

/// Calls `visitor` for every backend with a device — only `only` when given, else only
/// `CUBEPORT_BACKEND` when set — and prints `SKIP <what> <backend>: <reason>` for the others.
/// Returns how many backends were visited.
pub fn visit_backends(
    what: &str,
    only: Option<crate::BackendKind>,
    visitor: &mut impl BackendVisitor,
) -> usize {
    use crate::BackendKind;
    use crate::backends;
    let only = only.or_else(|| backends::backend_from_env().ok().flatten());
    let mut visited = 0;
    for status in backends::available() {
        if only.is_some_and(|k| k != status.kind) {
            continue;
        }
        let result = match (&status.device, status.kind) {
            (Err(e), _) => Err(e.to_string()),
            #[cfg(feature = "cuda")]
            (Ok(_), BackendKind::Cuda) => crate::cuda_client()
                .map(|c| visitor.visit(c, BackendKind::Cuda))
                .map_err(|e| e.to_string()),
            #[cfg(feature = "wgpu")]
            (Ok(_), BackendKind::Wgpu) => crate::wgpu_client()
                .map(|c| visitor.visit(c, BackendKind::Wgpu))
                .map_err(|e| e.to_string()),
            #[allow(unreachable_patterns)]
            (Ok(_), kind) => Err(crate::BackendError::NotCompiled(kind).to_string()),
        };
        match result {
            Ok(()) => visited += 1,
            Err(reason) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "SKIP {what} {}: {reason}", status.kind);
            }
        }
    }
    visited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_values_depend_on_seed_and_index_only() {
        let long = seeded_uniform(7, 200_000, -1.0, 1.0);
        let short = seeded_uniform(7, 70_000, -1.0, 1.0);
        assert_eq!(long[..70_000], short[..]);
        // The first chunk is the plain ChaCha8 sequence of the seed.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        assert!((0..100).all(|i| long[i] == rng.random_range(-1.0..1.0)));
        // Later chunks are other streams, not a repeat of the first.
        assert_ne!(long[..SEEDED_CHUNK], long[SEEDED_CHUNK..2 * SEEDED_CHUNK]);
        assert!(long.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_ne!(seeded_uniform(8, 100, -1.0, 1.0), long[..100]);
    }
}
