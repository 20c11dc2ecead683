//! Runs one case of the table on one backend: inputs, the op, the reference, the timing.

use super::*;
use crate::timing::time_host;

/// Runs one case on seeded data into a poisoned output, compares with the f64 reference
/// (rounded to the storage type), and times it when correct.
pub(crate) fn measure<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    case: &Case,
    shape: &[usize],
    no_time: bool,
) -> Result<Measured, Error> {
    if let Kind::Matmul { fused } = case.kind {
        return measure_matmul::<R, E>(client, shape, fused, no_time);
    }
    if let Kind::Attention { causal } = case.kind {
        return measure_attention::<R, E>(client, shape, causal, no_time);
    }
    if let Kind::Norm { kind, residual, .. } = case.kind {
        return measure_norm::<R, E>(client, shape, kind, residual, no_time);
    }
    let n: usize = shape.iter().product();
    let x: Vec<E> = seeded(0xC0BE_0001, n, -4.0, 4.0);
    let xf = to_f64(&x);
    let dx = DeviceTensor::from_slice(client, &x, shape)?;
    let dtype = case.dtype;
    let round =
        |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|v| E::from_f64(v).to_f64()).collect() };
    let sum_abs_of = |a: &[f64], shape: &[usize], axis: Option<usize>| {
        let abs: Vec<f64> = a.iter().map(|v| v.abs()).collect();
        reference::reduce(&abs, shape, axis, Reduction::Sum)
    };
    let b_dev; // declared before `op`, which borrows them
    let xv_dev;
    // (output shape, reference, per-element tolerance, bytes moved, variant, the op)
    type Op<'a> = Box<dyn Fn(TensorMut<'_>) -> Result<(), Error> + 'a>;
    let (out_shape, want, tol, bytes, variant, op): (
        Vec<usize>,
        Vec<f64>,
        Vec<Tolerance>,
        usize,
        String,
        Op<'_>,
    );
    match case.kind {
        Kind::Act { act, row } => {
            let bias_shape = match row {
                None => shape.to_vec(),
                Some(r) => vec![r],
            };
            let nb: usize = bias_shape.iter().product();
            let b: Vec<E> = seeded(0xC0BE_0002, nb, -1.0, 1.0);
            b_dev = DeviceTensor::from_slice(client, &b, &bias_shape)?;
            let v = cubeport::bias_activation_variant(client, &dx.as_ref(), &b_dev.as_ref())?;
            variant = if n.is_multiple_of(v.vector) {
                v.to_string()
            } else {
                format!("{v}+tail")
            };
            want = round(reference::bias_activation(&xf, &to_f64(&b), act));
            tol = vec![Tolerance::elementwise(dtype); n];
            out_shape = shape.to_vec();
            bytes = (2 * n + nb) * dtype.size();
            let (xr, br) = (dx.as_ref(), b_dev.as_ref());
            op = Box::new(move |out| {
                cubeport::bias_activation_into(client, xr.clone(), br.clone(), out, act)
            });
        }
        Kind::Reduce { op: red, axis, .. } => {
            out_shape = match axis {
                None => vec![1],
                Some(a) => shape
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != a)
                    .map(|(_, &d)| d)
                    .collect(),
            };
            let k = axis.map_or(n, |a| shape[a]);
            want = round(reference::reduce(&xf, shape, axis, red));
            tol = sum_abs_of(&xf, shape, axis)
                .into_iter()
                .map(|s| Tolerance::reduce(red, dtype, k, s))
                .collect();
            bytes = (n + want.len()) * dtype.size();
            variant = cubeport::reduce_variant(client, &dx.as_ref(), axis)?.to_string();
            let xr = dx.as_ref();
            op = Box::new(move |out| cubeport::reduce_into(client, xr.clone(), out, axis, red));
        }
        Kind::Softmax { kind, len } => {
            out_shape = shape.to_vec();
            let t = match kind {
                SoftmaxKind::Softmax => {
                    want = round(reference::softmax(&xf, len));
                    Tolerance::softmax(dtype, len)
                }
                SoftmaxKind::LogSoftmax => {
                    want = round(reference::log_softmax(&xf, len));
                    Tolerance::log_softmax(dtype, len)
                }
            };
            tol = vec![t; n];
            bytes = 2 * n * dtype.size();
            variant = cubeport::softmax_variant(client, &dx.as_ref(), 1)?.to_string();
            let xr = dx.as_ref();
            op = Box::new(move |out| match kind {
                SoftmaxKind::Softmax => cubeport::softmax_into(client, xr.clone(), out, 1),
                SoftmaxKind::LogSoftmax => cubeport::log_softmax_into(client, xr.clone(), out, 1),
            });
        }
        Kind::Gemv { transpose, cols } => {
            let rows = shape[0];
            let (xl, yl) = if transpose == Transpose::No {
                (cols, rows)
            } else {
                (rows, cols)
            };
            let v: Vec<E> = seeded(0xC0BE_0003, xl, -1.0, 1.0);
            let vf = to_f64(&v);
            xv_dev = DeviceTensor::from_slice(client, &v, &[xl])?;
            out_shape = vec![yl];
            want = round(reference::gemv(&xf, rows, cols, &vf, transpose));
            let abs_a: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
            let abs_x: Vec<f64> = vf.iter().map(|v| v.abs()).collect();
            tol = reference::gemv(&abs_a, rows, cols, &abs_x, transpose)
                .into_iter()
                .map(|s| Tolerance::reduction(dtype, xl, s))
                .collect();
            bytes = (n + xl + yl) * dtype.size();
            variant = cubeport::gemv_variant(client, &dx.as_ref(), transpose)?.to_string();
            let (ar, vr) = (dx.as_ref(), xv_dev.as_ref());
            op = Box::new(move |out| {
                cubeport::gemv_into(client, ar.clone(), vr.clone(), out, transpose)
            });
        }
        Kind::Histogram { bins } => {
            return measure_histogram(client, &x, &dx, bins, no_time);
        }
        Kind::Matmul { .. } | Kind::Norm { .. } | Kind::Attention { .. } => {
            unreachable!("handled above")
        }
        Kind::Transpose { .. } => {
            out_shape = vec![shape[1], shape[0]];
            want = reference::transpose(&xf, 1, shape[0], shape[1]);
            tol = vec![Tolerance::EXACT; n];
            bytes = 2 * n * dtype.size();
            variant = cubeport::transpose_variant(client, &dx.as_ref())?.to_string();
            let xr = dx.as_ref();
            op = Box::new(move |out| cubeport::transpose_into(client, xr.clone(), out));
        }
    }
    let mut dy = poisoned::<R, E>(client, &out_shape)?;
    op(dy.as_mut())?;
    let got = to_f64(&dy.to_vec(client)?);
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None // never time a wrong kernel
    } else {
        time_op(client, || op(dy.as_mut()))?
    };
    let gbps = time.map(|t| bytes as f64 / t.as_secs_f64() / 1e9);
    Ok(Measured {
        variant,
        cmp,
        output: got,
        tol,
        time,
        gbps,
        tflops: None,
        copy_gbps: None,
    })
}

