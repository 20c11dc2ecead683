//! Generic bodies for RMSNorm, LayerNorm and the fused residual add + RMSNorm: every row group
//! the device runs against the f64 reference (cached and streamed rows, with and without weight
//! and bias), padded rows, in-place calls, edge rows, the owned forms, and every validation
//! error.

use super::row_groups;
use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poison, poisoned, seeded, to_f64};
use cubeport::{
    DType, DeviceTensor, Element, Error, NormKind, NormVariant, ReducePath, RowGroup, ShapeError,
    TensorMut, TensorRef,
};

const EPS: f32 = 1e-5;

/// The automatic variant (`None`), every row group the device runs, a whole cube of 1024 units
/// per row, and the streamed kernel forced on rows that would fit the registers.
fn variants<R: Runtime>(client: &ComputeClient<R>) -> Vec<Option<NormVariant>> {
    let mut v: Vec<Option<NormVariant>> = row_groups(client)
        .into_iter()
        .map(|g| g.map(NormVariant::Rows))
        .collect();
    let shared = |group| RowGroup {
        path: ReducePath::Shared,
        group,
    };
    v.push(Some(NormVariant::Rows(shared(1024))));
    v.push(Some(NormVariant::Streamed(shared(256))));
    if let Some(w) = cubeport::caps_of(client).plane.fixed_width() {
        v.push(Some(NormVariant::Streamed(RowGroup {
            path: ReducePath::Plane,
            group: w,
        })));
    }
    v
}

/// The f64 reference of `kind` (rounded to `E`) and per-element tolerances.
fn reference_of<E: Element>(
    kind: NormKind,
    x: &[f64],
    w: Option<&[f64]>,
    b: Option<&[f64]>,
    len: usize,
    dtype: DType,
) -> (Vec<f64>, Vec<Tolerance>) {
    let eps = EPS as f64;
    let want = match kind {
        NormKind::Layer => reference::layer_norm(x, w, b, len, eps),
        _ => reference::rms_norm(x, w, len, eps),
    };
    let want = want.into_iter().map(|v| E::from_f64(v).to_f64()).collect();
    let layer = kind == NormKind::Layer;
    let tol = reference::norm_magnitudes(x, w, b, len, eps, layer)
        .into_iter()
        .map(|m| Tolerance::norm(dtype, len, m))
        .collect();
    (want, tol)
}

/// The optional weight and bias of one case: `None`, weight only, or both (LayerNorm).
fn params_of(kind: NormKind) -> Vec<(bool, bool)> {
    match kind {
        NormKind::Layer => vec![(false, false), (true, false), (true, true)],
        _ => vec![(false, false), (true, false)],
    }
}

/// Runs `kind` on `x` (`rows × len`, row pitch `pitch`) with the optional weight / bias and a
/// forced or automatic variant into a poisoned output of the same pitch; returns the dense
/// result.
#[allow(clippy::too_many_arguments)]
fn run_norm<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    kind: NormKind,
    x: &[E],
    w: Option<&DeviceTensor<E>>,
    b: Option<&DeviceTensor<E>>,
    (rows, len, pitch): (usize, usize, usize),
    variant: Option<NormVariant>,
) -> Vec<f64> {
    let padded = pad_rows(x, rows, len, pitch);
    let dx = DeviceTensor::from_slice(client, &padded, &[rows, pitch]).unwrap();
    let dy = poisoned::<R, E>(client, &[rows, pitch]).unwrap();
    let dtype = E::DTYPE;
    let xin = TensorRef::new(dx.handle(), &[rows, len], &[pitch, 1], dtype);
    let yout = TensorMut::new(dy.handle(), &[rows, len], &[pitch, 1], dtype);
    let (w, b) = (w.map(DeviceTensor::as_ref), b.map(DeviceTensor::as_ref));
    let r = match (kind, variant) {
        (NormKind::Layer, None) => cubeport::layer_norm_into(client, xin, w, b, yout, EPS),
        (NormKind::Layer, Some(v)) => cubeport::layer_norm_with(client, xin, w, b, yout, EPS, v),
        (_, None) => cubeport::rms_norm_into(client, xin, w, yout, EPS),
        (_, Some(v)) => cubeport::rms_norm_with(client, xin, w, yout, EPS, v),
    };
    r.unwrap_or_else(|e| panic!("{kind} {rows}x{len} pitch {pitch} {variant:?}: {e}"));
    let got = dy.to_vec(client).unwrap();
    if pitch > len {
        let pad_ok = got.chunks(pitch).all(|row| {
            row[len..]
                .iter()
                .all(|&v| v.to_f64() == poison::<E>().to_f64())
        });
        assert!(pad_ok, "{kind} wrote into the row padding");
    }
    to_f64(&unpad_rows(&got, rows, len, pitch))
}

