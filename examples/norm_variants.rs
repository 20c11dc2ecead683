//! Runs the automatic RMSNorm, LayerNorm and residual-add RMSNorm once per dtype on one shape
//! (`CUBEPORT_NORM_SHAPE=ROWSxLEN`, default 64x4096: the kernel the benchmarks' 16384x4096
//! runs, since the row group depends on the row length only) and prints each one's largest
//! error against the f64 reference in units of its tolerance (≤ 1 passes). A failure is
//! reported and the run goes on, so `scripts/cuda-offline` can JIT the family's CUDA kernels
//! without a GPU (the results are then meaningless) and `compute-sanitizer` can be pointed at
//! them.
//!
//! ```text
//! CUBEPORT_BACKEND=cuda cargo run --release --example norm_variants --features testing
//! ```

use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{BackendVisitor, poisoned, seeded, to_f64, visit_backends};
use cubeport::{BackendKind, DeviceTensor, Element};

const EPS: f32 = 1e-5;

struct Run {
    rows: usize,
    len: usize,
    failures: usize,
}

/// Largest `|got − want|` over the tolerance (`∞` for a NaN where a number was due).
fn worst<E: Element>(got: &[f64], want: &[f64], mags: &[f64], len: usize) -> f64 {
    got.iter()
        .zip(want)
        .zip(mags)
        .map(|((g, w), m)| {
            let w = E::from_f64(*w).to_f64();
            let t = Tolerance::norm(E::DTYPE, len, *m);
            let err = (g - w).abs();
            if err.is_nan() {
                f64::INFINITY
            } else {
                err / (t.atol + t.rtol * w.abs())
            }
        })
        .fold(0.0f64, f64::max)
}

fn run<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    kind: BackendKind,
    run: &mut Run,
) -> Result<(), cubeport::Error> {
    let caps = cubeport::caps_of(client);
    if !E::DTYPE.is_supported_by(&caps) {
        println!("{kind} {}: dtype not supported, skipped", E::DTYPE);
        return Ok(());
    }
    let (rows, len) = (run.rows, run.len);
    let shape = [rows, len];
    let x: Vec<E> = seeded(1, rows * len, -2.0, 3.0);
    let r: Vec<E> = seeded(2, rows * len, -1.0, 1.0);
    let w: Vec<E> = seeded(3, len, 0.5, 1.5);
    let b: Vec<E> = seeded(4, len, -0.5, 0.5);
    let (xf, rf, wf, bf) = (to_f64(&x), to_f64(&r), to_f64(&w), to_f64(&b));
    let dx = DeviceTensor::from_slice(client, &x, &shape)?;
    let dr = DeviceTensor::from_slice(client, &r, &shape)?;
    let dw = DeviceTensor::from_slice(client, &w, &[len])?;
    let db = DeviceTensor::from_slice(client, &b, &[len])?;
    let eps = f64::from(EPS);
    for op in ["rms_norm", "layer_norm", "add_rms_norm"] {
        let mut out = poisoned::<R, E>(client, &shape)?;
        let mut sum = poisoned::<R, E>(client, &shape)?;
        let launched = match op {
            "rms_norm" => {
                cubeport::rms_norm_into(client, dx.as_ref(), Some(dw.as_ref()), out.as_mut(), EPS)
            }
            "layer_norm" => cubeport::layer_norm_into(
                client,
                dx.as_ref(),
                Some(dw.as_ref()),
                Some(db.as_ref()),
                out.as_mut(),
                EPS,
            ),
            _ => cubeport::add_rms_norm_into(
                client,
                dx.as_ref(),
                dr.as_ref(),
                Some(dw.as_ref()),
                sum.as_mut(),
                out.as_mut(),
                EPS,
            ),
        };
        let what = format!("{kind} {} {op} {rows}x{len}", E::DTYPE);
        let got = match launched.and_then(|()| out.to_vec(client)) {
            Ok(got) => to_f64(&got),
            Err(e) => {
                println!("{what}: FAILED {e}");
                run.failures += 1;
                continue;
            }
        };
        // The row normalized with a residual is `x + r` rounded to the dtype.
        let input: Vec<f64> = if op == "add_rms_norm" {
            xf.iter()
                .zip(&rf)
                .map(|(a, b)| E::from_f64(a + b).to_f64())
                .collect()
        } else {
            xf.clone()
        };
        let layer = op == "layer_norm";
        let bias = layer.then_some(&bf[..]);
        let want = if layer {
            reference::layer_norm(&input, Some(&wf), bias, len, eps)
        } else {
            reference::rms_norm(&input, Some(&wf), len, eps)
        };
        let mags = reference::norm_magnitudes(&input, Some(&wf), bias, len, eps, layer);
        let e = worst::<E>(&got, &want, &mags, len);
        println!("{what}: max error / tolerance = {e:.3e}");
        if e > 1.0 {
            run.failures += 1;
        }
    }
    Ok(())
}

impl BackendVisitor for Run {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        for r in [
            run::<R, f32>(&client, kind, self),
            run::<R, half::f16>(&client, kind, self),
            run::<R, half::bf16>(&client, kind, self),
        ] {
            if let Err(e) = r {
                println!("{kind}: FAILED {e}");
                self.failures += 1;
            }
        }
    }
}

fn main() {
    let (rows, len) = std::env::var("CUBEPORT_NORM_SHAPE")
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once('x')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((64, 4096));
    let mut r = Run {
        rows,
        len,
        failures: 0,
    };
    visit_backends("norm_variants", None, &mut r);
    if r.failures > 0 {
        println!("{} failure(s)", r.failures);
        std::process::exit(1);
    }
}
