//! `cubeport`: check every kernel on every backend found and print one table.
//!
//! ```text
//! cubeport                 # = cubeport check: every kernel × backend × dtype, vs the f64 reference
//! cubeport devices         # backends compiled in, devices found, capabilities
//! cubeport check --backend wgpu --elems 1048581
//! cubeport bench --quick --json bench.json --plots plots/   # roofline report (see bench.rs)
//! ```
//! The exit status is 0 only when every row is within tolerance and the backends agree.

use clap::{Parser, Subcommand};
use cubeport::backends::{self, BackendKind, BackendStatus};
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    Activation, DType, DeviceTensor, Element, Error, GeluApprox, GemvVariant, Reduction, TensorMut,
    Transpose, caps_of,
};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "cubeport",
    version,
    about = "Check cubeport's GPU kernels on every backend against an f64 CPU reference"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run every kernel on every backend, compare with the reference and across backends (default).
    Check(CheckArgs),
    /// List backends, devices and capabilities.
    Devices,
    /// Roofline report: every kernel family against ceilings measured in the same run, launch
    /// overhead, transfers and JIT cost; table, JSON and SVG charts.
    Bench(bench::BenchArgs),
}

mod bench;

#[derive(clap::Args, Default)]
struct CheckArgs {
    /// Only this backend (`cuda` or `wgpu`); default: every backend that has a device.
    #[arg(long)]
    backend: Option<String>,
    /// Elements per tensor; default 32M + 5 on GPUs, 1M + 5 on CPU adapters (ragged on purpose).
    #[arg(long)]
    elems: Option<usize>,
    /// Skip timing (correctness only).
    #[arg(long)]
    no_time: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Check(CheckArgs::default())) {
        Command::Devices => devices(),
        Command::Check(args) => check(args),
        Command::Bench(args) => bench::run(args),
    }
}

