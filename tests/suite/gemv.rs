//! Generic bodies for GEMV: both products with every variant the device runs against the f64
//! reference, the owned form, and every validation error.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    DType, DeviceTensor, Element, Error, GemvVariant, ReducePath, ShapeError, TensorMut, TensorRef,
    Transpose,
};

pub fn gemv_variants<R: Runtime>(client: &ComputeClient<R>) -> Vec<Option<GemvVariant>> {
    let caps = cubeport::caps_of(client);
    let mut v = vec![
        None,
        Some(GemvVariant::ThreadRow),
        Some(GemvVariant::CubeRow(ReducePath::Shared)),
    ];
    if caps.plane.fixed_width().is_some() {
        v.push(Some(GemvVariant::PlaneRow));
        v.push(Some(GemvVariant::CubeRow(ReducePath::Plane)));
    }
    v
}

pub fn gemv_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType, rows: usize, cols: usize) {
    with_dtype!(dtype, E => {
        let a: Vec<E> = seeded((rows * 7 + cols) as u64, rows * cols, -1.0, 1.0);
        let af = to_f64(&a);
        let da = DeviceTensor::from_slice(client, &a, &[rows, cols]).unwrap();
        for transpose in [Transpose::No, Transpose::Yes] {
            let (xl, yl) = if transpose == Transpose::No { (cols, rows) } else { (rows, cols) };
            let x: Vec<E> = seeded(xl as u64 + 99, xl, -1.0, 1.0);
            let xf = to_f64(&x);
            let dx = DeviceTensor::from_slice(client, &x, &[xl]).unwrap();
            let want: Vec<f64> = reference::gemv(&af, rows, cols, &xf, transpose).into_iter().map(|v| E::from_f64(v).to_f64()).collect();
            let abs_a: Vec<f64> = af.iter().map(|v| v.abs()).collect();
            let abs_x: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
            let sum_abs = reference::gemv(&abs_a, rows, cols, &abs_x, transpose);
            let variants = if transpose == Transpose::Yes { vec![None, Some(GemvVariant::Columns)] } else { gemv_variants(client) };
            for variant in variants {
                let mut dy = poisoned::<R, E>(client, &[yl]).unwrap();
                let r = match variant {
                    None => cubeport::gemv_into(client, da.as_ref(), dx.as_ref(), dy.as_mut(), transpose),
                    Some(v) => cubeport::gemv_with(client, da.as_ref(), dx.as_ref(), dy.as_mut(), transpose, v),
                };
                r.unwrap_or_else(|e| panic!("gemv {rows}x{cols} {transpose:?} {variant:?}: {e}"));
                let got = to_f64(&dy.to_vec(client).unwrap());
                let c = compare_each(&got, &want, |i| Tolerance::reduction(dtype, xl, sum_abs[i]));
                assert!(c.ok(), "gemv {dtype} {rows}x{cols} {transpose:?} {variant:?} on {}: {c}", R::name(client));
            }
        }
    })
}

pub fn gemv_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let a = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(2, 4, -1.0, 1.0), &[4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3]).unwrap();
    let r = cubeport::gemv_into(
        client,
        a.as_ref(),
        TensorRef::contiguous(y.handle(), &[3], DType::F32),
        TensorMut::contiguous(y.handle(), &[3], DType::F32),
        Transpose::No,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::ShapeMismatch { name: "x", .. },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::gemv_into(client, a.as_ref(), x.as_ref(), y.as_mut(), Transpose::Yes);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::ShapeMismatch { name: "x", .. },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::gemv_into(
        client,
        TensorRef::contiguous(a.handle(), &[12], DType::F32),
        x.as_ref(),
        y.as_mut(),
        Transpose::No,
    );
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
    let r = cubeport::gemv_with(
        client,
        a.as_ref(),
        x.as_ref(),
        y.as_mut(),
        Transpose::No,
        GemvVariant::Columns,
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let r = cubeport::gemv_into(
        client,
        a.as_ref(),
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[3], DType::F16),
        Transpose::No,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::DTypeMismatch { name: "y", .. },
                ..
            })
        ),
        "{r:?}"
    );
}

