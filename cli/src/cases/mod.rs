//! Benchmark cases shared by the criterion benches and `cubeport bench`, one file per family
//! (`activation`, `attention`, `reduce`, `softmax`, `norm`, `gemv`, `transpose`, `histogram`, `matmul`), plus
//! `memory` (the device copy, the anchor of the memory-bound families), `cublas` (the vendor
//! anchor) and `sweep` (throughput versus size).
//!
//! A [`Case`] owns its device buffers, has already checked its result against the CPU
//! reference when it is built (a case that computes the wrong thing is never returned), and
//! launches the op once per [`Case::run`]. Byte and FLOP counts let callers report GB/s,
//! FLOP/s and ratios to an anchor measured in the same process.

use cubeport::cubecl::prelude::*;
use cubeport::reference;
use cubeport::testing::{poisoned, seeded, seeded_uniform, to_f64};
use cubeport::{BackendKind, DType, DeviceTensor, Error};
use std::sync::Arc;

mod activation;
mod attention;
#[cfg(feature = "cublas")]
mod cublas;
mod gemv;
mod histogram;
mod matmul;
mod memory;
mod norm;
mod reduce;
mod softmax;
mod sweep;
mod transpose;

pub use activation::*;
pub use attention::*;
#[cfg(feature = "cublas")]
pub use cublas::*;
pub use gemv::*;
pub use histogram::*;
pub use matmul::*;
pub use memory::*;
pub use norm::*;
pub use reduce::*;
pub use softmax::*;
pub use sweep::*;
pub use transpose::*;

/// A verified, ready-to-time launch.
pub struct Case<'c> {
    /// Family (`copy`, `transpose`, `histogram`, …).
    pub family: &'static str,
    /// Element type the op reads and writes.
    pub dtype: DType,
    /// Variant id within the family (`tiled32_pad1`, `auto_shared_runs`, …).
    pub variant: String,
    /// Problem size, human-readable (`8192x8192`, `512M`).
    pub size: String,
    /// Bytes a perfect kernel moves (read once + write once).
    pub bytes: u64,
    /// Floating-point operations (0 for data movement).
    pub flops: u64,
    run: Box<dyn FnMut() -> Result<(), Error> + Send + 'c>,
    /// Waits for the case's own queue, for cases that do not launch on a cubecl client (a
    /// vendor library on its own stream); `None`: the client's sync covers them.
    own_sync: Option<Box<dyn FnMut() -> Result<(), Error> + Send + 'c>>,
}

impl<'c> Case<'c> {
    /// Launches the op once (asynchronously; time around a device sync).
    ///
    /// # Errors
    /// The op's error.
    pub fn run(&mut self) -> Result<(), Error> {
        (self.run)()
    }

    /// Waits for every launch of this case: its own queue when it has one, else `client`'s.
    ///
    /// # Errors
    /// The runtime's error.
    pub fn wait<R: Runtime>(&mut self, client: &ComputeClient<R>) -> Result<(), Error> {
        match &mut self.own_sync {
            Some(sync) => sync(),
            None => cubeport::testing::sync(client),
        }
    }