fn devices() -> ExitCode {
    let mut any = false;
    for BackendStatus { kind, device } in backends::available() {
        match device {
            Ok(desc) => {
                any = true;
                println!("{kind}: {desc}");
                for d in backends::devices(kind) {
                    println!("  {kind} {}: {}", d.ordinal, d.name);
                }
                #[cfg(feature = "cuda")]
                if kind == BackendKind::Cuda {
                    let ordinal = backends::device_from_env().unwrap_or(0);
                    match cubeport::kernel_cache_dir(ordinal) {
                        Some(dir) => println!("  kernel cache: {}", dir.display()),
                        None => println!("  kernel cache: off"),
                    }
                }
                match caps_for(kind) {
                    Ok(caps) => println!("  {caps}"),
                    Err(e) => println!("  client failed: {e}"),
                }
            }
            Err(e) => println!("{kind}: unavailable: {e}"),
        }
    }
    if any {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn caps_for(kind: BackendKind) -> Result<cubeport::Caps, Error> {
    match kind {
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => Ok(caps_of(&cubeport::cuda_client()?)),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => Ok(caps_of(&cubeport::wgpu_client()?)),
        other => Err(backends::BackendError::NotCompiled(other).into()),
    }
}

/// What one row of the table runs.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `act(x + bias)`; `row`: `None` bias as long as the input, `Some(len)` one row broadcast.
    Act { act: Activation, row: Option<usize> },
    /// A reduction over `axis` of `[elems / inner, inner]` (`None`: everything).
    Reduce {
        op: Reduction,
        axis: Option<usize>,
        inner: usize,
    },
    /// Softmax over rows of `len`.
    Softmax { log: bool, len: usize },
    /// GEMV with `cols` columns.
    Gemv { transpose: Transpose, cols: usize },
    /// Transpose of `[elems / cols, cols]`.
    Transpose { cols: usize },
    /// Histogram (`bins` bins over [−3, 3]; the inputs are uniform in [−4, 4)).
    Histogram { bins: usize },
    /// `[m, k] · [k, n]` with the automatic variant; `fused`: `gelu(a·b + bias)` in one kernel.
    Matmul { fused: bool },
}

/// One kernel case of the table.
#[derive(Clone, Copy)]
struct Case {
    kind: Kind,
    dtype: DType,
}

impl Case {
    fn name(&self) -> String {
        match self.kind {
            Kind::Act { act, .. } => act.name().to_string(),
            Kind::Reduce { op, axis: None, .. } => format!("{}_all", op.name()),
            Kind::Reduce {
                op, axis: Some(a), ..
            } => format!("{}_axis{a}", op.name()),
            Kind::Softmax { log: false, .. } => "softmax".into(),
            Kind::Softmax { log: true, .. } => "log_softmax".into(),
            Kind::Gemv {
                transpose: Transpose::No,
                ..
            } => "gemv".into(),
            Kind::Gemv {
                transpose: Transpose::Yes,
                ..
            } => "gemv_t".into(),
            Kind::Transpose { .. } => "transpose".into(),
            Kind::Histogram { bins } => format!("histc{bins}"),
            Kind::Matmul { fused: false } => "matmul".into(),
            Kind::Matmul { fused: true } => "matmul_bias_gelu".into(),
        }
    }

    fn shape(&self, elems: usize) -> Vec<usize> {
        match self.kind {
            Kind::Act { row: None, .. } | Kind::Histogram { .. } => vec![elems],
            Kind::Act { row: Some(r), .. } => vec![elems.div_ceil(r), r],
            Kind::Reduce { axis: None, .. } => vec![elems],
            Kind::Reduce { inner, .. } => vec![elems.div_ceil(inner), inner],
            Kind::Softmax { len, .. } => vec![elems.div_ceil(len), len],
            Kind::Gemv { cols, .. } | Kind::Transpose { cols } => vec![elems.div_ceil(cols), cols],
            // `[m, n, k]`, ragged against every tile; smaller where the device is a CPU.
            Kind::Matmul { .. } if elems > (1 << 22) => vec![1031, 1029, 259],
            Kind::Matmul { .. } => vec![257, 255, 129],
        }
    }
}

fn cases(kinds: &[BackendKind]) -> Vec<Case> {
    let acts = [
        Activation::Identity,
        Activation::ReluScale { scale: 0.5 },
        Activation::Gelu(GeluApprox::Tanh),
        Activation::Gelu(GeluApprox::Erf),
    ];
    let mut dtypes = vec![DType::F32, DType::F16];
    if kinds.contains(&BackendKind::Cuda) {
        dtypes.push(DType::BF16);
    }
    let mut out = Vec::new();
    for dtype in dtypes {
        for act in acts {
            for row in [None, Some(4096)] {
                out.push(Case {
                    kind: Kind::Act { act, row },
                    dtype,
                });
            }
        }
        let mut kinds = vec![
            Kind::Reduce {
                op: Reduction::Sum,
                axis: None,
                inner: 1,
            },
            Kind::Reduce {
                op: Reduction::Max,
                axis: None,
                inner: 1,
            },
            Kind::Reduce {
                op: Reduction::Mean,
                axis: Some(1),
                inner: 4096,
            },
            Kind::Reduce {
                op: Reduction::Min,
                axis: Some(1),
                inner: 33,
            },
            Kind::Reduce {
                op: Reduction::Sum,
                axis: Some(0),
                inner: 1000,
            },
            Kind::Softmax {
                log: false,
                len: 4096,
            },
            Kind::Softmax {
                log: false,
                len: 1000,
            },
            Kind::Softmax {
                log: true,
                len: 4096,
            },
        ];
        kinds.push(Kind::Transpose { cols: 1000 });
        kinds.extend([
            Kind::Histogram { bins: 256 },
            Kind::Histogram { bins: 10_000 },
            Kind::Matmul { fused: false },
            Kind::Matmul { fused: true },
        ]);
        if dtype == DType::F32 {
            kinds.extend([
                Kind::Gemv {
                    transpose: Transpose::No,
                    cols: 4096,
                },
                Kind::Gemv {
                    transpose: Transpose::Yes,
                    cols: 4096,
                },
            ]);
        }
        out.extend(kinds.into_iter().map(|kind| Case { kind, dtype }));
    }
    out
}

struct Row {
    case: Case,
    backend: BackendKind,
    shape: Vec<usize>,
    outcome: Result<Measured, String>,
    /// Max |a − b| against the same case on the first backend, and whether within tolerance.
    agreement: Option<(f64, bool)>,
}

struct Measured {
    variant: String,
    cmp: reference::Comparison,
    output: Vec<f64>,
    /// Per-element tolerance used against the reference (for the cross-backend check).
    tol: Vec<Tolerance>,
    time: Option<Duration>,
    gbps: Option<f64>,
    /// Compute rate of a matmul row, TFLOP/s (2 per multiply-add).
    tflops: Option<f64>,
    copy_gbps: Option<f64>,
}

fn check(args: CheckArgs) -> ExitCode {
    // `--backend`, else `CUBEPORT_BACKEND`: a backend asked for by name must exist.
    let forced = match args
        .backend
        .as_deref()
        .map(str::parse::<BackendKind>)
        .transpose()
        .and_then(|k| match k {
            Some(k) => Ok(Some(k)),
            None => backends::backend_from_env(),
        }) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut kinds = Vec::new();
    for BackendStatus { kind, device } in backends::available() {
        if forced.is_some_and(|f| f != kind) {
            continue;
        }
        match device {
            Ok(desc) => {
                eprintln!("backend {kind}: {desc}");
                kinds.push(kind);
            }
            Err(e) if forced == Some(kind) => {
                eprintln!("error: backend {kind} was asked for and cannot run: {e}");
                return ExitCode::FAILURE;
            }
            Err(e) => eprintln!("backend {kind}: skipped: {e}"),
        }
    }
    if kinds.is_empty() {
        eprintln!("no backend has a usable device; see `cubeport devices`");
        return ExitCode::FAILURE;
    }
    let cases = cases(&kinds);
    struct Check<'a> {
        cases: &'a [Case],
        args: &'a CheckArgs,
        rows: Vec<Row>,
    }
    impl cubeport::testing::BackendVisitor for Check<'_> {
        fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
            self.rows
                .extend(run_backend(&client, kind, self.cases, self.args));
        }
    }
    let mut visit = Check {
        cases: &cases,
        args: &args,
        rows: Vec::new(),
    };
    cubeport::testing::visit_backends("check", forced, &mut visit);
    let mut rows = visit.rows;
    if rows.is_empty() {
        eprintln!("error: no kernel was checked on any backend (see `cubeport devices`)");
        return ExitCode::FAILURE;
    }
    cross_check(&mut rows);
    print_table(&rows);
    let bad = rows
        .iter()
        .filter(|r| {
            r.outcome.as_ref().map_or(true, |m| !m.cmp.ok())
                || r.agreement.is_some_and(|(_, ok)| !ok)
        })
        .count();
    println!("{} passed, {} failed", rows.len() - bad, bad);
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_backend<R: Runtime>(
    client: &ComputeClient<R>,
    kind: BackendKind,
    cases: &[Case],
    args: &CheckArgs,
) -> Vec<Row> {
    let caps = caps_of(client);
    let big = caps.num_sms.is_some() || caps.max_alloc_bytes >= (1 << 30);
    let elems = args
        .elems
        .unwrap_or(if big { (1 << 25) + 5 } else { (1 << 20) + 5 });
    let progress = std::io::stderr().is_terminal();
    let mut copy_cache: Vec<(DType, usize, Option<f64>)> = Vec::new();
    let mut rows = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        if progress {
            eprint!(
                "\r{kind}: {}/{} {} {}        ",
                i + 1,
                cases.len(),
                case.name(),
                case.dtype
            );
            let _ = std::io::stderr().flush();
        }
        if !case.dtype.is_supported_by(&caps) {
            continue; // not a failure: the support matrix says which dtypes a backend has
        }
        let shape = case.shape(elems);
        let n: usize = shape.iter().product();
        let copy_gbps = if args.no_time || matches!(case.kind, Kind::Matmul { .. }) {
            None // matmul is compute-bound: its rate is FLOP/s, not a fraction of a copy
        } else if let Some(&(_, _, g)) = copy_cache
            .iter()
            .find(|(d, m, _)| *d == case.dtype && *m == n)
        {
            g
        } else {
            let g = copy_bandwidth(client, case.dtype, n);
            copy_cache.push((case.dtype, n, g));
            g
        };
        let outcome = match case.dtype {
            DType::F32 => measure::<R, f32>(client, case, &shape, args.no_time),
            DType::F16 => measure::<R, half::f16>(client, case, &shape, args.no_time),
            _ => measure::<R, half::bf16>(client, case, &shape, args.no_time),
        }
        .map(|mut m| {
            m.copy_gbps = copy_gbps;
            m
        })
        .map_err(|e| e.to_string());
        rows.push(Row {
            case: *case,
            backend: kind,
            shape,
            outcome,
            agreement: None,
        });
    }
    if progress {
        eprintln!();
    }
    rows
}

