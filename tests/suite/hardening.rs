//! Faults cubecl would swallow or panic on, provoked on purpose: each must come back as a typed
//! error, and the process must go on.

use cubeport::cubecl::prelude::*;
use cubeport::testing::{poisoned, seeded, to_f64};
use cubeport::{Activation, ActivationVariant, DeviceTensor, Error};

/// A forced vector wider than the device takes (f16×8 on wgpu, whose WGSL compiler would panic
/// on its device thread) is refused up front; where the device takes it, it is correct.
pub fn vector_wider_than_device<R: Runtime>(client: &ComputeClient<R>) {
    let caps = cubeport::caps_of(client);
    if !caps.f16 {
        return cubeport::testing::skip("vector_wider_than_device", R::name(client), "no f16");
    }
    let n = 1024;
    let x: Vec<half::f16> = seeded(1, n, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
    let mut dy = poisoned::<R, half::f16>(client, &[n]).unwrap();
    let v = ActivationVariant {
        vector: 8,
        cube_dim: 256,
        max_cubes: 64,
    };
    let r = cubeport::ops::activation::bias_activation_with(
        client,
        dx.as_ref(),
        dx.as_ref(),
        dy.as_mut(),
        Activation::Identity,
        v,
    );
    if caps.max_vector_size < 8 {
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    } else {
        r.unwrap();
        let got = to_f64(&dy.to_vec(client).unwrap());
        let want: Vec<f64> = to_f64(&x)
            .iter()
            .map(|v| half::f16::from_f64(2.0 * v).to_f64())
            .collect();
        assert_eq!(got, want);
    }
}

/// Tensors beyond the device's largest allocation are an error, not a dangling handle.
pub fn allocation_beyond_limit<R: Runtime>(client: &ComputeClient<R>) {
    let limit = client.properties().memory.max_page_size;
    let elems = (limit / 4 + 1) as usize;
    let r = DeviceTensor::<f32>::empty(client, &[elems]);
    assert!(
        matches!(r, Err(Error::Allocation { limit: l, .. }) if l == limit),
        "{r:?}"
    );
    // and the client still works
    let t = DeviceTensor::from_slice(client, &[1.0f32, 2.0], &[2]).unwrap();
    assert_eq!(t.to_vec(client).unwrap(), vec![1.0, 2.0]);
}

/// Uploads and reads of every size class round-trip exactly: small (cubecl's path), at and past
/// the direct-copy threshold (CUDA's direct path) and the piecewise one (other runtimes),
/// through a `PinnedBuffer` and a plain slice, with seeded data and a poisoned destination; a
/// short buffer is a typed error.
pub fn transfers_round_trip<R: Runtime>(client: &ComputeClient<R>) {
    // Up to three of CUDA's 8 MiB staging chunks, the last one ragged.
    for n in [
        1usize,
        7,
        1000,
        (1 << 18) - 3,
        (1 << 18) + 5,
        3 << 20,
        (5 << 20) + 3,
    ] {
        let x: Vec<f32> = seeded(n as u64, n, -1.0, 1.0);
        let d = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
        assert_eq!(d.to_vec(client).unwrap(), x, "from_slice/to_vec of {n}");
        let mut pinned = cubeport::PinnedBuffer::<f32>::new(client, n + 3).unwrap();
        pinned[..n].copy_from_slice(&x);
        pinned[n..].fill(f32::NAN);
        let p = DeviceTensor::from_pinned(client, &pinned, &[n]).unwrap();
        pinned.fill(-7.25); // poison: every element must be rewritten by the read
        p.read_into(client, &mut pinned).unwrap();
        assert_eq!(&pinned[..n], &x[..], "from_pinned/read_into of {n}");
        assert!(
            pinned[n..].iter().all(|&v| v == -7.25),
            "read_into wrote past the tensor"
        );
        // The device copy is the one the ops use.
        let mut y = DeviceTensor::<f32>::empty(client, &[n]).unwrap();
        cubeport::copy_into(client, p.as_ref(), y.as_mut()).unwrap();
        assert_eq!(y.to_vec(client).unwrap(), x, "copy of an uploaded {n}");
    }
    // Halves whose byte length is no multiple of 4 (the piecewise upload pads its last piece),
    // past the size where uploads go in pieces on runtimes other than CUDA.
    for n in [(5usize << 20) + 1, (9 << 19) + 7] {
        let x: Vec<half::f16> = seeded(n as u64, n, -1.0, 1.0);
        let d = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
        assert!(
            d.to_vec(client).unwrap() == x,
            "f16 from_slice/to_vec of {n}"
        );
    }
    let short = cubeport::PinnedBuffer::<f32>::new(client, 4).unwrap();
    let r = DeviceTensor::from_pinned(client, &short, &[5]);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: cubeport::ShapeError::DataLength { got: 4, .. },
                ..
            })
        ),
        "{r:?}"
    );
    let d = DeviceTensor::from_slice(client, &[1.0f32; 6], &[6]).unwrap();
    let mut small = cubeport::PinnedBuffer::<f32>::new(client, 5).unwrap();
    let r = d.read_into(client, &mut small);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: cubeport::ShapeError::DataLength { got: 5, .. },
                ..
            })
        ),
        "{r:?}"
    );
    if cubeport::backend_of::<R>() == cubeport::BackendKind::Cuda {
        assert!(small.is_pinned(), "CUDA buffers are page-locked");
    }
}

/// Large uploads and reads from several threads at once (they share CUDA's staging chunks):
/// each thread gets its own data back.
pub fn transfers_from_many_threads<R: Runtime>(client: &ComputeClient<R>) {
    std::thread::scope(|scope| {
        for t in 0..3u64 {
            scope.spawn(move || {
                let n = (9 << 20) / 4 + 17 * t as usize;
                let x: Vec<f32> = seeded(300 + t, n, -1.0, 1.0);
                for _ in 0..3 {
                    let d = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
                    assert_eq!(d.to_vec(client).unwrap(), x, "thread {t}");
                }
            });
        }
    });
}

/// Several threads run ops on one client at once; each gets its own correct results.
pub fn ops_from_many_threads<R: Runtime>(client: &ComputeClient<R>) {
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            scope.spawn(move || {
                let n = 4096 + t as usize;
                let x: Vec<f32> = seeded(100 + t, n, -1.0, 1.0);
                let b: Vec<f32> = seeded(200 + t, n, -1.0, 1.0);
                let dx = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
                let db = DeviceTensor::from_slice(client, &b, &[n]).unwrap();
                for _ in 0..50 {
                    let y = cubeport::add(client, &dx, &db).unwrap();
                    let got = y.to_vec(client).unwrap();
                    assert!(
                        got.iter()
                            .zip(x.iter().zip(&b))
                            .all(|(g, (a, b))| *g == a + b)
                    );
                }
                cubeport::sync(client).unwrap();
            });
        }
    });
}
