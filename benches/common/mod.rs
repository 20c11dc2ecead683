//! What every criterion bench of cubeport does with a list of [`Case`]s: one criterion group,
//! each case timed between device syncs (its own queue's for vendor-library cases), throughput
//! in bytes or FLOPs. Included by each bench with `mod common;`.

#![allow(dead_code)] // each bench uses part of it

use criterion::{BenchmarkId, Criterion, Throughput};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;
use cubeport_cli::cases::{Case, Scale};
use std::time::{Duration, Instant};

/// What a case's throughput counts.
#[derive(Clone, Copy)]
pub enum Count {
    /// Decimal bytes moved (memory-bound families; the copy anchor is their ceiling).
    Bytes,
    /// FLOPs, printed by criterion as elements/s: read `Gelem/s` as GFLOP/s.
    Flops,
}

/// `CUBEPORT_BENCH_QUICK=1` picks the small sizes (lavapipe, smoke runs).
pub fn scale() -> Scale {
    if std::env::var_os("CUBEPORT_BENCH_QUICK").is_some() {
        Scale::Quick
    } else {
        Scale::Full
    }
}

/// `CUBEPORT_BENCH_DTYPES=f32,f16` limits the dtypes a bench builds cases for (all three
/// otherwise). Cases are built, uploaded and checked before any is timed, so a filter on the
/// criterion id alone still pays for every case.
pub fn dtypes_from_env() -> Vec<cubeport::DType> {
    use cubeport::DType;
    let only = std::env::var("CUBEPORT_BENCH_DTYPES").unwrap_or_else(|_| "f32,f16,bf16".into());
    [DType::F32, DType::F16, DType::BF16]
        .into_iter()
        .filter(|d| only.split(',').any(|o| o == d.to_string()))
        .collect()
}

/// Shapes from the comma-separated list in `var` (`16384x4096,1024x65536`), each with
/// `rank` dimensions; `None` when the variable is unset.
///
/// # Panics
/// On a malformed list (a bench's input, not library code).
pub fn dims_from_env(var: &str, rank: usize) -> Option<Vec<Vec<usize>>> {
    let list = std::env::var(var).ok()?;
    Some(
        list.split(',')
            .map(|s| {
                let v: Vec<usize> = s
                    .split('x')
                    .map(|x| x.parse().unwrap_or_else(|_| panic!("{var}: `{s}`")))
                    .collect();
                assert_eq!(v.len(), rank, "{var}: `{s}` needs {rank} dimensions");
                v
            })
            .collect(),
    )
}

/// A criterion group with the settings every cubeport bench uses (10 samples, short warm-up:
/// device work is stable after its first launch, which each case made when it was verified).
pub fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500));
    g
}

/// Times every case as `<family>/<variant>/<backend>/<dtype>/<size>` (criterion group: the
/// family).
pub fn bench_cases<R: Runtime>(
    c: &mut Criterion,
    client: &ComputeClient<R>,
    kind: BackendKind,
    count: Count,
    cases: Vec<Case<'_>>,
) {
    for mut case in cases {
        let mut g = group(c, case.family);
        g.throughput(match count {
            Count::Bytes => Throughput::BytesDecimal(case.bytes),
            Count::Flops => Throughput::Elements(case.flops),
        });
        let id = BenchmarkId::new(
            format!("{}/{kind}/{}", case.variant, case.dtype),
            case.size.clone(),
        );
        g.bench_function(id, |b| {
            b.iter_custom(|iters| {
                case.wait(client).expect("device sync failed");
                let t = Instant::now();
                for _ in 0..iters {
                    case.run().expect("launch failed");
                }
                case.wait(client).expect("device sync failed");
                t.elapsed()
            })
        });
        g.finish();
    }
}