/// Runs one case on seeded data into a poisoned output, compares with the f64 reference
/// (rounded to the storage type), and times it when correct.
fn measure<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    case: &Case,
    shape: &[usize],
    no_time: bool,
) -> Result<Measured, Error> {
    if let Kind::Matmul { fused } = case.kind {
        return measure_matmul::<R, E>(client, shape, fused, no_time);
    }
    let n: usize = shape.iter().product();
    let x: Vec<E> = seeded(0xC0BE_0001, n, -4.0, 4.0);
    let xf = to_f64(&x);
    let dx = DeviceTensor::from_slice(client, &x, shape)?;
    let dtype = case.dtype;
    let round =
        |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|v| E::from_f64(v).to_f64()).collect() };
    let sum_abs_of = |a: &[f64], shape: &[usize], axis: Option<usize>| {
        let abs: Vec<f64> = a.iter().map(|v| v.abs()).collect();
        reference::reduce(&abs, shape, axis, Reduction::Sum)
    };
    let b_dev; // declared before `op`, which borrows them
    let xv_dev;
    // (output shape, reference, per-element tolerance, bytes moved, variant, the op)
    type Op<'a> = Box<dyn Fn(TensorMut<'_>) -> Result<(), Error> + 'a>;
    let (out_shape, want, tol, bytes, variant, op): (
        Vec<usize>,
        Vec<f64>,
        Vec<Tolerance>,
        usize,
        String,
        Op<'_>,
    );
    match case.kind {
        Kind::Act { act, row } => {
            let bias_shape = match row {
                None => shape.to_vec(),
                Some(r) => vec![r],
            };
            let nb: usize = bias_shape.iter().product();
            let b: Vec<E> = seeded(0xC0BE_0002, nb, -1.0, 1.0);
            b_dev = DeviceTensor::from_slice(client, &b, &bias_shape)?;
            let v = cubeport::bias_activation_variant(client, &dx.as_ref(), &b_dev.as_ref())?;
            variant = if n.is_multiple_of(v.vector) {
                v.to_string()
            } else {
                format!("{v}+tail")
            };
            want = round(reference::bias_activation(&xf, &to_f64(&b), act));
            tol = vec![Tolerance::elementwise(dtype); n];
            out_shape = shape.to_vec();
            bytes = (2 * n + nb) * dtype.size();
            let (xr, br) = (dx.as_ref(), b_dev.as_ref());
            op = Box::new(move |out| {
                cubeport::bias_activation_into(client, xr.clone(), br.clone(), out, act)
            });
        }
        Kind::Reduce { op: red, axis, .. } => {
            out_shape = match axis {
                None => vec![1],
                Some(a) => shape
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != a)
                    .map(|(_, &d)| d)
                    .collect(),
            };
            let k = axis.map_or(n, |a| shape[a]);
            want = round(reference::reduce(&xf, shape, axis, red));
            tol = sum_abs_of(&xf, shape, axis)
                .into_iter()
                .map(|s| Tolerance::reduce(red, dtype, k, s))
                .collect();
            bytes = (n + want.len()) * dtype.size();
            variant = cubeport::ops::reduce::reduce_variant(client, shape, dtype, axis);
            let xr = dx.as_ref();
            op = Box::new(move |out| cubeport::reduce_into(client, xr.clone(), out, axis, red));
        }
        Kind::Softmax { log, len } => {
            out_shape = shape.to_vec();
            want = round(reference::softmax(&xf, len, log));
            let t = Tolerance::softmax(dtype, len, log);
            tol = vec![t; n];
            bytes = 2 * n * dtype.size();
            variant = cubeport::ops::softmax::softmax_variant(client, len, dtype).to_string();
            let xr = dx.as_ref();
            op = Box::new(move |out| {
                if log {
                    cubeport::log_softmax_into(client, xr.clone(), out, 1)
                } else {
                    cubeport::softmax_into(client, xr.clone(), out, 1)
                }
            });
        }
        Kind::Gemv { transpose, cols } => {
            let rows = shape[0];
            let (xl, yl) = if transpose == Transpose::No {
                (cols, rows)
            } else {
                (rows, cols)
            };
            let v: Vec<E> = seeded(0xC0BE_0003, xl, -1.0, 1.0);
            let vf = to_f64(&v);
            xv_dev = DeviceTensor::from_slice(client, &v, &[xl])?;
            out_shape = vec![yl];
            want = round(reference::gemv(
                &xf,
                rows,
                cols,
                &vf,
                transpose == Transpose::Yes,
            ));
            let abs_a: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
            let abs_x: Vec<f64> = vf.iter().map(|v| v.abs()).collect();
            tol = reference::gemv(&abs_a, rows, cols, &abs_x, transpose == Transpose::Yes)
                .into_iter()
                .map(|s| Tolerance::reduction(dtype, xl, s))
                .collect();
            bytes = (n + xl + yl) * dtype.size();
            variant = GemvVariant::select(&caps_of(client), cols, transpose).to_string();
            let (ar, vr) = (dx.as_ref(), xv_dev.as_ref());
            op = Box::new(move |out| {
                cubeport::gemv_into(client, ar.clone(), vr.clone(), out, transpose)
            });
        }
        Kind::Histogram { bins } => {
            return measure_histogram(client, &x, &dx, bins, no_time);
        }
        Kind::Matmul { .. } => unreachable!("handled by measure_matmul above"),
        Kind::Transpose { .. } => {
            out_shape = vec![shape[1], shape[0]];
            want = reference::transpose(&xf, 1, shape[0], shape[1]);
            tol = vec![Tolerance::EXACT; n];
            bytes = 2 * n * dtype.size();
            variant =
                cubeport::ops::transpose::transpose_variant(&caps_of(client), dtype).to_string();
            let xr = dx.as_ref();
            op = Box::new(move |out| cubeport::transpose_into(client, xr.clone(), out));
        }
    }
    let mut dy = poisoned::<R, E>(client, &out_shape)?;
    op(dy.as_mut())?;
    let got = to_f64(&dy.to_vec(client)?);
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None // never time a wrong kernel
    } else {
        time_op(client, || op(dy.as_mut()))?
    };
    let gbps = time.map(|t| bytes as f64 / t.as_secs_f64() / 1e9);
    Ok(Measured {
        variant,
        cmp,
        output: got,
        tol,
        time,
        gbps,
        tflops: None,
        copy_gbps: None,
    })
}