fn pad_rows<E: Element>(x: &[E], rows: usize, len: usize, pitch: usize) -> Vec<E> {
    let mut out = vec![poison::<E>(); rows * pitch];
    for r in 0..rows {
        out[r * pitch..r * pitch + len].copy_from_slice(&x[r * len..(r + 1) * len]);
    }
    out
}

fn unpad_rows<E: Element>(x: &[E], rows: usize, len: usize, pitch: usize) -> Vec<E> {
    (0..rows)
        .flat_map(|r| x[r * pitch..r * pitch + len].iter().copied())
        .collect()
}

/// Seeded rows with a per-row offset (LayerNorm must remove it), a weight and a bias.
fn inputs<E: Element>(rows: usize, len: usize) -> (Vec<E>, Vec<E>, Vec<E>) {
    let seed = (rows * 131 + len) as u64;
    let offsets: Vec<f32> = seeded(seed ^ 0x0FF5, rows, -3.0, 3.0);
    let noise: Vec<f32> = seeded(seed, rows * len, -2.0, 2.0);
    let x = noise
        .iter()
        .enumerate()
        .map(|(i, v)| E::from_f64((v + offsets[i / len]) as f64))
        .collect();
    (
        x,
        seeded(seed ^ 0x3E16, len, 0.5, 1.5),
        seeded(seed ^ 0xB1A5, len, -1.0, 1.0),
    )
}

/// Every kind × weight/bias × row group on `rows × len`, dense and (`pitch > len`) padded.
pub fn norm_matches<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    rows: usize,
    len: usize,
    pitch: usize,
) {
    with_dtype!(dtype, E => {
        let (x, w, b) = inputs::<E>(rows, len);
        let dw = DeviceTensor::from_slice(client, &w, &[len]).unwrap();
        let db = DeviceTensor::from_slice(client, &b, &[len]).unwrap();
        let (xf, wf, bf) = (to_f64(&x), to_f64(&w), to_f64(&b));
        for kind in NormKind::ALL {
            for (has_w, has_b) in params_of(kind) {
                let (want, tol) = reference_of::<E>(
                    kind, &xf, has_w.then_some(&wf[..]), has_b.then_some(&bf[..]), len, dtype,
                );
                for variant in variants(client) {
                    let got = run_norm::<R, E>(
                        client, kind, &x, has_w.then_some(&dw), has_b.then_some(&db),
                        (rows, len, pitch), variant,
                    );
                    let c = compare_each(&got, &want, |i| tol[i]);
                    assert!(
                        c.ok(),
                        "{kind} w={has_w} b={has_b} {dtype} {rows}x{len} pitch {pitch} {variant:?} on {}: {c}",
                        R::name(client)
                    );
                }
            }
        }
    })
}

