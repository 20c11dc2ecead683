//! Criterion benchmarks of the row-reduction families — whole-array and per-row reductions,
//! softmax, GEMV — each next to the device-copy anchor measured in the same process.
//!
//! ```text
//! cargo bench --bench reduce
//! CUBEPORT_BACKEND=cuda cargo bench --bench reduce -- 'reduce/(copy|sum_all)'
//! ```
//! Ids: `reduce/<op>/<variant>/<backend>/f32` with the size as the parameter. Throughput counts
//! bytes read once and written once (decimal GB/s). Every configuration is checked against the
//! f64 reference before timing. Sizes shrink on devices with small buffer limits (lavapipe).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Reduction, Tolerance};
use cubeport::testing::sync;
use cubeport::testing::{compare, compare_each, poisoned, seeded, to_f64};
use cubeport::{DeviceTensor, GemvVariant, ReducePath, RowGroup, Transpose};
use std::time::{Duration, Instant};

fn time<R: Runtime>(client: &ComputeClient<R>, iters: u64, mut op: impl FnMut()) -> Duration {
    sync(client).expect("device sync failed");
    let t = Instant::now();
    for _ in 0..iters {
        op();
    }
    sync(client).expect("device sync failed");
    t.elapsed()
}

/// Checks a sum over `axis` of the `shape` matrix `x` against the reference before timing;
/// returns the reference and the per-output sums of magnitudes.
fn verify_sum<R: Runtime>(
    client: &ComputeClient<R>,
    out: &DeviceTensor<f32>,
    x: &[f64],
    abs: &[f64],
    shape: [usize; 2],
    axis: usize,
    what: &str,
) -> (Vec<f64>, Vec<f64>) {
    let want = reference::reduce(x, &shape, Some(axis), Reduction::Sum);
    let sum_abs = reference::reduce(abs, &shape, Some(axis), Reduction::Sum);
    let got = to_f64(&out.to_vec(client).unwrap());
    let c = compare_each(&got, &want, |i| {
        Tolerance::reduction(cubeport::DType::F32, shape[axis], sum_abs[i])
    });
    assert!(c.ok(), "{what} wrong; not timing it: {c}");
    (want, sum_abs)
}