/// `[m, k] · [k, n]` (shape `[m, n, k]`) of seeded inputs into a poisoned output with the
/// automatic variant, optionally with the fused `gelu(· + bias)` epilogue, against the f64
/// reference with the matmul tolerance; timed in TFLOP/s when correct.
fn measure_matmul<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    shape: &[usize],
    fused: bool,
    no_time: bool,
) -> Result<Measured, Error> {
    let (m, n, k) = (shape[0], shape[1], shape[2]);
    let dtype = E::DTYPE;
    let a: Vec<E> = seeded(0xC0BE_0004, m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(0xC0BE_0005, k * n, -1.0, 1.0);
    let bias: Vec<E> = seeded(0xC0BE_0006, n, -0.5, 0.5);
    let (af, bf) = (to_f64(&a), to_f64(&b));
    let act = if fused {
        Activation::Gelu(GeluApprox::Tanh)
    } else {
        Activation::Identity
    };
    let prod = reference::matmul(&af, &bf, 1, 1, m, n, k);
    let want: Vec<f64> = if fused {
        reference::bias_activation(&prod, &to_f64(&bias), act)
    } else {
        prod
    }
    .into_iter()
    .map(|v| E::from_f64(v).to_f64())
    .collect();
    let abs = |v: &[f64]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
    let tol: Vec<Tolerance> = reference::matmul(&abs(&af), &abs(&bf), 1, 1, m, n, k)
        .into_iter()
        .map(|s| Tolerance::matmul(dtype, k, s))
        .collect();
    let da = DeviceTensor::from_slice(client, &a, &[m, k])?;
    let db = DeviceTensor::from_slice(client, &b, &[k, n])?;
    let dbias = DeviceTensor::from_slice(client, &bias, &[n])?;
    let op = |c: &mut DeviceTensor<E>| {
        let bias = fused.then(|| dbias.as_ref());
        cubeport::matmul_fused_into(client, da.as_ref(), db.as_ref(), bias, act, c.as_mut())
    };
    let mut dc = poisoned::<R, E>(client, &[m, n])?;
    op(&mut dc)?;
    let got = to_f64(&dc.to_vec(client)?);
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut dc))?
    };
    let flops = cubeport::ops::matmul::matmul_flops(1, m, n, k) as f64;
    Ok(Measured {
        variant: cubeport::matmul_variant(client, dtype, 1, (m, n, k)).to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: None,
        tflops: time.map(|t| flops / t.as_secs_f64() / 1e12),
        copy_gbps: None,
    })
}