/// The owned `gemv` on seeded ragged matrices, both products, against the f64 reference; its
/// output has the product's length, and a matrix of the wrong rank is refused.
pub fn gemv_owned_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for (rows, cols) in [(1, 1), (5, 33), (37, 1000), (300, 7)] {
            let a: Vec<E> = seeded((rows * 13 + cols) as u64, rows * cols, -1.0, 1.0);
            let af = to_f64(&a);
            let abs_a: Vec<f64> = af.iter().map(|v| v.abs()).collect();
            let da = DeviceTensor::from_slice(client, &a, &[rows, cols]).unwrap();
            for transpose in [Transpose::No, Transpose::Yes] {
                let (xl, yl) = match transpose {
                    Transpose::No => (cols, rows),
                    Transpose::Yes => (rows, cols),
                };
                let x: Vec<E> = seeded(xl as u64 + 7, xl, -1.0, 1.0);
                let xf = to_f64(&x);
                let dx = DeviceTensor::from_slice(client, &x, &[xl]).unwrap();
                let dy = cubeport::gemv(client, &da, &dx, transpose)
                    .unwrap_or_else(|e| panic!("owned gemv {rows}x{cols} {transpose:?}: {e}"));
                assert_eq!(dy.shape(), [yl]);
                let want: Vec<f64> = reference::gemv(&af, rows, cols, &xf, transpose)
                    .into_iter()
                    .map(|v| E::from_f64(v).to_f64())
                    .collect();
                let abs_x: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
                let sum_abs = reference::gemv(&abs_a, rows, cols, &abs_x, transpose);
                let got = to_f64(&dy.to_vec(client).unwrap());
                let c = compare_each(&got, &want, |i| Tolerance::reduction(dtype, xl, sum_abs[i]));
                assert!(c.ok(), "owned gemv {dtype} {rows}x{cols} {transpose:?} on {}: {c}", R::name(client));
                let auto = cubeport::gemv_variant(client, &da.as_ref(), transpose).unwrap();
                assert_eq!(auto == GemvVariant::Columns, transpose == Transpose::Yes, "{auto}");
            }
        }
        let a3 = DeviceTensor::from_slice(client, &seeded::<E>(1, 8, -1.0, 1.0), &[2, 2, 2]).unwrap();
        let x = DeviceTensor::from_slice(client, &seeded::<E>(2, 2, -1.0, 1.0), &[2]).unwrap();
        let r = cubeport::gemv(client, &a3, &x, Transpose::No);
        assert!(matches!(r, Err(Error::Shape { source: ShapeError::Rank { .. }, .. })), "{r:?}");
    })
}

/// A forced variant of the other product, or one the device cannot run, is `Unsupported` and
/// writes nothing: the row variants for `Aᵀ·x`, `columns` for `A·x`, and without a fixed plane
/// width the plane variants.
pub fn gemv_rejects_unsupported_variant<R: Runtime>(client: &ComputeClient<R>) {
    let a = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let x3 = DeviceTensor::from_slice(client, &seeded::<f32>(2, 3, -1.0, 1.0), &[3]).unwrap();
    let x4 = DeviceTensor::from_slice(client, &seeded::<f32>(3, 4, -1.0, 1.0), &[4]).unwrap();
    let mut y3 = poisoned::<R, f32>(client, &[3]).unwrap();
    let mut y4 = poisoned::<R, f32>(client, &[4]).unwrap();
    let rows = [
        GemvVariant::ThreadRow,
        GemvVariant::PlaneRow,
        GemvVariant::CubeRow(ReducePath::Plane),
        GemvVariant::CubeRow(ReducePath::Shared),
    ];
    for v in rows {
        let r = cubeport::gemv_with(
            client,
            a.as_ref(),
            x3.as_ref(),
            y4.as_mut(),
            Transpose::Yes,
            v,
        );
        assert!(
            matches!(r, Err(Error::Unsupported { .. })),
            "{v} for Aᵀ·x: {r:?}"
        );
    }
    let r = cubeport::gemv_with(
        client,
        a.as_ref(),
        x4.as_ref(),
        y3.as_mut(),
        Transpose::No,
        GemvVariant::Columns,
    );
    assert!(
        matches!(r, Err(Error::Unsupported { .. })),
        "columns for A·x: {r:?}"
    );
    if cubeport::caps_of(client).plane.fixed_width().is_none() {
        for v in [
            GemvVariant::PlaneRow,
            GemvVariant::CubeRow(ReducePath::Plane),
        ] {
            let r = cubeport::gemv_with(
                client,
                a.as_ref(),
                x4.as_ref(),
                y3.as_mut(),
                Transpose::No,
                v,
            );
            assert!(
                matches!(r, Err(Error::Unsupported { .. })),
                "{v} without a fixed width: {r:?}"
            );
        }
    }
    let poison = cubeport::testing::poison::<f32>();
    for y in [&y3, &y4] {
        assert!(
            y.to_vec(client).unwrap().iter().all(|&v| v == poison),
            "a rejected call wrote output"
        );
    }
}
