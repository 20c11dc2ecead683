//! `cubeport check` (the main job): every kernel × backend × dtype against the f64 reference,
//! compared across backends, timed against a device copy of the same size; one table.

mod measure;

use clap::Args;
use cubeport::backends::{self, BackendKind, BackendStatus};
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    Activation, DType, DeviceTensor, Element, Error, GeluApprox, NormKind, Reduction, SoftmaxKind,
    TensorMut, Transpose, caps_of,
};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use measure::*;

#[derive(Args, Default)]
pub(crate) struct CheckArgs {
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

/// What one row of the table runs.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// `act(x + bias)`; `row`: `None` bias as long as the input, `Some(len)` one row broadcast.
    Act { act: Activation, row: Option<usize> },
    /// A reduction over `axis` of `[elems / inner, inner]` (`None`: everything).
    Reduce {
        op: Reduction,
        axis: Option<usize>,
        inner: usize,
    },
    /// Softmax or log-softmax over rows of `len`.
    Softmax { kind: SoftmaxKind, len: usize },
    /// RMSNorm / LayerNorm over rows of `len` with a weight (and a bias for LayerNorm);
    /// `residual`: the fused residual add + RMSNorm, both outputs checked.
    Norm {
        kind: NormKind,
        len: usize,
        residual: bool,
    },
    /// GEMV with `cols` columns.
    Gemv { transpose: Transpose, cols: usize },
    /// Transpose of `[elems / cols, cols]`.
    Transpose { cols: usize },
    /// Histogram (`bins` bins over [−3, 3]; the inputs are uniform in [−4, 4)).
    Histogram { bins: usize },
    /// `[m, k] · [k, n]` with the automatic variant; `fused`: `gelu(a·b + bias)` in one kernel.
    Matmul { fused: bool },
    /// Attention `[1, 4, S, 64]` with two kv heads (grouped-query), `S` ragged.
    Attention { causal: bool },
}

/// One kernel case of the table.
#[derive(Clone, Copy)]
pub(crate) struct Case {
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
            Kind::Softmax { kind, .. } => kind.name().into(),
            Kind::Norm { residual: true, .. } => "add_rms_norm".into(),
            Kind::Norm { kind, .. } => kind.name().into(),
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
            Kind::Attention { causal: false } => "attention".into(),
            Kind::Attention { causal: true } => "attention_causal".into(),
        }
    }

    fn shape(&self, elems: usize) -> Vec<usize> {
        match self.kind {
            Kind::Act { row: None, .. } | Kind::Histogram { .. } => vec![elems],
            Kind::Act { row: Some(r), .. } => vec![elems.div_ceil(r), r],
            Kind::Reduce { axis: None, .. } => vec![elems],
            Kind::Reduce { inner, .. } => vec![elems.div_ceil(inner), inner],
            Kind::Softmax { len, .. } | Kind::Norm { len, .. } => vec![elems.div_ceil(len), len],
            Kind::Gemv { cols, .. } | Kind::Transpose { cols } => vec![elems.div_ceil(cols), cols],
            // `[m, n, k]`, ragged against every tile; smaller where the device is a CPU.
            Kind::Matmul { .. } if elems > (1 << 22) => vec![1031, 1029, 259],
            Kind::Matmul { .. } => vec![257, 255, 129],
            // `[batch, heads, S, D]`.
            Kind::Attention { .. } if elems > (1 << 22) => vec![1, 4, 1031, 64],
            Kind::Attention { .. } => vec![1, 4, 257, 64],
        }
    }
}

pub(crate) fn cases(kinds: &[BackendKind]) -> Vec<Case> {
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
                kind: SoftmaxKind::Softmax,
                len: 4096,
            },
            Kind::Softmax {
                kind: SoftmaxKind::Softmax,
                len: 1000,
            },
            Kind::Softmax {
                kind: SoftmaxKind::LogSoftmax,
                len: 4096,
            },
            Kind::Norm {
                kind: NormKind::Rms,
                len: 4096,
                residual: false,
            },
            Kind::Norm {
                kind: NormKind::Layer,
                len: 4096,
                residual: false,
            },
            Kind::Norm {
                kind: NormKind::Layer,
                len: 1000,
                residual: false,
            },
            Kind::Norm {
                kind: NormKind::Rms,
                len: 4096,
                residual: true,
            },
        ];
        kinds.push(Kind::Transpose { cols: 1000 });
        kinds.extend([
            Kind::Histogram { bins: 256 },
            Kind::Histogram { bins: 10_000 },
            Kind::Matmul { fused: false },
            Kind::Matmul { fused: true },
            Kind::Attention { causal: false },
            Kind::Attention { causal: true },
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

pub(crate) struct Row {
    case: Case,
    backend: BackendKind,
    shape: Vec<usize>,
    outcome: Result<Measured, String>,
    /// Max |a − b| against the same case on the first backend, and whether within tolerance.
    agreement: Option<(f64, bool)>,
    /// The first backend's time for the same case over this row's (above 1: this backend is
    /// faster); where both were timed.
    speed_vs_other: Option<f64>,
}

pub(crate) struct Measured {
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

pub(crate) fn check(args: CheckArgs) -> ExitCode {
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

pub(crate) fn run_backend<R: Runtime>(
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
        let compute_bound = matches!(case.kind, Kind::Matmul { .. } | Kind::Attention { .. });
        let copy_gbps = if args.no_time || compute_bound {
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
            speed_vs_other: None,
        });
    }
    if progress {
        eprintln!();
    }
    rows
}

pub(crate) fn cross_check(rows: &mut [Row]) {
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
                let speed = match (ma.time, mb.time) {
                    (Some(ta), Some(tb)) => Some(ta.as_secs_f64() / tb.as_secs_f64().max(1e-12)),
                    _ => None,
                };
                rows[i].agreement = Some((c.max_abs, c.ok()));
                rows[i].speed_vs_other = speed;
            }
        }
    }
}

pub(crate) fn print_table(rows: &[Row]) {
    println!(
        "{:<16} {:<5} {:<5} {:<12} {:<22} {:>10} {:>10} {:<5} {:>12} {:>9} {:>9} {:>7} {:>7}",
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
        "%copy",
        "x_other"
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
                    "{:<16} {:<5} {:<5} {:<12} {:<22} {:>10.2e} {:>10.2e} {:<5} {:>12} {:>9} {:>9} {:>7} {:>7}",
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
                    r.speed_vs_other.map_or("-".into(), |x| format!("{x:.2}")),
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
    if rows
        .iter()
        .any(|r| matches!(r.case.kind, Kind::Attention { .. }))
    {
        println!(
            "attention rows: shape batch x heads x S x D (2 kv heads), FLOP/s count 4·B·H·S²·D (half when causal)"
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
