//! `cubeport bench`: where every kernel stands against ceilings measured in the same run.
//!
//! For each backend with a device:
//! 1. **Ceilings**: device copy bandwidth (cubeport's vector copy of the largest buffer the sweep
//!    uses) and the FMA peak per dtype (8 independent FMA chains per unit, f32 and f16). Every
//!    kernel computes in f32, so the f32 peak is the compute roof of all of them (tensor-core
//!    matmuls can exceed it; no tensor-core ceiling is measured here — `benches/matmul.rs`
//!    compares them with cuBLAS).
//! 2. **Kernels**: the cases of `cubeport::cases` (shared with the criterion benches; each checked
//!    against the CPU reference when built), timed, placed on the roofline: arithmetic intensity
//!    = FLOPs / bytes, attainable = min(copy bandwidth × intensity, FMA peak), % of that.
//! 3. **Launch overhead**: a 1-element copy launched back to back and launch + sync; the vector
//!    add swept from 1 element to 1 GiB per operand (inputs rotated across copies totalling
//!    ≥ 512 MiB so the L2 cache does not serve them); the latency floor and the knee (the first
//!    size whose time is twice the floor).
//! 4. **Transfers**: host→device (`create_from_slice`) and device→host (`read_one`) bandwidth
//!    across sizes; the JIT cost of the first launch of an op in the process vs a warm launch.
//! 5. **Vendor GEMM** (CUDA): cuBLAS through cudarc (`cubeport::cases::cublas_case`, the same
//!    seeded inputs as the matmul cases) per dtype at one square size; every matmul point also
//!    reports its % of it.
//! 6. **Sweeps**: one op per family (`cubeport::cases::SweepOp`: bias+GELU, sum, softmax,
//!    transpose, histogram, f32 and tensor-core f16 matmul) over a geometric sweep of sizes (the
//!    memory-bound ones to 64 Mi elements, matmul to 8192³), each point checked against the
//!    reference before it is timed: throughput versus size. Memory-bound points rotate over
//!    copies on distinct buffers totalling ≥ 512 MiB (`Case::rotating`), so small sizes are not
//!    served from the L2 cache.
//! 7. **Phases**: the wall time of each part of the run (set-up — inputs, uploads, reference
//!    checks — apart from timing), so a slow run says where its time went.
//!
//! Timing: launches batched between syncs (≥ 20 ms per batch), warm-up until two batches agree
//! within 3%, median of 7 batches. Kernels and ceilings use the backend's device timers where it
//! has them (`Caps::device_timing`: wgpu's timestamp queries, through cubecl's `client.profile`,
//! one launch per profile; `--host-timing` turns that off). The timers are checked once: the copy
//! ceiling is timed both ways, and device times under 70% of the host time (timers that miss
//! work) switch the whole backend to the host clock, said in the report's `timing`. cubecl
//! 0.10's CUDA runtime reports host time there
//! (`TimingMethod::System`). Launch overhead, transfers and JIT are host-clock by definition
//! (what a caller waits). cubecl exposes no graph capture, so the launch report has no graph
//! variant.
//!
//! Output: a table on stdout, `--json FILE` (schema `docs/bench.schema.json`, checked by
//! `tests/bench_json.rs`), `--plots DIR` (SVG: `roofline-<backend>.svg`, `launch-<backend>.svg`,
//! `transfers-<backend>.svg`, `throughput-<backend>.svg`). `--quick` uses small sizes (under a minute on lavapipe).

