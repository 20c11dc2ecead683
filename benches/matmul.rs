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
//! `cublas`. Each cubeport case was checked on 64 sampled entries against f64 dot products when
//! it was built; cuBLAS is checked on the same kind of sample before it is timed.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use cubeport::cases::{Case, Scale};
use cubeport::cubecl::prelude::*;
use cubeport::testing::sync;
use cubeport::{BackendKind, DType, Element};
use std::time::{Duration, Instant};

fn group(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("matmul");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500));
    g
}

fn bench_cases<R: Runtime>(
    c: &mut Criterion,
    client: &ComputeClient<R>,
    kind: BackendKind,
    dtype: DType,
    cases: Vec<Case<'_>>,
) {
    let mut g = group(c);
    for mut case in cases {
        g.throughput(Throughput::Elements(case.flops));
        let id = BenchmarkId::new(case.id(kind, dtype), case.size.clone());
        g.bench_function(id, |b| {
            b.iter_custom(|iters| {
                sync(client).expect("device sync failed");
                let t = Instant::now();
                for _ in 0..iters {
                    case.run().unwrap();
                }
                sync(client).expect("device sync failed");
                t.elapsed()
            })
        });
    }
    g.finish();
}

#[cfg(feature = "cuda")]
mod cublas {
    use super::*;
    use cubeport::testing::seeded;
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys::cublasOperation_t};
    use cudarc::driver::CudaContext;

    /// cuBLAS on row-major operands: `C = A·B` is computed as `Cᵀ = Bᵀ·Aᵀ` in column-major.
    pub fn bench<E: Element + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        c: &mut Criterion,
        sizes: &[(usize, usize, usize)],
    ) where
        CudaBlas: Gemm<E>,
    {
        let ctx = match CudaContext::new(0) {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!("SKIP matmul/cublas: {e}");
                return;
            }
        };
        let stream = ctx.default_stream();
        let blas = match CudaBlas::new(stream.clone()) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("SKIP matmul/cublas: {e}");
                return;
            }
        };
        let mut g = group(c);
        for &(m, n, k) in sizes {
            let a: Vec<E> = seeded(80, m * k, -1.0, 1.0);
            let b: Vec<E> = seeded(81, k * n, -1.0, 1.0);
            let da = stream.clone_htod(&a).unwrap();
            let db = stream.clone_htod(&b).unwrap();
            let mut dc = stream.alloc_zeros::<E>(m * n).unwrap();
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
            // SAFETY: buffers hold k·n, m·k and m·n elements as the config describes.
            let run = |dc: &mut cudarc::driver::CudaSlice<E>| unsafe {
                blas.gemm(cfg, &db, &da, dc).unwrap()
            };
            run(&mut dc);
            let got = stream.clone_dtoh(&dc).unwrap();
            for s in 0..32 {
                let (i, j) = ((s * 7919) % m, (s * 104_729) % n);
                let (mut dot, mut abs) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let t = a[i * k + p].to_f64() * b[p * n + j].to_f64();
                    dot += t;
                    abs += t.abs();
                }
                let want = E::from_f64(dot).to_f64();
                let tol = cubeport::reference::Tolerance::matmul(E::DTYPE, k, abs);
                let g = got[i * n + j].to_f64();
                assert!(
                    (g - want).abs() <= tol.atol + tol.rtol * want.abs(),
                    "cuBLAS C[{i},{j}] = {g}, want {want}; not timing it"
                );
            }
            g.throughput(Throughput::Elements(2 * (m * n * k) as u64));
            let id = BenchmarkId::new(format!("cublas/cuda/{}", E::DTYPE), format!("{m}x{n}x{k}"));
            g.bench_function(id, |bch| {
                bch.iter_custom(|iters| {
                    stream.synchronize().unwrap();
                    let t = Instant::now();
                    for _ in 0..iters {
                        run(&mut dc);
                    }
                    stream.synchronize().unwrap();
                    t.elapsed()
                })
            });
        }
        g.finish();
    }
}

struct Visit<'a>(&'a mut Criterion, Scale);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        let only = std::env::var("CUBEPORT_BENCH_DTYPES").unwrap_or_else(|_| "f32,f16,bf16".into());
        macro_rules! family {
            ($E:ty, $name:literal) => {
                if only.split(',').any(|d| d == $name) {
                    let cases = cubeport::cases::matmul_cases::<R, $E>(&client, self.1)
                        .unwrap_or_else(|e| panic!("matmul cases on {kind}: {e}"));
                    bench_cases(
                        self.0,
                        &client,
                        kind,
                        <$E as cubeport::Scalar>::DTYPE,
                        cases,
                    );
                }
            };
        }
        family!(f32, "f32");
        family!(half::f16, "f16");
        family!(half::bf16, "bf16");
    }
}

fn benches(c: &mut Criterion) {
    let scale = if std::env::var_os("CUBEPORT_BENCH_QUICK").is_some() {
        Scale::Quick
    } else {
        Scale::Full
    };
    cubeport::testing::visit_backends("bench matmul", None, &mut Visit(c, scale));
    #[cfg(feature = "cuda")]
    if scale == Scale::Full
        && cubeport::backends::available()
            .iter()
            .any(|s| s.kind == BackendKind::Cuda && s.device.is_ok())
    {
        let sizes = [
            (1024, 1024, 1024),
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (4095, 4097, 4093),
        ];
        cublas::bench::<f32>(c, &sizes);
        cublas::bench::<half::f16>(c, &sizes);
        cublas::bench::<half::bf16>(c, &sizes);
    }
}

criterion_group!(matmul, benches);
criterion_main!(matmul);