/// `[m, k] · [k, n]` (shape `[m, n, k]`) of seeded inputs into a poisoned output with the
/// automatic variant, optionally with the fused `gelu(· + bias)` epilogue, against the f64
/// reference with the matmul tolerance; timed in TFLOP/s when correct.
pub(crate) fn measure_matmul<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    shape: &[usize],
    fused: bool,
    no_time: bool,
) -> Result<Measured, Error> {
    let (m, n, k) = (shape[0], shape[1], shape[2]);
    let dtype = E::DTYPE;
    let a: Vec<E> = seeded(0xC0BE_0004, m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(0xC0BE_0005, k * n, -1.0, 1.0);
    let bias: Vec<E> = seeded(0xC0BE_0006, n, -0.5, 0.5);
    let (af, bf) = (to_f64(&a), to_f64(&b));
    let act = if fused {
        Activation::Gelu(GeluApprox::Tanh)
    } else {
        Activation::Identity
    };
    let prod = reference::matmul(&af, &bf, 1, 1, m, n, k);
    let want: Vec<f64> = if fused {
        reference::bias_activation(&prod, &to_f64(&bias), act)
    } else {
        prod
    }
    .into_iter()
    .map(|v| E::from_f64(v).to_f64())
    .collect();
    let abs = |v: &[f64]| v.iter().map(|x| x.abs()).collect::<Vec<_>>();
    let tol: Vec<Tolerance> = reference::matmul(&abs(&af), &abs(&bf), 1, 1, m, n, k)
        .into_iter()
        .map(|s| Tolerance::matmul(dtype, k, s))
        .collect();
    let da = DeviceTensor::from_slice(client, &a, &[m, k])?;
    let db = DeviceTensor::from_slice(client, &b, &[k, n])?;
    let dbias = DeviceTensor::from_slice(client, &bias, &[n])?;
    let op = |c: &mut DeviceTensor<E>| {
        let bias = fused.then(|| dbias.as_ref());
        cubeport::matmul_fused_into(client, da.as_ref(), db.as_ref(), bias, act, c.as_mut())
    };
    let mut dc = poisoned::<R, E>(client, &[m, n])?;
    op(&mut dc)?;
    let got = to_f64(&dc.to_vec(client)?);
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut dc))?
    };
    let flops = cubeport::ops::matmul::matmul_flops(1, m, n, k) as f64;
    Ok(Measured {
        variant: cubeport::matmul_variant(client, dtype, 1, (m, n, k))?.to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: None,
        tflops: time.map(|t| flops / t.as_secs_f64() / 1e12),
        copy_gbps: None,
    })
}