/// The fused residual add: `sum` is `input + residual` rounded to the dtype (exactly what an
/// unfused add gives), and `output` is exactly the unfused `rms_norm` of that sum, for every
/// row group, with a fresh sum and with the sum written over the residual (in place).
pub fn add_rms_norm_matches<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    rows: usize,
    len: usize,
) {
    with_dtype!(dtype, E => {
        let (x, w, _) = inputs::<E>(rows, len);
        let r: Vec<E> = seeded((rows + len) as u64 ^ 0x4E5, rows * len, -1.0, 1.0);
        let want_sum: Vec<f64> = x
            .iter()
            .zip(&r)
            .map(|(a, b)| E::from_f64(a.to_f64() + b.to_f64()).to_f64())
            .collect();
        let (want, tol) =
            reference_of::<E>(NormKind::Rms, &want_sum, Some(&to_f64(&w)), None, len, dtype);
        let dx = DeviceTensor::from_slice(client, &x, &[rows, len]).unwrap();
        let dw = DeviceTensor::from_slice(client, &w, &[len]).unwrap();
        for variant in variants(client) {
            for in_place in [false, true] {
                let mut dr = DeviceTensor::from_slice(client, &r, &[rows, len]).unwrap();
                let mut fresh = poisoned::<R, E>(client, &[rows, len]).unwrap();
                let mut dy = poisoned::<R, E>(client, &[rows, len]).unwrap();
                let residual = dr.clone();
                let sum = if in_place { dr.as_mut() } else { fresh.as_mut() };
                let res = match variant {
                    None => cubeport::add_rms_norm_into(
                        client, dx.as_ref(), residual.as_ref(), Some(dw.as_ref()), sum, dy.as_mut(), EPS,
                    ),
                    Some(v) => cubeport::add_rms_norm_with(
                        client, dx.as_ref(), residual.as_ref(), Some(dw.as_ref()), sum, dy.as_mut(), EPS, v,
                    ),
                };
                res.unwrap_or_else(|e| panic!("add_rms_norm {rows}x{len} {variant:?}: {e}"));
                let sum_dev = if in_place { &dr } else { &fresh };
                let got_sum = to_f64(&sum_dev.to_vec(client).unwrap());
                let what = format!("add_rms_norm {dtype} {rows}x{len} {variant:?} in_place={in_place}");
                let c = compare_each(&got_sum, &want_sum, |_| Tolerance::EXACT);
                assert!(c.ok(), "{what}: sum: {c}");
                let got = to_f64(&dy.to_vec(client).unwrap());
                let c = compare_each(&got, &want, |i| tol[i]);
                assert!(c.ok(), "{what}: output: {c}");
                // The unfused composition on the same sum gives the same bits.
                let mut unfused = poisoned::<R, E>(client, &[rows, len]).unwrap();
                let s = DeviceTensor::from_slice(client, &sum_dev.to_vec(client).unwrap(), &[rows, len]).unwrap();
                match variant {
                    None => cubeport::rms_norm_into(client, s.as_ref(), Some(dw.as_ref()), unfused.as_mut(), EPS),
                    Some(v) => cubeport::rms_norm_with(client, s.as_ref(), Some(dw.as_ref()), unfused.as_mut(), EPS, v),
                }
                .unwrap();
                let c = compare_each(&got, &to_f64(&unfused.to_vec(client).unwrap()), |_| Tolerance::EXACT);
                assert!(c.ok(), "{what}: fused vs unfused: {c}");
            }
        }
    })
}

/// Normalizing in place (`output` = `input`) gives what a separate output gives.
pub fn norm_in_place<R: Runtime>(client: &ComputeClient<R>) {
    for (rows, len) in [(5, 1000), (3, 65536)] {
        let (x, w, b) = inputs::<f32>(rows, len);
        let dw = DeviceTensor::from_slice(client, &w, &[len]).unwrap();
        let db = DeviceTensor::from_slice(client, &b, &[len]).unwrap();
        for kind in NormKind::ALL {
            let want = run_norm::<R, f32>(
                client,
                kind,
                &x,
                Some(&dw),
                Some(&db).filter(|_| kind == NormKind::Layer),
                (rows, len, len),
                None,
            );
            let mut d = DeviceTensor::from_slice(client, &x, &[rows, len]).unwrap();
            let alias = d.clone();
            match kind {
                NormKind::Layer => cubeport::layer_norm_into(
                    client,
                    alias.as_ref(),
                    Some(dw.as_ref()),
                    Some(db.as_ref()),
                    d.as_mut(),
                    EPS,
                ),
                _ => cubeport::rms_norm_into(
                    client,
                    alias.as_ref(),
                    Some(dw.as_ref()),
                    d.as_mut(),
                    EPS,
                ),
            }
            .unwrap();
            let got = to_f64(&d.to_vec(client).unwrap());
            let c = compare_each(&got, &want, |_| Tolerance::EXACT);
            assert!(c.ok(), "{kind} in place {rows}x{len}: {c}");
        }
    }
}

/// Rows of NaN, ±∞, values whose squares overflow f32, constant rows, a row far from zero
/// with a small spread (the streamed LayerNorm's shifted sums must not cancel), and ±∞ / NaN
/// as a row's first element (LayerNorm's pivot), short and long.
pub fn norm_edge_rows<R: Runtime>(client: &ComputeClient<R>) {
    for len in [19, 40_000] {
        let rows = 8;
        let mut x: Vec<f32> = seeded(len as u64, rows * len, -3.0, 3.0);
        x[3] = f32::NAN; // row 0: NaN row
        x[len + 5] = f32::INFINITY; // row 1: one +∞
        x[2 * len + 1] = 1e30; // row 2: its mean square overflows f32
        for v in &mut x[3 * len..4 * len] {
            *v = 0.25; // row 3: constant
        }
        for v in &mut x[4 * len..5 * len] {
            *v = 1000.0 + *v * 1e-2; // row 4: offset 1000, spread 0.01
        }
        x[5 * len + 2] = f32::NEG_INFINITY; // row 5: -∞
        x[6 * len] = f32::INFINITY; // row 6: +∞ first (the pivot)
        x[7 * len] = f32::NAN; // row 7: NaN first
        let xf = to_f64(&x);
        for kind in NormKind::ALL {
            let (want, tol) = reference_of::<f32>(kind, &xf, None, None, len, DType::F32);
            for variant in variants(client) {
                let got =
                    run_norm::<R, f32>(client, kind, &x, None, None, (rows, len, len), variant);
                let c = compare_each(&got, &want, |i| tol[i]);
                assert!(
                    c.ok(),
                    "{kind} edge rows of {len} {variant:?} on {}: {c}",
                    R::name(client)
                );
            }
        }
    }
}

