//! Generic bodies for reductions: every reduction over every kind of axis with every variant
//! the device runs, edge values, and every validation error.

use super::row_groups;
use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Reduction, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    DType, DeviceTensor, Element, Error, ReducePath, ReduceVariant, RowGroup, ShapeError,
    TensorMut, TensorRef,
};

/// The variants that serve a reduction of `shape` over `axis` on this device: the automatic
/// one (`None`), then every forced one of the matching kind.
pub fn variants<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    axis: Option<usize>,
) -> Vec<Option<ReduceVariant>> {
    let inner: usize = axis.map_or(1, |a| shape[a + 1..].iter().product());
    let groups = row_groups(client).into_iter().flatten();
    let mut v = vec![None];
    match axis {
        None => {
            let mut paths: Vec<ReducePath> = groups.map(|g| g.path).collect();
            paths.dedup();
            v.extend(paths.into_iter().map(|p| Some(ReduceVariant::All(p))));
        }
        Some(_) if inner == 1 => v.extend(groups.map(|g| Some(ReduceVariant::Rows(g)))),
        Some(_) => v.push(Some(ReduceVariant::Strided)),
    }
    v
}

fn reduce_tol(op: Reduction, dtype: DType, k: usize, sum_abs: f64) -> Tolerance {
    Tolerance::reduce(op, dtype, k, sum_abs)
}

fn run_reduce<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    x: &[E],
    shape: &[usize],
    axis: Option<usize>,
    op: Reduction,
    variant: Option<ReduceVariant>,
) -> Result<Vec<f64>, Error> {
    let out_shape: Vec<usize> = match axis {
        None => vec![1],
        Some(a) => shape
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != a)
            .map(|(_, &d)| d)
            .collect(),
    };
    let dx = DeviceTensor::from_slice(client, x, shape)?;
    let mut dy = poisoned::<R, E>(client, &out_shape)?;
    match variant {
        None => cubeport::reduce_into(client, dx.as_ref(), dy.as_mut(), axis, op)?,
        Some(v) => cubeport::reduce_with(client, dx.as_ref(), dy.as_mut(), axis, op, v)?,
    }
    Ok(to_f64(&dy.to_vec(client)?))
}

/// Checks every reduction of seeded data of `shape` over `axis` with every variant.
pub fn reduce_matches<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    shape: &[usize],
    axis: Option<usize>,
) {
    let n: usize = shape.iter().product();
    with_dtype!(dtype, E => {
        let x: Vec<E> = seeded(n as u64 ^ 0xA5, n, -2.0, 2.0);
        let xf = to_f64(&x);
        let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
        let k = axis.map_or(n, |a| shape[a]);
        let sum_abs = reference::reduce(&abs, shape, axis, Reduction::Sum);
        for op in Reduction::ALL {
            let want: Vec<f64> = reference::reduce(&xf, shape, axis, op).into_iter().map(|v| E::from_f64(v).to_f64()).collect();
            for variant in variants(client, shape, axis) {
                let got = run_reduce::<R, E>(client, &x, shape, axis, op, variant)
                    .unwrap_or_else(|e| panic!("{} {shape:?} axis {axis:?} {variant:?}: {e}", op.name()));
                let c = compare_each(&got, &want, |i| reduce_tol(op, dtype, k, sum_abs[i]));
                assert!(c.ok(), "{} {dtype} {shape:?} axis {axis:?} variant {variant:?} on {}: {c}", op.name(), R::name(client));
            }
        }
    })
}

