//! Generic bodies for reductions, softmax and GEMV.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Reduction, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    DType, DeviceTensor, Element, Error, GemvVariant, ReducePath, RowGroup, ShapeError, TensorMut,
    TensorRef, Transpose,
};

/// The row-group variants this device can run: the automatic one (`None`), both shared
/// groups, and the plane ones when the plane width is fixed (advertised or not: lavapipe's
/// subgroups work unadvertised, so CI exercises the plane path at width 8).
pub fn groups<R: Runtime>(client: &ComputeClient<R>) -> Vec<Option<RowGroup>> {
    let caps = cubeport::caps_of(client);
    let mut v = vec![
        None,
        Some(RowGroup {
            path: ReducePath::Shared,
            group: 32,
        }),
        Some(RowGroup {
            path: ReducePath::Shared,
            group: 256,
        }),
    ];
    if let Some(w) = caps.plane.fixed_width() {
        v.push(Some(RowGroup {
            path: ReducePath::Plane,
            group: w,
        }));
        v.push(Some(RowGroup {
            path: ReducePath::Plane,
            group: 256,
        }));
        if 2 * w < 256 {
            // several planes per row and several rows per cube: a 2-D cube, which WGSL
            // treats differently for subgroup builtins
            v.push(Some(RowGroup {
                path: ReducePath::Plane,
                group: 2 * w,
            }));
        }
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
    group: Option<RowGroup>,
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
    match group {
        None => cubeport::reduce_into(client, dx.as_ref(), dy.as_mut(), axis, op)?,
        Some(g) => cubeport::reduce_with(client, dx.as_ref(), dy.as_mut(), axis, op, g)?,
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
            for group in groups(client) {
                let got = run_reduce::<R, E>(client, &x, shape, axis, op, group)
                    .unwrap_or_else(|e| panic!("{} {shape:?} axis {axis:?} {group:?}: {e}", op.name()));
                let c = compare_each(&got, &want, |i| reduce_tol(op, dtype, k, sum_abs[i]));
                assert!(c.ok(), "{} {dtype} {shape:?} axis {axis:?} variant {group:?} on {}: {c}", op.name(), R::name(client));
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
            for group in groups(client) {
                let got = run_reduce::<R, f32>(client, &x, &[rows, len], axis, op, group).unwrap();
                let c = compare_each(&got, &want, |_| reduce_tol(op, DType::F32, len, 40.0));
                assert!(
                    c.ok(),
                    "{} axis {axis:?} {group:?} edge values: {c}\n got {got:?}\nwant {want:?}",
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
        RowGroup {
            path: ReducePath::Shared,
            group: 48,
        },
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let r = cubeport::reduce_with(
        client,
        x.as_ref(),
        y.as_mut(),
        Some(1),
        Reduction::Sum,
        RowGroup {
            path: ReducePath::Shared,
            group: 512,
        },
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
            RowGroup {
                path: ReducePath::Plane,
                group: w / 2,
            },
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

// ---------------------------------------------------------------- softmax

fn softmax_tol(dtype: DType, k: usize, log: bool) -> Tolerance {
    Tolerance::softmax(dtype, k, log)
}

fn run_softmax<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    x: &[E],
    rows: usize,
    len: usize,
    log: bool,
    group: Option<RowGroup>,
) -> Vec<f64> {
    let dx = DeviceTensor::from_slice(client, x, &[rows, len]).unwrap();
    let mut dy = poisoned::<R, E>(client, &[rows, len]).unwrap();
    let r = match (group, log) {
        (None, false) => cubeport::softmax_into(client, dx.as_ref(), dy.as_mut(), 1),
        (None, true) => cubeport::log_softmax_into(client, dx.as_ref(), dy.as_mut(), 1),
        (Some(g), log) => cubeport::softmax_with(client, dx.as_ref(), dy.as_mut(), 1, log, g),
    };
    r.unwrap_or_else(|e| panic!("softmax {rows}x{len} {group:?}: {e}"));
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
        for log in [false, true] {
            let want: Vec<f64> = reference::softmax(&to_f64(&x), len, log).into_iter().map(|v| E::from_f64(v).to_f64()).collect();
            for group in groups(client) {
                let got = run_softmax::<R, E>(client, &x, rows, len, log, group);
                let c = compare_each(&got, &want, |_| softmax_tol(dtype, len, log));
                assert!(c.ok(), "softmax(log={log}) {dtype} {rows}x{len} {group:?} on {}: {c}", R::name(client));
            }
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
    for log in [false, true] {
        let want = reference::softmax(&to_f64(&x), len, log);
        for group in groups(client) {
            let got = run_softmax::<R, f32>(client, &x, 5, len, log, group);
            let c = compare_each(&got, &want, |_| softmax_tol(DType::F32, len, log));
            assert!(
                c.ok(),
                "softmax edge rows (log={log}) {group:?}: {c}\n got {got:?}\nwant {want:?}"
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

// ---------------------------------------------------------------- gemv

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
            let want: Vec<f64> = reference::gemv(&af, rows, cols, &xf, transpose == Transpose::Yes).into_iter().map(|v| E::from_f64(v).to_f64()).collect();
            let abs_a: Vec<f64> = af.iter().map(|v| v.abs()).collect();
            let abs_x: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
            let sum_abs = reference::gemv(&abs_a, rows, cols, &abs_x, transpose == Transpose::Yes);
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