use cubeport::cases::{self, Case, Scale};
use cubeport::cubecl::prelude::*;
use cubeport::testing::{seeded, sync};
use cubeport::{Activation, BackendKind, DeviceTensor, Error, PinnedBuffer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `cubeport bench`.
#[derive(clap::Args, Default)]
pub struct BenchArgs {
    /// Only this backend (`cuda` or `wgpu`).
    #[arg(long)]
    backend: Option<String>,
    /// Families to run (comma-separated): activation, reduce, transpose, histogram, matmul.
    /// Default: all.
    #[arg(long, value_delimiter = ',')]
    family: Vec<String>,
    /// Write the report as JSON (schema: docs/bench.schema.json).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write SVG charts into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// Small sizes and fewer samples (under a minute on lavapipe).
    #[arg(long)]
    quick: bool,
    /// Time kernels with the host clock even where the backend has device timers.
    #[arg(long)]
    host_timing: bool,
    /// Measure nothing: redraw the charts of an earlier `--json` report into `--plots`.
    #[arg(long, requires = "plots")]
    replot: Option<PathBuf>,
}

pub const SCHEMA: &str = "cubeport-bench/4";

#[derive(Serialize, Deserialize)]
struct Report {
    schema: String,
    created_unix: u64,
    quick: bool,
    backends: Vec<BackendReport>,
}

#[derive(Serialize, Deserialize)]
struct BackendReport {
    backend: String,
    runtime: String,
    device: String,
    timing: String,
    ceilings: Ceilings,
    kernels: Vec<KernelPoint>,
    launch: Launch,
    transfers: Vec<Transfer>,
    /// Per-op host cost of small ops.
    #[serde(default)]
    ops: Vec<OpOverhead>,
    /// An upload on one thread during kernels of another.
    #[serde(default)]
    overlap: Option<Overlap>,
    jit: Jit,
    /// Throughput versus size, one op per family.
    #[serde(default)]
    sweeps: Vec<Sweep>,
    /// Wall-clock seconds of each part of the run, setup (inputs, uploads, reference checks)
    /// apart from timing.
    #[serde(default)]
    phases: Vec<Phase>,
}

#[derive(Serialize, Deserialize)]
struct Phase {
    name: String,
    seconds: f64,
}

/// Wall-clock bookkeeping of [`BackendReport::phases`]: each [`Phases::next`] closes the
/// phase before it.
struct Phases {
    done: Vec<Phase>,
    current: Option<(String, Instant)>,
}

impl Phases {
    fn new() -> Self {
        Phases {
            done: Vec::new(),
            current: None,
        }
    }

    fn next(&mut self, name: impl Into<String>) {
        self.close();
        self.current = Some((name.into(), Instant::now()));
    }

    fn close(&mut self) {
        if let Some((name, t)) = self.current.take() {
            self.done.push(Phase {
                name,
                seconds: t.elapsed().as_secs_f64(),
            });
        }
    }

    fn finish(mut self) -> Vec<Phase> {
        self.close();
        self.done
    }
}

#[derive(Serialize, Deserialize)]
struct Sweep {
    family: String,
    op: String,
    dtype: String,
    points: Vec<SizePoint>,
}

#[derive(Serialize, Deserialize)]
struct SizePoint {
    size: String,
    variant: String,
    bytes: u64,
    flops: u64,
    seconds: f64,
    gbps: f64,
    gflops: f64,
}

#[derive(Serialize, Deserialize)]
struct Ceilings {
    copy_gbps: f64,
    fma_gflops: BTreeMap<String, f64>,
    /// The vendor GEMM (cuBLAS through cudarc) where the backend is CUDA, measured in the run.
    #[serde(default)]
    vendor_gemm: Option<VendorGemm>,
}

#[derive(Serialize, Deserialize)]
struct VendorGemm {
    library: String,
    size: String,
    /// GFLOP/s per dtype (`f32`: sgemm without TF32; `f16`, `bf16`: gemmEx, f32 compute).
    gflops: BTreeMap<String, f64>,
}

#[derive(Serialize, Deserialize, Clone)]
struct KernelPoint {
    family: String,
    variant: String,
    dtype: String,
    size: String,
    seconds: f64,
    bytes: u64,
    flops: u64,
    gbps: f64,
    gflops: f64,
    intensity: f64,
    bound: String,
    pct_of_roof: f64,
    /// Matmul: GFLOP/s as % of the vendor GEMM of the same dtype, when one was measured.
    #[serde(default)]
    pct_of_vendor: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct Launch {
    trivial_batched_us: f64,
    trivial_sync_us: f64,
    floor_us: f64,
    knee_bytes: Option<u64>,
    sweep: Vec<SweepPoint>,
    graphs: Option<f64>,
    graphs_note: String,
}

/// Host cost of one op as a framework calls it: `calls` calls back to back, then one sync.
#[derive(Serialize, Deserialize)]
struct OpOverhead {
    op: String,
    shape: Vec<usize>,
    /// `first_launch` (the default) or `every_op`.
    checking: String,
    us_per_op: f64,
}

/// Whether an upload from one thread overlaps kernels launched from another.
#[derive(Serialize, Deserialize)]
struct Overlap {
    bytes: u64,
    upload_s: f64,
    kernels_s: f64,
    both_s: f64,
}

#[derive(Serialize, Deserialize)]
struct SweepPoint {
    elems: u64,
    bytes: u64,
    seconds: f64,
    gbps: f64,
}

#[derive(Serialize, Deserialize)]
struct Transfer {
    bytes: u64,
    h2d_gbps: f64,
    d2h_gbps: f64,
    /// From / into a `PinnedBuffer` (page-locked on CUDA).
    #[serde(default)]
    h2d_pinned_gbps: Option<f64>,
    #[serde(default)]
    d2h_pinned_gbps: Option<f64>,
}

#[derive(Serialize, Deserialize)]
struct Jit {
    op: String,
    first_ms: f64,
    warm_us: f64,
}

/// How a batch of launches is timed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// Host clock between two device syncs (what a caller waits; includes launch overhead).
    Host,
    /// The backend's device timers through `client.profile` (wgpu timestamp queries; CUDA
    /// reports `TimingMethod::System`, i.e. host time, through the same call).
    Device,
}

/// Median seconds per launch of `run`, batched between syncs (`wait`), after a stabilizing
/// warm-up; with [`Clock::Device`] each batch is timed by the device's own timers.
fn time_launch<R: Runtime>(
    client: &ComputeClient<R>,
    quick: bool,
    clock: Clock,
    run: &mut (dyn FnMut() -> Result<(), Error> + Send),
    wait: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<f64, Error> {
    run()?;
    wait()?;
    let t = Instant::now();
    run()?;
    wait()?;
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let target = if quick { 0.005 } else { 0.02 };
    let batch = ((target / once) as usize).clamp(1, 2000);
    let mut timed = |n: usize| -> Result<f64, Error> {
        wait()?;
        if clock == Clock::Device {
            // One launch per profile. Profiles around batches of launches gave impossible
            // times on wgpu-Vulkan over NVIDIA's driver (a 1M-f32 copy in 0.11 µs: about one
            // launch's time divided by the batch length, as if the timestamps bracketed only
            // part of the batch); a single launch is all the timestamps have to bracket.
            let n = n.min(32);
            let mut total = 0.0;
            for _ in 0..n {
                let run = &mut *run;
                let (out, duration) =
                    client
                        .profile(run, "cubeport bench")
                        .map_err(|e| Error::Launch {
                            op: "profile",
                            message: e.to_string(),
                        })?;
                out?;
                total += cubecl::future::block_on(duration.resolve())
                    .duration()
                    .as_secs_f64();
            }
            return Ok(total / n as f64);
        }
        let t = Instant::now();
        for _ in 0..n {
            run()?;
        }
        wait()?;
        Ok(t.elapsed().as_secs_f64() / n as f64)
    };
    let mut last = timed(batch)?;
    for _ in 0..8 {
        let now = timed(batch)?;
        let stable = (now - last).abs() <= 0.03 * last;
        last = now;
        if stable {
            break;
        }
    }
    let mut samples: Vec<f64> = (0..if quick { 3 } else { 7 })
        .map(|_| timed(batch))
        .collect::<Result<_, _>>()?;
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

/// [`time_launch`] of a case: device timers when the backend has them and the case runs on
/// the client, else host time around the case's own sync.
fn time_case<R: Runtime>(
    client: &ComputeClient<R>,
    quick: bool,
    clock: Clock,
    case: &mut Case<'_>,
) -> Result<f64, Error> {
    let (run, own_sync) = case.split();
    match own_sync {
        // A vendor library on its own stream: host time around that stream's sync.
        Some(wait) => time_launch(client, quick, Clock::Host, run, wait),
        None => time_launch(client, quick, clock, run, &mut || sync(client)),
    }
}

pub fn run(args: BenchArgs) -> ExitCode {
    if let (Some(json), Some(dir)) = (&args.replot, &args.plots) {
        let report: Result<Report, String> = std::fs::read_to_string(json)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()));
        return match report {
            Ok(r) => {
                for b in &r.backends {
                    if let Err(e) = plots::write_all(dir, b) {
                        eprintln!("plots for {}: {e}", b.backend);
                        return ExitCode::FAILURE;
                    }
                }
                eprintln!("wrote charts of {} into {}", json.display(), dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("reading {}: {e}", json.display());
                ExitCode::FAILURE
            }
        };
    }
    let only = match args
        .backend
        .as_deref()
        .map(str::parse::<BackendKind>)
        .transpose()
    {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut visitor = Visit {
        args: &args,
        report: Report {
            schema: SCHEMA.to_string(),
            created_unix: 0,
            quick: args.quick,
            backends: Vec::new(),
        },
        failed: false,
    };
    let visited = cubeport::testing::visit_backends("bench", only, &mut visitor);
    if visited == 0 {
        eprintln!("no backend has a usable device; see `cubeport devices`");
        return ExitCode::FAILURE;
    }
    if visitor.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

struct Visit<'a> {
    args: &'a BenchArgs,
    /// The backends measured so far (written after each).
    report: Report,
    failed: bool,
}

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        match bench_backend(&client, kind, self.args) {
            Ok(r) => {
                self.report.backends.push(r);
                // Written after every backend, so a run cut short keeps what it measured.
                if let Err(e) = self.write() {
                    eprintln!("{e}");
                    self.failed = true;
                }
            }
            Err(e) => {
                eprintln!("bench on {kind} failed: {e}");
                self.failed = true;
            }
        }
    }
}

impl Visit<'_> {
    /// Writes the report so far (`--json`) and the charts of its last backend (`--plots`).
    fn write(&mut self) -> Result<(), String> {
        if let Some(path) = &self.args.json {
            self.report.created_unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            serde_json::to_string_pretty(&self.report)
                .map_err(|e| e.to_string())
                .and_then(|s| std::fs::write(path, s).map_err(|e| e.to_string()))
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        if let (Some(dir), Some(b)) = (&self.args.plots, self.report.backends.last()) {
            plots::write_all(dir, b).map_err(|e| format!("plots for {}: {e}", b.backend))?;
            eprintln!("wrote charts of {} into {}", b.backend, dir.display());
        }
        Ok(())
    }
}

/// The report's matmul points: every variant at `--quick` sizes; at full scale the automatic
/// choice and its fused epilogue only (the variant-by-variant comparison with cuBLAS and cubek
/// is `cargo bench --bench matmul`, which shares these cases).
fn report_matmul_cases<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    match scale {
        Scale::Quick => cases::matmul_cases::<R, E>(client, scale),
        Scale::Full => cases::matmul_cases_for::<R, E>(client, &cases::matmul_sizes(scale), &[]),
    }
}

