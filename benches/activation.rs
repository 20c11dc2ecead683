//! Criterion benchmarks of the activation family, with the device-copy anchor in the same group.
//!
//! ```text
//! cargo bench --bench activation                       # every backend with a device
//! CUBEPORT_BACKEND=cuda cargo bench --bench activation -- 'activation/bias_gelu'
//! CUBEPORT_BENCH_ELEMS=67108864 cargo bench --bench activation
//! ```
//! Ids: `activation/<op>/<backend>/<dtype>/<bias>` with the element count as the parameter.
//! Throughput is decimal bytes moved (inputs read once, output written once), so the copy row
//! is the ceiling the others are a fraction of. Every configuration is checked against the f64
//! reference before it is timed.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::sync;
use cubeport::testing::{compare, poisoned, seeded, to_f64};
use cubeport::{Activation, DType, DeviceTensor, Element, GeluApprox, TensorMut, TensorRef};
use std::time::{Duration, Instant};

const ACTS: [Activation; 4] = [
    Activation::Identity,
    Activation::ReluScale { scale: 0.5 },
    Activation::Gelu(GeluApprox::Tanh),
    Activation::Gelu(GeluApprox::Erf),
];
/// Row length of the broadcast-bias cases (an LLM hidden size).
const ROW: usize = 4096;

fn elems_for(caps: &cubeport::Caps) -> usize {
    if let Some(n) = std::env::var("CUBEPORT_BENCH_ELEMS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    // 64M elements (256 MiB of f32 per tensor, far beyond any L2) where buffers that large are
    // allowed; lavapipe's 128 MiB binding limit gets 4M.
    if caps.max_alloc_bytes >= 1 << 30 {
        64 << 20
    } else {
        4 << 20
    }
}

fn bench_backend<R: Runtime>(c: &mut Criterion, client: ComputeClient<R>, kind: BackendKind) {
    let caps = cubeport::caps_of(&client);
    let n = elems_for(&caps);
    let mut group = c.benchmark_group("activation");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    for dtype in [DType::F32, DType::F16] {
        if !dtype.is_supported_by(&caps) {
            continue;
        }
        match dtype {
            DType::F32 => bench_dtype::<R, f32>(&mut group, &client, kind, n),
            _ => bench_dtype::<R, half::f16>(&mut group, &client, kind, n),
        }
    }
    group.finish();
}

fn bench_dtype<R: Runtime, E: Element>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    client: &ComputeClient<R>,
    kind: BackendKind,
    n: usize,
) {
    let dtype = E::DTYPE;
    let x: Vec<E> = seeded(1, n, -4.0, 4.0);
    let b: Vec<E> = seeded(2, n, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
    let db = DeviceTensor::from_slice(client, &b, &[n]).unwrap();
    let db_row = DeviceTensor::from_slice(client, &b[..ROW], &[ROW]).unwrap();
    let mut dy = poisoned::<R, E>(client, &[n]).unwrap();

    // The anchor: a device copy of the input, bytes read + written.
    cubeport::copy_into(client, dx.as_ref(), dy.as_mut()).unwrap();
    assert_eq!(
        to_f64(&dy.to_vec(client).unwrap()),
        to_f64(&x),
        "copy is wrong; not timing it"
    );
    group.throughput(Throughput::BytesDecimal((2 * n * dtype.size()) as u64));
    group.bench_function(
        BenchmarkId::new(format!("copy/{kind}/{dtype}/none"), n),
        |bench| {
            bench.iter_custom(|iters| {
                sync(client).expect("device sync failed");
                let t = Instant::now();
                for _ in 0..iters {
                    cubeport::copy_into(client, dx.as_ref(), dy.as_mut()).unwrap();
                }
                sync(client).expect("device sync failed");
                t.elapsed()
            })
        },
    );

    let rows = n / ROW;
    for act in ACTS {
        for (bias_name, bias, shape) in [("full", &db, vec![n]), ("row", &db_row, vec![rows, ROW])]
        {
            let nx: usize = shape.iter().product();
            let input = TensorRef::contiguous(dx.handle(), &shape, dtype);
            let output = TensorMut::contiguous(dy.handle(), &shape, dtype);
            let bias_ref = bias.as_ref();
            // Verify once, on fresh poison, before timing.
            let fresh = poisoned::<R, E>(client, &shape).unwrap();
            cubeport::bias_activation_into(
                client,
                input.clone(),
                bias_ref.clone(),
                TensorMut::contiguous(fresh.handle(), &shape, dtype),
                act,
            )
            .unwrap();
            let got = to_f64(&fresh.to_vec(client).unwrap());
            let want: Vec<f64> =
                reference::bias_activation(&to_f64(&x[..nx]), &to_f64(&b[..bias.len()]), act)
                    .into_iter()
                    .map(|v| E::from_f64(v).to_f64())
                    .collect();
            let cmp = compare(&got, &want, Tolerance::elementwise(dtype));
            assert!(
                cmp.ok(),
                "{} {dtype} {bias_name} on {kind} is wrong, not timing it: {cmp}",
                act.name()
            );
            drop(fresh);

            let bytes = (2 * nx + bias.len()) * dtype.size();
            group.throughput(Throughput::BytesDecimal(bytes as u64));
            let id = BenchmarkId::new(format!("{}/{kind}/{dtype}/{bias_name}", act.name()), nx);
            group.bench_function(id, |bench| {
                bench.iter_custom(|iters| {
                    sync(client).expect("device sync failed");
                    let t = Instant::now();
                    for _ in 0..iters {
                        cubeport::bias_activation_into(
                            client,
                            input.clone(),
                            bias_ref.clone(),
                            output.clone(),
                            act,
                        )
                        .unwrap();
                    }
                    sync(client).expect("device sync failed");
                    t.elapsed()
                })
            });
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
    cubeport::testing::visit_backends("bench activation", None, &mut Visit(c));
}

criterion_group!(activation, benches);
criterion_main!(activation);
