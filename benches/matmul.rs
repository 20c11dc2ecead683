//! Criterion benchmarks of matmul: every cubeport variant next to cuBLAS (through cudarc:
//! `sgemm` for f32 — TF32 off, cuBLAS's default math mode —, `gemmEx` with f32 compute for
//! f16/bf16) measured in the same process, at 1024/4096/8192 squares and a ragged shape.
//!
//! ```text
//! cargo bench --bench matmul
//! CUBEPORT_BACKEND=cuda cargo bench --bench matmul -- 'matmul/.*/f32'
//! CUBEPORT_BENCH_QUICK=1 cargo bench --bench matmul    # 256³ and 257×255×129 (lavapipe)
//! ```
//! Ids: `matmul/<variant>/<backend>/<dtype>/<m>x<n>x<k>`; throughput in elements = FLOPs
//! (criterion prints them as `Gelem/s`: read them as GFLOP/s). cuBLAS ids use the variant
//! `cublas`, cubek 0.2's matmul (`--features peer-cubek`, the same-language peer) `cubek_<strategy>`.
//! Each cubeport case was checked on 64 sampled entries against f64 dot products when
//! it was built; cuBLAS and cubek are checked on the same kind of sample before they are timed.
//!
//! `CUBEPORT_MATMUL_VARIANTS=simt128x128x16_8x8_s2,tc256x128x32_w4x2,…` adds variants by id to the
//! cubeport cases (a tuning sweep); `CUBEPORT_MATMUL_ONLY=1` times only those and the automatic
//! choice; `CUBEPORT_MATMUL_SIZES=4096x4096x4096,…` replaces the cubeport sizes and
//! `CUBEPORT_PEER_SIZES` the cuBLAS/cubek ones; `CUBEPORT_BENCH_DTYPES=f32,f16` limits the dtypes;
//! `CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,…` adds batched products (`batch x m x n x k`,
//! the automatic choice) and strided-batched cuBLAS at those sizes.

#[cfg(feature = "peer-cubek")]
use criterion::{BenchmarkId, Throughput};
use criterion::{Criterion, criterion_group, criterion_main};
use cubeport::cubecl::prelude::*;
use cubeport::{BackendKind, DType};
use cubeport_cli::cases::Scale;
#[cfg(feature = "peer-cubek")]
use std::time::Instant;

mod common;
#[cfg(feature = "peer-cubek")]
use common::group;
use common::{Count, bench_cases};

struct Visit<'a>(&'a mut Criterion, Scale);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        let only = std::env::var("CUBEPORT_BENCH_DTYPES").unwrap_or_else(|_| "f32,f16,bf16".into());
        macro_rules! family {
            ($E:ty, $name:literal) => {
                if only.split(',').any(|d| d == $name) {
                    let cases = match (only_variants(), sizes_from_env("CUBEPORT_MATMUL_SIZES")) {
                        (None, None) => cubeport_cli::cases::matmul_cases_with::<R, $E>(
                            &client,
                            self.1,
                            &extra(),
                        ),
                        (vs, sizes) => {
                            let vs = vs.unwrap_or_else(|| {
                                cubeport::MatmulVariant::ALL
                                    .iter()
                                    .copied()
                                    .chain(extra())
                                    .collect()
                            });
                            let sizes =
                                sizes.unwrap_or_else(|| cubeport_cli::cases::matmul_sizes(self.1));
                            cubeport_cli::cases::matmul_cases_for::<R, $E>(&client, &sizes, &vs)
                        }
                    }
                    .unwrap_or_else(|e| panic!("matmul cases on {kind}: {e}"));
                    bench_cases(self.0, &client, kind, Count::Flops, cases);
                    if let Some(sizes) = batched_sizes() {
                        let cases =
                            cubeport_cli::cases::matmul_batched_cases_for::<R, $E>(&client, &sizes)
                                .unwrap_or_else(|e| panic!("batched matmul cases on {kind}: {e}"));
                        bench_cases(self.0, &client, kind, Count::Flops, cases);
                    }
                }
            };
        }
        family!(f32, "f32");
        family!(half::f16, "f16");
        family!(half::bf16, "bf16");
        #[cfg(feature = "peer-cubek")]
        if self.1 == Scale::Full || std::env::var_os("CUBEPORT_PEER_SIZES").is_some() {
            let sizes = peer_sizes();
            for (name, dtype) in [
                ("f32", DType::F32),
                ("f16", DType::F16),
                ("bf16", DType::BF16),
            ] {
                if only.split(',').any(|d| d == name) {
                    cubek_peer::bench(self.0, &client, kind, dtype, &sizes);
                }
            }
        }
    }
}

/// `CUBEPORT_MATMUL_ONLY=1`: time only the automatic choice and `CUBEPORT_MATMUL_VARIANTS`.
fn only_variants() -> Option<Vec<cubeport::MatmulVariant>> {
    cubeport::testing::env_flag("CUBEPORT_MATMUL_ONLY").then(extra)
}

