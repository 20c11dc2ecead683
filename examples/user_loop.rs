//! A matmul timed the way a user's loop sees it, next to the kernel's own time: the first call
//! in the process (JIT compile and run), ten owned-output calls back to back then one sync,
//! ten calls into a preallocated output, and the device's timer around one launch (wgpu's
//! timestamp queries; CUDA reports host time there). Issue 23 saw a WGSL f32 4096³ matmul take
//! 19 ms per call host-timed against 4.7 ms by the device timers; this separates the
//! candidates (the first call's compile spread over a short loop, owned-output allocation,
//! per-call host work, the timers themselves).
//!
//! ```text
//! cargo build --release --example user_loop --features testing
//! CUBEPORT_BACKEND=wgpu SHAPE=4096x4096x4096 DTYPE=f32 target/release/examples/user_loop
//! ```

use cubeport::cubecl::prelude::*;
use cubeport::testing::{seeded, sync};
use cubeport::{DeviceTensor, Element};
use std::time::Instant;

fn main() -> Result<(), cubeport::Error> {
    let shape = std::env::var("SHAPE").unwrap_or_else(|_| "4096x4096x4096".into());
    let dims: Vec<usize> = shape.split('x').filter_map(|v| v.parse().ok()).collect();
    let [m, n, k] = dims[..] else {
        eprintln!("SHAPE must be MxNxK, got {shape}");
        std::process::exit(2);
    };
    let dtype = std::env::var("DTYPE").unwrap_or_else(|_| "f32".into());
    let wgpu = std::env::var("CUBEPORT_BACKEND").as_deref() == Ok("wgpu");
    match (wgpu, dtype.as_str()) {
        (true, "f16") => run::<_, half::f16>(&cubeport::wgpu_client()?, m, n, k),
        (true, _) => run::<_, f32>(&cubeport::wgpu_client()?, m, n, k),
        (false, "f16") => run::<_, half::f16>(&cubeport::cuda_client()?, m, n, k),
        (false, _) => run::<_, f32>(&cubeport::cuda_client()?, m, n, k),
    }
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

fn run<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    m: usize,
    n: usize,
    k: usize,
) -> Result<(), cubeport::Error> {
    let a = DeviceTensor::<E>::from_slice(client, &seeded::<E>(1, m * k, -1.0, 1.0), &[m, k])?;
    let b = DeviceTensor::<E>::from_slice(client, &seeded::<E>(2, k * n, -1.0, 1.0), &[k, n])?;
    sync(client)?;
    let flop = 2.0 * (m * n * k) as f64;
    println!("matmul {m}x{n}x{k} {} on {}", E::DTYPE, R::name(client));

    let t = Instant::now();
    drop(cubeport::matmul(client, &a, &b)?);
    sync(client)?;
    let first = t.elapsed().as_secs_f64();
    println!(
        "first call in the process (compile + run), host: {}",
        ms(first)
    );

    let calls = 10;
    let owned = per_call(client, calls, || cubeport::matmul(client, &a, &b).map(drop))?;
    println!(
        "owned output, {calls} calls then one sync, per call (median of 5 loops): {} ({:.1} TFLOP/s)",
        ms(owned),
        flop / owned / 1e12
    );
    println!(
        "the same loop with the first call in it would give: {} per call",
        ms((first + (calls - 1) as f64 * owned) / calls as f64)
    );

    let mut c = DeviceTensor::<E>::empty(client, &[m, n])?;
    let into = per_call(client, calls, || {
        cubeport::matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut())
    })?;
    println!(
        "preallocated output (matmul_into), the same loop: {}",
        ms(into)
    );

    let mut device = Vec::new();
    for _ in 0..calls {
        let (out, duration) = client
            .profile(
                || cubeport::matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut()),
                "user_loop",
            )
            .map_err(|e| cubeport::Error::Launch {
                op: "profile",
                message: e.to_string(),
            })?;
        out?;
        device.push(
            cubeport::cubecl::future::block_on(duration.resolve())
                .duration()
                .as_secs_f64(),
        );
    }
    println!(
        "one launch inside client.profile (device timers on wgpu), median of {calls}: {}",
        ms(median(&mut device))
    );
    Ok(())
}

/// Seconds per call of `op` called `calls` times back to back then one sync: the median of 5
/// such loops.
fn per_call<R: Runtime>(
    client: &ComputeClient<R>,
    calls: usize,
    mut op: impl FnMut() -> Result<(), cubeport::Error>,
) -> Result<f64, cubeport::Error> {
    let mut loops = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..calls {
            op()?;
        }
        sync(client)?;
        loops.push(t.elapsed().as_secs_f64() / calls as f64);
    }
    Ok(median(&mut loops))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