/// A histogram over [−3, 3] of `x` into poisoned u32 counts; counts must match exactly.
fn measure_histogram<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    x: &[E],
    dx: &DeviceTensor<E>,
    bins: usize,
    no_time: bool,
) -> Result<Measured, Error> {
    let (lo, hi) = (-3.0, 3.0);
    let xs: Vec<f32> = x.iter().map(|v| Element::to_f64(*v) as f32).collect();
    let want: Vec<f64> = reference::histogram_range(&xs, bins, lo, hi)
        .into_iter()
        .map(f64::from)
        .collect();
    let mut counts = DeviceTensor::<u32>::from_slice(client, &vec![0xDEAD_BEEF; bins], &[bins])?;
    let binning = cubeport::Binning::Range { lo, hi };
    let op = |c: &mut DeviceTensor<u32>| {
        cubeport::histogram_into(client, dx.as_ref(), c.as_mut(), binning)
    };
    op(&mut counts)?;
    let got: Vec<f64> = counts.to_vec(client)?.into_iter().map(f64::from).collect();
    let tol = vec![Tolerance::EXACT; bins];
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut counts))?
    };
    let bytes = std::mem::size_of_val(x);
    Ok(Measured {
        variant: cubeport::HistogramVariant::select(&caps_of(client), bins).to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: time.map(|t| bytes as f64 / t.as_secs_f64() / 1e9),
        tflops: None,
        copy_gbps: None,
    })
}

