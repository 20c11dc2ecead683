//! Criterion benchmarks of the row families over one f32 matrix, next to the device copy of it
//! (the ceiling), measured in the same process: reduce (sum and max of everything, per-row and
//! per-column sums), softmax (automatic and every row-group width), normalization (RMSNorm,
//! LayerNorm and residual add with RMSNorm in every dtype at short, 4096, long and streamed
//! rows, each after the device copy of its size) and GEMV (`A·v`, `Aᵀ·v`, every variant). The
//! cases are [`cubeport_cli::cases::reduce_cases`], [`cubeport_cli::cases::softmax_cases`],
//! [`cubeport_cli::cases::norm_cases`] and [`cubeport_cli::cases::gemv_cases`] (shared with
//! `cubeport bench`); each was checked against the f64 reference when it was built. With
//! `--features peer-cubek`, cubek 0.2's row sum (every strategy that runs) on a matrix of the
//! same shape.
//!
//! ```text
//! cargo bench --bench reduce
//! CUBEPORT_BACKEND=cuda cargo bench --bench reduce -- '(copy|reduce)/'
//! CUBEPORT_BENCH_FAMILIES=softmax cargo bench --bench reduce   # reduce,softmax,norm,gemv by default
//! CUBEPORT_BENCH_QUICK=1 cargo bench --bench reduce        # 256 x 4096 (lavapipe)
//! ```
//! Ids: `<family>/<op>_<variant>/<backend>/f32` with the matrix shape as the parameter;
//! throughput counts bytes read once and written once (decimal GB/s).

