//! `cubeport bench`: where every kernel stands against ceilings measured in the same run.
//!
//! For each backend with a device:
//! 1. **Ceilings**: device copy bandwidth (cubeport's vector copy of the largest buffer the sweep
//!    uses) and the FMA peak per dtype (8 independent FMA chains per unit, f32 and f16). Every
//!    kernel computes in f32, so the f32 peak is the compute roof of all of them (tensor-core
//!    matmuls can exceed it; no tensor-core ceiling is measured here — `benches/matmul.rs`
//!    compares them with cuBLAS).
//! 2. **Kernels**: the cases of `cubeport_cli::cases` (shared with the criterion benches; each checked
//!    against the CPU reference when built), timed, placed on the roofline: arithmetic intensity
//!    = FLOPs / bytes, attainable = min(copy bandwidth × intensity, FMA peak), % of that.
//! 3. **Launch overhead**: a 1-element copy launched back to back and launch + sync; the vector
//!    add swept from 1 element to 1 GiB per operand (inputs rotated across copies totalling
//!    ≥ 512 MiB so the L2 cache does not serve them); the latency floor and the knee (the first
//!    size whose time is twice the floor).
//! 4. **Transfers**: host→device (`create_from_slice`) and device→host (`read_one`) bandwidth
//!    across sizes; the JIT cost of the first launch of an op in the process vs a warm launch.
//! 5. **Vendor GEMM** (CUDA): cuBLAS through cudarc (`cubeport_cli::cases::cublas_case`, the same
//!    seeded inputs as the matmul cases) per dtype at one square size; every matmul point also
//!    reports its % of it.
//! 6. **Sweeps**: one op per family (`cubeport_cli::cases::SweepOp`: bias+GELU, sum, softmax,
//!    transpose, histogram, f32 and tensor-core f16 matmul) over a geometric sweep of sizes (the
//!    memory-bound ones to 64 Mi elements, matmul to 8192³), each point checked against the
//!    reference before it is timed: throughput versus size. Memory-bound points rotate over
//!    copies on distinct buffers totalling ≥ 512 MiB (`Case::rotating`), so small sizes are not
//!    served from the L2 cache.
//! 7. **Phases**: the wall time of each part of the run (set-up — inputs, uploads, reference
//!    checks — apart from timing), so a slow run says where its time went.
//!
//! Timing: launches batched between syncs (≥ 20 ms per batch), warm-up of at least 0.2 s (a GPU
//! that idled while a case compiled must reach its clocks again) and until two batches agree
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

mod host;
mod phases;
mod plots;
mod report;

use crate::timing::Clock;
use cubeport::cubecl::prelude::*;
use cubeport::{BackendKind, Error};
use cubeport_cli::cases::{self, Case, Scale};
use report::{BackendReport, Ceilings, Phase, Report, SCHEMA, print_portability, print_report};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `cubeport bench`.
#[derive(clap::Args, Default)]
pub struct BenchArgs {
    /// Only this backend (`cuda` or `wgpu`).
    #[arg(long)]
    backend: Option<String>,
    /// Families to run (comma-separated): activation, reduce, softmax, gemv, transpose,
    /// histogram, matmul (`reduce` includes softmax and gemv), and `transfers` (host↔device
    /// rates and upload overlap). Default: all. The launch and op-overhead phases always run;
    /// `--family ops` names no kernel family, so it runs those alone.
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
            portability: Vec::new(),
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
                self.report.portability = report::portability(&self.report.backends);
                print_portability(&self.report.portability);
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
/// is `cargo bench --bench matmul`, which shares these cases); at both, the automatic choice
/// over the shape sweep.
fn report_matmul_cases<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let sizes = matmul_report_sizes(scale);
    match scale {
        Scale::Full => cases::matmul_cases_for::<R, E>(client, &sizes, &[]),
        // Every variant at the family's sizes, the automatic choice alone at the sweep's
        // (`matmul_report_sizes` lists the family's sizes first).
        Scale::Quick => {
            let mut all = cases::matmul_cases::<R, E>(client, scale)?;
            let family = cases::matmul_sizes(scale).len();
            all.extend(cases::matmul_cases_for::<R, E>(
                client,
                &sizes[family..],
                &[],
            )?);
            Ok(all)
        }
    }
}

/// Every `(m, n, k)` the matmul cases of a run time: the family's sizes and the shape sweep,
/// each once (where cuBLAS is measured too).
pub(crate) fn matmul_report_sizes(scale: Scale) -> Vec<(usize, usize, usize)> {
    let mut sizes = cases::matmul_sizes(scale);
    for s in cases::matmul_shape_sizes(scale) {
        if !sizes.contains(&s) {
            sizes.push(s);
        }
    }
    sizes
}

/// How many copies of a working set of `bytes` to launch in turn so that together they pass
/// 512 MiB (several times the largest L2 cache of current GPUs) and no launch finds its inputs
/// cached: 1 to 8.
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

fn bench_backend<R: Runtime>(
    client: &ComputeClient<R>,
    kind: BackendKind,
    args: &BenchArgs,
) -> Result<BackendReport, Error> {
    let mut ctx = phases::Ctx::new(client, kind, args);
    let mut phases = Phases::new();
    phases.next("jit");
    let jit = ctx.jit()?;
    phases.next("ceilings");
    let roof = ctx.ceilings()?;
    let vendor_gemm = ctx.vendor_gemm(&mut phases)?;
    let kernels = ctx.kernels(&mut phases, &roof, vendor_gemm.as_ref())?;
    let sweeps = ctx.sweeps(&mut phases)?;
    phases.next("launch");
    let launch = ctx.launch()?;
    let (transfers, overlap) = if ctx.wants("transfers") {
        phases.next("transfers");
        let (transfers, max_t) = ctx.transfers()?;
        (transfers, host::measure_overlap(client, max_t)?)
    } else {
        (Vec::new(), None)
    };
    phases.next("ops");
    let ops = host::time_ops(client, ctx.quick)?;
    let caps = &ctx.caps;
    let report = BackendReport {
        backend: kind.to_string(),
        runtime: caps.runtime_name.to_string(),
        device: cubeport::backends::available()
            .into_iter()
            .find(|s| s.kind == kind)
            .and_then(|s| s.device.ok())
            .unwrap_or_default(),
        timing: match ctx.clock {
            Clock::Device => "kernels and ceilings: device timers (cubecl client.profile), one \
                              launch per profile, checked against the host clock on the copy \
                              ceiling; launch overhead, transfers, JIT: host clock around device \
                              syncs"
                .to_string(),
            Clock::Host => "host clock around device syncs, batched launches".to_string(),
        } + &roof.timing_note,
        ceilings: Ceilings {
            copy_gbps: roof.copy_gbps,
            fma_gflops: roof.fma_gflops,
            vendor_gemm,
        },
        kernels,
        launch,
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