/// Device copy of `n` elements of `dtype` with cubeport's copy kernel: bytes read + written.
fn copy_bandwidth<R: Runtime>(client: &ComputeClient<R>, dtype: DType, n: usize) -> Option<f64> {
    let bytes = n * dtype.size();
    let src = client.create_from_slice(&vec![0x3Cu8; bytes]);
    let dst = client.empty(bytes);
    let input = cubeport::TensorRef::contiguous(&src, &[n], dtype);
    let t = time_op(client, || {
        cubeport::copy_into(
            client,
            input.clone(),
            cubeport::TensorMut::contiguous(&dst, &[n], dtype),
        )
    })
    .ok()
    .flatten()?;
    Some(2.0 * bytes as f64 / t.as_secs_f64() / 1e9)
}

/// Median time of one op: launches in batches between two device syncs (so host launch cost
/// overlaps device work, as in a real pipeline), 5 batches after a warm-up.
fn time_op<R: Runtime>(
    client: &ComputeClient<R>,
    mut op: impl FnMut() -> Result<(), Error>,
) -> Result<Option<Duration>, Error> {
    let sync = cubeport::testing::sync::<R>;
    op()?;
    sync(client)?;
    let t0 = Instant::now();
    op()?;
    sync(client)?;
    let once = t0.elapsed().max(Duration::from_micros(1));
    let per_batch =
        ((Duration::from_millis(30).as_secs_f64() / once.as_secs_f64()) as usize).clamp(1, 200);
    let mut samples = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..per_batch {
            op()?;
        }
        sync(client)?;
        samples.push(t.elapsed() / per_batch as u32);
    }
    samples.sort();
    Ok(Some(samples[samples.len() / 2]))
}

