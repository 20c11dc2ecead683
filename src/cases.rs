//! Benchmark cases shared by the criterion benches and `cubeport bench` (feature `testing`).
//!
//! A [`Case`] owns its device buffers, has already checked its result against the CPU
//! reference when it is built (a case that computes the wrong thing is never returned), and
//! launches the op once per [`Case::run`]. Byte and FLOP counts let callers report GB/s,
//! FLOP/s and ratios to an anchor measured in the same process.

use crate::ops::histogram::{Binning, HistogramVariant};
use crate::reference;
use crate::testing::{poisoned, seeded, seeded_uniform};
use crate::{BackendKind, DType, DeviceTensor, Error, TransposeVariant};
use cubecl::prelude::*;

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
            None => crate::testing::sync(client),
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
pub fn verify_matmul_sample<E: crate::Element>(
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
fn verify_matmul_entries<E: crate::Element>(
    got: &[E],
    a: &[E],
    b: &[E],
    (n, k): (usize, usize),
    entries: impl Iterator<Item = (usize, usize)>,
    epilogue: impl Fn(f64, usize) -> f64,
    variant: Option<crate::ops::matmul::MatmulVariant>,
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

/// The device copy of `n` f32 (the bandwidth anchor of the memory-bound families).
///
/// # Errors
/// Allocation or launch errors; a wrong copy.
pub fn copy_case<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Case<'c>, Error> {
    copy_case_of::<R, f32>(client, n)
}

/// The device copy of `n` elements of `E` (bytes: read + write).
///
/// # Errors
/// As [`copy_case`].
pub fn copy_case_of<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Case<'c>, Error> {
    let x: Vec<E> = seeded(77, n, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(client, &x, &[n])?;
    let mut dy = poisoned::<R, E>(client, &[n])?;
    crate::copy_into(client, dx.as_ref(), dy.as_mut())?;
    verify(
        crate::testing::to_f64(&dy.to_vec(client)?) == crate::testing::to_f64(&x),
        "copy",
    )?;
    Ok(Case {
        dtype: E::DTYPE,
        family: "copy",
        variant: "vec".into(),
        size: size_name(n),
        bytes: (2 * n * E::DTYPE.size()) as u64,
        flops: 0,
        run: Box::new(move || crate::copy_into(client, dx.as_ref(), dy.as_mut())),
        own_sync: None,
    })
}

/// Transposes of a square f32 matrix, one case per variant (bytes: read + write).
///
/// # Errors
/// As [`copy_case`].
pub fn transpose_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = crate::caps_of(client);
    let side = match scale {
        Scale::Quick => 1024,
        Scale::Full if caps.max_alloc_bytes >= 1 << 28 => 8192,
        Scale::Full => 4096,
    };
    let n = side * side;
    let x: Vec<f32> = seeded(78, n, -1.0, 1.0);
    let want = {
        let mut t = vec![0f32; n];
        for r in 0..side {
            for c in 0..side {
                t[c * side + r] = x[r * side + c];
            }
        }
        t
    };
    let dx = std::sync::Arc::new(DeviceTensor::from_slice(client, &x, &[side, side])?);
    let mut cases = vec![copy_case(client, n)?];
    for v in [
        TransposeVariant::Tiled { tile: 64, pad: 1 },
        TransposeVariant::Tiled { tile: 32, pad: 1 },
        TransposeVariant::Tiled { tile: 32, pad: 0 },
        TransposeVariant::Tiled { tile: 16, pad: 1 },
        TransposeVariant::Naive,
    ] {
        let mut dy = poisoned::<R, f32>(client, &[side, side])?;
        crate::transpose_with(client, dx.as_ref().as_ref(), dy.as_mut(), v)?;
        verify(dy.to_vec(client)? == want, &format!("transpose {v}"))?;
        let dx = dx.clone();
        cases.push(Case {
            dtype: DType::F32,
            family: "transpose",
            variant: v.to_string(),
            size: format!("{side}x{side}"),
            bytes: 2 * n as u64 * 4,
            flops: 0,
            run: Box::new(move || {
                crate::transpose_with(client, dx.as_ref().as_ref(), dy.as_mut(), v)
            }),
            own_sync: None,
        });
    }
    Ok(cases)
}

