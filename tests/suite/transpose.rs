//! Generic bodies for transpose: exact agreement with the reference, every variant.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare, poisoned, seeded, to_f64};
use cubeport::{DType, DeviceTensor, Error, ShapeError, TensorMut, TransposeVariant};

const VARIANTS: [TransposeVariant; 6] = [
    TransposeVariant::Naive,
    TransposeVariant::Tiled { tile: 32, pad: 1 },
    TransposeVariant::Tiled { tile: 32, pad: 0 },
    TransposeVariant::Tiled { tile: 16, pad: 1 },
    TransposeVariant::Tiled { tile: 64, pad: 1 },
    TransposeVariant::Tiled { tile: 8, pad: 1 },
];

pub fn transpose_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType, shape: &[usize]) {
    let n: usize = shape.iter().product();
    let rank = shape.len();
    let (rows, cols) = (shape[rank - 2], shape[rank - 1]);
    let mut out_shape = shape.to_vec();
    out_shape.swap(rank - 2, rank - 1);
    with_dtype!(dtype, E => {
        let x: Vec<E> = seeded(n as u64 + 5, n, -100.0, 100.0);
        let want = reference::transpose(&to_f64(&x), n / (rows * cols), rows, cols);
        let dx = DeviceTensor::from_slice(client, &x, shape).unwrap();
        for v in VARIANTS {
            let mut dy = poisoned::<R, E>(client, &out_shape).unwrap();
            cubeport::transpose_with(client, dx.as_ref(), dy.as_mut(), v).unwrap_or_else(|e| panic!("{v} {shape:?}: {e}"));
            let got = to_f64(&dy.to_vec(client).unwrap());
            let c = compare(&got, &want, Tolerance::EXACT);
            assert!(c.ok(), "transpose {v} {dtype} {shape:?} on {}: {c}", R::name(client));
        }
    })
}

pub fn transpose_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[4, 3]).unwrap();
    let shape_err = |r: Result<(), Error>| match r {
        Err(Error::Shape { source, .. }) => source,
        other => panic!("expected a shape error, got {other:?}"),
    };
    let e = shape_err(cubeport::transpose_into(
        client,
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[3, 4], DType::F32),
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. }),
        "{e:?}"
    );
    let e = shape_err(cubeport::transpose_into(
        client,
        cubeport::TensorRef::contiguous(x.handle(), &[12], DType::F32),
        TensorMut::contiguous(y.handle(), &[12], DType::F32),
    ));
    assert!(matches!(e, ShapeError::Rank { .. }), "{e:?}");
    let e = shape_err(cubeport::transpose_into(
        client,
        cubeport::TensorRef::contiguous(x.handle(), &[0, 4], DType::F32),
        TensorMut::contiguous(y.handle(), &[4, 0], DType::F32),
    ));
    assert!(matches!(e, ShapeError::Empty { .. }), "{e:?}");
    let e = shape_err(cubeport::transpose_into(
        client,
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[4, 3], DType::F16),
    ));
    assert!(matches!(e, ShapeError::DTypeMismatch { .. }), "{e:?}");
    let r = cubeport::transpose_with(
        client,
        x.as_ref(),
        y.as_mut(),
        TransposeVariant::Tiled { tile: 4096, pad: 1 },
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let r = cubeport::transpose_with(
        client,
        x.as_ref(),
        y.as_mut(),
        TransposeVariant::Tiled { tile: 24, pad: 1 },
    );
    assert!(
        matches!(r, Err(Error::Unsupported { .. })),
        "not a power of two: {r:?}"
    );
    // Validation comes before the variant is looked at: a bad output with a bad tile is a
    // shape error.
    let e = shape_err(cubeport::transpose_with(
        client,
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[3, 4], DType::F32),
        TransposeVariant::Tiled { tile: 24, pad: 1 },
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. }),
        "{e:?}"
    );
    let e = shape_err(
        cubeport::transpose_variant(
            client,
            &cubeport::TensorRef::contiguous(x.handle(), &[12], DType::F32),
        )
        .map(drop),
    );
    assert!(matches!(e, ShapeError::Rank { .. }), "{e:?}");
    assert!(
        y.to_vec(client)
            .unwrap()
            .iter()
            .all(|&v| v == cubeport::testing::poison::<f32>()),
        "a rejected call wrote output"
    );
}

