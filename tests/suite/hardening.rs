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