/// 256-bin histograms of f32 (uniform in `[0, 1)`, and all in one bin), one case per variant,
/// with the copy of the same number of elements as the anchor (bytes: the input read once).
///
/// # Errors
/// As [`copy_case`].
pub fn histogram_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = crate::caps_of(client);
    let n = match scale {
        Scale::Quick => 1 << 20,
        Scale::Full => (512usize << 20).min(caps.max_alloc_bytes as usize / 4 / 2),
    };
    let bins = 256;
    let mut cases = vec![copy_case(client, n)?];
    for (data, values) in [
        ("uniform", seeded_uniform(79, n, 0.0, 1.0)),
        ("one_bin", vec![0.5f32; n]),
    ] {
        let want = reference::histogram_range(&values, bins, 0.0, 1.0);
        let dx = std::sync::Arc::new(DeviceTensor::from_slice(client, &values, &[n])?);
        drop(values);
        let auto = HistogramVariant::select(&caps, bins);
        let mut variants = vec![(format!("auto_{auto}"), None)];
        variants.extend(HistogramVariant::ALL.map(|v| (v.to_string(), Some(v))));
        for (name, v) in variants {
            let mut counts =
                DeviceTensor::<u32>::from_slice(client, &vec![u32::MAX; bins], &[bins])?;
            let binning = Binning::Range { lo: 0.0, hi: 1.0 };
            let dx = dx.clone();
            let go = move |counts: &mut DeviceTensor<u32>| {
                let x = dx.as_ref().as_ref();
                match v {
                    None => crate::histogram_into(client, x, counts.as_mut(), binning),
                    Some(v) => crate::histogram_with(client, x, counts.as_mut(), binning, v),
                }
            };
            go(&mut counts)?;
            verify(
                counts.to_vec(client)? == want,
                &format!("histogram {name} {data}"),
            )?;
            cases.push(Case {
                dtype: DType::F32,
                family: "histogram",
                variant: format!("{name}_{data}"),
                size: size_name(n),
                bytes: n as u64 * 4,
                flops: 0,
                run: Box::new(move || go(&mut counts)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}

fn size_name(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else {
        n.to_string()
    }
}

/// `m × n × k` products of `E`, verified on a sample of entries against f64 dot products.
///
/// Cases: every variant that runs on the device for the dtype (the naive and 16-tiled kernels
/// only up to 1024 and 4096), plus the fused `bias + GELU(tanh)` epilogue with the automatic
/// variant. Sizes: 1024, 4096, 8192 squares and a ragged `4095 × 4097 × 4093` (`Full`), or 256
/// and `257 × 255 × 129` (`Quick`). FLOPs count 2 per multiply-add.
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    matmul_cases_with::<R, E>(client, scale, &[])
}

/// [`matmul_cases`] plus `extra` variants (e.g. SIMT tile shapes under tuning), each run at
/// every size where the device can run it. A forced variant that fails to launch or to match
/// the sampled reference is reported on stderr and left out (never timed); a failure of the
/// automatic choice is an error.
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases_with<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
    extra: &[crate::ops::matmul::MatmulVariant],
) -> Result<Vec<Case<'c>>, Error> {
    use crate::ops::matmul::MatmulVariant;
    let variants: Vec<MatmulVariant> = MatmulVariant::ALL.iter().chain(extra).copied().collect();
    matmul_cases_for::<R, E>(client, &matmul_sizes(scale), &variants)
}

/// The `(m, n, k)` products the matmul cases run: 1024, 4096, 8192 squares and a ragged
/// `4095 × 4097 × 4093` (`Full`), or 256³ and `257 × 255 × 129` (`Quick`).
pub fn matmul_sizes(scale: Scale) -> Vec<(usize, usize, usize)> {
    match scale {
        Scale::Quick => vec![(256, 256, 256), (257, 255, 129)],
        Scale::Full => vec![
            (1024, 1024, 1024),
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (4095, 4097, 4093),
        ],
    }
}

/// The matmul cases at `sizes` (`m, n, k`) for the automatic choice, its fused
/// `bias + GELU(tanh)` form and each of `variants` that runs on the device for `E` (the naive
/// and 16-tiled kernels only up to 1024 and 4096; with tensor cores, f16/bf16 keep only the
/// tensor-core variants and one CUDA-core kernel). Checked as [`matmul_cases_with`].
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases_for<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    sizes: &[(usize, usize, usize)],
    variants: &[crate::ops::matmul::MatmulVariant],
) -> Result<Vec<Case<'c>>, Error> {
    use crate::ops::matmul::{MatmulVariant, matmul_flops};
    use crate::{Activation, GeluApprox};
    let caps = crate::caps_of(client);
    let dtype = E::DTYPE;
    if !dtype.is_supported_by(&caps) {
        return Ok(Vec::new());
    }
    let mut cases = Vec::new();
    for &(m, n, k) in sizes {
        let a: Vec<E> = seeded(80, m * k, -1.0, 1.0);
        let b: Vec<E> = seeded(81, k * n, -1.0, 1.0);
        let bias: Vec<E> = seeded(82, n, -0.5, 0.5);
        let da = std::sync::Arc::new(DeviceTensor::from_slice(client, &a, &[m, k])?);
        let db = std::sync::Arc::new(DeviceTensor::from_slice(client, &b, &[k, n])?);
        let dbias = std::sync::Arc::new(DeviceTensor::from_slice(client, &bias, &[n])?);
        // 64 sampled entries, f64 dot products (a full reference at 8192³ would take minutes).
        let samples: Vec<(usize, usize)> = seeded_uniform(83, 128, 0.0, 1.0)
            .chunks(2)
            .map(|p| {
                (
                    ((p[0] * m as f32) as usize).min(m - 1),
                    ((p[1] * n as f32) as usize).min(n - 1),
                )
            })
            .collect();
        let check = |c: &DeviceTensor<E>,
                     fused: bool,
                     v: Option<MatmulVariant>,
                     what: &str|
         -> Result<(), Error> {
            let act = Activation::Gelu(GeluApprox::Tanh);
            let epilogue = |dot: f64, j: usize| {
                if fused {
                    reference::bias_activation(&[dot], &[bias[j].to_f64()], act)[0]
                } else {
                    dot
                }
            };
            let entries = samples.iter().copied();
            verify_matmul_entries(
                &c.to_vec(client)?,
                &a,
                &b,
                (n, k),
                entries,
                epilogue,
                v,
                what,
            )
        };
        let size = format!("{m}x{n}x{k}");
        let flops = matmul_flops(1, m, n, k);
        let auto = crate::ops::matmul::matmul_variant(client, dtype, 1, (m, n, k));
        let mut runs: Vec<(String, Option<MatmulVariant>, bool)> =
            vec![(format!("auto_{auto}"), None, false)];
        for &v in variants {
            let small_only = matches!(v, MatmulVariant::Naive) && m > 1024
                || matches!(v, MatmulVariant::Tiled16) && m > 4096;
            // With tensor cores, f16/bf16 keep one CUDA-core variant for comparison.
            let tc_only = MatmulVariant::Cmma.runs_on(&caps, dtype)
                && !matches!(
                    v,
                    MatmulVariant::Blocked128 {
                        double_buffer: true
                    } | MatmulVariant::Cmma
                        | MatmulVariant::Tc(_)
                );
            if v.runs_on(&caps, dtype) && !small_only && !tc_only && v != auto {
                runs.push((v.to_string(), Some(v), false));
            }
        }
        runs.push((format!("auto_{auto}_bias_gelu"), None, true));
        for (name, v, fused) in runs {
            let mut dc = poisoned::<R, E>(client, &[m, n])?;
            let (da, db, dbias) = (da.clone(), db.clone(), dbias.clone());
            let go = move |c: &mut DeviceTensor<E>| {
                let bias = fused.then(|| dbias.as_ref().as_ref());
                let act = if fused {
                    Activation::Gelu(GeluApprox::Tanh)
                } else {
                    Activation::Identity
                };
                let (x, y) = (da.as_ref().as_ref(), db.as_ref().as_ref());
                match v {
                    None => crate::matmul_fused_into(client, x, y, bias, act, c.as_mut()),
                    Some(v) => crate::matmul_with(client, x, y, bias, act, c.as_mut(), v),
                }
            };
            let outcome = go(&mut dc)
                .and_then(|()| check(&dc, fused, v, &format!("matmul {name} {dtype} {size}")));
            match (outcome, v) {
                (Ok(()), _) => {}
                // The automatic choice must be right; a forced variant that fails (a tuning
                // shape, say) is reported and left out of the timings.
                (Err(e), None) => return Err(e),
                (Err(e), Some(_)) => {
                    eprintln!("matmul {name} {dtype} {size}: not timed: {e}");
                    continue;
                }
            }
            cases.push(Case {
                dtype,
                family: "matmul",
                variant: name,
                size: size.clone(),
                bytes: ((m * k + k * n + m * n) * dtype.size()) as u64,
                flops,
                run: Box::new(move || go(&mut dc)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}

/// The compute ceiling: 8 independent FMA chains per unit, `E` arithmetic, enough cubes to
/// fill the device several times (FLOPs: 2 per FMA).
///
/// # Errors
/// Allocation or launch errors.
pub fn fma_case<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Case<'c>, Error> {
    let caps = crate::caps_of(client);
    let units = caps.num_sms.map_or(64, |s| s as usize) * 2048 * 4;
    let iters: u32 = match scale {
        Scale::Quick => 64,
        Scale::Full => 4096,
    };
    let out = DeviceTensor::<E>::empty(client, &[units])?;
    let go = move || {
        crate::checked_launch(client, "fma_peak", || {
            // SAFETY: `out` holds `units` elements, one per launched unit.
            unsafe {
                cubeport_kernels::peak::fma_peak_kernel::launch_unchecked::<E, R>(
                    client,
                    CubeCount::new_1d((units / 256) as u32),
                    CubeDim::new_1d(256),
                    ArrayArg::from_raw_parts(out.handle().clone(), units),
                    0.999,
                    0.001,
                    iters,
                );
            }
            Ok(())
        })
    };
    Ok(Case {
        dtype: E::DTYPE,
        family: "fma_peak",
        variant: "8_chains".into(),
        size: format!("{units}x{iters}"),
        bytes: (units * E::DTYPE.size()) as u64,
        flops: 16 * units as u64 * iters as u64,
        run: Box::new(go),
        own_sync: None,
    })
}

/// Fused bias + activation, every activation (`add`, `bias_relu_scale`, `bias_gelu_tanh`,
/// `bias_gelu_erf`) with a full-length bias (`_full`) and with one row of 4096 broadcast over
/// the rows (`_row`), in f32 and, where the device has it, f16; each dtype's device copy of the
/// same length comes first (the anchor). Bytes: input and bias read once, output written once.
/// FLOPs are nominal (1, 3, 12, 12 per element). `n` = 64 M elements at `Full` (fewer where one
/// buffer may not be that large), 1 M at `Quick`.
///
/// # Errors
/// As [`copy_case`].
pub fn activation_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = crate::caps_of(client);
    let n = match scale {
        Scale::Quick => 1 << 20,
        Scale::Full => (64usize << 20).min(caps.max_alloc_bytes as usize / 4),
    };
    let mut cases = activation_cases_of::<R, f32>(client, n)?;
    if DType::F16.is_supported_by(&caps) {
        cases.extend(activation_cases_of::<R, half::f16>(client, n)?);
    }
    Ok(cases)
}

/// Row length of the broadcast-bias activation cases (an LLM hidden size).
const BIAS_ROW: usize = 4096;

fn activation_cases_of<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Vec<Case<'c>>, Error> {
    use crate::{Activation, GeluApprox};
    use rayon::prelude::*;
    use std::sync::Arc;
    let n = n / BIAS_ROW * BIAS_ROW;
    let x: Vec<E> = seeded(90, n, -4.0, 4.0);
    let b: Vec<E> = seeded(91, n, -1.0, 1.0);
    let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[n])?);
    let db = Arc::new(DeviceTensor::from_slice(client, &b, &[n])?);
    let db_row = Arc::new(DeviceTensor::from_slice(
        client,
        &b[..BIAS_ROW],
        &[BIAS_ROW],
    )?);
    let (xf, bf) = (crate::testing::to_f64(&x), crate::testing::to_f64(&b));
    drop((x, b));
    let mut cases = vec![copy_case_of::<R, E>(client, n)?];
    for (act, flops) in [
        (Activation::Identity, 1),
        (Activation::ReluScale { scale: 0.5 }, 3),
        (Activation::Gelu(GeluApprox::Tanh), 12),
        (Activation::Gelu(GeluApprox::Erf), 12),
    ] {
        for (bias_name, bias, shape) in [
            ("full", &db, vec![n]),
            ("row", &db_row, vec![n / BIAS_ROW, BIAS_ROW]),
        ] {
            let mut dy = poisoned::<R, E>(client, &shape)?;
            let (dx, bias) = (dx.clone(), bias.clone());
            let go = move |y: &mut DeviceTensor<E>| {
                let input = crate::TensorRef::contiguous(dx.handle(), &shape, E::DTYPE);
                crate::bias_activation_into(client, input, bias.as_ref().as_ref(), y.as_mut(), act)
            };
            go(&mut dy)?;
            let blen = if bias_name == "full" { n } else { BIAS_ROW };
            let want: Vec<f64> = reference::bias_activation(&xf, &bf[..blen], act)
                .into_par_iter()
                .map(|v| E::from_f64(v).to_f64())
                .collect();
            let got = crate::testing::to_f64(&dy.to_vec(client)?);
            let what = format!("{} {bias_name} {}", act.name(), E::DTYPE);
            verify(
                reference::compare(&got, &want, reference::Tolerance::elementwise(E::DTYPE)).ok(),
                &what,
            )?;
            cases.push(Case {
                dtype: E::DTYPE,
                family: "activation",
                variant: format!("{}_{bias_name}", act.name()),
                size: size_name(n),
                bytes: ((2 * n + blen) * E::DTYPE.size()) as u64,
                flops: flops * n as u64,
                run: Box::new(move || go(&mut dy)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}

/// The row-reduction families over one f32 `rows × cols` matrix (16384 × 4096 at `Full`,
/// 4096 × 4096 where one buffer may not hold 256 MiB, 256 × 4096 at `Quick`): sum and max of
/// everything, per-row sums, per-column sums (the strided axis), softmax along rows with the
/// automatic variant and every forced row-group width the device runs, and GEMV `A·v` and
/// `Aᵀ·v` with every variant. The device copy of the matrix comes first (the anchor). Bytes:
/// inputs read once, outputs written once. FLOPs nominal (1 per element; softmax 5; GEMV 2).
///
/// # Errors
/// As [`copy_case`].
pub fn reduce_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    use crate::reference::{Reduction, Tolerance};
    use crate::{GemvVariant, ReducePath, RowGroup, Transpose};
    use std::sync::Arc;
    let caps = crate::caps_of(client);
    let (rows, cols) = match scale {
        Scale::Quick => (256, 4096),
        Scale::Full if caps.max_alloc_bytes >= 1 << 28 => (16384, 4096),
        Scale::Full => (4096, 4096),
    };
    let n = rows * cols;
    let x: Vec<f32> = seeded(92, n, -1.0, 1.0);
    let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, cols])?);
    let xf = crate::testing::to_f64(&x);
    drop(x);
    let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
    let size = format!("{rows}x{cols}");
    let case = |family, variant: String, bytes: usize, flops: usize, run| Case {
        dtype: DType::F32,
        family,
        variant,
        size: size.clone(),
        bytes: (bytes * 4) as u64,
        flops: flops as u64,
        run,
        own_sync: None,
    };
    let mut cases = vec![copy_case(client, n)?];
    // Whole-array sum and max, per-row and per-column sums.
    for (name, axis, op, out_len) in [
        ("sum", None, Reduction::Sum, 1),
        ("max", None, Reduction::Max, 1),
        ("sum", Some(1), Reduction::Sum, rows),
        ("sum", Some(0), Reduction::Sum, cols),
    ] {
        let mut dy = poisoned::<R, f32>(client, &[out_len])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            crate::reduce_into(client, d.as_ref().as_ref(), y.as_mut(), axis, op)
        };
        go(&mut dy)?;
        let want = reference::reduce(&xf, &[rows, cols], axis, op);
        let sum_abs = reference::reduce(&abs, &[rows, cols], axis, Reduction::Sum);
        let k = axis.map_or(n, |a| [rows, cols][a]);
        let got = crate::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| match op {
            Reduction::Sum => Tolerance::reduction(DType::F32, k, sum_abs[i]),
            _ => Tolerance::EXACT,
        })
        .ok();
        verify(ok, name)?;
        let shape: &[usize] = if axis.is_none() { &[n] } else { &[rows, cols] };
        let variant = crate::ops::reduce::reduce_variant(client, shape, DType::F32, axis);
        cases.push(case(
            "reduce",
            // `sum_all_plane`, `sum_rows_plane256`, `sum_strided`, …
            format!("{name}_{}", variant.to_string().replace('/', "_")),
            n + out_len,
            n,
            Box::new(move || go(&mut dy)),
        ));
    }
    // Softmax along rows: the automatic choice, then every row group the device runs.
    let want = reference::softmax(&xf, cols, false);
    let tol = Tolerance::softmax(DType::F32, cols, false);
    let auto = crate::ops::softmax::softmax_variant(client, cols, DType::F32);
    let mut forced = vec![(None, format!("auto_{auto}"))];
    let mut groups = vec![RowGroup {
        path: ReducePath::Shared,
        group: 256,
    }];
    if let Some(w) = caps.plane.fixed_width() {
        groups.extend(
            [w, 64, 128, 256]
                .into_iter()
                .filter(|&g| g >= w && g % w == 0)
                .map(|group| RowGroup {
                    path: ReducePath::Plane,
                    group,
                }),
        );
    }
    groups.dedup();
    forced.extend(groups.into_iter().map(|g| (Some(g), g.to_string())));
    for (group, variant) in forced {
        let mut dy = poisoned::<R, f32>(client, &[rows, cols])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| match group {
            None => crate::softmax_into(client, d.as_ref().as_ref(), y.as_mut(), 1),
            Some(g) => crate::softmax_with(client, d.as_ref().as_ref(), y.as_mut(), 1, false, g),
        };
        go(&mut dy)?;
        let got = crate::testing::to_f64(&dy.to_vec(client)?);
        verify(
            reference::compare(&got, &want, tol).ok(),
            &format!("softmax {variant}"),
        )?;
        cases.push(case(
            "softmax",
            variant,
            2 * n,
            5 * n,
            Box::new(move || go(&mut dy)),
        ));
    }
    drop(want);
    // GEMV y = A·v and y = Aᵀ·v over the same matrix, every variant the device runs.
    let v: Vec<f32> = seeded(93, rows.max(cols), -1.0, 1.0);
    let vf = crate::testing::to_f64(&v);
    let mut variants = vec![
        (Transpose::No, GemvVariant::ThreadRow),
        (Transpose::No, GemvVariant::CubeRow(ReducePath::Shared)),
        (Transpose::Yes, GemvVariant::Columns),
    ];
    if caps.plane.fixed_width().is_some() {
        variants.push((Transpose::No, GemvVariant::PlaneRow));
        variants.push((Transpose::No, GemvVariant::CubeRow(ReducePath::Plane)));
    }
    for (t, variant) in variants {
        let tr = t == Transpose::Yes;
        let (xl, yl) = if tr { (rows, cols) } else { (cols, rows) };
        let dv = DeviceTensor::from_slice(client, &v[..xl], &[xl])?;
        let mut dy = poisoned::<R, f32>(client, &[yl])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            crate::gemv_with(
                client,
                d.as_ref().as_ref(),
                dv.as_ref(),
                y.as_mut(),
                t,
                variant,
            )
        };
        go(&mut dy)?;
        let want = reference::gemv(&xf, rows, cols, &vf[..xl], tr);
        let vabs: Vec<f64> = vf[..xl].iter().map(|v| v.abs()).collect();
        let sum_abs = reference::gemv(&abs, rows, cols, &vabs, tr);
        let got = crate::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| {
            Tolerance::reduction(DType::F32, xl, sum_abs[i])
        })
        .ok();
        verify(ok, &format!("gemv {variant}"))?;
        let name = if tr { "gemv_t" } else { "gemv" };
        cases.push(case(
            "gemv",
            format!("{name}_{variant}"),
            n + xl + yl,
            2 * n,
            Box::new(move || go(&mut dy)),
        ));
    }
    Ok(cases)
}

