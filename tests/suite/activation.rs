//! Generic bodies for the activation family.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare, poison, poisoned, seeded, to_f64};
use cubeport::{
    Activation, ActivationVariant, DType, DeviceTensor, Element, Error, GeluApprox, ShapeError,
    TensorMut, TensorRef,
};

fn seed_of(act: Activation, shape: &[usize]) -> u64 {
    let mut s = 0x5EED_u64 ^ act.name().len() as u64;
    for &d in shape {
        s = s.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(d as u64);
    }
    s
}

/// Runs `act` on seeded inputs into a poisoned output; returns (got, want) with `want` rounded
/// to the storage type.
fn run<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    act: Activation,
    shape: &[usize],
    bias_shape: &[usize],
    variant: Option<ActivationVariant>,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let n: usize = shape.iter().product();
    let nb: usize = bias_shape.iter().product();
    let seed = seed_of(act, shape);
    let x: Vec<E> = seeded(seed, n, -6.0, 6.0);
    let b: Vec<E> = seeded(seed + 1, nb, -1.5, 1.5);
    run_with(client, act, shape, bias_shape, &x, &b, variant)
}

fn run_with<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    act: Activation,
    shape: &[usize],
    bias_shape: &[usize],
    x: &[E],
    b: &[E],
    variant: Option<ActivationVariant>,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let dx = DeviceTensor::from_slice(client, x, shape)?;
    let db = DeviceTensor::from_slice(client, b, bias_shape)?;
    let mut dy = poisoned::<R, E>(client, shape)?;
    match variant {
        None => cubeport::bias_activation_into(client, dx.as_ref(), db.as_ref(), dy.as_mut(), act)?,
        Some(v) => cubeport::ops::activation::bias_activation_with(
            client,
            dx.as_ref(),
            db.as_ref(),
            dy.as_mut(),
            act,
            v,
        )?,
    }
    let got = to_f64(&dy.to_vec(client)?);
    let want = reference::bias_activation(&to_f64(x), &to_f64(b), act)
        .into_iter()
        .map(|v| E::from_f64(v).to_f64())
        .collect();
    Ok((got, want))
}

fn assert_matches(got: &[f64], want: &[f64], dtype: DType, what: &str) {
    let c = compare(got, want, Tolerance::elementwise(dtype));
    assert!(c.ok(), "{what}: {c}");
}

pub fn matches_reference<R: Runtime>(
    client: &ComputeClient<R>,
    act: Activation,
    dtype: DType,
    shape: &[usize],
    bias: &[usize],
) {
    let (got, want) = with_dtype!(dtype, E => run::<R, E>(client, act, shape, bias, None))
        .unwrap_or_else(|e| {
            panic!(
                "{} {dtype} {shape:?} on {}: {e}",
                act.name(),
                R::name(client)
            )
        });
    assert_matches(
        &got,
        &want,
        dtype,
        &format!(
            "{} {dtype} {shape:?} bias {bias:?} on {}",
            act.name(),
            R::name(client)
        ),
    );
}

/// Forces each vector width the device takes (1 = the scalar fallback) on a flat ragged length
/// (body + tail) and on rows divisible by every width.
pub fn every_vector_width<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let caps = cubeport::caps_of(client);
    let widths = caps.vector_sizes(dtype.size());
    assert!(
        widths.contains(&1) && widths.len() >= 2,
        "widths {widths:?}"
    );
    for vector in widths {
        let variant = ActivationVariant {
            vector,
            cube_dim: 64,
            max_cubes: 7,
        }; // tiny grid: many grid-stride turns
        for (shape, bias) in [(vec![1029], vec![1029]), (vec![9, 64], vec![64])] {
            for act in [
                Activation::ReluScale { scale: 1.5 },
                Activation::Gelu(GeluApprox::Tanh),
            ] {
                let (got, want) =
                    with_dtype!(dtype, E => run::<R, E>(client, act, &shape, &bias, Some(variant)))
                        .unwrap();
                assert_matches(
                    &got,
                    &want,
                    dtype,
                    &format!("vec{vector} {} {shape:?}", act.name()),
                );
            }
        }
    }
}