/// NaN and ±inf through every path.
pub fn reduce_edge_values<R: Runtime>(client: &ComputeClient<R>) {
    let rows = 6;
    let len = 37;
    let mut x: Vec<f32> = seeded(3, rows * len, -1.0, 1.0);
    x[5] = f32::NAN; // row 0
    x[len + 3] = f32::INFINITY; // row 1
    x[2 * len + 9] = f32::NEG_INFINITY; // row 2
    for v in &mut x[3 * len..4 * len] {
        *v = f32::NEG_INFINITY; // row 3: all -inf
    }
    x[4 * len] = f32::INFINITY;
    x[4 * len + 1] = f32::NEG_INFINITY; // row 4: inf - inf
    let xf = to_f64(&x);
    for op in Reduction::ALL {
        for axis in [Some(1), None] {
            let want = reference::reduce(&xf, &[rows, len], axis, op);
            for variant in variants(client, &[rows, len], axis) {
                let got =
                    run_reduce::<R, f32>(client, &x, &[rows, len], axis, op, variant).unwrap();
                let c = compare_each(&got, &want, |_| reduce_tol(op, DType::F32, len, 40.0));
                assert!(
                    c.ok(),
                    "{} axis {axis:?} {variant:?} edge values: {c}\n got {got:?}\nwant {want:?}",
                    op.name()
                );
            }
        }
    }
}

/// Lengths of whole-array sums that cross every boundary, and one beyond a gibibyte where the
/// device allows buffers that large.
pub fn reduce_all_lengths<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    for len in [1, 31, 33, 255, 257, 4097, (1 << 20) + 7] {
        reduce_matches(client, dtype, &[len], None);
    }
}

pub fn reduce_all_huge<R: Runtime>(client: &ComputeClient<R>) {
    let len = (1usize << 28) + 7;
    let caps = cubeport::caps_of(client);
    if caps.max_alloc_bytes < (len * 4) as u64 {
        cubeport::testing::skip(
            std::thread::current().name().unwrap_or("reduce_all_huge"),
            R::name(client),
            &format!(
                "needs a {} MiB buffer, device allows {} MiB",
                (len * 4) >> 20,
                caps.max_alloc_bytes >> 20
            ),
        );
        return;
    }
    // Small integers: every partial sum is exact in f32 up to 2^24, so the tolerance is the
    // reduction formula's, not luck.
    let x: Vec<f32> = (0..len)
        .map(|i| ((i * 2_654_435_761usize) % 7) as f32 - 3.0)
        .collect();
    let xf = to_f64(&x);
    let sum_abs: f64 = xf.iter().map(|v| v.abs()).sum();
    for op in [Reduction::Sum, Reduction::Max, Reduction::Min] {
        let want = reference::reduce(&xf, &[len], None, op);
        let got = run_reduce::<R, f32>(client, &x, &[len], None, op, None).unwrap();
        let c = compare_each(&got, &want, |_| reduce_tol(op, DType::F32, len, sum_abs));
        assert!(
            c.ok(),
            "{} of 2^28+7 on {}: {c}",
            op.name(),
            R::name(client)
        );
    }
}