/// [`cublas_case`] for a runtime `dtype` (f32, f16, bf16).
///
/// # Errors
/// As [`cublas_case`]; [`Error::Launch`] (op `cublas`) for any other dtype.
#[cfg(feature = "cublas")]
pub fn cublas_case_of(dtype: DType, m: usize, n: usize, k: usize) -> Result<Case<'static>, Error> {
    match dtype {
        DType::F32 => cublas_case::<f32>(m, n, k),
        DType::F16 => cublas_case::<half::f16>(m, n, k),
        DType::BF16 => cublas_case::<half::bf16>(m, n, k),
        other => Err(Error::Launch {
            op: "cublas",
            message: format!("no cuBLAS GEMM case for {other}"),
        }),
    }
}

/// cuBLAS (through cudarc) on `m × n × k` row-major products of the same seeded inputs as
/// [`matmul_cases`]: `sgemm` for f32 (cuBLAS's default math mode: no TF32), `gemmEx` with f32
/// compute for f16/bf16. The vendor anchor of the matmul family, on cudarc's own stream (so the
/// case syncs that stream itself, see [`Case::wait`]). Checked on 32 sampled entries against
/// f64 dot products before it is returned; variant id `cublas`.
///
/// # Errors
/// [`Error::Launch`] (op `cublas`) when there is no CUDA driver or cuBLAS, or the sampled
/// check fails.
#[cfg(feature = "cublas")]
pub fn cublas_case<E>(m: usize, n: usize, k: usize) -> Result<Case<'static>, Error>
where
    E: crate::Element + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
    cudarc::cublas::CudaBlas: cudarc::cublas::Gemm<E>,
{
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys::cublasOperation_t};
    use cudarc::driver::CudaContext;
    let fail = |what: &str, e: &dyn std::fmt::Display| Error::Launch {
        op: "cublas",
        message: format!("{what}: {e}"),
    };
    // cudarc panics where no driver library exists; probe first (discovery does the same).
    let ctx = std::panic::catch_unwind(|| CudaContext::new(0))
        .map_err(|_| fail("CUDA driver", &"libcuda could not be loaded"))?
        .map_err(|e| fail("CUDA context", &e))?;
    let stream = ctx.default_stream();
    let blas = std::panic::catch_unwind(|| CudaBlas::new(stream.clone()))
        .map_err(|_| fail("cuBLAS", &"libcublas could not be loaded"))?
        .map_err(|e| fail("cuBLAS", &e))?;
    let a: Vec<E> = seeded(80, m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(81, k * n, -1.0, 1.0);
    let da = stream.clone_htod(&a).map_err(|e| fail("upload", &e))?;
    let db = stream.clone_htod(&b).map_err(|e| fail("upload", &e))?;
    let mut dc = stream
        .alloc_zeros::<E>(m * n)
        .map_err(|e| fail("alloc", &e))?;
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: E::from_f64(1.0),
        lda: n as i32,
        ldb: k as i32,
        beta: E::from_f64(0.0),
        ldc: n as i32,
    };
    // SAFETY: the buffers hold k·n, m·k and m·n elements, as `cfg` describes.
    unsafe { blas.gemm(cfg, &db, &da, &mut dc) }.map_err(|e| fail("gemm", &e))?;
    let got = stream.clone_dtoh(&dc).map_err(|e| fail("download", &e))?;
    verify_matmul_sample(&got, &a, &b, (m, n, k), 32, "cuBLAS")?;
    let sync_stream = stream.clone();
    Ok(Case {
        dtype: E::DTYPE,
        family: "matmul",
        variant: "cublas".into(),
        size: format!("{m}x{n}x{k}"),
        bytes: ((m * k + k * n + m * n) * E::DTYPE.size()) as u64,
        flops: crate::ops::matmul::matmul_flops(1, m, n, k),
        // SAFETY: as above; `dc` lives in the closure.
        run: Box::new(move || {
            unsafe { blas.gemm(cfg, &db, &da, &mut dc) }.map_err(|e| fail("gemm", &e))
        }),
        own_sync: Some(Box::new(move || {
            sync_stream
                .synchronize()
                .map_err(|e| fail("stream sync", &e))
        })),
    })
}

