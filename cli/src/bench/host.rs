//! Host-side phases: µs per small op as a framework calls them, and whether an upload
//! overlaps kernels.

use super::report::{OpOverhead, Overlap};
use cubeport::cubecl::prelude::*;
use cubeport::testing::{seeded, sync};
use cubeport::{DeviceTensor, Error};
use std::time::Instant;

/// µs per op of small ops called back to back the way a framework calls them (host clock, one
/// sync per batch), in both checking modes; each op's first call (its compile and checked
/// launch) is outside the timing.
pub(crate) fn time_ops<R: Runtime>(
    client: &ComputeClient<R>,
    quick: bool,
) -> Result<Vec<OpOverhead>, Error> {
    use cubeport::{Checking, Reduction};
    let x1k = DeviceTensor::from_slice(client, &seeded::<f32>(3, 1024, -1.0, 1.0), &[1024])?;
    let b1k = DeviceTensor::from_slice(client, &seeded::<f32>(4, 1024, -1.0, 1.0), &[1024])?;
    let mut y1k = DeviceTensor::<f32>::empty(client, &[1024])?;
    let x64k =
        DeviceTensor::from_slice(client, &seeded::<f32>(5, 1 << 16, -1.0, 1.0), &[64, 1024])?;
    let b64k = DeviceTensor::from_slice(client, &seeded::<f32>(6, 1024, -1.0, 1.0), &[1024])?;
    let mut y64k = DeviceTensor::<f32>::empty(client, &[64, 1024])?;
    let s = DeviceTensor::from_slice(client, &seeded::<f32>(7, 32 * 128, -4.0, 4.0), &[32, 128])?;
    let m = DeviceTensor::from_slice(client, &seeded::<f32>(8, 64 * 64, -1.0, 1.0), &[64, 64])?;
    let calls = if quick { 200 } else { 5000 };
    let mut out = Vec::new();
    for (checking, mode) in [
        (Checking::FirstLaunch, "first_launch"),
        (Checking::EveryOp, "every_op"),
    ] {
        cubeport::set_checking(checking);
        type Op<'a> = Box<dyn FnMut() -> Result<(), Error> + 'a>;
        let cases: Vec<(&str, Vec<usize>, Op<'_>)> = vec![
            (
                "add_into",
                vec![1024],
                Box::new(|| cubeport::add_into(client, x1k.as_ref(), b1k.as_ref(), y1k.as_mut())),
            ),
            (
                "add",
                vec![1024],
                Box::new(|| cubeport::add(client, &x1k, &b1k).map(drop)),
            ),
            (
                "add",
                vec![64, 1024],
                Box::new(|| cubeport::add(client, &x64k, &b64k).map(drop)),
            ),
            (
                "add_into",
                vec![64, 1024],
                Box::new(|| {
                    cubeport::add_into(client, x64k.as_ref(), b64k.as_ref(), y64k.as_mut())
                }),
            ),
            (
                "bias_gelu",
                vec![1024],
                Box::new(|| cubeport::bias_gelu(client, &x1k, &b1k).map(drop)),
            ),
            (
                "bias_gelu",
                vec![64, 1024],
                Box::new(|| cubeport::bias_gelu(client, &x64k, &b64k).map(drop)),
            ),
            (
                "softmax",
                vec![32, 128],
                Box::new(|| cubeport::softmax(client, &s).map(drop)),
            ),
            (
                "sum_rows",
                vec![64, 1024],
                Box::new(|| cubeport::reduce(client, &x64k, Some(1), Reduction::Sum).map(drop)),
            ),
            (
                "matmul",
                vec![64, 64, 64],
                Box::new(|| cubeport::matmul(client, &m, &m).map(drop)),
            ),
        ];
        for (op, shape, mut run) in cases {
            for _ in 0..20 {
                run()?;
            }
            sync(client)?;
            let mut samples = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                for _ in 0..calls {
                    run()?;
                }
                sync(client)?;
                samples.push(t.elapsed().as_secs_f64() / calls as f64 * 1e6);
            }
            samples.sort_by(f64::total_cmp);
            out.push(OpOverhead {
                op: op.to_string(),
                shape,
                checking: mode.to_string(),
                us_per_op: samples[1],
            });
        }
    }
    cubeport::set_checking(Checking::FirstLaunch);
    Ok(out)
}

/// An upload of `bytes` on this thread, a batch of device copies of the same size on another
/// thread (its own cubecl stream), and both at once: host-clock seconds of each. The batch is
/// sized to last about as long as the upload, so that full overlap would halve the sum.
pub(crate) fn measure_overlap<R: Runtime>(
    client: &ComputeClient<R>,
    bytes: usize,
) -> Result<Option<Overlap>, Error> {
    let n = bytes / 4;
    let host: Vec<f32> = seeded(11, n, -1.0, 1.0);
    let src = DeviceTensor::from_slice(client, &host, &[n])?;
    let mut dst = DeviceTensor::<f32>::empty(client, &[n])?;
    let kernels = |dst: &mut DeviceTensor<f32>, reps: usize| -> Result<f64, Error> {
        let t = Instant::now();
        for _ in 0..reps {
            cubeport::copy_into(client, src.as_ref(), dst.as_mut())?;
        }
        sync(client)?;
        Ok(t.elapsed().as_secs_f64())
    };
    let upload = || -> Result<f64, Error> {
        let t = Instant::now();
        let d = DeviceTensor::from_slice(client, &host, &[n])?;
        sync(client)?;
        drop(d);
        Ok(t.elapsed().as_secs_f64())
    };
    let one = kernels(&mut dst, 8)? / 8.0;
    upload()?;
    let upload_s = upload()?;
    let reps = ((upload_s / one.max(1e-9)).ceil() as usize).clamp(8, 20_000);
    let kernels_s = kernels(&mut dst, reps)?;
    let t = Instant::now();
    let (k, u) = std::thread::scope(|scope| {
        let k = scope.spawn(|| kernels(&mut dst, reps));
        let u = upload();
        (k.join(), u)
    });
    let both_s = t.elapsed().as_secs_f64();
    match k {
        Ok(r) => {
            r?;
        }
        Err(_) => {
            return Err(Error::Launch {
                op: "overlap",
                message: "the kernel thread panicked".into(),
            });
        }
    }
    u?;
    Ok(Some(Overlap {
        bytes: bytes as u64,
        upload_s,
        copies: reps as u64,
        kernels_s,
        both_s,
    }))
}