fn bench_backend<R: Runtime>(c: &mut Criterion, client: ComputeClient<R>, kind: BackendKind) {
    let caps = cubeport::caps_of(&client);
    // 2 GiB sums where one buffer may be that large (CUDA); 1 GiB on NVIDIA's Vulkan (2 GiB
    // binding limit); small on lavapipe (128 MiB).
    let big = caps.max_alloc_bytes >= 1 << 30;
    let huge = caps.max_alloc_bytes >= 4 << 30;
    let mut g = c.benchmark_group("reduce");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));

    // Whole-array sum of 2 GiB (512M f32), and the copy of the same bytes.
    // CUBEPORT_BENCH_ONLY=softmax shrinks the other sections (their setup is slow).
    let only = std::env::var("CUBEPORT_BENCH_ONLY").unwrap_or_default();
    let n = if !only.is_empty() && only != "sum" {
        1 << 10
    } else if huge {
        512 << 20
    } else if big {
        256 << 20
    } else {
        8 << 20
    };
    let x: Vec<f32> = seeded(1, n, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(&client, &x, &[n]).unwrap();
    let mut dcopy = poisoned::<R, f32>(&client, &[n]).unwrap();
    cubeport::copy_into(&client, dx.as_ref(), dcopy.as_mut()).unwrap();
    assert!(
        dcopy.to_vec(&client).unwrap() == x,
        "copy wrong; not timing it"
    );
    g.throughput(Throughput::BytesDecimal((2 * n * 4) as u64));
    g.bench_function(BenchmarkId::new(format!("copy/vec/{kind}/f32"), n), |b| {
        b.iter_custom(|it| {
            time(&client, it, || {
                cubeport::copy_into(&client, dx.as_ref(), dcopy.as_mut()).unwrap()
            })
        })
    });
    drop(dcopy);
    let xf = to_f64(&x);
    drop(x);
    let sum_abs: f64 = xf.iter().map(|v| v.abs()).sum();
    for op in [Reduction::Sum, Reduction::Max] {
        let mut out = poisoned::<R, f32>(&client, &[1]).unwrap();
        let want = reference::reduce(&xf, &[n], None, op);
        cubeport::reduce_into(&client, dx.as_ref(), out.as_mut(), None, op).unwrap();
        let got = to_f64(&out.to_vec(&client).unwrap());
        let tol = if op == Reduction::Sum {
            Tolerance::reduction(cubeport::DType::F32, n, sum_abs)
        } else {
            Tolerance::EXACT
        };
        let cmp = compare(&got, &want, tol);
        assert!(cmp.ok(), "{} of {n} wrong: {cmp}", op.name());
        g.throughput(Throughput::BytesDecimal((n * 4) as u64));
        let variant =
            cubeport::ops::reduce::reduce_variant(&client, &[n], cubeport::DType::F32, None);
        g.bench_function(
            BenchmarkId::new(format!("{}_all/{variant}/{kind}/f32", op.name()), n),
            |b| {
                b.iter_custom(|it| {
                    time(&client, it, || {
                        cubeport::reduce_into(&client, dx.as_ref(), out.as_mut(), None, op).unwrap()
                    })
                })
            },
        );
    }
    drop(dx);
    drop(xf);

    // Softmax 16384 × 4096 (the PyTorch anchor's shape) and row sums of it.
    let (rows, len) = if big { (16384, 4096) } else { (512, 4096) };
    let s: Vec<f32> = seeded(2, rows * len, -4.0, 4.0);
    let ds = DeviceTensor::from_slice(&client, &s, &[rows, len]).unwrap();
    let mut dy = poisoned::<R, f32>(&client, &[rows, len]).unwrap();
    let sf = to_f64(&s);
    drop(s);
    let want = reference::softmax(&sf, len, false);
    cubeport::softmax_into(&client, ds.as_ref(), dy.as_mut(), 1).unwrap();
    let got = to_f64(&dy.to_vec(&client).unwrap());
    let tol = Tolerance::softmax(cubeport::DType::F32, len, false);
    assert!(
        compare(&got, &want, tol).ok(),
        "softmax wrong; not timing it"
    );
    g.throughput(Throughput::BytesDecimal((2 * rows * len * 4) as u64));
    let variant = cubeport::ops::softmax::softmax_variant(&client, len, cubeport::DType::F32);
    g.bench_function(
        BenchmarkId::new(
            format!("softmax/auto_{variant}/{kind}/f32"),
            format!("{rows}x{len}"),
        ),
        |b| {
            b.iter_custom(|it| {
                time(&client, it, || {
                    cubeport::softmax_into(&client, ds.as_ref(), dy.as_mut(), 1).unwrap()
                })
            })
        },
    );
    // Every row-group width, each verified before it is timed.
    let mut forced = vec![RowGroup {
        path: ReducePath::Shared,
        group: 256,
    }];
    if let Some(w) = caps.plane.fixed_width() {
        forced.extend(
            [w, 64, 128, 256]
                .into_iter()
                .filter(|&g| g >= w && g % w == 0)
                .map(|group| RowGroup {
                    path: ReducePath::Plane,
                    group,
                }),
        );
    }
    for v in forced {
        let mut fresh = poisoned::<R, f32>(&client, &[rows, len]).unwrap();
        cubeport::softmax_with(&client, ds.as_ref(), fresh.as_mut(), 1, false, v).unwrap();
        let got = to_f64(&fresh.to_vec(&client).unwrap());
        assert!(
            compare(&got, &want, tol).ok(),
            "softmax {v} wrong; not timing it"
        );
        g.bench_function(
            BenchmarkId::new(format!("softmax/{v}/{kind}/f32"), format!("{rows}x{len}")),
            |b| {
                b.iter_custom(|it| {
                    time(&client, it, || {
                        cubeport::softmax_with(&client, ds.as_ref(), fresh.as_mut(), 1, false, v)
                            .unwrap()
                    })
                })
            },
        );
    }
    drop(dy);
    let mut rsum = poisoned::<R, f32>(&client, &[rows]).unwrap();
    cubeport::reduce_into(&client, ds.as_ref(), rsum.as_mut(), Some(1), Reduction::Sum).unwrap();
    let abs: Vec<f64> = sf.iter().map(|v| v.abs()).collect();
    #[cfg_attr(not(feature = "peer-cubek"), allow(unused_variables))]
    // the cubek peer checks against them
    let (want, sabs) = verify_sum(&client, &rsum, &sf, &abs, [rows, len], 1, "row sum");
    g.throughput(Throughput::BytesDecimal((rows * len * 4) as u64));
    let variant =
        cubeport::ops::reduce::reduce_variant(&client, &[rows, len], cubeport::DType::F32, Some(1));
    g.bench_function(
        BenchmarkId::new(
            format!("sum_rows/{variant}/{kind}/f32"),
            format!("{rows}x{len}"),
        ),
        |b| {
            b.iter_custom(|it| {
                time(&client, it, || {
                    cubeport::reduce_into(
                        &client,
                        ds.as_ref(),
                        rsum.as_mut(),
                        Some(1),
                        Reduction::Sum,
                    )
                    .unwrap()
                })
            })
        },
    );
    #[cfg(feature = "peer-cubek")]
    peer::bench_rows(&mut g, &client, kind, ds.handle(), rows, len, &want, &sabs);
    // Column sums (the strided axis: 16384 rows reduced for each of 4096 columns).
    let mut csum = poisoned::<R, f32>(&client, &[len]).unwrap();
    cubeport::reduce_into(&client, ds.as_ref(), csum.as_mut(), Some(0), Reduction::Sum).unwrap();
    verify_sum(&client, &csum, &sf, &abs, [rows, len], 0, "column sum");
    g.throughput(Throughput::BytesDecimal((rows * len * 4) as u64));
    g.bench_function(
        BenchmarkId::new(
            format!("sum_axis0/strided/{kind}/f32"),
            format!("{rows}x{len}"),
        ),
        |b| {
            b.iter_custom(|it| {
                time(&client, it, || {
                    cubeport::reduce_into(
                        &client,
                        ds.as_ref(),
                        csum.as_mut(),
                        Some(0),
                        Reduction::Sum,
                    )
                    .unwrap()
                })
            })
        },
    );
    drop(ds);
    drop(sf);

    // GEMV 8192 × 8192, every variant.
    let (m, k) = if big { (8192, 8192) } else { (1024, 4096) };
    let a: Vec<f32> = seeded(3, m * k, -1.0, 1.0);
    let xv: Vec<f32> = seeded(4, m.max(k), -1.0, 1.0);
    let da = DeviceTensor::from_slice(&client, &a, &[m, k]).unwrap();
    let af = to_f64(&a);
    drop(a);
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
        let (xl, yl) = if t == Transpose::No { (k, m) } else { (m, k) };
        let dxv = DeviceTensor::from_slice(&client, &xv[..xl], &[xl]).unwrap();
        let mut dyv = poisoned::<R, f32>(&client, &[yl]).unwrap();
        cubeport::gemv_with(&client, da.as_ref(), dxv.as_ref(), dyv.as_mut(), t, variant).unwrap();
        let want = reference::gemv(&af, m, k, &to_f64(&xv[..xl]), t == Transpose::Yes);
        let got = to_f64(&dyv.to_vec(&client).unwrap());
        let tol = Tolerance::reduction(cubeport::DType::F32, xl, xl as f64);
        assert!(
            compare(&got, &want, tol).ok(),
            "gemv {variant} wrong; not timing it"
        );
        g.throughput(Throughput::BytesDecimal((m * k * 4) as u64));
        let tag = if t == Transpose::No { "gemv" } else { "gemv_t" };
        g.bench_function(
            BenchmarkId::new(format!("{tag}/{variant}/{kind}/f32"), format!("{m}x{k}")),
            |b| {
                b.iter_custom(|it| {
                    time(&client, it, || {
                        cubeport::gemv_with(
                            &client,
                            da.as_ref(),
                            dxv.as_ref(),
                            dyv.as_mut(),
                            t,
                            variant,
                        )
                        .unwrap()
                    })
                })
            },
        );
    }
    g.finish();
}