/// u32 and i32 transposes move bits exactly, including patterns that are NaNs as f32.
pub fn transpose_integers<R: Runtime>(client: &ComputeClient<R>) {
    let (rows, cols) = (37, 70);
    let n = rows * cols;
    let x: Vec<u32> = (0..n as u32)
        .map(|i| match i % 5 {
            0 => 0x7fc0_0001 ^ i, // quiet-NaN payloads as f32
            1 => 0xff80_0000,     // -inf as f32
            _ => i.wrapping_mul(2_654_435_761),
        })
        .collect();
    let mut want = vec![0u32; n];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = x[r * cols + c];
        }
    }
    let dx = DeviceTensor::from_slice(client, &x, &[rows, cols]).unwrap();
    for v in VARIANTS {
        let dy = DeviceTensor::from_slice(client, &vec![0xDEAD_BEEFu32; n], &[cols, rows]).unwrap();
        for dtype in [DType::U32, DType::I32] {
            cubeport::transpose_with(
                client,
                cubeport::TensorRef::contiguous(dx.handle(), &[rows, cols], dtype),
                TensorMut::contiguous(dy.handle(), &[cols, rows], dtype),
                v,
            )
            .unwrap_or_else(|e| panic!("{v} {dtype}: {e}"));
            assert!(
                dy.to_vec(client).unwrap() == want,
                "transpose {v} {dtype} on {}",
                R::name(client)
            );
        }
    }
}

/// The owned `transpose` on seeded ragged inputs (rank 2 and batched rank 3) equals the
/// reference exactly, for floats and for u32 bit patterns; rank 1 is refused.
pub fn transpose_owned_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for shape in [&[1, 1][..], &[7, 300], &[65, 33], &[3, 17, 129]] {
            let n: usize = shape.iter().product();
            let rank = shape.len();
            let (rows, cols) = (shape[rank - 2], shape[rank - 1]);
            let x: Vec<E> = seeded(n as u64 ^ 0x7A, n, -100.0, 100.0);
            let dx = DeviceTensor::from_slice(client, &x, shape).unwrap();
            let dy = cubeport::transpose(client, &dx).unwrap_or_else(|e| panic!("owned {shape:?}: {e}"));
            let mut want_shape = shape.to_vec();
            want_shape.swap(rank - 2, rank - 1);
            assert_eq!(dy.shape(), want_shape);
            let want = reference::transpose(&to_f64(&x), n / (rows * cols), rows, cols);
            let c = compare(&to_f64(&dy.to_vec(client).unwrap()), &want, Tolerance::EXACT);
            assert!(c.ok(), "owned transpose {dtype} {shape:?} on {}: {c}", R::name(client));
            let v = cubeport::transpose_variant(client, &dx.as_ref()).unwrap();
            assert!(matches!(v, TransposeVariant::Tiled { .. }), "{v}");
        }
    });
    let bits: Vec<u32> = (0..37 * 70u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let dx = DeviceTensor::from_slice(client, &bits, &[37, 70]).unwrap();
    let got = cubeport::transpose(client, &dx)
        .unwrap()
        .to_vec(client)
        .unwrap();
    for r in 0..37 {
        for c in 0..70 {
            assert_eq!(got[c * 37 + r], bits[r * 70 + c], "u32 ({r}, {c})");
        }
    }
    let flat = DeviceTensor::from_slice(client, &[1.0f32; 4], &[4]).unwrap();
    let r = cubeport::transpose(client, &flat);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::Rank { .. },
                ..
            })
        ),
        "{r:?}"
    );
}