/// NaN, ±inf, signed zeros, the largest finite values and subnormals, against the reference.
pub fn edge_values<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let max = match dtype {
        DType::F16 => 65504.0,
        DType::BF16 => 3.0e38,
        _ => 3.0e38,
    };
    let tiny = match dtype {
        DType::F16 => 6.0e-8,
        DType::BF16 => 1.0e-39,
        _ => 1.0e-45,
    };
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        max,
        -max,
        tiny,
        -tiny,
        1.0,
        -1.0,
        20.0,
        -20.0,
    ];
    let n = specials.len() * 3;
    let x: Vec<f64> = (0..n).map(|i| specials[i % specials.len()]).collect();
    let b: Vec<f64> = (0..n)
        .map(|i| [0.25, -0.5, 0.0][i / specials.len()])
        .collect();
    for act in [
        Activation::Identity,
        Activation::ReluScale { scale: 0.5 },
        Activation::Gelu(GeluApprox::Tanh),
        Activation::Gelu(GeluApprox::Erf),
    ] {
        let (got, want) = with_dtype!(dtype, E => {
            let xe: Vec<E> = x.iter().map(|&v| E::from_f64(v)).collect();
            let be: Vec<E> = b.iter().map(|&v| E::from_f64(v)).collect();
            run_with::<R, E>(client, act, &[n], &[n], &xe, &be, None)
        })
        .unwrap();
        // max + 0.25 overflows nothing in f32 arithmetic, but gelu's cube of it does: the
        // kernel clamps tanh's argument, the reference saturates; both give ±max or 0.
        assert_matches(
            &got,
            &want,
            dtype,
            &format!("{} edge values {dtype}", act.name()),
        );
    }
}