/// Variants from `CUBEPORT_MATMUL_VARIANTS` (ids as printed, e.g. SIMT or tensor-core shapes).
fn extra() -> Vec<cubeport::MatmulVariant> {
    std::env::var("CUBEPORT_MATMUL_VARIANTS")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// `m x n x k` sizes from the comma-separated list in `var` (`4096x4096x4096,8192x8192x8192`).
fn sizes_from_env(var: &str) -> Option<Vec<(usize, usize, usize)>> {
    common::dims_from_env(var, 3).map(|v| v.into_iter().map(|d| (d[0], d[1], d[2])).collect())
}

/// `CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,…`: batched sizes (`batch x m x n x k`), timed
/// for the automatic choice and strided-batched cuBLAS.
fn batched_sizes() -> Option<Vec<(usize, usize, usize, usize)>> {
    common::dims_from_env("CUBEPORT_MATMUL_BATCHED", 4)
        .map(|v| v.into_iter().map(|d| (d[0], d[1], d[2], d[3])).collect())
}

/// The sizes the peers (cuBLAS, cubek) run at: `CUBEPORT_PEER_SIZES`, else as the cubeport
/// cases.
fn peer_sizes() -> Vec<(usize, usize, usize)> {
    sizes_from_env("CUBEPORT_PEER_SIZES")
        .unwrap_or_else(|| cubeport_cli::cases::matmul_sizes(Scale::Full))
}

/// The sizes cuBLAS (the anchor of every ratio) runs at: the peer sizes and every size the
/// cubeport cases were given in `CUBEPORT_MATMUL_SIZES`, each once.
#[cfg(feature = "cuda")]
fn anchor_sizes() -> Vec<(usize, usize, usize)> {
    let mut sizes = peer_sizes();
    for s in sizes_from_env("CUBEPORT_MATMUL_SIZES").unwrap_or_default() {
        if !sizes.contains(&s) {
            sizes.push(s);
        }
    }
    sizes
}

/// cubek 0.2's matmul on the same seeded inputs, every strategy that runs here: the
/// same-language peer. f16/bf16 accumulate in f32; for f32 only true-f32 strategies are timed
/// (cubek's `Auto` runs f32 on TF32 tensor cores).
#[cfg(feature = "peer-cubek")]
mod cubek_peer {
    use super::*;
    use cubek::matmul::definition::{MatmulElems, MatmulGlobalElems};
    use cubek::matmul::launch::{Strategy, launch_ref};
    use cubek::std::InputBinding;
    use cubeport::DeviceTensor;
    use cubeport::testing::{seeded, sync};

    fn strategies(dtype: DType) -> Vec<(&'static str, Strategy)> {
        if dtype == DType::F32 {
            return vec![
                ("simple_unit", Strategy::SimpleUnit(Default::default())),
                ("double_unit", Strategy::DoubleUnit(Default::default())),
            ];
        }
        vec![
            ("double_tma_mma", Strategy::DoubleTmaMma(Default::default())),
            (
                "double_tma_cmma",
                Strategy::DoubleTmaCmma(Default::default()),
            ),
            (
                "specialized_tma_mma",
                Strategy::SpecializedTmaMma(Default::default()),
            ),
            (
                "double_cyclic_cmma",
                Strategy::DoubleCyclicCmma(Default::default()),
            ),
            (
                "double_cyclic_mma",
                Strategy::DoubleCyclicMma(Default::default()),
            ),
            (
                "simple_cyclic_cmma",
                Strategy::SimpleCyclicCmma(Default::default()),
            ),
        ]
    }

    /// One launch and a device sync (the checked first run); cubek panics on some
    /// unsupported problems, which count as unavailable.
    fn launch<R: Runtime>(
        client: &ComputeClient<R>,
        strategy: &Strategy,
        a: &cubeport::cubecl::server::Handle,
        b: &cubeport::cubecl::server::Handle,
        c: &cubeport::cubecl::server::Handle,
        mnk: (usize, usize, usize),
        storage: cubeport::cubecl::ir::StorageType,
    ) -> Result<(), String> {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            launch_ref_only(client, strategy, a, b, c, mnk, storage)
        }));
        match outcome {
            Ok(Ok(())) => sync(client).map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("cubek panicked".into()),
        }
    }

    pub fn bench<R: Runtime>(
        c: &mut Criterion,
        client: &ComputeClient<R>,
        kind: BackendKind,
        dtype: DType,
        sizes: &[(usize, usize, usize)],
    ) {
        macro_rules! go {
            ($E:ty) => {
                for &(m, n, k) in sizes {
                    let a: Vec<$E> = seeded(80, m * k, -1.0, 1.0);
                    let b: Vec<$E> = seeded(81, k * n, -1.0, 1.0);
                    let (da, db) = match (
                        DeviceTensor::from_slice(client, &a, &[m, k]),
                        DeviceTensor::from_slice(client, &b, &[k, n]),
                    ) {
                        (Ok(x), Ok(y)) => (x, y),
                        _ => return,
                    };
                    let storage = <$E as CubePrimitive>::as_type_native_unchecked().storage_type();
                    let mut g = group(c, "matmul");
                    for (name, strategy) in strategies(dtype) {
                        let Ok(dc) = cubeport::testing::poisoned::<R, $E>(client, &[m, n]) else {
                            return;
                        };
                        let run = || launch(client, &strategy, da.handle(), db.handle(), dc.handle(), (m, n, k), storage);
                        if let Err(e) = run() {
                            eprintln!("cubek matmul {name} on {kind} {dtype}: unavailable: {}", e.lines().next().unwrap_or(""));
                            continue;
                        }
                        let got = dc.to_vec(client).unwrap();
                        if let Err(e) = cubeport_cli::cases::verify_matmul_sample(&got, &a, &b, (m, n, k), 32, "cubek") {
                            eprintln!("cubek matmul {name} on {kind} {dtype} {m}x{n}x{k}: wrong, not timed: {e}");
                            continue;
                        }
                        g.throughput(Throughput::Elements(2 * (m * n * k) as u64));
                        let id = BenchmarkId::new(format!("cubek_{name}/{kind}/{dtype}"), format!("{m}x{n}x{k}"));
                        g.bench_function(id, |bch| {
                            bch.iter_custom(|iters| {
                                sync(client).expect("device sync failed");
                                let t = Instant::now();
                                for _ in 0..iters {
                                    let _ = launch_ref_only(client, &strategy, da.handle(), db.handle(), dc.handle(), (m, n, k), storage);
                                }
                                sync(client).expect("device sync failed");
                                t.elapsed()
                            })
                        });
                    }
                    g.finish();
                }
            };
        }
        match dtype {
            DType::F32 => go!(f32),
            DType::F16 => go!(half::f16),
            DType::BF16 => go!(half::bf16),
            _ => {}
        }
    }

    /// One launch without the sync (the timing loop syncs once around the batch).
    fn launch_ref_only<R: Runtime>(
        client: &ComputeClient<R>,
        strategy: &Strategy,
        a: &cubeport::cubecl::server::Handle,
        b: &cubeport::cubecl::server::Handle,
        c: &cubeport::cubecl::server::Handle,
        (m, n, k): (usize, usize, usize),
        storage: cubeport::cubecl::ir::StorageType,
    ) -> Result<(), String> {
        // SAFETY: as in `launch`.
        let (lhs, rhs, out) = unsafe {
            (
                TensorBinding::<R>::from_raw_parts(a.clone(), [k, 1].into(), [m, k].into()),
                TensorBinding::<R>::from_raw_parts(b.clone(), [n, 1].into(), [k, n].into()),
                TensorBinding::<R>::from_raw_parts(c.clone(), [n, 1].into(), [m, n].into()),
            )
        };
        let mut dtypes = MatmulElems::from_globals(&MatmulGlobalElems {
            lhs: storage,
            rhs: storage,
            out: storage,
        });
        launch_ref(
            strategy,
            client,
            InputBinding::Normal(lhs, storage),
            InputBinding::Normal(rhs, storage),
            out,
            &mut dtypes,
        )
        .map_err(|e| format!("{e:?}"))
    }
}

