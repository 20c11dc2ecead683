//! Host cost of small ops with the device out of the picture: `add_into` (preallocated output)
//! and `add` (owned output) on 1 Ki f32, called back to back, µs per op. Run on
//! `scripts/cuda-offline`'s stub driver (launches and allocations return at once), it measures
//! cubeport's and cubecl's host path alone, on this machine's CPU; under `perf record` it shows
//! where that time goes. `CUBEPORT_BACKEND=wgpu` runs it on wgpu instead (on lavapipe the
//! device shares the CPU, so only a profile of the calling thread means much). Not a speed
//! claim: that is `cubeport bench` on a GPU.
//!
//! ```text
//! cargo build --release --example host_overhead --features testing
//! LD_LIBRARY_PATH=/tmp/cuda-offline/cuda/lib64 CUDA_PATH=/tmp/cuda-offline/cuda \
//!   target/release/examples/host_overhead
//! ```

use cubeport::DeviceTensor;
use cubeport::cubecl::prelude::*;
use cubeport::testing::{seeded, sync};
use std::time::Instant;

fn main() -> Result<(), cubeport::Error> {
    match std::env::var("CUBEPORT_BACKEND").as_deref() {
        Ok("wgpu") => time_ops(&cubeport::wgpu_client()?),
        _ => time_ops(&cubeport::cuda_client()?),
    }
}

fn time_ops<R: Runtime>(client: &ComputeClient<R>) -> Result<(), cubeport::Error> {
    let calls: usize = std::env::var("CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 1024, -1.0, 1.0), &[1024])?;
    let b = DeviceTensor::from_slice(client, &seeded::<f32>(2, 1024, -1.0, 1.0), &[1024])?;
    let mut y = DeviceTensor::<f32>::empty(client, &[1024])?;
    let only = std::env::var("ONLY").unwrap_or_default();
    for op in ["add_into", "add"] {
        if !only.is_empty() && only != op {
            continue;
        }
        let mut run = || -> Result<(), cubeport::Error> {
            match op {
                "add_into" => cubeport::add_into(client, x.as_ref(), b.as_ref(), y.as_mut()),
                _ => cubeport::add(client, &x, &b).map(drop),
            }
        };
        for _ in 0..100 {
            run()?;
        }
        sync(client)?;
        let t = Instant::now();
        for _ in 0..calls {
            run()?;
        }
        sync(client)?;
        println!(
            "{op:9} {:.2} µs/op (host only, {calls} calls)",
            t.elapsed().as_secs_f64() / calls as f64 * 1e6
        );
    }
    Ok(())
}
