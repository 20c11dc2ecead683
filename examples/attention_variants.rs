//! Runs every attention variant the device supports once per dtype on a few problems (ragged,
//! causal with `Sq > Sk`, grouped-query) and prints each one's largest error against the f64
//! reference, in units of its tolerance (≤ 1 passes). A failing variant is reported and the
//! run goes on, so `scripts/cuda-offline` can JIT every CUDA kernel of the family without a GPU
//! (the results are then meaningless) and `compute-sanitizer` can be pointed at all of them.
//!
//! ```text
//! cargo run --release --example attention_variants --features testing
//! CUBEPORT_BACKEND=cuda cargo run --release --example attention_variants --features testing
//! ```

use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, AttentionShape, Tolerance};
use cubeport::testing::{BackendVisitor, poisoned, seeded, to_f64, visit_backends};
use cubeport::{
    AttentionOptions, AttentionVariant, BackendKind, DeviceTensor, Element, ReducePath,
};

/// Every variant worth trying: the SIMT paths and the tensor-core shapes (those a device or a
/// problem cannot run report `Unsupported`).
fn variants() -> Vec<AttentionVariant> {
    let mut v = vec![
        AttentionVariant::Simt(ReducePath::Shared),
        AttentionVariant::Simt(ReducePath::Plane),
    ];
    for (warps, keys, rows) in [
        (4, 64, 16),
        (2, 32, 16),
        (4, 64, 32),
        (8, 64, 16),
        (4, 32, 32),
        (4, 128, 32),
    ] {
        v.push(AttentionVariant::Mma { warps, keys, rows });
    }
    v
}

struct Run {
    failures: usize,
}

fn run<R: Runtime, E: Element>(client: &ComputeClient<R>, kind: BackendKind, run: &mut Run) {
    let caps = cubeport::caps_of(client);
    if !E::DTYPE.is_supported_by(&caps) {
        println!("{kind} {}: dtype not supported, skipped", E::DTYPE);
        return;
    }
    // (batch, heads, kv heads, Sq, Sk, D, causal)
    for (b, h, hk, sq, sk, d, causal) in [
        (1, 4, 2, 77, 133, 64, false),
        (1, 2, 1, 150, 129, 128, true),
        (1, 2, 2, 150, 129, 64, true),
        (2, 2, 2, 64, 300, 128, false),
    ] {
        let q: Vec<E> = seeded(1, b * h * sq * d, -1.0, 1.0);
        let k: Vec<E> = seeded(2, b * hk * sk * d, -1.0, 1.0);
        let v: Vec<E> = seeded(3, b * hk * sk * d, -1.0, 1.0);
        let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
        let shape = AttentionShape {
            batch: b,
            heads: h,
            kv_heads: hk,
            sq,
            sk,
            head_dim: d,
        };
        let scale = 1.0 / (d as f64).sqrt();
        let (want, _) = reference::attention(&qf, &kf, &vf, shape, causal, scale);
        let mags = reference::attention_magnitudes(&qf, &kf, &vf, shape, causal, scale);
        let dq = DeviceTensor::from_slice(client, &q, &[b, h, sq, d]).unwrap();
        let dk = DeviceTensor::from_slice(client, &k, &[b, hk, sk, d]).unwrap();
        let dv = DeviceTensor::from_slice(client, &v, &[b, hk, sk, d]).unwrap();
        let mut opts = AttentionOptions::default();
        if causal {
            opts = opts.causal();
        }
        for variant in variants() {
            let mut out = poisoned::<R, E>(client, &[b, h, sq, d]).unwrap();
            let what = format!(
                "{kind} {} B{b}H{h}/{hk} Sq{sq} Sk{sk} D{d} causal={causal} {variant}",
                E::DTYPE
            );
            let r = cubeport::attention_with(
                client,
                dq.as_ref(),
                dk.as_ref(),
                dv.as_ref(),
                out.as_mut(),
                None,
                opts,
                variant,
            )
            .and_then(|()| out.to_vec(client));
            let got = match r {
                Ok(got) => to_f64(&got),
                Err(cubeport::Error::Unsupported { reason, .. }) => {
                    println!("{what}: unsupported ({reason})");
                    continue;
                }
                Err(e) => {
                    println!("{what}: FAILED {e}");
                    run.failures += 1;
                    continue;
                }
            };
            // Error in units of the tolerance: ≤ 1 passes.
            let worst = got
                .iter()
                .zip(&want)
                .zip(&mags)
                .map(|((g, w), m)| {
                    let w = E::from_f64(*w).to_f64();
                    let t = Tolerance::attention(E::DTYPE, sk, d, *m, scale * d as f64);
                    let err = (g - w).abs();
                    if err.is_nan() {
                        f64::INFINITY
                    } else {
                        err / (t.atol + t.rtol * w.abs())
                    }
                })
                .fold(0.0f64, f64::max);
            let ok = worst <= 1.0;
            if !ok {
                run.failures += 1;
            }
            println!(
                "{what}: worst error {worst:.3} of tolerance {}",
                if ok { "ok" } else { "FAILED" }
            );
        }
    }
}

impl BackendVisitor for Run {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        run::<R, f32>(&client, kind, self);
        run::<R, half::f16>(&client, kind, self);
        run::<R, half::bf16>(&client, kind, self);
    }
}

fn main() -> std::process::ExitCode {
    let mut r = Run { failures: 0 };
    visit_backends("attention_variants", None, &mut r);
    if r.failures == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        println!("{} variant runs failed", r.failures);
        std::process::ExitCode::FAILURE
    }
}
