//! Runs every matmul variant the device supports once per dtype on two shapes (one ragged, one
//! with 4-aligned rows), with and without the fused epilogue, and prints each one's largest
//! error against an f64 reference relative to `Σ|a·b|`.
//!
//! ```text
//! cargo run --release --example matmul_variants                 # every backend found
//! CUBEPORT_BACKEND=cuda cargo run --release --example matmul_variants
//! CUBEPORT_MATMUL_VARIANTS=simt128x64x16_8x4_s2,simt64x64x8_4x4_s1 cargo run --release --example matmul_variants
//! ```
//! `CUBEPORT_MATMUL_VARIANTS` adds variants by id (e.g. SIMT shapes `simt<bm>x<bn>x<bk>_<tm>x<tn>_s<stages>`,
//! tensor-core shapes `tc<bm>x<bn>x<bk>_w<wm>x<wn>[_a<stages>]`) to the list;
//! `CUBEPORT_MATMUL_ONLY=1` runs those alone (what `compute-sanitizer` is pointed at). The
//! shapes: one ragged, one with 8-aligned rows, one aligned and deep (520 = 17 tiles of 32, so
//! every stage of a `cp.async` pipeline wraps), and a decode-like 5-row one (the skinny kernel
//! splits its depth over the grid). `scripts/cuda-offline` runs this example without
//! a GPU to capture the PTX of every CUDA kernel (the results are then meaningless).

use cubeport::cubecl::prelude::*;
use cubeport::testing::{BackendVisitor, poisoned, seeded, to_f64, visit_backends};
use cubeport::{Activation, BackendKind, DeviceTensor, Element, GeluApprox, MatmulVariant};

struct Run {
    extra: Vec<MatmulVariant>,
    /// Only the `extra` variants, not `MatmulVariant::ALL`.
    only: bool,
    failures: usize,
}

fn run<R: Runtime, E: Element>(client: &ComputeClient<R>, kind: BackendKind, run: &mut Run) {
    let caps = cubeport::caps_of(client);
    if !E::DTYPE.is_supported_by(&caps) {
        println!("{kind} {}: dtype not supported, skipped", E::DTYPE);
        return;
    }
    for (m, n, k) in [
        (130, 129, 31),
        (192, 256, 72),
        (136, 264, 520),
        (5, 1000, 2000),
    ] {
        let a: Vec<E> = seeded(1, m * k, -1.0, 1.0);
        let b: Vec<E> = seeded(2, k * n, -1.0, 1.0);
        let bias: Vec<E> = seeded(3, n, -0.5, 0.5);
        let (af, bf) = (to_f64(&a), to_f64(&b));
        let want = cubeport::reference::matmul(&af, &bf, 1, 1, m, n, k);
        let abs = |v: &[f64]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
        let scale = cubeport::reference::matmul(&abs(&af), &abs(&bf), 1, 1, m, n, k);
        let gelu = Activation::Gelu(GeluApprox::Tanh);
        let fused: Vec<f64> = cubeport::reference::bias_activation(&want, &to_f64(&bias), gelu);
        let setup = || -> Result<_, cubeport::Error> {
            Ok((
                DeviceTensor::from_slice(client, &a, &[m, k])?,
                DeviceTensor::from_slice(client, &b, &[k, n])?,
                DeviceTensor::from_slice(client, &bias, &[n])?,
            ))
        };
        let (da, db, dbias) = match setup() {
            Ok(t) => t,
            Err(e) => {
                println!("{kind} {}: setup failed: {e}", E::DTYPE);
                run.failures += 1;
                return;
            }
        };
        let all: &[MatmulVariant] = if run.only { &[] } else { &MatmulVariant::ALL };
        let variants = all.iter().chain(&run.extra);
        for &v in variants.filter(|v| v.runs_on(&caps, E::DTYPE)) {
            for with_bias in [false, true] {
                let outcome = poisoned::<R, E>(client, &[m, n]).and_then(|mut dc| {
                    let (bias, act, reference) = if with_bias {
                        (Some(dbias.as_ref()), gelu, &fused)
                    } else {
                        (None, Activation::Identity, &want)
                    };
                    cubeport::matmul_with(
                        client,
                        da.as_ref(),
                        db.as_ref(),
                        bias,
                        act,
                        dc.as_mut(),
                        v,
                    )?;
                    let got = to_f64(&dc.to_vec(client)?);
                    let worst = got
                        .iter()
                        .zip(reference)
                        .zip(&scale)
                        .map(|((g, w), s)| (g - w).abs() / s.max(1e-30))
                        .fold(0.0f64, |acc, e| {
                            if e.is_nan() {
                                f64::INFINITY
                            } else {
                                acc.max(e)
                            }
                        });
                    Ok(worst)
                });
                let what = format!(
                    "{kind} {} {m}x{n}x{k} {v}{}",
                    E::DTYPE,
                    if with_bias { " +bias+gelu" } else { "" }
                );
                match outcome {
                    Ok(err) => println!("{what}: max |err|/Σ|ab| = {err:.2e}"),
                    Err(e) => {
                        run.failures += 1;
                        println!("{what}: {e}");
                    }
                }
            }
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
    let mut extra = Vec::new();
    if let Ok(list) = std::env::var("CUBEPORT_MATMUL_VARIANTS") {
        for s in list.split(',').filter(|s| !s.is_empty()) {
            match s.parse::<MatmulVariant>() {
                Ok(v) => extra.push(v),
                Err(e) => {
                    eprintln!("{e}");
                    return std::process::ExitCode::FAILURE;
                }
            }
        }
    }
    let only = cubeport::testing::env_flag("CUBEPORT_MATMUL_ONLY");
    let mut run = Run {
        extra,
        only,
        failures: 0,
    };
    if visit_backends("matmul_variants", None, &mut run) == 0 || run.failures > 0 {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