    /// The launch and, for cases with their own queue, its sync, as separate borrows (to time
    /// batches of launches between syncs).
    #[allow(clippy::type_complexity)]
    pub fn split(
        &mut self,
    ) -> (
        &mut (dyn FnMut() -> Result<(), Error> + Send + 'c),
        Option<&mut (dyn FnMut() -> Result<(), Error> + Send + 'c)>,
    ) {
        (&mut *self.run, self.own_sync.as_deref_mut())
    }

    /// Whether the case launches on the cubecl client (so the client's device timers see it).
    pub fn on_client(&self) -> bool {
        self.own_sync.is_none()
    }

    /// One case made of several copies of the same op on distinct buffers, launched in turn, so
    /// that a working set smaller than the L2 cache is not served from it on the next launch.
    /// Takes the labels and counts of the first copy; `None` for an empty list or copies that
    /// launch on their own queue.
    pub fn rotating(copies: Vec<Case<'c>>) -> Option<Case<'c>> {
        if copies.iter().any(|c| !c.on_client()) {
            return None;
        }
        let mut runs = copies;
        let first = runs.first()?;
        let (family, dtype, variant, size) = (
            first.family,
            first.dtype,
            first.variant.clone(),
            first.size.clone(),
        );
        let (bytes, flops) = (first.bytes, first.flops);
        let mut next = 0;
        Some(Case {
            family,
            dtype,
            variant,
            size,
            bytes,
            flops,
            run: Box::new(move || {
                let i = next % runs.len();
                next += 1;
                runs[i].run()
            }),
            own_sync: None,
        })
    }

    /// `family/variant/backend/dtype`, the criterion id of this case.
    pub fn id(&self, kind: BackendKind) -> String {
        format!("{}/{}/{kind}/{}", self.family, self.variant, self.dtype)
    }
}

/// Problem sizes: the issue targets' sizes, or small ones for `--quick` and lavapipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Seconds of setup at most (CI, lavapipe).
    Quick,
    /// The sizes the benchmarks report (the targets of the issues), shrunk to what one buffer
    /// of the device may hold.
    Full,
}

/// The seeded f32 `rows × cols` matrix the row families (reduce, softmax, gemv) run over:
/// 16384 × 4096 at `Full`, 4096 × 4096 where one buffer may not hold 256 MiB, 256 × 4096 at
/// `Quick`; the same seed in each family, so their figures describe the same data.
struct RowMatrix {
    rows: usize,
    cols: usize,
    device: Arc<DeviceTensor<f32>>,
    values: Vec<f64>,
    abs: Vec<f64>,
}

impl RowMatrix {
    fn new<R: Runtime>(client: &ComputeClient<R>, scale: Scale) -> Result<Self, Error> {
        let caps = cubeport::caps_of(client);
        let (rows, cols) = match scale {
            Scale::Quick => (256, 4096),
            Scale::Full if caps.max_alloc_bytes >= 1 << 28 => (16384, 4096),
            Scale::Full => (4096, 4096),
        };
        let x: Vec<f32> = seeded(92, rows * cols, -1.0, 1.0);
        let device = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, cols])?);
        let values = cubeport::testing::to_f64(&x);
        let abs = values.iter().map(|v| v.abs()).collect();
        Ok(Self {
            rows,
            cols,
            device,
            values,
            abs,
        })
    }

    fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// A case over this matrix (f32; `bytes` and `flops` counted in elements and operations).
    fn case<'c>(
        &self,
        family: &'static str,
        variant: String,
        elems_moved: usize,
        flops: usize,
        run: Box<dyn FnMut() -> Result<(), Error> + Send + 'c>,
    ) -> Case<'c> {
        Case {
            dtype: DType::F32,
            family,
            variant,
            size: format!("{}x{}", self.rows, self.cols),
            bytes: (elems_moved * 4) as u64,
            flops: flops as u64,
            run,
            own_sync: None,
        }
    }
}

fn verify(ok: bool, what: &str) -> Result<(), Error> {
    if ok {
        Ok(())
    } else {
        Err(Error::Read {
            message: format!("{what}: result differs from the reference; not timing it"),
        })
    }
}

/// Checks `samples` entries of a row-major `m × n` product of `a` (`m × k`) and `b` (`k × n`)
/// against f64 dot products with the matmul tolerance; the entries are spread over the output
/// by two large primes.
///
/// # Errors
/// [`Error::Read`] naming the first entry out of tolerance.
pub fn verify_matmul_sample<E: cubeport::Element>(
    got: &[E],
    a: &[E],
    b: &[E],
    (m, n, k): (usize, usize, usize),
    samples: usize,
    what: &str,
) -> Result<(), Error> {
    let entries = (0..samples).map(|s| ((s * 7919) % m, (s * 104_729) % n));
    verify_matmul_entries(got, a, b, (n, k), entries, |dot, _| dot, None, what)
}

/// Checks the `(i, j)` entries of a row-major product of `a` (`· × k`) and `b` (`k × n`):
/// `epilogue(dot, j)` of the f64 dot product, rounded to `E`, within the matmul tolerance.
#[allow(clippy::too_many_arguments)]
fn verify_matmul_entries<E: cubeport::Element>(
    got: &[E],
    a: &[E],
    b: &[E],
    (n, k): (usize, usize),
    entries: impl Iterator<Item = (usize, usize)>,
    epilogue: impl Fn(f64, usize) -> f64,
    variant: Option<cubeport::ops::matmul::MatmulVariant>,
    what: &str,
) -> Result<(), Error> {
    for (i, j) in entries {
        let (mut dot, mut abs) = (0.0f64, 0.0f64);
        for p in 0..k {
            let t = a[i * k + p].to_f64() * b[p * n + j].to_f64();
            dot += t;
            abs += t.abs();
        }
        let want = E::from_f64(epilogue(dot, j)).to_f64();
        let tol = match variant {
            Some(v) => v.tolerance(E::DTYPE, k, abs),
            None => reference::Tolerance::matmul(E::DTYPE, k, abs),
        };
        let g = got[i * n + j].to_f64();
        verify(
            (g - want).abs() <= tol.atol + tol.rtol * want.abs(),
            &format!("{what}: C[{i},{j}] = {g}, want {want}"),
        )?;
    }
    Ok(())
}

/// A matmul case's size: `m x n x k`, with the batch in front when there is more than one.
pub(crate) fn batched_size_name(batch: usize, m: usize, n: usize, k: usize) -> String {
    if batch == 1 {
        format!("{m}x{n}x{k}")
    } else {
        format!("{batch}x{m}x{n}x{k}")
    }
}

fn size_name(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else {
        n.to_string()
    }
}