/// RMSNorm / LayerNorm (`kind`) over the rows of `shape` with a seeded weight (and bias for
/// LayerNorm), or with `residual` the fused residual add + RMSNorm; the output (and the written
/// sum, exactly) against the f64 reference; GB/s count every tensor read and written once.
pub(crate) fn measure_norm<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    shape: &[usize],
    kind: NormKind,
    residual: bool,
    no_time: bool,
) -> Result<Measured, Error> {
    const EPS: f32 = 1e-5;
    let (n, len) = (shape.iter().product::<usize>(), shape[1]);
    let dtype = E::DTYPE;
    let x: Vec<E> = seeded(0xC0BE_0007, n, -4.0, 4.0);
    let r: Vec<E> = seeded(0xC0BE_0008, n, -1.0, 1.0);
    let w: Vec<E> = seeded(0xC0BE_0009, len, 0.5, 1.5);
    let b: Vec<E> = seeded(0xC0BE_000A, len, -1.0, 1.0);
    let layer = kind == NormKind::Layer;
    let (wf, bf) = (to_f64(&w), to_f64(&b));
    let bias = layer.then_some(&bf[..]);
    let round = |v: f64| E::from_f64(v).to_f64();
    let normed: Vec<f64> = if residual {
        x.iter()
            .zip(&r)
            .map(|(a, b)| round(Element::to_f64(*a) + Element::to_f64(*b)))
            .collect()
    } else {
        to_f64(&x)
    };
    let norm_ref = match kind {
        NormKind::Layer => reference::layer_norm(&normed, Some(&wf), bias, len, EPS as f64),
        _ => reference::rms_norm(&normed, Some(&wf), len, EPS as f64),
    };
    let mut want: Vec<f64> = norm_ref.into_iter().map(round).collect();
    let mut tol: Vec<Tolerance> =
        reference::norm_magnitudes(&normed, Some(&wf), bias, len, EPS as f64, layer)
            .into_iter()
            .map(|m| Tolerance::norm(dtype, len, m))
            .collect();
    if residual {
        want.extend_from_slice(&normed);
        tol.extend(std::iter::repeat_n(Tolerance::EXACT, n));
    }
    let dx = DeviceTensor::from_slice(client, &x, shape)?;
    let dr = DeviceTensor::from_slice(client, &r, shape)?;
    let dw = DeviceTensor::from_slice(client, &w, &[len])?;
    let db = DeviceTensor::from_slice(client, &b, &[len])?;
    let mut dy = poisoned::<R, E>(client, shape)?;
    let mut ds = poisoned::<R, E>(client, shape)?;
    let op = |y: &mut DeviceTensor<E>, s: &mut DeviceTensor<E>| {
        let (x, w) = (dx.as_ref(), Some(dw.as_ref()));
        match (kind, residual) {
            (_, true) => {
                cubeport::add_rms_norm_into(client, x, dr.as_ref(), w, s.as_mut(), y.as_mut(), EPS)
            }
            (NormKind::Layer, _) => {
                cubeport::layer_norm_into(client, x, w, Some(db.as_ref()), y.as_mut(), EPS)
            }
            _ => cubeport::rms_norm_into(client, x, w, y.as_mut(), EPS),
        }
    };
    op(&mut dy, &mut ds)?;
    let mut got = to_f64(&dy.to_vec(client)?);
    if residual {
        got.extend(to_f64(&ds.to_vec(client)?));
    }
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut dy, &mut ds))?
    };
    let tensors = if residual { 4 } else { 2 };
    let bytes = (tensors * n + 2 * len) * dtype.size();
    Ok(Measured {
        variant: cubeport::norm_variant(client, &dx.as_ref())?.to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: time.map(|t| bytes as f64 / t.as_secs_f64() / 1e9),
        tflops: None,
        copy_gbps: None,
    })
}