/// How many copies of a working set of `bytes` to launch in turn so that together they pass
/// 512 MiB (ten times the H200's L2 cache) and no launch finds its inputs cached: 1 to 8.
fn rotation_copies(bytes: u64) -> usize {
    (512u64 << 20).div_ceil(bytes.max(1)).clamp(1, 8) as usize
}

fn progress(total: u64, what: &str) -> indicatif::ProgressBar {
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(total)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(what.to_string());
    bar
}

fn bench_backend<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    kind: BackendKind,
    args: &BenchArgs,
) -> Result<BackendReport, Error> {
    let caps = cubeport::caps_of(client);
    let quick = args.quick;
    let scale = if quick { Scale::Quick } else { Scale::Full };
    let mut clock = if caps.device_timing && !args.host_timing {
        Clock::Device
    } else {
        Clock::Host
    };
    let mut timing_note = String::new();
    let wants = |f: &str| args.family.is_empty() || args.family.iter().any(|x| x == f);
    let mut phases = Phases::new();

    // JIT first: the first launch of softmax in this process vs warm launches.
    phases.next("jit");
    let jit = {
        let x = DeviceTensor::from_slice(client, &seeded::<f32>(5, 4096, -1.0, 1.0), &[4, 1024])?;
        let mut y = DeviceTensor::<f32>::empty(client, &[4, 1024])?;
        sync(client)?;
        let t = Instant::now();
        cubeport::log_softmax_into(client, x.as_ref(), y.as_mut(), 1)?;
        sync(client)?;
        let first = t.elapsed();
        let warm = time_launch(
            client,
            true,
            Clock::Host,
            &mut || cubeport::log_softmax_into(client, x.as_ref(), y.as_mut(), 1),
            &mut || sync(client),
        )?;
        Jit {
            op: "log_softmax 4x1024 f32".into(),
            first_ms: first.as_secs_f64() * 1e3,
            warm_us: warm * 1e6,
        }
    };

    // Ceilings.
    phases.next("ceilings");
    let copy_elems = if quick {
        4 << 20
    } else {
        (256usize << 20).min(caps.max_alloc_bytes as usize / 4)
    };
    let mut copy = cases::copy_case(client, copy_elems)?;
    let mut copy_s = time_case(client, quick, clock, &mut copy)?;
    if clock == Clock::Device {
        // The device timers must see the whole kernel: a copy this large amortizes launch
        // overhead, so host time around batched launches bounds the device time from above
        // and may exceed it only by that overhead. Timers that report far less than the host
        // waited are not bracketing the work; the whole backend falls back to the host clock.
        let host_s = time_case(client, quick, Clock::Host, &mut copy)?;
        if copy_s < 0.7 * host_s {
            timing_note = format!(
                "; device timers rejected: a {copy_elems}-element copy took {} by the device \
                 timers but {} by the host clock, so every kernel is host-timed",
                fmt_time(copy_s),
                fmt_time(host_s)
            );
            eprintln!("{kind}: {}", timing_note.trim_start_matches("; "));
            clock = Clock::Host;
            copy_s = host_s;
        }
    }
    let copy_gbps = copy.bytes as f64 / copy_s / 1e9;
    drop(copy);
    let mut fma_gflops = BTreeMap::new();
    {
        let mut c32 = cases::fma_case::<R, f32>(client, scale)?;
        let s = time_case(client, quick, clock, &mut c32)?;
        fma_gflops.insert("f32".to_string(), c32.flops as f64 / s / 1e9);
    }
    if caps.f16 {
        let mut c16 = cases::fma_case::<R, half::f16>(client, scale)?;
        let s = time_case(client, quick, clock, &mut c16)?;
        fma_gflops.insert("f16".to_string(), c16.flops as f64 / s / 1e9);
    }

    // The vendor GEMM (CUDA only): cuBLAS on the same seeded inputs as the matmul cases.
    let vendor_gemm = if kind == BackendKind::Cuda && wants("matmul") {
        phases.next("vendor gemm");
        let side = if quick { 512 } else { 4096 };
        let mut gflops = BTreeMap::new();
        for dtype in [
            cubeport::DType::F32,
            cubeport::DType::F16,
            cubeport::DType::BF16,
        ] {
            match cases::cublas_case_of(dtype, side, side, side) {
                Ok(mut case) => {
                    let s = time_case(client, quick, clock, &mut case)?;
                    gflops.insert(dtype.to_string(), case.flops as f64 / s / 1e9);
                }
                Err(e) => eprintln!("SKIP vendor gemm {dtype}: {e}"),
            }
        }
        (!gflops.is_empty()).then(|| VendorGemm {
            library: "cuBLAS (cudarc)".into(),
            size: format!("{side}x{side}x{side}"),
            gflops,
        })
    } else {
        None
    };

    // Kernels.
    let mut kernels = Vec::new();
    type MakeCases<'c> = Box<dyn Fn() -> Result<Vec<Case<'c>>, Error> + 'c>;
    let mut families: Vec<(&str, &str, MakeCases<'c>)> = vec![
        (
            "activation",
            "",
            Box::new(move || cases::activation_cases(client, scale)),
        ),
        (
            "reduce",
            "",
            Box::new(move || cases::reduce_cases(client, scale)),
        ),
        (
            "transpose",
            "",
            Box::new(move || cases::transpose_cases(client, scale)),
        ),
        (
            "histogram",
            "",
            Box::new(move || cases::histogram_cases(client, scale)),
        ),
        (
            "matmul",
            " f32",
            Box::new(move || report_matmul_cases::<R, f32>(client, scale)),
        ),
    ];
    if caps.f16 {
        families.push((
            "matmul",
            " f16",
            Box::new(move || report_matmul_cases::<R, half::f16>(client, scale)),
        ));
    }
    if caps.bf16 {
        families.push((
            "matmul",
            " bf16",
            Box::new(move || report_matmul_cases::<R, half::bf16>(client, scale)),
        ));
    }
    for (family, dtype, make) in families {
        if !wants(family) {
            continue;
        }
        phases.next(format!("{family}{dtype} setup"));
        let mut built = make()?;
        phases.next(format!("{family}{dtype} timing"));
        let bar = progress(built.len() as u64, &format!("{kind} {family}"));
        for case in built.iter_mut() {
            bar.set_message(format!("{} {}", case.variant, case.size));
            if quick && case.variant == "naive" && case.family == "matmul" {
                bar.inc(1);
                continue;
            }
            let s = time_case(client, quick, clock, case)?;
            // Every kernel computes in f32 (f16/bf16 are storage types), so the f32 FMA peak
            // is the compute roof; tensor-core kernels are measured against it too.
            let peak = fma_gflops.get("f32").copied().unwrap_or(0.0);
            let dtype = case.dtype.to_string();
            let mut p = point(case, &dtype, s, copy_gbps, peak);
            if case.family == "matmul" {
                p.pct_of_vendor = vendor_gemm
                    .as_ref()
                    .and_then(|v| v.gflops.get(&dtype))
                    .map(|v| 100.0 * p.gflops / v);
            }
            kernels.push(p);
            bar.inc(1);
        }
        bar.finish_and_clear();
    }

    // Throughput versus size: one op per family over a geometric sweep of sizes.
    let mut sweeps = Vec::new();
    // 64 Mi elements: every memory-bound sweep has reached its plateau there (256 MiB per
    // operand, five times the H200's L2); matmul sweeps go to 8192³ regardless.
    let max_elems = if quick {
        1 << 20
    } else {
        (64usize << 20).min(caps.max_alloc_bytes as usize / 4)
    };
    let mut ops = vec![
        cases::SweepOp::BiasGelu,
        cases::SweepOp::SumAll,
        cases::SweepOp::Softmax1024,
        cases::SweepOp::Transpose,
        cases::SweepOp::Histogram256,
        cases::SweepOp::Matmul(cubeport::DType::F32),
    ];
    if caps.tensor_cores && caps.f16 {
        ops.push(cases::SweepOp::Matmul(cubeport::DType::F16));
    }
    for op in ops {
        // `--family reduce` covers the row-wise ops (softmax, GEMV) as it does for the cases.
        let filter = if op.family() == "softmax" {
            "reduce"
        } else {
            op.family()
        };
        if !wants(filter) {
            continue;
        }
        let sizes = op.sizes(match op {
            cases::SweepOp::Matmul(_) if quick => 512 * 512 * 4,
            cases::SweepOp::Matmul(_) => 16384 * 16384,
            _ => max_elems,
        });
        phases.next(format!("sweep {}", op.name()));
        let bar = progress(sizes.len() as u64, &format!("{kind} sweep {}", op.family()));
        let mut points = Vec::new();
        for n in sizes {
            let first = cases::sweep_case(client, op, n)?;
            // Memory-bound points rotate over copies totalling ≥ 512 MiB (as the launch sweep),
            // so sizes under the L2 cache are not served from it; matmul reuses its operands
            // from cache by design and is not rotated.
            let copies = if matches!(op, cases::SweepOp::Matmul(_)) {
                1
            } else {
                rotation_copies(first.bytes)
            };
            let mut set = vec![first];
            for _ in 1..copies {
                set.push(cases::sweep_case(client, op, n)?);
            }
            let Some(mut case) = Case::rotating(set) else {
                continue;
            };
            let s = time_case(client, quick, clock, &mut case)?;
            points.push(SizePoint {
                size: case.size.clone(),
                variant: case.variant.clone(),
                bytes: case.bytes,
                flops: case.flops,
                seconds: s,
                gbps: case.bytes as f64 / s / 1e9,
                gflops: case.flops as f64 / s / 1e9,
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        let dtype = match op {
            cases::SweepOp::Matmul(d) => d.to_string(),
            _ => "f32".into(),
        };
        sweeps.push(Sweep {
            family: op.family().into(),
            op: op.name(),
            dtype,
            points,
        });
    }

    // Launch overhead and the size sweep of the vector add.
    phases.next("launch");
    let mut one = cases::copy_case(client, 1)?;
    // Launch overhead is what a caller waits: host clock, whatever the backend's timers.
    let trivial_batched = time_case(client, quick, Clock::Host, &mut one)?;
    let mut lat = Vec::new();
    for _ in 0..if quick { 20 } else { 200 } {
        let t = Instant::now();
        one.run()?;
        sync(client)?;
        lat.push(t.elapsed().as_secs_f64());
    }
    lat.sort_by(f64::total_cmp);
    let trivial_sync = lat[lat.len() / 2];
    let max_elems = if quick {
        4 << 20
    } else {
        (256usize << 20).min(caps.max_alloc_bytes as usize / 4)
    };
    let mut sweep = Vec::new();
    let mut elems = 1usize;
    let steps = (max_elems as f64).log(4.0).ceil() as u64 + 1;
    let bar = progress(steps, &format!("{kind} launch"));
    while elems <= max_elems {
        let bytes = 3 * elems * 4;
        // Rotate across copies so the whole working set exceeds the L2 cache.
        let copies = rotation_copies(bytes as u64);
        // One upload; the other copies are device copies of it (distinct buffers are all the
        // rotation needs, and uploads are the slow part of the set-up).
        let x = DeviceTensor::from_slice(client, &seeded::<f32>(98, elems, -1.0, 1.0), &[elems])?;
        let b = DeviceTensor::from_slice(client, &seeded::<f32>(99, elems, -1.0, 1.0), &[elems])?;
        let mut sets = Vec::new();
        for _ in 1..copies {
            let mut xc = DeviceTensor::<f32>::empty(client, &[elems])?;
            let mut bc = DeviceTensor::<f32>::empty(client, &[elems])?;
            cubeport::copy_into(client, x.as_ref(), xc.as_mut())?;
            cubeport::copy_into(client, b.as_ref(), bc.as_mut())?;
            sets.push((xc, bc, DeviceTensor::<f32>::empty(client, &[elems])?));
        }
        sets.push((x, b, DeviceTensor::<f32>::empty(client, &[elems])?));
        let mut i = 0;
        let s = time_launch(
            client,
            quick,
            Clock::Host,
            &mut || {
                let (x, b, y) = &mut sets[i % copies];
                i += 1;
                cubeport::bias_activation_into(
                    client,
                    x.as_ref(),
                    b.as_ref(),
                    y.as_mut(),
                    Activation::Identity,
                )
            },
            &mut || sync(client),
        )?;
        sweep.push(SweepPoint {
            elems: elems as u64,
            bytes: bytes as u64,
            seconds: s,
            gbps: bytes as f64 / s / 1e9,
        });
        bar.inc(1);
        elems = if elems == max_elems {
            max_elems + 1
        } else {
            (elems * 4).min(max_elems)
        };
    }
    bar.finish_and_clear();
    let floor = sweep
        .iter()
        .map(|p| p.seconds)
        .fold(f64::INFINITY, f64::min);
    let knee = sweep
        .iter()
        .find(|p| p.seconds >= 2.0 * floor)
        .map(|p| p.bytes);

    // Transfers.
    phases.next("transfers");
    let mut transfers = Vec::new();
    let mut bytes = 4usize << 10;
    let max_t = if quick {
        16 << 20
    } else {
        (256usize << 20).min(caps.max_alloc_bytes as usize)
    };
    while bytes <= max_t {
        let n = bytes / 4;
        let host: Vec<f32> = seeded(7, n, -1.0, 1.0);
        let reps = if bytes < (1 << 20) { 20 } else { 5 };
        let mut up = Vec::new();
        let mut down = Vec::new();
        for _ in 0..reps {
            sync(client)?;
            let t = Instant::now();
            let d = DeviceTensor::from_slice(client, &host, &[n])?;
            sync(client)?;
            up.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let back = d.to_vec(client)?;
            down.push(t.elapsed().as_secs_f64());
            if back.len() != n {
                return Err(Error::Read {
                    message: "short read".into(),
                });
            }
        }
        up.sort_by(f64::total_cmp);
        down.sort_by(f64::total_cmp);
        let (mut pup, mut pdown) = (Vec::new(), Vec::new());
        let mut pinned = PinnedBuffer::<f32>::new(client, n)?;
        pinned.copy_from_slice(&host);
        for _ in 0..reps {
            sync(client)?;
            let t = Instant::now();
            let d = DeviceTensor::from_pinned(client, &pinned, &[n])?;
            sync(client)?;
            pup.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            d.read_into(client, &mut pinned)?;
            pdown.push(t.elapsed().as_secs_f64());
        }
        if pinned[..] != host[..] {
            return Err(Error::Read {
                message: "pinned round trip changed the data".into(),
            });
        }
        pup.sort_by(f64::total_cmp);
        pdown.sort_by(f64::total_cmp);
        let pinned_rate = |v: &[f64]| pinned.is_pinned().then(|| bytes as f64 / v[reps / 2] / 1e9);
        transfers.push(Transfer {
            bytes: bytes as u64,
            h2d_gbps: bytes as f64 / up[reps / 2] / 1e9,
            d2h_gbps: bytes as f64 / down[reps / 2] / 1e9,
            h2d_pinned_gbps: pinned_rate(&pup),
            d2h_pinned_gbps: pinned_rate(&pdown),
        });
        bytes *= 4;
    }

    let overlap = measure_overlap(client, max_t)?;
    phases.next("ops");
    let ops = time_ops(client, quick)?;

    let report = BackendReport {
        backend: kind.to_string(),
        runtime: caps.runtime_name.to_string(),
        device: cubeport::backends::available()
            .into_iter()
            .find(|s| s.kind == kind)
            .and_then(|s| s.device.ok())
            .unwrap_or_default(),
        timing: match clock {
            Clock::Device => "kernels and ceilings: device timers (cubecl client.profile), one \
                              launch per profile, checked against the host clock on the copy \
                              ceiling; launch overhead, transfers, JIT: host clock around device \
                              syncs"
                .to_string(),
            Clock::Host => "host clock around device syncs, batched launches".to_string(),
        } + &timing_note,
        ceilings: Ceilings {
            copy_gbps,
            fma_gflops,
            vendor_gemm,
        },
        kernels,
        launch: Launch {
            trivial_batched_us: trivial_batched * 1e6,
            trivial_sync_us: trivial_sync * 1e6,
            floor_us: floor * 1e6,
            knee_bytes: knee,
            sweep,
            graphs: None,
            graphs_note: "cubecl 0.10 exposes no graph capture or launch batching API".into(),
        },
        transfers,
        ops,
        overlap,
        jit,
        sweeps,
        phases: phases.finish(),
    };
    print_report(&report);
    Ok(report)
}

/// µs per op of small ops called back to back the way a framework calls them (host clock, one
/// sync per batch), in both checking modes; each op's first call (its compile and checked
/// launch) is outside the timing.
fn time_ops<R: Runtime>(client: &ComputeClient<R>, quick: bool) -> Result<Vec<OpOverhead>, Error> {
    use cubeport::{Checking, Reduction};
    let x1k = DeviceTensor::from_slice(client, &seeded::<f32>(3, 1024, -1.0, 1.0), &[1024])?;
    let b1k = DeviceTensor::from_slice(client, &seeded::<f32>(4, 1024, -1.0, 1.0), &[1024])?;
    let mut y1k = DeviceTensor::<f32>::empty(client, &[1024])?;
    let x64k =
        DeviceTensor::from_slice(client, &seeded::<f32>(5, 1 << 16, -1.0, 1.0), &[64, 1024])?;
    let b64k = DeviceTensor::from_slice(client, &seeded::<f32>(6, 1024, -1.0, 1.0), &[1024])?;
    let mut y64k = DeviceTensor::<f32>::empty(client, &[64, 1024])?;
    let s = DeviceTensor::from_slice(client, &seeded::<f32>(7, 32 * 128, -4.0, 4.0), &[32, 128])?;
    let m = DeviceTensor::from_slice(client, &seeded::<f32>(8, 64 * 64, -1.0, 1.0), &[64, 64])?;
    let calls = if quick { 200 } else { 5000 };
    let mut out = Vec::new();
    for (checking, mode) in [
        (Checking::FirstLaunch, "first_launch"),
        (Checking::EveryOp, "every_op"),
    ] {
        cubeport::set_checking(checking);
        type Op<'a> = Box<dyn FnMut() -> Result<(), Error> + 'a>;
        let cases: Vec<(&str, Vec<usize>, Op<'_>)> = vec![
            (
                "add_into",
                vec![1024],
                Box::new(|| cubeport::add_into(client, x1k.as_ref(), b1k.as_ref(), y1k.as_mut())),
            ),
            (
                "add",
                vec![1024],
                Box::new(|| cubeport::add(client, &x1k, &b1k).map(drop)),
            ),
            (
                "add",
                vec![64, 1024],
                Box::new(|| cubeport::add(client, &x64k, &b64k).map(drop)),
            ),
            (
                "add_into",
                vec![64, 1024],
                Box::new(|| {
                    cubeport::add_into(client, x64k.as_ref(), b64k.as_ref(), y64k.as_mut())
                }),
            ),
            (
                "bias_gelu",
                vec![1024],
                Box::new(|| cubeport::bias_gelu(client, &x1k, &b1k).map(drop)),
            ),
            (
                "bias_gelu",
                vec![64, 1024],
                Box::new(|| cubeport::bias_gelu(client, &x64k, &b64k).map(drop)),
            ),
            (
                "softmax",
                vec![32, 128],
                Box::new(|| cubeport::softmax(client, &s).map(drop)),
            ),
            (
                "sum_rows",
                vec![64, 1024],
                Box::new(|| cubeport::reduce(client, &x64k, Some(1), Reduction::Sum).map(drop)),
            ),
            (
                "matmul",
                vec![64, 64, 64],
                Box::new(|| cubeport::matmul(client, &m, &m).map(drop)),
            ),
        ];
        for (op, shape, mut run) in cases {
            for _ in 0..20 {
                run()?;
            }
            sync(client)?;
            let mut samples = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                for _ in 0..calls {
                    run()?;
                }
                sync(client)?;
                samples.push(t.elapsed().as_secs_f64() / calls as f64 * 1e6);
            }
            samples.sort_by(f64::total_cmp);
            out.push(OpOverhead {
                op: op.to_string(),
                shape,
                checking: mode.to_string(),
                us_per_op: samples[1],
            });
        }
    }
    cubeport::set_checking(Checking::FirstLaunch);
    Ok(out)
}

/// An upload of `bytes` on this thread, a batch of device copies of the same size on another
/// thread (its own cubecl stream), and both at once: host-clock seconds of each.
fn measure_overlap<R: Runtime>(
    client: &ComputeClient<R>,
    bytes: usize,
) -> Result<Option<Overlap>, Error> {
    let n = bytes / 4;
    let host: Vec<f32> = seeded(11, n, -1.0, 1.0);
    let src = DeviceTensor::from_slice(client, &host, &[n])?;
    let mut dst = DeviceTensor::<f32>::empty(client, &[n])?;
    let kernels = |dst: &mut DeviceTensor<f32>| -> Result<f64, Error> {
        let t = Instant::now();
        for _ in 0..8 {
            cubeport::copy_into(client, src.as_ref(), dst.as_mut())?;
        }
        sync(client)?;
        Ok(t.elapsed().as_secs_f64())
    };
    let upload = || -> Result<f64, Error> {
        let t = Instant::now();
        let d = DeviceTensor::from_slice(client, &host, &[n])?;
        sync(client)?;
        drop(d);
        Ok(t.elapsed().as_secs_f64())
    };
    kernels(&mut dst)?;
    upload()?;
    let kernels_s = kernels(&mut dst)?;
    let upload_s = upload()?;
    let t = Instant::now();
    let (k, u) = std::thread::scope(|scope| {
        let k = scope.spawn(|| kernels(&mut dst));
        let u = upload();
        (k.join(), u)
    });
    let both_s = t.elapsed().as_secs_f64();
    match k {
        Ok(r) => {
            r?;
        }
        Err(_) => {
            return Err(Error::Launch {
                op: "overlap",
                message: "the kernel thread panicked".into(),
            });
        }
    }
    u?;
    Ok(Some(Overlap {
        bytes: bytes as u64,
        upload_s,
        kernels_s,
        both_s,
    }))
}

fn point(case: &Case<'_>, dtype: &str, s: f64, copy_gbps: f64, peak_gflops: f64) -> KernelPoint {
    let gbps = case.bytes as f64 / s / 1e9;
    let gflops = case.flops as f64 / s / 1e9;
    let intensity = case.flops as f64 / case.bytes.max(1) as f64;
    let mem_roof = copy_gbps * intensity; // GFLOP/s the bandwidth allows
    let (bound, pct) = if case.flops == 0 || mem_roof < peak_gflops {
        ("memory", 100.0 * gbps / copy_gbps)
    } else {
        ("compute", 100.0 * gflops / peak_gflops.max(1e-9))
    };
    KernelPoint {
        family: case.family.to_string(),
        variant: case.variant.clone(),
        dtype: dtype.to_string(),
        size: case.size.clone(),
        seconds: s,
        bytes: case.bytes,
        flops: case.flops,
        gbps,
        gflops,
        intensity,
        bound: bound.into(),
        pct_of_roof: pct,
        pct_of_vendor: None,
    }
}

fn print_report(r: &BackendReport) {
    println!("== {} ({}) — {}", r.backend, r.runtime, r.device);
    println!(
        "ceilings: copy {:.1} GB/s; FMA {}",
        r.ceilings.copy_gbps,
        r.ceilings
            .fma_gflops
            .iter()
            .map(|(k, v)| format!("{k} {v:.0} GFLOP/s"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(v) = &r.ceilings.vendor_gemm {
        println!(
            "vendor GEMM: {} at {}: {}",
            v.library,
            v.size,
            v.gflops
                .iter()
                .map(|(k, g)| format!("{k} {g:.0} GFLOP/s"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("timing: {}", r.timing);
    println!(
        "{:<11} {:<28} {:<5} {:>16} {:>11} {:>10} {:>10} {:>8} {:>8} {:>7} {:>8}",
        "family",
        "variant",
        "dtype",
        "size",
        "time",
        "GB/s",
        "GFLOP/s",
        "FLOP/B",
        "bound",
        "% roof",
        "% vendor"
    );
    for k in &r.kernels {
        println!(
            "{:<11} {:<28} {:<5} {:>16} {:>11} {:>10.1} {:>10.1} {:>8.2} {:>8} {:>6.1}% {:>8}",
            k.family,
            k.variant,
            k.dtype,
            k.size,
            fmt_time(k.seconds),
            k.gbps,
            k.gflops,
            k.intensity,
            k.bound,
            k.pct_of_roof,
            k.pct_of_vendor.map_or("-".into(), |v| format!("{v:.1}%"))
        );
    }
    println!(
        "launch: trivial kernel {:.2} µs back to back, {:.2} µs with a sync; vector-add floor {:.2} µs, knee at {}",
        r.launch.trivial_batched_us,
        r.launch.trivial_sync_us,
        r.launch.floor_us,
        r.launch
            .knee_bytes
            .map_or("none in the sweep".into(), |b| format!("{} bytes", b))
    );
    for p in &r.launch.sweep {
        println!(
            "  add {:>10} elems {:>12} B {:>11} {:>9.1} GB/s",
            p.elems,
            p.bytes,
            fmt_time(p.seconds),
            p.gbps
        );
    }
    let opt = |v: Option<f64>| v.map_or("—".to_string(), |g| format!("{g:.2}"));
    for t in &r.transfers {
        println!(
            "transfer {:>10} B: host→device {:>7.2} GB/s (pinned {:>6}), device→host {:>7.2} GB/s (pinned {:>6})",
            t.bytes,
            t.h2d_gbps,
            opt(t.h2d_pinned_gbps),
            t.d2h_gbps,
            opt(t.d2h_pinned_gbps)
        );
    }
    if let Some(o) = &r.overlap {
        println!(
            "overlap: upload of {} B {} alone, 8 device copies {} alone on another thread, both {}              (sum {})",
            o.bytes,
            fmt_time(o.upload_s),
            fmt_time(o.kernels_s),
            fmt_time(o.both_s),
            fmt_time(o.upload_s + o.kernels_s)
        );
    }
    for o in &r.ops {
        println!(
            "op {:<10} {:<14} {:<12} {:>8.2} µs/op",
            o.op,
            format!("{:?}", o.shape),
            o.checking,
            o.us_per_op
        );
    }
    println!(
        "JIT: first {} in the process {:.1} ms, warm {:.1} µs",
        r.jit.op, r.jit.first_ms, r.jit.warm_us
    );
    for sw in &r.sweeps {
        let rates: Vec<String> = sw
            .points
            .iter()
            .map(|p| {
                if sw.family == "matmul" {
                    format!("{} {:.0} GFLOP/s", p.size, p.gflops)
                } else {
                    format!("{} {:.0} GB/s", p.size, p.gbps)
                }
            })
            .collect();
        println!(
            "sweep {} {} {}: {}",
            sw.family,
            sw.op,
            sw.dtype,
            rates.join(", ")
        );
    }
    let total: f64 = r.phases.iter().map(|p| p.seconds).sum();
    let parts: Vec<String> = r
        .phases
        .iter()
        .map(|p| format!("{} {:.1}", p.name, p.seconds))
        .collect();
    println!("wall time {total:.1} s: {}", parts.join(", "));
}

fn fmt_time(s: f64) -> String {
    let d = Duration::from_secs_f64(s.max(0.0));
    if s < 1e-3 {
        format!("{:.2} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.3} ms", d.as_secs_f64() * 1e3)
    }
}

mod plots {
    use super::BackendReport;
    use plotters::prelude::*;
    use std::path::Path;

    type Res = Result<(), Box<dyn std::error::Error>>;

    /// `1.2k`, `3.4M`, `5G`: readable log-axis labels.
    fn si(v: &f64) -> String {
        let v = *v;
        let (scaled, unit) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(s, _)| v.abs() >= *s)
            .map_or((v, ""), |(s, u)| (v / s, u));
        let text = if scaled >= 100.0 || scaled == scaled.trunc() {
            format!("{scaled:.0}")
        } else if scaled >= 1.0 {
            format!("{scaled:.1}")
        } else {
            format!("{scaled:.2}")
        };
        format!("{text}{unit}")
    }

    /// µs per op of the small ops, one bar per op and checking mode.
    fn ops(path: &Path, r: &BackendReport) -> Res {
        let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
        root.fill(&WHITE)?;
        let n = r.ops.len();
        let ymax = r.ops.iter().map(|o| o.us_per_op).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Host cost per op, calls back to back — {}", r.backend),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(120)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..n as f64, 0f64..ymax)?;
        let labels: Vec<String> = r
            .ops
            .iter()
            .map(|o| {
                let shape: Vec<String> = o.shape.iter().map(|d| d.to_string()).collect();
                format!("{} {} {}", o.op, shape.join("x"), o.checking)
            })
            .collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                labels.get(i).cloned().unwrap_or_default()
            })
            .x_label_style(
                ("sans-serif", 11)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .y_desc("µs per op")
            .draw()?;
        for (i, o) in r.ops.iter().enumerate() {
            let c = if o.checking == "first_launch" {
                PALETTE[0]
            } else {
                PALETTE[1]
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, o.us_per_op)],
                c.filled(),
            )))?;
        }
        root.present()?;
        Ok(())
    }

    pub fn write_all(dir: &Path, r: &BackendReport) -> Res {
        std::fs::create_dir_all(dir)?;
        roofline(&dir.join(format!("roofline-{}.svg", r.backend)), r)?;
        launch(&dir.join(format!("launch-{}.svg", r.backend)), r)?;
        transfers(&dir.join(format!("transfers-{}.svg", r.backend)), r)?;
        if !r.ops.is_empty() {
            ops(&dir.join(format!("ops-{}.svg", r.backend)), r)?;
        }
        if !r.sweeps.is_empty() {
            throughput(&dir.join(format!("throughput-{}.svg", r.backend)), r)?;
        }
        Ok(())
    }

    /// Throughput versus size per family: memory-bound ops in GB/s against bytes moved (with
    /// the copy ceiling), matmul in GFLOP/s against the square side (with the FMA peak and the
    /// vendor GEMM where measured), side by side.
    fn throughput(path: &Path, r: &BackendReport) -> Res {
        let root = SVGBackend::new(path, (1400, 620)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, right) = root.split_horizontally(760);
        let mem: Vec<&super::Sweep> = r.sweeps.iter().filter(|s| s.family != "matmul").collect();
        let mm: Vec<&super::Sweep> = r.sweeps.iter().filter(|s| s.family == "matmul").collect();
        let bw = r.ceilings.copy_gbps.max(1e-3);
        let pts =
            |s: &super::Sweep, f: &dyn Fn(&super::SizePoint) -> (f64, f64)| -> Vec<(f64, f64)> {
                s.points
                    .iter()
                    .map(f)
                    .filter(|p| p.0 > 0.0 && p.1 > 0.0)
                    .collect()
            };
        {
            let all: Vec<(f64, f64)> = mem
                .iter()
                .flat_map(|s| pts(s, &|p| (p.bytes as f64, p.gbps)))
                .collect();
            let xmax = all.iter().map(|p| p.0).fold(1e3, f64::max) * 2.0;
            let xmin = all
                .iter()
                .map(|p| p.0)
                .fold(f64::INFINITY, f64::min)
                .min(xmax / 4.0)
                / 2.0;
            let ymin = all.iter().map(|p| p.1).fold(bw, f64::min).max(1e-4) / 2.0;
            let mut chart = ChartBuilder::on(&left)
                .caption(
                    format!(
                        "Memory-bound families — {}: GB/s vs size (copy {:.0} GB/s)",
                        r.backend, bw
                    ),
                    ("sans-serif", 16),
                )
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d(
                    (xmin..xmax).log_scale(),
                    (ymin..all.iter().map(|p| p.1).fold(bw, f64::max) * 1.5).log_scale(),
                )?;
            chart
                .configure_mesh()
                .x_label_formatter(&si)
                .y_label_formatter(&si)
                .x_desc("bytes moved (inputs read once + outputs written once)")
                .y_desc("GB/s")
                .draw()?;
            chart
                .draw_series(LineSeries::new(
                    vec![(xmin, bw), (xmax, bw)],
                    BLACK.stroke_width(1),
                ))?
                .label("device copy")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
            for (i, s) in mem.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let p = pts(s, &|p| (p.bytes as f64, p.gbps));
                chart
                    .draw_series(LineSeries::new(p.clone(), color.stroke_width(2)))?
                    .label(format!("{} ({})", s.family, s.op))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()?;
        }
        if !mm.is_empty() {
            let peak = r.ceilings.fma_gflops.get("f32").copied().unwrap_or(1.0);
            let vendor: Vec<(String, f64)> = r
                .ceilings
                .vendor_gemm
                .as_ref()
                .map(|v| v.gflops.iter().map(|(k, g)| (k.clone(), *g)).collect())
                .unwrap_or_default();
            let side = |p: &super::SizePoint| {
                p.size
                    .split('x')
                    .next()
                    .and_then(|x| x.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            let all: Vec<(f64, f64)> = mm
                .iter()
                .flat_map(|s| pts(s, &|p| (side(p), p.gflops)))
                .collect();
            let top = all
                .iter()
                .map(|p| p.1)
                .chain(vendor.iter().map(|v| v.1))
                .fold(peak, f64::max)
                * 2.0;
            let ymin = all.iter().map(|p| p.1).fold(peak, f64::min).max(1e-3) / 2.0;
            let xmax = all.iter().map(|p| p.0).fold(256.0, f64::max) * 1.5;
            let mut chart = ChartBuilder::on(&right)
                .caption(
                    format!("matmul — {}: GFLOP/s vs square side", r.backend),
                    ("sans-serif", 16),
                )
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(65)
                .build_cartesian_2d((64f64..xmax).log_scale(), (ymin..top).log_scale())?;
            chart
                .configure_mesh()
                .x_label_formatter(&si)
                .y_label_formatter(&si)
                .x_desc("m = n = k")
                .y_desc("GFLOP/s")
                .draw()?;
            chart
                .draw_series(LineSeries::new(
                    vec![(64.0, peak), (xmax, peak)],
                    BLACK.stroke_width(1),
                ))?
                .label("f32 FMA peak (CUDA cores)")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
            for (i, (dt, g)) in vendor.iter().enumerate() {
                let color = PALETTE[(i + 5) % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(
                        vec![(64.0, *g), (xmax, *g)],
                        color.stroke_width(1),
                    ))?
                    .label(format!("cuBLAS {dt}"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
            for (i, s) in mm.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let p = pts(s, &|p| (side(p), p.gflops));
                chart
                    .draw_series(LineSeries::new(p.clone(), color.stroke_width(2)))?
                    .label(format!("cubeport {}", s.dtype))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()?;
        }
        root.present()?;
        Ok(())
    }

    const PALETTE: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];

    fn roofline(path: &Path, r: &BackendReport) -> Res {
        let root = SVGBackend::new(path, (1100, 720)).into_drawing_area();
        root.fill(&WHITE)?;
        let peak = r.ceilings.fma_gflops.values().copied().fold(1.0, f64::max);
        let bw = r.ceilings.copy_gbps.max(1e-3);
        // Kernels with no FLOPs are drawn at a nominal intensity of 0.01, at the height their
        // bandwidth would reach there (their distance below the bandwidth line is their
        // fraction of the copy bandwidth).
        let place = |k: &super::KernelPoint| {
            let x = k.intensity.max(0.01);
            let y = if k.flops == 0 { k.gbps * x } else { k.gflops };
            (x, y)
        };
        let xmax = r.kernels.iter().map(|k| place(k).0).fold(1000.0, f64::max) * 2.0;
        let xmin = 0.005f64;
        let ymin = r
            .kernels
            .iter()
            .map(|k| place(k).1)
            .filter(|y| *y > 0.0)
            .fold(bw * xmin, f64::min)
            / 2.0;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Roofline — {} ({}): copy {:.0} GB/s, FMA peak {:.0} GFLOP/s",
                    r.backend, r.device, bw, peak
                ),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..peak * 3.0).log_scale())?;
        chart
            .configure_mesh()
            .x_label_formatter(&si)
            .y_label_formatter(&si)
            .x_desc("arithmetic intensity (FLOP/byte)")
            .y_desc("GFLOP/s (memory-bound kernels: GB/s × intensity)")
            .draw()?;
        let roof: Vec<(f64, f64)> = (0..=200)
            .map(|i| {
                let x = xmin * (xmax / xmin).powf(i as f64 / 200.0);
                (x, (bw * x).min(peak))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?
            .label("roof: min(copy bandwidth × intensity, FMA peak)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        for (i, family) in families(r).iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = r
                .kernels
                .iter()
                .filter(|k| &k.family == family)
                .map(|k| {
                    let (x, y) = place(k);
                    (x, y.max(ymin))
                })
                .collect();
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 5, color.filled())))?
                .label(family.as_str())
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        root.present()?;
        Ok(())
    }

    fn families(r: &BackendReport) -> Vec<String> {
        let mut f: Vec<String> = Vec::new();
        for k in &r.kernels {
            if !f.contains(&k.family) {
                f.push(k.family.clone());
            }
        }
        f
    }

    fn launch(path: &Path, r: &BackendReport) -> Res {
        let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
        root.fill(&WHITE)?;
        let pts: Vec<(f64, f64)> = r
            .launch
            .sweep
            .iter()
            .map(|p| (p.bytes as f64, p.seconds * 1e6))
            .collect();
        let xmax = pts.iter().map(|p| p.0).fold(1.0, f64::max) * 2.0;
        let ymax = pts.iter().map(|p| p.1).fold(1.0, f64::max) * 2.0;
        let ymin = pts
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min)
            .min(r.launch.trivial_batched_us)
            / 2.0;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Launch overhead — {}: vector add time vs size (floor {:.1} µs)",
                    r.backend, r.launch.floor_us
                ),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (4.0f64..xmax).log_scale(),
                (ymin.max(0.01)..ymax).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&si)
            .y_label_formatter(&si)
            .x_desc("bytes moved (2 reads + 1 write)")
            .y_desc("µs per launch")
            .draw()?;
        chart
            .draw_series(LineSeries::new(pts.clone(), PALETTE[0].stroke_width(2)))?
            .label("vector add (inputs rotated past L2)")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[0].stroke_width(2))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, PALETTE[0].filled())))?;
        let floor = r.launch.floor_us;
        chart
            .draw_series(LineSeries::new(
                vec![(4.0, floor), (xmax, floor)],
                PALETTE[3].stroke_width(1),
            ))?
            .label("latency floor")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[3]));
        if let Some(knee) = r.launch.knee_bytes {
            chart
                .draw_series(LineSeries::new(
                    vec![(knee as f64, ymin.max(0.01)), (knee as f64, ymax)],
                    PALETTE[2].stroke_width(1),
                ))?
                .label("knee (2 × floor)")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[2]));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
        Ok(())
    }

    fn transfers(path: &Path, r: &BackendReport) -> Res {
        let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
        root.fill(&WHITE)?;
        let up: Vec<(f64, f64)> = r
            .transfers
            .iter()
            .map(|t| (t.bytes as f64, t.h2d_gbps))
            .collect();
        let down: Vec<(f64, f64)> = r
            .transfers
            .iter()
            .map(|t| (t.bytes as f64, t.d2h_gbps))
            .collect();
        let xmax = up.iter().map(|p| p.0).fold(1.0, f64::max) * 2.0;
        let ymax = up.iter().chain(&down).map(|p| p.1).fold(0.01, f64::max) * 2.0;
        let ymin = up
            .iter()
            .chain(&down)
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min)
            .max(1e-4)
            / 2.0;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Host ↔ device transfers — {}", r.backend),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((2048.0f64..xmax).log_scale(), (ymin..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_label_formatter(&si)
            .y_label_formatter(&si)
            .x_desc("bytes")
            .y_desc("GB/s")
            .draw()?;
        for (pts, label, c) in [
            (up, "host → device (create_from_slice)", PALETTE[0]),
            (down, "device → host (read_one)", PALETTE[1]),
        ] {
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
        Ok(())
    }
}