/// One op per family, run at a sweep of sizes for the throughput-versus-size report of
/// `cubeport bench` (automatic variants, f32 unless the op says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepOp {
    /// `gelu(x + bias)` (tanh), full-length bias: 3 streams.
    BiasGelu,
    /// Sum of everything.
    SumAll,
    /// Softmax over rows of 1024.
    Softmax1024,
    /// Square transpose.
    Transpose,
    /// 256-bin histogram over `[0, 1)` of uniform data.
    Histogram256,
    /// Square matmul of this dtype (`n` is the side).
    Matmul(DType),
}

impl SweepOp {
    /// The report's family name.
    pub fn family(&self) -> &'static str {
        match self {
            SweepOp::BiasGelu => "activation",
            SweepOp::SumAll => "reduce",
            SweepOp::Softmax1024 => "softmax",
            SweepOp::Transpose => "transpose",
            SweepOp::Histogram256 => "histogram",
            SweepOp::Matmul(_) => "matmul",
        }
    }

    /// The element type the op runs in.
    pub fn dtype(&self) -> DType {
        match self {
            SweepOp::Matmul(d) => *d,
            _ => DType::F32,
        }
    }

    /// The op's name in the report.
    pub fn name(&self) -> String {
        match self {
            SweepOp::BiasGelu => "bias_gelu_tanh".into(),
            SweepOp::SumAll => "sum_all".into(),
            SweepOp::Softmax1024 => "softmax_rows1024".into(),
            SweepOp::Transpose => "transpose_square".into(),
            SweepOp::Histogram256 => "histc256".into(),
            SweepOp::Matmul(d) => format!("matmul_square_{d}"),
        }
    }

    /// Sizes (elements, or the side for square ops) from tiny to `max_elems` elements.
    pub fn sizes(&self, max_elems: usize) -> Vec<usize> {
        let geometric = |lo: usize, hi: usize, step: usize| {
            let mut v = Vec::new();
            let mut x = lo;
            while x <= hi {
                v.push(x);
                x *= step;
            }
            v
        };
        match self {
            SweepOp::Transpose => geometric(64, max_elems.isqrt(), 2),
            SweepOp::Matmul(_) => geometric(128, 8192.min(max_elems.isqrt() / 2), 2),
            SweepOp::Softmax1024 => geometric(1 << 12, max_elems, 4),
            _ => geometric(1 << 10, max_elems, 4),
        }
    }
}