/// Attention on seeded `[B, H, S, D]` queries against `[B, H/2, S, D]` keys and values
/// (grouped-query), the automatic variant, against the f64 reference; TFLOP/s when correct.
pub(crate) fn measure_attention<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    shape: &[usize],
    causal: bool,
    no_time: bool,
) -> Result<Measured, Error> {
    use cubeport::reference::AttentionShape;
    let (b, h, s, d) = (shape[0], shape[1], shape[2], shape[3]);
    let hk = h / 2;
    let q: Vec<E> = seeded(0xC0BE_000B, b * h * s * d, -1.0, 1.0);
    let k: Vec<E> = seeded(0xC0BE_000C, b * hk * s * d, -1.0, 1.0);
    let v: Vec<E> = seeded(0xC0BE_000D, b * hk * s * d, -1.0, 1.0);
    let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
    let att = AttentionShape {
        batch: b,
        heads: h,
        kv_heads: hk,
        sq: s,
        sk: s,
        head_dim: d,
    };
    let scale = 1.0 / (d as f64).sqrt();
    let (want, _) = reference::attention(&qf, &kf, &vf, att, causal, scale);
    let want: Vec<f64> = want.into_iter().map(|x| E::from_f64(x).to_f64()).collect();
    let tol: Vec<Tolerance> = reference::attention_magnitudes(&qf, &kf, &vf, att, causal, scale)
        .into_iter()
        .map(|m| Tolerance::attention(E::DTYPE, s, d, m, scale * d as f64))
        .collect();
    let dq = DeviceTensor::from_slice(client, &q, &[b, h, s, d])?;
    let dk = DeviceTensor::from_slice(client, &k, &[b, hk, s, d])?;
    let dv = DeviceTensor::from_slice(client, &v, &[b, hk, s, d])?;
    let mut opts = cubeport::AttentionOptions::default();
    if causal {
        opts = opts.causal();
    }
    let op = |o: &mut DeviceTensor<E>| {
        cubeport::attention_into(
            client,
            dq.as_ref(),
            dk.as_ref(),
            dv.as_ref(),
            o.as_mut(),
            None,
            opts,
        )
    };
    let mut dout = poisoned::<R, E>(client, &[b, h, s, d])?;
    op(&mut dout)?;
    let got = to_f64(&dout.to_vec(client)?);
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut dout))?
    };
    let flops = 4.0 * (b * h * s * s * d) as f64 * if causal { 0.5 } else { 1.0 };
    Ok(Measured {
        variant: cubeport::attention_variant(client, &dq.as_ref(), &dk.as_ref(), opts)?.to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: None,
        tflops: time.map(|t| flops / t.as_secs_f64() / 1e12),
        copy_gbps: None,
    })
}

/// A histogram over [−3, 3] of `x` into poisoned u32 counts; counts must match exactly.
pub(crate) fn measure_histogram<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    x: &[E],
    dx: &DeviceTensor<E>,
    bins: usize,
    no_time: bool,
) -> Result<Measured, Error> {
    let (lo, hi) = (-3.0, 3.0);
    let xs: Vec<f32> = x.iter().map(|v| Element::to_f64(*v) as f32).collect();
    let want: Vec<f64> = reference::histogram_range(&xs, bins, lo, hi)
        .into_iter()
        .map(f64::from)
        .collect();
    let mut counts = DeviceTensor::<u32>::from_slice(client, &vec![0xDEAD_BEEF; bins], &[bins])?;
    let binning = cubeport::Binning::Range { lo, hi };
    let op = |c: &mut DeviceTensor<u32>| {
        cubeport::histogram_into(client, dx.as_ref(), c.as_mut(), binning)
    };
    op(&mut counts)?;
    let got: Vec<f64> = counts.to_vec(client)?.into_iter().map(f64::from).collect();
    let tol = vec![Tolerance::EXACT; bins];
    let cmp = compare_each(&got, &want, |i| tol[i]);
    let time = if no_time || !cmp.ok() {
        None
    } else {
        time_op(client, || op(&mut counts))?
    };
    let bytes = std::mem::size_of_val(x);
    Ok(Measured {
        variant: cubeport::histogram_variant(client, &dx.as_ref(), bins, binning)?.to_string(),
        cmp,
        output: got,
        tol,
        time,
        gbps: time.map(|t| bytes as f64 / t.as_secs_f64() / 1e9),
        tflops: None,
        copy_gbps: None,
    })
}

/// Device copy of `n` elements of `dtype` with cubeport's copy kernel: bytes read + written.
pub(crate) fn copy_bandwidth<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    n: usize,
) -> Option<f64> {
    let bytes = n * dtype.size();
    let src = client.create_from_slice(&vec![0x3Cu8; bytes]);
    let dst = client.empty(bytes);
    let input = cubeport::TensorRef::contiguous(&src, &[n], dtype);
    let t = time_op(client, || {
        cubeport::copy_into(
            client,
            input.clone(),
            cubeport::TensorMut::contiguous(&dst, &[n], dtype),
        )
    })
    .ok()
    .flatten()?;
    Some(2.0 * bytes as f64 / t.as_secs_f64() / 1e9)
}

/// Median time of one op: launches batched between device syncs (host launch cost overlaps
/// device work, as in a real pipeline), timed the way `cubeport bench` times them.
pub(crate) fn time_op<R: Runtime>(
    client: &ComputeClient<R>,
    mut op: impl FnMut() -> Result<(), Error>,
) -> Result<Option<Duration>, Error> {
    let s = time_host(true, &mut op, &mut || cubeport::testing::sync(client))?;
    Ok(Some(Duration::from_secs_f64(s)))
}