/// The owned forms on ragged inputs of rank 1 to 3, and the variant query.
pub fn norm_owned_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for shape in [&[7][..], &[3, 33], &[2, 5, 1000], &[1, 4097]] {
            let n: usize = shape.iter().product();
            let len = shape[shape.len() - 1];
            let (x, w, b) = inputs::<E>(n / len, len);
            let dx = DeviceTensor::from_slice(client, &x, shape).unwrap();
            let dw = DeviceTensor::from_slice(client, &w, &[len]).unwrap();
            let db = DeviceTensor::from_slice(client, &b, &[len]).unwrap();
            let (xf, wf, bf) = (to_f64(&x), to_f64(&w), to_f64(&b));
            for kind in NormKind::ALL {
                let (dy, want) = match kind {
                    NormKind::Layer => (
                        cubeport::layer_norm(client, &dx, Some(&dw), Some(&db), EPS),
                        reference_of::<E>(kind, &xf, Some(&wf), Some(&bf), len, dtype),
                    ),
                    _ => (
                        cubeport::rms_norm(client, &dx, Some(&dw), EPS),
                        reference_of::<E>(kind, &xf, Some(&wf), None, len, dtype),
                    ),
                };
                let dy = dy.unwrap_or_else(|e| panic!("owned {kind} {shape:?}: {e}"));
                assert_eq!(dy.shape(), shape);
                let got = to_f64(&dy.to_vec(client).unwrap());
                let c = compare_each(&got, &want.0, |i| want.1[i]);
                assert!(c.ok(), "owned {kind} {dtype} {shape:?} on {}: {c}", R::name(client));
            }
            let (sum, out) = cubeport::add_rms_norm(client, &dx, &dx, None, EPS).unwrap();
            let doubled: Vec<f64> = xf.iter().map(|v| E::from_f64(2.0 * v).to_f64()).collect();
            assert_eq!(to_f64(&sum.to_vec(client).unwrap()), doubled, "owned add_rms_norm sum");
            let (want, tol) = reference_of::<E>(NormKind::Rms, &doubled, None, None, len, dtype);
            let c = compare_each(&to_f64(&out.to_vec(client).unwrap()), &want, |i| tol[i]);
            assert!(c.ok(), "owned add_rms_norm {dtype} {shape:?}: {c}");
            let v = cubeport::norm_variant(client, &dx.as_ref()).unwrap();
            assert!(matches!(v, NormVariant::Rows(_)), "{v:?}");
        }
    })
}

fn expect_shape_error(r: Result<(), Error>, what: &str, ok: impl Fn(&ShapeError) -> bool) {
    match &r {
        Err(Error::Shape { source, .. }) if ok(source) => {}
        _ => panic!("{what}: {r:?}"),
    }
}