/// cubek 0.2's reduce (the same-language peer), on the same data, every strategy that runs.
#[cfg(feature = "peer-cubek")]
mod peer {
    use super::*;
    use cubek::reduce::components::instructions::ReduceOperationConfig;
    use cubek::reduce::launch::{RoutineStrategy, VectorizationStrategy};
    use cubek::reduce::routines::{
        BlueprintStrategy, cube::CubeStrategy, plane::PlaneStrategy, unit::UnitStrategy,
    };
    use cubek::reduce::{ReduceDtypes, ReduceStrategy, reduce};
    use cubeport::cubecl::server::Handle;

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

    #[allow(clippy::too_many_arguments)]
    pub fn bench_rows<R: Runtime>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        client: &ComputeClient<R>,
        kind: BackendKind,
        input: &Handle,
        rows: usize,
        len: usize,
        want: &[f64],
        sum_abs: &[f64],
    ) {
        for (name, routine) in strategies() {
            let out = poisoned::<R, f32>(client, &[rows]).unwrap();
            if let Err(e) = run(client, input, out.handle(), rows, len, routine.clone()) {
                eprintln!("cubek reduce {name} on {kind}: unavailable: {e}");
                continue;
            }
            let got = to_f64(&out.to_vec(client).unwrap());
            let c = compare_each(&got, want, |i| {
                Tolerance::reduction(cubeport::DType::F32, len, sum_abs[i])
            });
            if !c.ok() {
                eprintln!("cubek reduce {name} on {kind}: wrong, not timed: {c}");
                continue;
            }
            g.throughput(Throughput::BytesDecimal((rows * len * 4) as u64));
            g.bench_function(
                BenchmarkId::new(
                    format!("sum_rows/cubek_{name}/{kind}/f32"),
                    format!("{rows}x{len}"),
                ),
                |b| {
                    b.iter_custom(|it| {
                        time(client, it, || {
                            launch(client, input, out.handle(), rows, len, routine.clone()).unwrap()
                        })
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