/// The fused kernel equals its unfused composition: add, then the activation with a zero bias.
pub fn fused_matches_unfused<R: Runtime>(client: &ComputeClient<R>) {
    let (rows, cols) = (13, 256);
    let x: Vec<f32> = seeded(7, rows * cols, -3.0, 3.0);
    let b: Vec<f32> = seeded(8, cols, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(client, &x, &[rows, cols]).unwrap();
    let db = DeviceTensor::from_slice(client, &b, &[cols]).unwrap();
    let zero = DeviceTensor::from_slice(client, &vec![0.0f32; cols], &[cols]).unwrap();
    for act in [
        Activation::ReluScale { scale: 0.25 },
        Activation::Gelu(GeluApprox::Tanh),
        Activation::Gelu(GeluApprox::Erf),
    ] {
        let mut fused = poisoned::<R, f32>(client, &[rows, cols]).unwrap();
        cubeport::bias_activation_into(client, dx.as_ref(), db.as_ref(), fused.as_mut(), act)
            .unwrap();
        let mut sum = poisoned::<R, f32>(client, &[rows, cols]).unwrap();
        cubeport::add_into(client, dx.as_ref(), db.as_ref(), sum.as_mut()).unwrap();
        let mut unfused = poisoned::<R, f32>(client, &[rows, cols]).unwrap();
        cubeport::bias_activation_into(client, sum.as_ref(), zero.as_ref(), unfused.as_mut(), act)
            .unwrap();
        let (f, u) = (
            fused.to_vec(client).unwrap(),
            unfused.to_vec(client).unwrap(),
        );
        assert_eq!(f, u, "{}: fused and unfused differ", act.name());
    }
}

/// The owned-tensor convenience API and the copy anchor.
pub fn owned_api_and_copy<R: Runtime>(client: &ComputeClient<R>) {
    let x =
        DeviceTensor::from_slice(client, &[1.0f32, -2.0, 3.0, -4.0, 0.5, -0.5], &[2, 3]).unwrap();
    let b = DeviceTensor::from_slice(client, &[0.5f32, 0.25, -1.0], &[3]).unwrap();
    let y = cubeport::bias_relu_scale(client, &x, &b, 2.0)
        .unwrap()
        .to_vec(client)
        .unwrap();
    assert_eq!(y, vec![3.0, 0.0, 4.0, 0.0, 1.5, 0.0]);
    let s = cubeport::add(client, &x, &x)
        .unwrap()
        .to_vec(client)
        .unwrap();
    assert_eq!(s, vec![2.0, -4.0, 6.0, -8.0, 1.0, -1.0]);
    let g = cubeport::bias_gelu(client, &x, &b)
        .unwrap()
        .to_vec(client)
        .unwrap();
    let want = reference::bias_activation(
        &[1.0, -2.0, 3.0, -4.0, 0.5, -0.5],
        &[0.5, 0.25, -1.0],
        Activation::Gelu(GeluApprox::Tanh),
    );
    assert_matches(&to_f64(&g), &want, DType::F32, "owned bias_gelu");

    let data: Vec<f32> = seeded(9, 1 << 16 | 3, -1.0, 1.0);
    let src = DeviceTensor::from_slice(client, &data, &[data.len()]).unwrap();
    let mut dst = poisoned::<R, f32>(client, &[data.len()]).unwrap();
    cubeport::copy_into(client, src.as_ref(), dst.as_mut()).unwrap();
    assert_eq!(dst.to_vec(client).unwrap(), data, "copy");
}

/// A test that cannot fail is a defect: run the op over only the first half of the output and
/// check that the poisoned second half makes the comparison fail.
pub fn poison_detects_unwritten_output<R: Runtime>(client: &ComputeClient<R>) {
    let n = 1000;
    let x: Vec<f32> = seeded(11, n, -2.0, 2.0);
    let dx = DeviceTensor::from_slice(client, &x, &[n]).unwrap();
    let dy = poisoned::<R, f32>(client, &[n]).unwrap();
    let half = n / 2;
    cubeport::add_into(
        client,
        TensorRef::contiguous(dx.handle(), &[half], DType::F32),
        TensorRef::contiguous(dx.handle(), &[half], DType::F32),
        TensorMut::contiguous(dy.handle(), &[half], DType::F32),
    )
    .unwrap();
    let got = to_f64(&dy.to_vec(client).unwrap());
    let want = reference::bias_activation(&to_f64(&x), &to_f64(&x), Activation::Identity);
    let c = compare(&got, &want, Tolerance::elementwise(DType::F32));
    assert_eq!(c.failures, n - half, "{c}");
    assert!(got[half..].iter().all(|&v| v == poison::<f32>() as f64));
}

fn shape_err(r: Result<(), Error>) -> ShapeError {
    match r {
        Err(Error::Shape { source, .. }) => source,
        other => panic!("expected a shape error, got {other:?}"),
    }
}

/// Every validation error, through the public API.
pub fn rejects_bad_shapes<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 24, -1.0, 1.0), &[4, 6]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[4, 6]).unwrap();
    let short = DeviceTensor::from_slice(client, &seeded::<f32>(2, 23, -1.0, 1.0), &[23]).unwrap();
    let act = Activation::Gelu(GeluApprox::Tanh);

    // length mismatch between input and output
    let e = shape_err(cubeport::bias_activation_into(
        client,
        x.as_ref(),
        x.as_ref(),
        TensorMut::contiguous(short.handle(), &[23], DType::F32),
        act,
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. }),
        "{e:?}"
    );
    // empty input
    let e = shape_err(cubeport::bias_activation_into(
        client,
        TensorRef::contiguous(x.handle(), &[0, 6], DType::F32),
        TensorRef::contiguous(x.handle(), &[6], DType::F32),
        TensorMut::contiguous(y.handle(), &[0, 6], DType::F32),
        act,
    ));
    assert!(
        matches!(e, ShapeError::Empty { name: "input", .. }),
        "{e:?}"
    );
    // bias neither full nor one row
    for bias_shape in [&[4][..], &[5], &[6, 4], &[1, 6]] {
        let n: usize = bias_shape.iter().product();
        let b =
            DeviceTensor::from_slice(client, &seeded::<f32>(3, n, -1.0, 1.0), bias_shape).unwrap();
        let e = shape_err(cubeport::bias_activation_into(
            client,
            x.as_ref(),
            b.as_ref(),
            y.as_mut(),
            act,
        ));
        assert!(
            matches!(e, ShapeError::BiasShape { .. }),
            "{bias_shape:?}: {e:?}"
        );
    }
    // dtype mismatch
    let e = shape_err(cubeport::bias_activation_into(
        client,
        x.as_ref(),
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[4, 6], DType::F16),
        act,
    ));
    assert!(
        matches!(e, ShapeError::DTypeMismatch { name: "output", .. }),
        "{e:?}"
    );
    // strided (transposed) input
    let e = shape_err(cubeport::bias_activation_into(
        client,
        TensorRef::new(x.handle(), &[6, 4], &[1, 6], DType::F32),
        x.as_ref(),
        y.as_mut(),
        act,
    ));
    assert!(
        matches!(e, ShapeError::NotContiguous { name: "input", .. }),
        "{e:?}"
    );
    // a layout larger than its buffer
    let e = shape_err(cubeport::bias_activation_into(
        client,
        x.as_ref(),
        TensorRef::contiguous(short.handle(), &[4, 6], DType::F32),
        y.as_mut(),
        act,
    ));
    assert!(
        matches!(e, ShapeError::BufferTooSmall { name: "bias", .. }),
        "{e:?}"
    );
    // a forced variant that does not fit the bias row: unsupported for this input, not
    // replaced by a narrower one
    let b6 = DeviceTensor::from_slice(client, &seeded::<f32>(4, 6, -1.0, 1.0), &[6]).unwrap();
    for vector in [4, 3] {
        let r = cubeport::ops::activation::bias_activation_with(
            client,
            x.as_ref(),
            b6.as_ref(),
            y.as_mut(),
            act,
            ActivationVariant {
                vector,
                cube_dim: 256,
                max_cubes: 16,
            },
        );
        assert!(
            matches!(r, Err(Error::Unsupported { .. })),
            "vec{vector}: {r:?}"
        );
    }
    // host data of the wrong length
    let e = DeviceTensor::from_slice(client, &[1.0f32; 5], &[2, 3]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape {
                source: ShapeError::DataLength { got: 5, .. },
                ..
            }
        ),
        "{e:?}"
    );
    // nothing above touched the output
    assert!(
        y.to_vec(client)
            .unwrap()
            .iter()
            .all(|&v| v == poison::<f32>())
    );
}