/// Every validation error of the three ops, and nothing written by a rejected call.
pub fn norm_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let w4 = DeviceTensor::from_slice(client, &[1.0f32; 4], &[4]).unwrap();
    let w3 = DeviceTensor::from_slice(client, &[1.0f32; 3], &[3]).unwrap();
    let w2x2 = DeviceTensor::from_slice(client, &[1.0f32; 4], &[2, 2]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3, 4]).unwrap();
    for eps in [-1e-5, f32::NAN, f32::INFINITY] {
        let r = cubeport::rms_norm_into(client, x.as_ref(), None, y.as_mut(), eps);
        expect_shape_error(r, "eps", |e| {
            matches!(e, ShapeError::InvalidParameter { name: "eps", .. })
        });
    }
    for w in [&w3, &w2x2] {
        let r = cubeport::rms_norm_into(client, x.as_ref(), Some(w.as_ref()), y.as_mut(), EPS);
        expect_shape_error(r, "weight shape", |e| {
            matches!(e, ShapeError::ShapeMismatch { name: "weight", .. })
        });
        let r =
            cubeport::layer_norm_into(client, x.as_ref(), None, Some(w.as_ref()), y.as_mut(), EPS);
        expect_shape_error(r, "bias shape", |e| {
            matches!(e, ShapeError::ShapeMismatch { name: "bias", .. })
        });
    }
    let w_u32 = TensorRef::contiguous(w4.handle(), &[4], DType::U32);
    let r = cubeport::rms_norm_into(client, x.as_ref(), Some(w_u32), y.as_mut(), EPS);
    expect_shape_error(r, "weight dtype", |e| {
        matches!(e, ShapeError::DTypeMismatch { name: "weight", .. })
    });
    let w_strided = TensorRef::new(x.handle(), &[4], &[3], DType::F32);
    let r = cubeport::rms_norm_into(client, x.as_ref(), Some(w_strided), y.as_mut(), EPS);
    expect_shape_error(r, "weight strides", |e| {
        matches!(e, ShapeError::NotContiguous { name: "weight", .. })
    });
    let r = cubeport::rms_norm_into(
        client,
        x.as_ref(),
        None,
        TensorMut::contiguous(y.handle(), &[4, 3], DType::F32),
        EPS,
    );
    expect_shape_error(r, "output shape", |e| {
        matches!(e, ShapeError::ShapeMismatch { name: "output", .. })
    });
    let r = cubeport::layer_norm_into(
        client,
        TensorRef::contiguous(x.handle(), &[3, 0], DType::F32),
        None,
        None,
        TensorMut::contiguous(y.handle(), &[3, 0], DType::F32),
        EPS,
    );
    expect_shape_error(r, "empty", |e| matches!(e, ShapeError::Empty { .. }));
    let column = TensorRef::new(x.handle(), &[3, 4], &[1, 3], DType::F32);
    let r = cubeport::rms_norm_into(client, column, None, y.as_mut(), EPS);
    expect_shape_error(r, "transposed input", |e| {
        matches!(e, ShapeError::NotContiguous { name: "input", .. })
    });
    let mut s = poisoned::<R, f32>(client, &[3, 4]).unwrap();
    let big = TensorRef::contiguous(x.handle(), &[4, 4], DType::F32);
    let r = cubeport::add_rms_norm_into(client, x.as_ref(), big, None, s.as_mut(), y.as_mut(), EPS);
    expect_shape_error(r, "residual", |e| {
        matches!(
            e,
            ShapeError::ShapeMismatch {
                name: "residual",
                ..
            } | ShapeError::BufferTooSmall {
                name: "residual",
                ..
            }
        )
    });
    let r = cubeport::add_rms_norm_into(
        client,
        x.as_ref(),
        x.as_ref(),
        None,
        TensorMut::contiguous(s.handle(), &[3, 4], DType::F16),
        y.as_mut(),
        EPS,
    );
    expect_shape_error(r, "sum dtype", |e| {
        matches!(e, ShapeError::DTypeMismatch { name: "sum", .. })
    });
    let scalar = DeviceTensor::from_slice(client, &[1.0f32], &[]).unwrap();
    let r = cubeport::rms_norm(client, &scalar, None, EPS).map(drop);
    expect_shape_error(r, "rank 0", |e| {
        matches!(e, ShapeError::AxisOutOfRange { axis: 0, rank: 0 })
    });
    for t in [&y, &s] {
        assert!(
            t.to_vec(client)
                .unwrap()
                .iter()
                .all(|&v| v == poison::<f32>()),
            "a rejected call wrote output"
        );
    }
}

/// A forced row group the device cannot run is `Unsupported` for every op, never replaced.
pub fn norm_rejects_unsupported_variant<R: Runtime>(client: &ComputeClient<R>) {
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 12, -1.0, 1.0), &[3, 4]).unwrap();
    let mut y = poisoned::<R, f32>(client, &[3, 4]).unwrap();
    let mut s = poisoned::<R, f32>(client, &[3, 4]).unwrap();
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
        None => bad.push(RowGroup {
            path: ReducePath::Plane,
            group: 32,
        }),
    }
    for group in bad {
        let v = NormVariant::Rows(group);
        let results = [
            cubeport::rms_norm_with(client, x.as_ref(), None, y.as_mut(), EPS, v),
            cubeport::layer_norm_with(client, x.as_ref(), None, None, y.as_mut(), EPS, v),
            cubeport::add_rms_norm_with(
                client,
                x.as_ref(),
                x.as_ref(),
                None,
                s.as_mut(),
                y.as_mut(),
                EPS,
                v,
            ),
        ];
        for r in results {
            assert!(matches!(r, Err(Error::Unsupported { .. })), "{v}: {r:?}");
        }
    }
    for t in [&y, &s] {
        assert!(
            t.to_vec(client)
                .unwrap()
                .iter()
                .all(|&v| v == poison::<f32>()),
            "a rejected call wrote output"
        );
    }
}