pub fn reduce_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3]).unwrap();
    let shape_err = |r: Result<(), Error>| match r {
        Err(Error::Shape { source, .. }) => source,
        other => panic!("expected a shape error, got {other:?}"),
    };
    let e = shape_err(cubeport::reduce_into(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(2),
        Reduction::Sum,
    ));
    assert_eq!(e, ShapeError::AxisOutOfRange { axis: 2, rank: 2 });
    let e = shape_err(cubeport::reduce_into(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(0),
        Reduction::Sum,
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. }),
        "{e:?}"
    );
    let e = shape_err(cubeport::reduce_into(
        client,
        x.as_ref(),
        y.as_mut(),
        None,
        Reduction::Max,
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. }),
        "{e:?}"
    );
    let e = shape_err(cubeport::reduce_into(
        client,
        TensorRef::contiguous(x.handle(), &[3, 0], DType::F32),
        TensorMut::contiguous(y.handle(), &[3], DType::F32),
        Some(1),
        Reduction::Sum,
    ));
    assert!(matches!(e, ShapeError::Empty { .. }), "{e:?}");
    let e = shape_err(cubeport::reduce_into(
        client,
        TensorRef::new(x.handle(), &[4, 3], &[1, 4], DType::F32),
        y.as_mut(),
        Some(1),
        Reduction::Sum,
    ));
    assert!(matches!(e, ShapeError::NotContiguous { .. }), "{e:?}");
    let e = shape_err(cubeport::reduce_into(
        client,
        x.as_ref(),
        TensorMut::contiguous(y.handle(), &[3], DType::F16),
        Some(1),
        Reduction::Sum,
    ));
    assert!(matches!(e, ShapeError::DTypeMismatch { .. }), "{e:?}");
    let r = cubeport::reduce_with(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(1),
        Reduction::Sum,
        ReduceVariant::Rows(RowGroup {
            path: ReducePath::Shared,
            group: 48,
        }),
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let r = cubeport::reduce_with(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(1),
        Reduction::Sum,
        ReduceVariant::Rows(RowGroup {
            path: ReducePath::Shared,
            group: 2048,
        }),
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let caps = cubeport::caps_of(client);
    if let Some(w) = caps.plane.fixed_width()
        && w > 1
    {
        let r = cubeport::reduce_with(
            client,
            x.as_ref(),
            y.as_mut(),
            Some(1),
            Reduction::Sum,
            ReduceVariant::Rows(RowGroup {
                path: ReducePath::Plane,
                group: w / 2,
            }),
        );
        assert!(
            matches!(r, Err(Error::Unsupported { .. })),
            "plane group below the width: {r:?}"
        );
    }
    assert!(
        y.to_vec(client)
            .unwrap()
            .iter()
            .all(|&v| v == cubeport::testing::poison::<f32>()),
        "a rejected call wrote output"
    );
}

/// A forced variant that serves another kind of problem is `Unsupported`, never replaced by the
/// variant that would fit: a row group on a strided axis or on the whole tensor, `strided` on
/// the innermost axis or the whole tensor, `all/…` on an axis. Nothing is written.
pub fn reduce_rejects_mismatched_variant<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 60, -1.0, 1.0), &[3, 4, 5]).unwrap();
    let shared32 = ReduceVariant::Rows(RowGroup {
        path: ReducePath::Shared,
        group: 32,
    });
    let all = ReduceVariant::All(ReducePath::Shared);
    let cases: [(Option<usize>, &[usize], ReduceVariant); 6] = [
        (Some(1), &[3, 5], shared32),
        (Some(0), &[4, 5], shared32),
        (None, &[1], shared32),
        (Some(2), &[3, 4], ReduceVariant::Strided),
        (None, &[1], ReduceVariant::Strided),
        (Some(1), &[3, 5], all),
    ];
    for (axis, out_shape, variant) in cases {
        let mut y = poisoned::<R, f32>(client, out_shape).unwrap();
        for op in Reduction::ALL {
            let r = cubeport::reduce_with(client, x.as_ref(), y.as_mut(), axis, op, variant);
            assert!(
                matches!(r, Err(Error::Unsupported { .. })),
                "{} axis {axis:?} forced {variant}: {r:?}",
                op.name()
            );
        }
        assert!(
            y.to_vec(client)
                .unwrap()
                .iter()
                .all(|&v| v == cubeport::testing::poison::<f32>()),
            "a rejected {variant} on axis {axis:?} wrote output"
        );
    }
    // The same variants run where they fit, and the query names what `reduce_into` runs.
    let auto = cubeport::reduce_variant(client, &x.as_ref(), Some(1)).unwrap();
    assert_eq!(auto, ReduceVariant::Strided);
    let mut y = poisoned::<R, f32>(client, &[3, 5]).unwrap();
    cubeport::reduce_with(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(1),
        Reduction::Sum,
        auto,
    )
    .unwrap();
    assert!(matches!(
        cubeport::reduce_variant(client, &x.as_ref(), Some(2)).unwrap(),
        ReduceVariant::Rows(_)
    ));
    assert!(matches!(
        cubeport::reduce_variant(client, &x.as_ref(), None).unwrap(),
        ReduceVariant::All(_)
    ));
    let r = cubeport::reduce_variant(client, &x.as_ref(), Some(3));
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::AxisOutOfRange { axis: 3, rank: 3 },
                ..
            })
        ),
        "{r:?}"
    );
}