/// [`SweepOp`] `op` at size `n`, checked against the CPU reference (matmul: 32 sampled
/// entries against f64 dot products) before it is returned.
///
/// # Errors
/// As [`copy_case`]; [`Error::UnsupportedDType`] for a matmul dtype the device lacks.
pub fn sweep_case<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    op: SweepOp,
    n: usize,
) -> Result<Case<'c>, Error> {
    use crate::reference::{Reduction, Tolerance};
    use crate::{Activation, GeluApprox};
    use std::sync::Arc;
    let case = |variant: String, size: String, bytes: usize, flops: usize, run| Case {
        dtype: op.dtype(),
        family: op.family(),
        variant,
        size,
        bytes: bytes as u64,
        flops: flops as u64,
        run,
        own_sync: None,
    };
    match op {
        SweepOp::BiasGelu => {
            let x: Vec<f32> = seeded(93, n, -4.0, 4.0);
            let b: Vec<f32> = seeded(94, n, -1.0, 1.0);
            let act = Activation::Gelu(GeluApprox::Tanh);
            let (dx, db) = (
                Arc::new(DeviceTensor::from_slice(client, &x, &[n])?),
                Arc::new(DeviceTensor::from_slice(client, &b, &[n])?),
            );
            let mut dy = poisoned::<R, f32>(client, &[n])?;
            let go = move |y: &mut DeviceTensor<f32>| {
                crate::bias_activation_into(
                    client,
                    dx.as_ref().as_ref(),
                    db.as_ref().as_ref(),
                    y.as_mut(),
                    act,
                )
            };
            go(&mut dy)?;
            let want = reference::bias_activation(
                &crate::testing::to_f64(&x),
                &crate::testing::to_f64(&b),
                act,
            );
            let got = crate::testing::to_f64(&dy.to_vec(client)?);
            verify(
                reference::compare(&got, &want, Tolerance::elementwise(DType::F32)).ok(),
                "sweep bias_gelu",
            )?;
            Ok(case(
                op.name(),
                size_name(n),
                3 * n * 4,
                12 * n,
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::SumAll | SweepOp::Softmax1024 => {
            let len = if op == SweepOp::SumAll { n } else { 1024 };
            let rows = n / len;
            let x: Vec<f32> = seeded(95, rows * len, -1.0, 1.0);
            let xf = crate::testing::to_f64(&x);
            let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, len])?);
            let sum = op == SweepOp::SumAll;
            let out_shape = if sum { vec![1] } else { vec![rows, len] };
            let mut dy = poisoned::<R, f32>(client, &out_shape)?;
            let go = move |y: &mut DeviceTensor<f32>| {
                if sum {
                    crate::reduce_into(
                        client,
                        dx.as_ref().as_ref(),
                        y.as_mut(),
                        None,
                        Reduction::Sum,
                    )
                } else {
                    crate::softmax_into(client, dx.as_ref().as_ref(), y.as_mut(), 1)
                }
            };
            go(&mut dy)?;
            let got = crate::testing::to_f64(&dy.to_vec(client)?);
            let ok = if sum {
                let abs: f64 = xf.iter().map(|v| v.abs()).sum();
                let want = reference::reduce(&xf, &[rows * len], None, Reduction::Sum);
                reference::compare(&got, &want, Tolerance::reduction(DType::F32, n, abs)).ok()
            } else {
                let want = reference::softmax(&xf, len, false);
                reference::compare(&got, &want, Tolerance::softmax(DType::F32, len, false)).ok()
            };
            verify(ok, &format!("sweep {}", op.name()))?;
            let out = if sum { 1 } else { n };
            let size = if sum {
                size_name(n)
            } else {
                format!("{rows}x{len}")
            };
            Ok(case(
                op.name(),
                size,
                (n + out) * 4,
                if sum { n } else { 5 * n },
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::Transpose => {
            let side = n;
            let x: Vec<f32> = seeded(96, side * side, -1.0, 1.0);
            let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[side, side])?);
            let mut dy = poisoned::<R, f32>(client, &[side, side])?;
            let go = move |y: &mut DeviceTensor<f32>| {
                crate::transpose_into(client, dx.as_ref().as_ref(), y.as_mut())
            };
            go(&mut dy)?;
            let want = reference::transpose(&crate::testing::to_f64(&x), 1, side, side);
            verify(
                crate::testing::to_f64(&dy.to_vec(client)?) == want,
                "sweep transpose",
            )?;
            Ok(case(
                op.name(),
                format!("{side}x{side}"),
                2 * side * side * 4,
                0,
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::Histogram256 => {
            let values = seeded_uniform(97, n, 0.0, 1.0);
            let want = reference::histogram_range(&values, 256, 0.0, 1.0);
            let dx = Arc::new(DeviceTensor::from_slice(client, &values, &[n])?);
            let mut counts = DeviceTensor::<u32>::from_slice(client, &vec![u32::MAX; 256], &[256])?;
            let binning = Binning::Range { lo: 0.0, hi: 1.0 };
            let go = move |c: &mut DeviceTensor<u32>| {
                crate::histogram_into(client, dx.as_ref().as_ref(), c.as_mut(), binning)
            };
            go(&mut counts)?;
            verify(counts.to_vec(client)? == want, "sweep histogram")?;
            Ok(case(
                op.name(),
                size_name(n),
                n * 4,
                0,
                Box::new(move || go(&mut counts)),
            ))
        }
        SweepOp::Matmul(dtype) => match dtype {
            DType::F32 => sweep_matmul::<R, f32>(client, n),
            DType::F16 => sweep_matmul::<R, half::f16>(client, n),
            DType::BF16 => sweep_matmul::<R, half::bf16>(client, n),
            other => {
                crate::ops::expect_dtype_supported(&crate::caps_of(client), "sweep matmul", other)
                    .and(Err(crate::ops::not_float(client, "sweep matmul", other)))
            }
        },
    }
}

/// A square `side³` product of `E` with the automatic variant, sampled against f64.
fn sweep_matmul<'c, R: Runtime, E: crate::Element>(
    client: &'c ComputeClient<R>,
    side: usize,
) -> Result<Case<'c>, Error> {
    let dtype = E::DTYPE;
    crate::ops::expect_dtype_supported(&crate::caps_of(client), "sweep matmul", dtype)?;
    let (m, n, k) = (side, side, side);
    let a: Vec<E> = seeded(98, m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(99, k * n, -1.0, 1.0);
    let da = std::sync::Arc::new(DeviceTensor::from_slice(client, &a, &[m, k])?);
    let db = std::sync::Arc::new(DeviceTensor::from_slice(client, &b, &[k, n])?);
    let mut dc = poisoned::<R, E>(client, &[m, n])?;
    let go = move |c: &mut DeviceTensor<E>| {
        crate::matmul_into(
            client,
            da.as_ref().as_ref(),
            db.as_ref().as_ref(),
            c.as_mut(),
        )
    };
    go(&mut dc)?;
    verify_matmul_sample(
        &dc.to_vec(client)?,
        &a,
        &b,
        (m, n, k),
        32,
        &format!("sweep matmul {side}"),
    )?;
    let variant = crate::ops::matmul::matmul_variant(client, dtype, 1, (m, n, k)).to_string();
    Ok(Case {
        dtype,
        family: "matmul",
        variant,
        size: format!("{m}x{n}x{k}"),
        bytes: ((m * k + k * n + m * n) * dtype.size()) as u64,
        flops: crate::ops::matmul::matmul_flops(1, m, n, k),
        run: Box::new(move || go(&mut dc)),
        own_sync: None,
    })
}