fn benches(c: &mut Criterion) {
    let scale = common::scale();
    cubeport::testing::visit_backends("bench matmul", None, &mut Visit(c, scale));
    #[cfg(feature = "cuda")]
    if scale == Scale::Full
        && cubeport::backends::available()
            .iter()
            .any(|s| s.kind == BackendKind::Cuda && s.device.is_ok())
    {
        // cuBLAS through cudarc, the same seeded inputs as the cubeport cases
        // (`cubeport_cli::cases::cublas_case`, shared with `cubeport bench`).
        let only = std::env::var("CUBEPORT_BENCH_DTYPES").unwrap_or_else(|_| "f32,f16,bf16".into());
        let client = match cubeport::backends::cuda_client() {
            Ok(c) => c,
            Err(e) => return eprintln!("SKIP matmul/cublas: {e}"),
        };
        for (m, n, k) in anchor_sizes() {
            for dtype in [DType::F32, DType::F16, DType::BF16] {
                if !only.split(',').any(|d| d == dtype.to_string()) {
                    continue;
                }
                match cubeport_cli::cases::cublas_case_of(dtype, m, n, k) {
                    Ok(case) => {
                        bench_cases(c, &client, BackendKind::Cuda, Count::Flops, vec![case])
                    }
                    Err(e) => eprintln!("SKIP matmul/cublas/cuda/{dtype}: {e}"),
                }
            }
        }
        for (batch, m, n, k) in batched_sizes().unwrap_or_default() {
            for dtype in [DType::F32, DType::F16, DType::BF16] {
                if !only.split(',').any(|d| d == dtype.to_string()) {
                    continue;
                }
                match cubeport_cli::cases::cublas_batched_case_of(dtype, batch, m, n, k) {
                    Ok(case) => {
                        bench_cases(c, &client, BackendKind::Cuda, Count::Flops, vec![case])
                    }
                    Err(e) => eprintln!("SKIP matmul/cublas/cuda/{dtype}: {e}"),
                }
            }
        }
    }
}

criterion_group!(matmul, benches);
criterion_main!(matmul);