fn cross_check(rows: &mut [Row]) {
    let n = rows.len();
    for i in 0..n {
        for j in 0..i {
            let (a, b) = (&rows[j], &rows[i]);
            if a.backend == b.backend
                || a.case.kind != b.case.kind
                || a.case.dtype != b.case.dtype
                || a.shape != b.shape
            {
                continue;
            }
            if let (Ok(ma), Ok(mb)) = (&a.outcome, &b.outcome) {
                // Each backend is within `tol` of the reference, so they agree within 2·tol.
                let c = compare_each(&mb.output, &ma.output, |k| ma.tol[k].doubled());
                rows[i].agreement = Some((c.max_abs, c.ok()));
            }
        }
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<16} {:<5} {:<5} {:<12} {:<22} {:>10} {:>10} {:<5} {:>12} {:>9} {:>9} {:>7}",
        "kernel",
        "back",
        "dtype",
        "shape",
        "variant",
        "max_abs",
        "max_rel",
        "ok",
        "vs_other",
        "time_us",
        "GB/s",
        "%copy"
    );
    for r in rows {
        let shape = r
            .shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x");
        match &r.outcome {
            Ok(m) => {
                let agree = match r.agreement {
                    Some((d, true)) => format!("{d:.1e}"),
                    Some((d, false)) => format!("DIFF {d:.1e}"),
                    None => "-".to_string(),
                };
                let pct = match (m.gbps, m.copy_gbps) {
                    (Some(g), Some(c)) => format!("{:.0}%", 100.0 * g / c),
                    _ => "-".into(),
                };
                println!(
                    "{:<16} {:<5} {:<5} {:<12} {:<22} {:>10.2e} {:>10.2e} {:<5} {:>12} {:>9} {:>9} {:>7}",
                    r.case.name(),
                    r.backend.name(),
                    r.case.dtype.name(),
                    shape,
                    m.variant,
                    m.cmp.max_abs,
                    m.cmp.max_rel,
                    if m.cmp.ok() { "ok" } else { "FAIL" },
                    agree,
                    m.time
                        .map_or("-".into(), |t| format!("{:.1}", t.as_secs_f64() * 1e6)),
                    match (m.gbps, m.tflops) {
                        (Some(g), _) => format!("{g:.1}"),
                        (None, Some(t)) if t >= 1.0 => format!("{t:.1}TF"),
                        (None, Some(t)) => format!("{:.1}GF", t * 1e3),
                        _ => "-".into(),
                    },
                    pct,
                );
                if !m.cmp.ok() {
                    println!("    {}", m.cmp);
                }
            }
            Err(e) => println!(
                "{:<16} {:<5} {:<5} {:<12} ERROR {e}",
                r.case.name(),
                r.backend.name(),
                r.case.dtype.name(),
                shape
            ),
        }
    }
    if rows
        .iter()
        .any(|r| matches!(r.case.kind, Kind::Matmul { .. }))
    {
        println!(
            "matmul rows: shape m x n x k; TF / GF = TFLOP/s / GFLOP/s (2 per multiply-add), no copy ceiling"
        );
    }
    let mut seen = Vec::new();
    for r in rows {
        if let Ok(Measured {
            copy_gbps: Some(c), ..
        }) = &r.outcome
        {
            let key = (r.backend, r.case.dtype);
            if !seen.contains(&key) {
                seen.push(key);
                println!(
                    "ceiling {} {}: device copy (cubeport copy kernel, read+write) {:.1} GB/s",
                    r.backend, r.case.dtype, c
                );
            }
        }
    }
}
