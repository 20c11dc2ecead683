//! Generic bodies for softmax and log-softmax: every row group the device runs against the f64
//! reference, edge rows, the owned forms, and every validation error.

use super::row_groups;
use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    DType, DeviceTensor, Element, Error, ReducePath, RowGroup, ShapeError, SoftmaxKind,
    SoftmaxVariant, TensorMut, TensorRef,
};

/// The f64 reference of `kind` over rows of `len`, and its tolerance for `dtype`.
pub fn reference_of(
    kind: SoftmaxKind,
    x: &[f64],
    len: usize,
    dtype: DType,
) -> (Vec<f64>, Tolerance) {
    match kind {
        SoftmaxKind::Softmax => (reference::softmax(x, len), Tolerance::softmax(dtype, len)),
        SoftmaxKind::LogSoftmax => (
            reference::log_softmax(x, len),
            Tolerance::log_softmax(dtype, len),
        ),
    }
}

/// The automatic variant (`None`) and every row group the device runs.
fn variants<R: Runtime>(client: &ComputeClient<R>) -> Vec<Option<SoftmaxVariant>> {
    row_groups(client)
        .into_iter()
        .map(|g| g.map(SoftmaxVariant::Rows))
        .collect()
}

fn run_softmax<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    x: &[E],
    rows: usize,
    len: usize,
    kind: SoftmaxKind,
    variant: Option<SoftmaxVariant>,
) -> Vec<f64> {
    let dx = DeviceTensor::from_slice(client, x, &[rows, len]).unwrap();
    let mut dy = poisoned::<R, E>(client, &[rows, len]).unwrap();
    let r = match (variant, kind) {
        (None, SoftmaxKind::LogSoftmax) => {
            cubeport::log_softmax_into(client, dx.as_ref(), dy.as_mut(), 1)
        }
        (None, _) => cubeport::softmax_into(client, dx.as_ref(), dy.as_mut(), 1),
        (Some(v), kind) => cubeport::softmax_with(client, dx.as_ref(), dy.as_mut(), 1, kind, v),
    };
    r.unwrap_or_else(|e| panic!("{kind} {rows}x{len} {variant:?}: {e}"));
    to_f64(&dy.to_vec(client).unwrap())
}

pub fn softmax_matches<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    rows: usize,
    len: usize,
) {
    with_dtype!(dtype, E => {
        let x: Vec<E> = seeded((rows * 31 + len) as u64, rows * len, -6.0, 6.0);
        for kind in SoftmaxKind::ALL {
            let (want, tol) = reference_of(kind, &to_f64(&x), len, dtype);
            let want: Vec<f64> = want.into_iter().map(|v| E::from_f64(v).to_f64()).collect();
            for variant in variants(client) {
                let got = run_softmax::<R, E>(client, &x, rows, len, kind, variant);
                let c = compare_each(&got, &want, |_| tol);
                assert!(c.ok(), "{kind} {dtype} {rows}x{len} {variant:?} on {}: {c}", R::name(client));
            }
        }
    })
}

/// The owned `softmax` and `log_softmax` on seeded ragged inputs of rank 1 to 3 (the last axis
/// is the row), and the query that names the variant they run.
pub fn softmax_owned_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for shape in [&[7][..], &[3, 33], &[2, 5, 1000], &[1, 4097]] {
            let n: usize = shape.iter().product();
            let len = shape[shape.len() - 1];
            let x: Vec<E> = seeded(n as u64 ^ 0x50F7, n, -8.0, 8.0);
            let dx = DeviceTensor::from_slice(client, &x, shape).unwrap();
            for kind in SoftmaxKind::ALL {
                let dy = match kind {
                    SoftmaxKind::LogSoftmax => cubeport::log_softmax(client, &dx),
                    _ => cubeport::softmax(client, &dx),
                }
                .unwrap_or_else(|e| panic!("owned {kind} {shape:?}: {e}"));
                assert_eq!(dy.shape(), shape);
                let (want, tol) = reference_of(kind, &to_f64(&x), len, dtype);
                let want: Vec<f64> = want.into_iter().map(|v| E::from_f64(v).to_f64()).collect();
                let got = to_f64(&dy.to_vec(client).unwrap());
                let c = compare_each(&got, &want, |_| tol);
                assert!(c.ok(), "owned {kind} {dtype} {shape:?} on {}: {c}", R::name(client));
            }
            let v = cubeport::softmax_variant(client, &dx.as_ref(), shape.len() - 1).unwrap();
            assert!(matches!(v, SoftmaxVariant::Rows(_)), "{v:?}");
        }
    })
}