/// dtypes the backend lacks are refused up front with `UnsupportedDType`, never run.
/// `unsupported` lists what the backend lacks: bf16 on wgpu is absent from WGSL, but cubecl's
/// SPIR-V path has it where the Vulkan driver does, so there, and only there, a
/// listed dtype the device runs is reported and passed over.
pub fn rejects_unsupported_dtypes<R: Runtime>(client: &ComputeClient<R>, unsupported: &[DType]) {
    let caps = cubeport::caps_of(client);
    for &dtype in unsupported {
        if dtype.is_supported_by(&caps) && caps.runtime_name == "wgpu<spirv>" {
            eprintln!(
                "{dtype} is supported on {} ({}): nothing to reject",
                caps.runtime_name, caps.backend
            );
            continue;
        }
        let h = client.create_from_slice(&[0x3Cu8; 64]);
        let t = TensorRef::contiguous(&h, &[8], dtype);
        let r = cubeport::bias_activation_into(
            client,
            t.clone(),
            t,
            TensorMut::contiguous(&h, &[8], dtype),
            Activation::Identity,
        );
        assert!(
            matches!(r, Err(Error::UnsupportedDType { dtype: d, .. }) if d == dtype),
            "{dtype}: {r:?}"
        );
    }
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        if !unsupported.contains(&dtype) {
            assert!(
                dtype.is_supported_by(&caps),
                "{dtype} should be supported on {}",
                caps.runtime_name
            );
        }
    }
}

/// A launch the runtime rejects (a cube larger than the device allows) comes back as
/// `Error::Launch` from the op itself, and the client keeps working afterwards.
pub fn launch_failure_is_an_error<R: Runtime>(client: &ComputeClient<R>) {
    let caps = cubeport::caps_of(client);
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(5, 4096, -1.0, 1.0), &[4096]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[4096]).unwrap();
    let too_big = ActivationVariant {
        vector: 1,
        cube_dim: caps.max_units_per_cube * 2,
        max_cubes: 4,
    };
    let r = cubeport::ops::activation::bias_activation_with(
        client,
        x.as_ref(),
        x.as_ref(),
        y.as_mut(),
        Activation::Identity,
        too_big,
    );
    assert!(
        matches!(r, Err(Error::Launch { .. })),
        "expected a launch error, got {r:?}"
    );
    // still usable
    let (got, want) = run::<R, f32>(client, Activation::Identity, &[100], &[100], None).unwrap();
    assert_matches(&got, &want, DType::F32, "after a failed launch");
}

/// Same inputs on two backends.
pub fn backends_agree<A: Runtime, B: Runtime>(a: &ComputeClient<A>, b: &ComputeClient<B>) {
    for dtype in [DType::F32, DType::F16] {
        for act in [
            Activation::ReluScale { scale: 0.5 },
            Activation::Gelu(GeluApprox::Tanh),
            Activation::Gelu(GeluApprox::Erf),
        ] {
            let shape = [37, 4096];
            let (ga, _) =
                with_dtype!(dtype, E => run::<A, E>(a, act, &shape, &[4096], None)).unwrap();
            let (gb, _) =
                with_dtype!(dtype, E => run::<B, E>(b, act, &shape, &[4096], None)).unwrap();
            let c = compare(&gb, &ga, Tolerance::elementwise(dtype).doubled());
            assert!(
                c.ok(),
                "{} {dtype}: {} vs {}: {c}",
                act.name(),
                A::name(a),
                B::name(b)
            );
        }
    }
}