use criterion::{Criterion, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;

mod common;
use common::{Count, bench_cases};

fn bench_backend<R: Runtime>(c: &mut Criterion, client: ComputeClient<R>, kind: BackendKind) {
    use cubeport_cli::cases;
    let scale = common::scale();
    // Built one family at a time so only one family's buffers are alive.
    let families = std::env::var("CUBEPORT_BENCH_FAMILIES")
        .unwrap_or_else(|_| "reduce,softmax,norm,gemv".into());
    let wants = |family: &str| families.split(',').any(|f| f == family);
    let mut size = String::new();
    if wants("reduce") {
        let cases = cases::reduce_cases(&client, scale)
            .unwrap_or_else(|e| panic!("reduce cases on {kind}: {e}"));
        size = cases.first().map(|c| c.size.clone()).unwrap_or_default();
        bench_cases(c, &client, kind, Count::Bytes, cases);
    }
    if wants("softmax") {
        let cases = cases::softmax_cases(&client, scale)
            .unwrap_or_else(|e| panic!("softmax cases on {kind}: {e}"));
        bench_cases(c, &client, kind, Count::Bytes, cases);
    }
    if wants("norm") {
        // `CUBEPORT_NORM_SHAPES=16384x4096,…` and `CUBEPORT_BENCH_DTYPES` narrow what is built.
        let shapes: Vec<(usize, usize)> = common::dims_from_env("CUBEPORT_NORM_SHAPES", 2)
            .map(|v| v.into_iter().map(|d| (d[0], d[1])).collect())
            .unwrap_or_else(|| cases::norm_shapes(scale).to_vec());
        let cases = cases::norm_cases_for(&client, &common::dtypes_from_env(), &shapes)
            .unwrap_or_else(|e| panic!("norm cases on {kind}: {e}"));
        bench_cases(c, &client, kind, Count::Bytes, cases);
    }
    if wants("gemv") {
        let cases = cases::gemv_cases(&client, scale)
            .unwrap_or_else(|e| panic!("gemv cases on {kind}: {e}"));
        bench_cases(c, &client, kind, Count::Bytes, cases);
    }
    #[cfg(feature = "peer-cubek")]
    if let Some((rows, len)) = size
        .split_once('x')
        .and_then(|(r, l)| Some((r.parse().ok()?, l.parse().ok()?)))
    {
        peer::bench_rows(c, &client, kind, rows, len);
    }
    #[cfg(not(feature = "peer-cubek"))]
    let _ = size;
}

/// cubek 0.2's reduce (the same-language peer), on the same data, every strategy that runs.
#[cfg(feature = "peer-cubek")]
mod peer {
    use super::*;
    use criterion::{BenchmarkId, Throughput};
    use cubek::reduce::components::instructions::ReduceOperationConfig;
    use cubek::reduce::launch::{RoutineStrategy, VectorizationStrategy};
    use cubek::reduce::routines::{
        BlueprintStrategy, cube::CubeStrategy, plane::PlaneStrategy, unit::UnitStrategy,
    };
    use cubek::reduce::{ReduceDtypes, ReduceStrategy, reduce};
    use cubeport::DeviceTensor;
    use cubeport::cubecl::server::Handle;
    use cubeport::reference::{self, Reduction, Tolerance};
    use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
    use std::time::Instant;

    fn strategies() -> Vec<(&'static str, RoutineStrategy)> {
        vec![
            (
                "unit",
                RoutineStrategy::Unit(BlueprintStrategy::Inferred(UnitStrategy)),
            ),
            (
                "plane",
                RoutineStrategy::Plane(BlueprintStrategy::Inferred(PlaneStrategy {
                    independent: true,
                })),
            ),
            (
                "cube_planes",
                RoutineStrategy::Cube(BlueprintStrategy::Inferred(CubeStrategy {
                    use_planes: true,
                })),
            ),
            (
                "cube_shared",
                RoutineStrategy::Cube(BlueprintStrategy::Inferred(CubeStrategy {
                    use_planes: false,
                })),
            ),
        ]
    }

    fn launch<R: Runtime>(
        client: &ComputeClient<R>,
        input: &Handle,
        out: &Handle,
        rows: usize,
        len: usize,
        routine: RoutineStrategy,
    ) -> Result<(), String> {
        let f = f32::as_type_native_unchecked().storage_type();
        // SAFETY: `input` is a dense rows × len f32 buffer and `out` holds `rows` f32.
        let (i, o) = unsafe {
            (
                TensorBinding::<R>::from_raw_parts(
                    input.clone(),
                    [len, 1].into(),
                    [rows, len].into(),
                ),
                TensorBinding::<R>::from_raw_parts(out.clone(), [1, 1].into(), [rows, 1].into()),
            )
        };
        let strategy = ReduceStrategy {
            routine,
            vectorization: VectorizationStrategy {
                parallel_output_vectorization: false,
            },
        };
        let dtypes = ReduceDtypes {
            input: f,
            output: f,
            accumulation: f,
        };
        reduce::<R>(
            client,
            i,
            o,
            1,
            strategy,
            ReduceOperationConfig::Sum,
            dtypes,
        )
        .map_err(|e| format!("{e:?}"))
    }

    fn run<R: Runtime>(
        client: &ComputeClient<R>,
        input: &Handle,
        out: &Handle,
        rows: usize,
        len: usize,
        routine: RoutineStrategy,
    ) -> Result<(), String> {
        launch(client, input, out, rows, len, routine)?;
        cubecl::future::block_on(client.sync()).map_err(|e| format!("{e:?}"))
    }

    /// cubek's row sum of a seeded `rows × len` matrix, each strategy checked against the f64
    /// reference before it is timed.
    pub fn bench_rows<R: Runtime>(
        c: &mut Criterion,
        client: &ComputeClient<R>,
        kind: BackendKind,
        rows: usize,
        len: usize,
    ) {
        let x: Vec<f32> = seeded(95, rows * len, -1.0, 1.0);
        let xf = to_f64(&x);
        let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
        let want = reference::reduce(&xf, &[rows, len], Some(1), Reduction::Sum);
        let sum_abs = reference::reduce(&abs, &[rows, len], Some(1), Reduction::Sum);
        let dx = DeviceTensor::from_slice(client, &x, &[rows, len]).unwrap();
        let input = dx.handle();
        let mut g = common::group(c, "reduce");
        for (name, routine) in strategies() {
            let out = poisoned::<R, f32>(client, &[rows]).unwrap();
            if let Err(e) = run(client, input, out.handle(), rows, len, routine.clone()) {
                eprintln!("cubek reduce {name} on {kind}: unavailable: {e}");
                continue;
            }
            let got = to_f64(&out.to_vec(client).unwrap());
            let cmp = compare_each(&got, &want, |i| {
                Tolerance::reduction(cubeport::DType::F32, len, sum_abs[i])
            });
            if !cmp.ok() {
                eprintln!("cubek reduce {name} on {kind}: wrong, not timed: {cmp}");
                continue;
            }
            g.throughput(Throughput::BytesDecimal((rows * len * 4) as u64));
            g.bench_function(
                BenchmarkId::new(
                    format!("sum_rows_cubek_{name}/{kind}/f32"),
                    format!("{rows}x{len}"),
                ),
                |b| {
                    b.iter_custom(|it| {
                        cubeport::testing::sync(client).expect("device sync failed");
                        let t = Instant::now();
                        for _ in 0..it {
                            launch(client, input, out.handle(), rows, len, routine.clone())
                                .unwrap();
                        }
                        cubeport::testing::sync(client).expect("device sync failed");
                        t.elapsed()
                    })
                },
            );
        }
    }
}

struct Visit<'a>(&'a mut Criterion);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        bench_backend(self.0, client, kind);
    }
}

fn benches(c: &mut Criterion) {
    cubeport::testing::visit_backends("bench reduce", None, &mut Visit(c));
}

criterion_group!(reduce, benches);
criterion_main!(reduce);