pub fn softmax_edge_rows<R: Runtime>(client: &ComputeClient<R>) {
    let len = 19;
    let mut x: Vec<f32> = seeded(4, 5 * len, -3.0, 3.0);
    for v in &mut x[..len] {
        *v = f32::NEG_INFINITY; // row 0: all -inf → NaN
    }
    x[len + 4] = f32::NEG_INFINITY; // row 1: one -inf → 0 there
    x[2 * len + 7] = f32::NAN; // row 2: NaN row
    x[3 * len] = 80.0; // row 3: large values, exp would overflow without the max shift
    x[3 * len + 1] = 79.0;
    for kind in SoftmaxKind::ALL {
        let (want, tol) = reference_of(kind, &to_f64(&x), len, DType::F32);
        for variant in variants(client) {
            let got = run_softmax::<R, f32>(client, &x, 5, len, kind, variant);
            let c = compare_each(&got, &want, |_| tol);
            assert!(
                c.ok(),
                "{kind} edge rows {variant:?}: {c}\n got {got:?}\nwant {want:?}"
            );
        }
    }
}

pub fn softmax_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3, 4]).unwrap();
    let r = cubeport::softmax_into(client, x.as_ref(), y.as_mut(), 2);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::AxisOutOfRange { axis: 2, rank: 2 },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::softmax_into(client, x.as_ref(), y.as_mut(), 0);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::AxisNotInnermost { .. },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::softmax_into(
        client,
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[4, 3], DType::F32),
        1,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::ShapeMismatch { .. },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::softmax_into(
        client,
        TensorRef::contiguous(x.handle(), &[3, 0], DType::F32),
        TensorMut::contiguous(y.handle(), &[3, 0], DType::F32),
        1,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::Empty { .. },
                ..
            })
        ),
        "{r:?}"
    );
}

/// A forced row group the device cannot run is `Unsupported` for both kinds, never replaced by
/// a group that would run; the owned forms reject what the `_into` forms reject.
pub fn softmax_rejects_unsupported_variant<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3, 4]).unwrap();
    let caps = cubeport::caps_of(client);
    let mut bad = vec![
        RowGroup {
            path: ReducePath::Shared,
            group: 48,
        },
        RowGroup {
            path: ReducePath::Shared,
            group: 2048,
        },
    ];
    match caps.plane.fixed_width() {
        Some(w) if w > 1 => bad.push(RowGroup {
            path: ReducePath::Plane,
            group: w / 2,
        }),
        Some(_) => {}
        // Without a fixed width no plane group runs.
        None => bad.push(RowGroup {
            path: ReducePath::Plane,
            group: 32,
        }),
    }
    for group in bad {
        for kind in SoftmaxKind::ALL {
            let v = SoftmaxVariant::Rows(group);
            let r = cubeport::softmax_with(client, x.as_ref(), y.as_mut(), 1, kind, v);
            assert!(
                matches!(r, Err(Error::Unsupported { .. })),
                "{kind} {v}: {r:?}"
            );
        }
    }
    assert!(
        y.to_vec(client)
            .unwrap()
            .iter()
            .all(|&v| v == cubeport::testing::poison::<f32>()),
        "a rejected call wrote output"
    );
    let scalar = DeviceTensor::from_slice(client, &[1.0f32], &[]).unwrap();
    let r = cubeport::log_softmax(client, &scalar);
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::AxisOutOfRange { axis: 0, rank: 0 },
                ..
            })
        ),
        "{r:?}"
    );
}
