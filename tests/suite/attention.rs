//! Generic bodies for attention: every variant the device runs against the f64 reference over
//! ragged, grouped-query, causal (bottom-right, blind rows) shapes, strided `[B, S, H, D]`
//! views, NaN rows, the log-sum-exp, cubeport's own unfused matmul → softmax → matmul on a
//! larger problem, the owned form, and every validation error.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, AttentionShape, Tolerance};
use cubeport::testing::{compare_each, poison, poisoned, seeded, to_f64};
use cubeport::{
    AttentionOptions, AttentionVariant, DType, DeviceTensor, Element, Error, ReducePath,
    ShapeError, TensorMut, TensorRef,
};

/// One problem: `(batch, heads, kv_heads, sq, sk, head_dim, causal)`.
pub type Problem = (usize, usize, usize, usize, usize, usize, bool);

fn shape_of(p: Problem) -> AttentionShape {
    let (batch, heads, kv_heads, sq, sk, head_dim, _) = p;
    AttentionShape {
        batch,
        heads,
        kv_heads,
        sq,
        sk,
        head_dim,
    }
}

/// The automatic variant and every variant the device runs for `dtype` at head dim `d`: both
/// SIMT paths (plane where the width divides 32), and the tensor-core kernel where its documented
/// conditions hold (manual MMA, cp.async, 32-wide planes, f16/bf16, `d` a multiple of 16 up to
/// 128, the planes sharing the tile copies evenly), in its short-sequence shape, a narrower one
/// and both large-problem shapes.
fn variants<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    d: usize,
) -> Vec<Option<AttentionVariant>> {
    let caps = cubeport::caps_of(client);
    let mut v = vec![None, Some(AttentionVariant::Simt(ReducePath::Shared))];
    if caps.plane.fixed_width().is_some_and(|w| 32 % w == 0) {
        v.push(Some(AttentionVariant::Simt(ReducePath::Plane)));
    }
    let mma = caps.manual_mma
        && caps.copy_async
        && caps.plane.fixed_width() == Some(32)
        && matches!(dtype, DType::F16 | DType::BF16)
        && d.is_multiple_of(16)
        && d <= 128;
    if mma {
        v.push(Some(AttentionVariant::MMA));
        v.push(Some(AttentionVariant::Mma {
            warps: 2,
            keys: 32,
            rows: 16,
        }));
        // Four planes (128 units) share each K/V tile's 16-byte copies evenly only where
        // `keys · d / 8` is a multiple of 128 (not 32 keys at d = 80).
        for keys in [64u16, 32]
            .into_iter()
            .filter(|&k| (k as usize * d / 8).is_multiple_of(128))
        {
            v.push(Some(AttentionVariant::Mma {
                warps: 4,
                keys,
                rows: 32,
            }));
        }
    }
    v
}

/// The reference output (rounded to `E`), lse, and per-element tolerances.
pub(crate) fn reference_of<E: Element>(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    p: Problem,
    scale: f64,
) -> (Vec<f64>, Vec<f64>, Vec<Tolerance>) {
    let shape = shape_of(p);
    let causal = p.6;
    let (out, lse) = reference::attention(q, k, v, shape, causal, scale);
    let mags = reference::attention_magnitudes(q, k, v, shape, causal, scale);
    let qmax = q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let kmax = k.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let score_abs = scale.abs() * qmax * kmax * shape.head_dim as f64;
    let tol = mags
        .into_iter()
        .map(|m| Tolerance::attention(E::DTYPE, shape.sk, shape.head_dim, m, score_abs))
        .collect();
    let out = out.into_iter().map(|x| E::from_f64(x).to_f64()).collect();
    (out, lse, tol)
}

fn lse_tolerance(sk: usize, score_abs: f64) -> Tolerance {
    Tolerance {
        atol: 1e-5 + 8.0 * (sk as f64).sqrt() * f32::EPSILON as f64 * (1.0 + score_abs),
        rtol: 1e-5,
    }
}

/// Runs attention on dense tensors into a poisoned output (and lse), with `scale` or the
/// default `1/√D`; returns both.
fn run<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    (q, k, v): (&[E], &[E], &[E]),
    p: Problem,
    variant: Option<AttentionVariant>,
    scale: Option<f32>,
) -> (Vec<f64>, Vec<f64>) {
    let (b, h, hk, sq, sk, d, causal) = p;
    let dq = DeviceTensor::from_slice(client, q, &[b, h, sq, d]).unwrap();
    let dk = DeviceTensor::from_slice(client, k, &[b, hk, sk, d]).unwrap();
    let dv = DeviceTensor::from_slice(client, v, &[b, hk, sk, d]).unwrap();
    let mut out = poisoned::<R, E>(client, &[b, h, sq, d]).unwrap();
    let mut lse = poisoned::<R, f32>(client, &[b, h, sq]).unwrap();
    let mut opts = AttentionOptions::default();
    if causal {
        opts = opts.causal();
    }
    if let Some(s) = scale {
        opts = opts.scale(s);
    }
    let r = match variant {
        None => cubeport::attention_into(
            client,
            dq.as_ref(),
            dk.as_ref(),
            dv.as_ref(),
            out.as_mut(),
            Some(lse.as_mut()),
            opts,
        ),
        Some(var) => cubeport::attention_with(
            client,
            dq.as_ref(),
            dk.as_ref(),
            dv.as_ref(),
            out.as_mut(),
            Some(lse.as_mut()),
            opts,
            var,
        ),
    };
    r.unwrap_or_else(|e| panic!("attention {p:?} {variant:?}: {e}"));
    (
        to_f64(&out.to_vec(client).unwrap()),
        to_f64(&lse.to_vec(client).unwrap()),
    )
}

/// Every variant on seeded inputs of `p` in `dtype`, output and lse against the reference.
pub fn attention_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType, p: Problem) {
    with_dtype!(dtype, E => {
        let (b, h, hk, sq, sk, d, _) = p;
        let seed = (b * 7 + h * 31 + sq * 131 + sk * 17 + d) as u64;
        let q: Vec<E> = seeded(seed, b * h * sq * d, -1.0, 1.0);
        let k: Vec<E> = seeded(seed ^ 0x4B, b * hk * sk * d, -1.0, 1.0);
        let v: Vec<E> = seeded(seed ^ 0x56, b * hk * sk * d, -1.0, 1.0);
        let scale = 1.0 / (d as f64).sqrt();
        let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
        let (want, want_lse, tol) = reference_of::<E>(&qf, &kf, &vf, p, scale);
        let score_abs = scale * d as f64;
        for variant in variants(client, dtype, d) {
            let (got, lse) = run::<R, E>(client, (&q, &k, &v), p, variant, None);
            let c = compare_each(&got, &want, |i| tol[i]);
            assert!(c.ok(), "attention {dtype} {p:?} {variant:?} on {}: {c}", R::name(client));
            let c = compare_each(&lse, &want_lse, |_| lse_tolerance(sk, score_abs));
            assert!(c.ok(), "attention lse {dtype} {p:?} {variant:?}: {c}");
        }
    })
}

/// Scales other than the default on every variant: negative (the row's largest scaled score is
/// its smallest raw one), zero (uniform weights over the visible keys), and large (scores of
/// ±100, where the online rescaling must not overflow); causal on a ragged problem, so tiles are
/// masked, and non-causal.
pub fn attention_any_scale<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for causal in [false, true] {
            let p: Problem = (1, 2, 1, 37, 75, 64, causal);
            let (b, h, hk, sq, sk, d, _) = p;
            let q: Vec<E> = seeded(41, b * h * sq * d, -1.0, 1.0);
            let k: Vec<E> = seeded(42, b * hk * sk * d, -1.0, 1.0);
            let v: Vec<E> = seeded(43, b * hk * sk * d, -1.0, 1.0);
            let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
            for scale in [-0.4f32, 0.0, 6.0] {
                let (want, want_lse, tol) = reference_of::<E>(&qf, &kf, &vf, p, scale as f64);
                let score_abs = (scale as f64).abs() * d as f64;
                for variant in variants(client, dtype, d) {
                    let (got, lse) = run::<R, E>(client, (&q, &k, &v), p, variant, Some(scale));
                    let c = compare_each(&got, &want, |i| tol[i]);
                    assert!(
                        c.ok(),
                        "attention scale {scale} {dtype} causal={causal} {variant:?} on {}: {c}",
                        R::name(client)
                    );
                    let c = compare_each(&lse, &want_lse, |_| lse_tolerance(sk, score_abs));
                    assert!(c.ok(), "attention lse scale {scale} {dtype} {variant:?}: {c}");
                }
            }
        }
    })
}

/// `[B, S, H, D]` memory (as projections produce it) viewed as `[B, H, S, D]` for q, k, v and
/// out: no copy, the same result as dense tensors, and the out buffer's other elements (a
/// larger pitch between rows) left alone.
pub fn attention_strided_views<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => strided_views::<R, E>(client))
}

fn strided_views<R: Runtime, E: Element>(client: &ComputeClient<R>) {
    let p: Problem = (2, 4, 2, 19, 23, 64, true);
    let (b, h, hk, sq, sk, d, _) = p;
    let q: Vec<E> = seeded(5, b * h * sq * d, -1.0, 1.0);
    let k: Vec<E> = seeded(6, b * hk * sk * d, -1.0, 1.0);
    let v: Vec<E> = seeded(7, b * hk * sk * d, -1.0, 1.0);
    // Dense [B, H, S, D] → [B, S, H, D] memory.
    let to_bshd = |x: &[E], heads: usize, s: usize| {
        let mut y = vec![E::from_f64(0.0); x.len()];
        for bi in 0..b {
            for hi in 0..heads {
                for si in 0..s {
                    let src = ((bi * heads + hi) * s + si) * d;
                    let dst = ((bi * s + si) * heads + hi) * d;
                    y[dst..dst + d].copy_from_slice(&x[src..src + d]);
                }
            }
        }
        y
    };
    let bshd =
        |heads: usize, s: usize, pitch: usize| vec![s * heads * pitch, pitch, heads * pitch, 1];
    let (dq, dk, dv) = (
        DeviceTensor::from_slice(client, &to_bshd(&q, h, sq), &[b * sq * h * d]).unwrap(),
        DeviceTensor::from_slice(client, &to_bshd(&k, hk, sk), &[b * sk * hk * d]).unwrap(),
        DeviceTensor::from_slice(client, &to_bshd(&v, hk, sk), &[b * sk * hk * d]).unwrap(),
    );
    // out rows padded to 80 (a pitch wider than D), [B, S, H, 80] memory.
    let pitch = 80;
    let out = poisoned::<R, E>(client, &[b * sq * h * pitch]).unwrap();
    cubeport::attention_into(
        client,
        TensorRef::new(dq.handle(), &[b, h, sq, d], &bshd(h, sq, d), E::DTYPE),
        TensorRef::new(dk.handle(), &[b, hk, sk, d], &bshd(hk, sk, d), E::DTYPE),
        TensorRef::new(dv.handle(), &[b, hk, sk, d], &bshd(hk, sk, d), E::DTYPE),
        TensorMut::new(out.handle(), &[b, h, sq, d], &bshd(h, sq, pitch), E::DTYPE),
        None,
        AttentionOptions::default().causal(),
    )
    .unwrap();
    let got = out.to_vec(client).unwrap();
    let scale = 1.0 / (d as f64).sqrt();
    let (want, _, tol) = reference_of::<E>(&to_f64(&q), &to_f64(&k), &to_f64(&v), p, scale);
    let mut dense = vec![0.0f64; want.len()];
    for bi in 0..b {
        for hi in 0..h {
            for si in 0..sq {
                let src = ((bi * sq + si) * h + hi) * pitch;
                for dd in 0..pitch {
                    let g = got[src + dd];
                    if dd >= d {
                        assert_eq!(
                            g.to_f64(),
                            poison::<E>().to_f64(),
                            "padding written at {bi},{si},{hi},{dd}"
                        );
                    } else {
                        dense[((bi * h + hi) * sq + si) * d + dd] = g.to_f64();
                    }
                }
            }
        }
    }
    let c = compare_each(&dense, &want, |i| tol[i]);
    assert!(
        c.ok(),
        "attention on [B, S, H, D] views on {}: {c}",
        R::name(client)
    );
}

/// NaN in a query row, a key and a value; rows that see no key (causal, Sq > Sk); a huge score
/// range (the online rescaling must not overflow). The NaN value sits at key 0, which every row
/// that sees anything sees (values of masked keys must be finite for the tensor-core kernel).
pub fn attention_edge_rows<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        for causal in [false, true] {
            let p: Problem = (1, 2, 1, 40, 37, 32, causal);
            let (b, h, hk, sq, sk, d, _) = p;
            let mut q: Vec<f32> = seeded(11, b * h * sq * d, -1.0, 1.0);
            let mut k: Vec<f32> = seeded(12, b * hk * sk * d, -1.0, 1.0);
            let mut v: Vec<f32> = seeded(13, b * hk * sk * d, -1.0, 1.0);
            q[5 * d + 3] = f32::NAN; // head 0, row 5
            k[30 * d + 1] = f32::NAN; // key 30: seen by every row (non-causal) or rows ≥ 33
            v[7] = f32::NAN; // value 0, dim 7: NaN there for every row that sees anything
            for x in &mut q[(sq + 9) * d..(sq + 10) * d] {
                *x *= 60.0; // head 1, row 9: scores of ±60 · 32 / √32
            }
            let cast = |x: &[f32]| x.iter().map(|&v| E::from_f64(v as f64)).collect::<Vec<E>>();
            let (q, k, v) = (cast(&q), cast(&k), cast(&v));
            let scale = 1.0 / (d as f64).sqrt();
            let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
            let (want, want_lse, tol) = reference_of::<E>(&qf, &kf, &vf, p, scale);
            for variant in variants(client, dtype, d) {
                let (got, lse) = run::<R, E>(client, (&q, &k, &v), p, variant, None);
                let c = compare_each(&got, &want, |i| tol[i]);
                assert!(
                    c.ok(),
                    "attention edge rows {dtype} causal={causal} {variant:?} on {}: {c}",
                    R::name(client)
                );
                let c = compare_each(&lse, &want_lse, |_| lse_tolerance(sk, 60.0 * scale * d as f64));
                assert!(c.ok(), "attention edge lse {dtype} causal={causal} {variant:?}: {c}");
            }
        }
    })
}

/// A larger problem against cubeport's own unfused composition: `S = (scale·Q)·Kᵀ` by matmul
/// (K read through a transposed view), `P = softmax(S)`, `O = P·V`.
pub fn attention_matches_unfused<R: Runtime>(client: &ComputeClient<R>) {
    let (h, s, d) = (2, 512, 64);
    let scale = 1.0 / (d as f32).sqrt();
    let q: Vec<f32> = seeded(21, h * s * d, -1.0, 1.0);
    let k: Vec<f32> = seeded(22, h * s * d, -1.0, 1.0);
    let v: Vec<f32> = seeded(23, h * s * d, -1.0, 1.0);
    let qs: Vec<f32> = q.iter().map(|x| x * scale).collect();
    let dqs = DeviceTensor::from_slice(client, &qs, &[h, s, d]).unwrap();
    let dk = DeviceTensor::from_slice(client, &k, &[h, s, d]).unwrap();
    let dv = DeviceTensor::from_slice(client, &v, &[h, s, d]).unwrap();
    let mut scores = DeviceTensor::<f32>::empty(client, &[h, s, s]).unwrap();
    let kt = TensorRef::new(dk.handle(), &[h, d, s], &[s * d, 1, d], DType::F32);
    cubeport::matmul_into(client, dqs.as_ref(), kt, scores.as_mut()).unwrap();
    let probs = cubeport::softmax(client, &scores).unwrap();
    let mut unfused = DeviceTensor::<f32>::empty(client, &[h, s, d]).unwrap();
    cubeport::matmul_into(client, probs.as_ref(), dv.as_ref(), unfused.as_mut()).unwrap();

    let dq = DeviceTensor::from_slice(client, &q, &[1, h, s, d]).unwrap();
    fn view(t: &DeviceTensor<f32>, shape: [usize; 4]) -> TensorRef<'_> {
        TensorRef::contiguous(t.handle(), &shape, DType::F32)
    }
    let mut fused = poisoned::<R, f32>(client, &[1, h, s, d]).unwrap();
    cubeport::attention_into(
        client,
        dq.as_ref(),
        view(&dk, [1, h, s, d]),
        view(&dv, [1, h, s, d]),
        fused.as_mut(),
        None,
        AttentionOptions::default(),
    )
    .unwrap();
    let shape = AttentionShape {
        batch: 1,
        heads: h,
        kv_heads: h,
        sq: s,
        sk: s,
        head_dim: d,
    };
    let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
    let mags = reference::attention_magnitudes(&qf, &kf, &vf, shape, false, scale as f64);
    let got = to_f64(&fused.to_vec(client).unwrap());
    let want = to_f64(&unfused.to_vec(client).unwrap());
    // Each is within one tolerance of f64, so they agree within twice it.
    let c = compare_each(&got, &want, |i| {
        Tolerance::attention(DType::F32, s, d, mags[i], scale as f64 * d as f64).doubled()
    });
    assert!(
        c.ok(),
        "fused attention vs matmul → softmax → matmul on {}: {c}",
        R::name(client)
    );
}

/// The owned form on a grouped-query problem, and the variant query.
pub fn attention_owned_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    with_dtype!(dtype, E => {
        let p: Problem = (1, 4, 1, 9, 21, 64, false);
        let (b, h, hk, sq, sk, d, _) = p;
        let q: Vec<E> = seeded(31, b * h * sq * d, -1.0, 1.0);
        let k: Vec<E> = seeded(32, b * hk * sk * d, -1.0, 1.0);
        let v: Vec<E> = seeded(33, b * hk * sk * d, -1.0, 1.0);
        let dq = DeviceTensor::from_slice(client, &q, &[b, h, sq, d]).unwrap();
        let dk = DeviceTensor::from_slice(client, &k, &[b, hk, sk, d]).unwrap();
        let dv = DeviceTensor::from_slice(client, &v, &[b, hk, sk, d]).unwrap();
        let opts = AttentionOptions::default().scale(0.3);
        let out = cubeport::attention(client, &dq, &dk, &dv, opts).unwrap();
        assert_eq!(out.shape(), &[b, h, sq, d]);
        let (want, _, tol) = reference_of::<E>(&to_f64(&q), &to_f64(&k), &to_f64(&v), p, 0.3);
        let c = compare_each(&to_f64(&out.to_vec(client).unwrap()), &want, |i| tol[i]);
        assert!(c.ok(), "owned attention {dtype} on {}: {c}", R::name(client));
        let v = cubeport::attention_variant(client, &dq.as_ref(), &dk.as_ref(), opts).unwrap();
        // The tensor-core kernel wherever it runs, else the SIMT kernel.
        let mma = variants(client, dtype, d).contains(&Some(AttentionVariant::MMA));
        assert_eq!(matches!(v, AttentionVariant::Mma { .. }), mma, "{v:?}");
        // On tensor cores: two row tiles per plane once the 128-row cubes cover every SM (32
        // keys, or 64 for non-causal head dims up to 64); 16 rows for short query sequences.
        if mma {
            let sms = cubeport::caps_of(client).num_sms.unwrap_or(1) as usize;
            for (sq, d, causal, want) in [
                (129, 64, false, Some(64)),
                (129, 64, true, Some(32)),
                (129, 128, false, Some(32)),
                (64, 128, false, None),
            ] {
                let q = DeviceTensor::<E>::empty(client, &[1, sms, sq, d]).unwrap();
                let mut opts = AttentionOptions::default();
                if causal {
                    opts = opts.causal();
                }
                let v = cubeport::attention_variant(client, &q.as_ref(), &q.as_ref(), opts)
                    .unwrap();
                let expect = want.map_or(AttentionVariant::MMA, |keys| AttentionVariant::Mma {
                    warps: 4,
                    keys,
                    rows: 32,
                });
                assert_eq!(v, expect, "sq {sq}, d {d}, causal {causal}");
            }
        }
    })
}

fn expect_shape_error(r: Result<(), Error>, what: &str, ok: impl Fn(&ShapeError) -> bool) {
    match &r {
        Err(Error::Shape { source, .. }) if ok(source) => {}
        _ => panic!("{what}: {r:?}"),
    }
}

/// Every validation error, the head-dim limit as `Unsupported`, and nothing written.
pub fn attention_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let t = |shape: &[usize]| {
        DeviceTensor::from_slice(
            client,
            &seeded::<f32>(1, shape.iter().product(), -1.0, 1.0),
            shape,
        )
        .unwrap()
    };
    let q = t(&[1, 4, 8, 64]);
    let k = t(&[1, 2, 8, 64]);
    let mut out = poisoned::<R, f32>(client, &[1, 4, 8, 64]).unwrap();
    let opts = AttentionOptions::default();
    let call = |q: TensorRef<'_>,
                k: TensorRef<'_>,
                v: TensorRef<'_>,
                o: TensorMut<'_>,
                lse: Option<TensorMut<'_>>| {
        cubeport::attention_into(client, q, k, v, o, lse, opts)
    };
    let k3 = t(&[1, 3, 8, 64]);
    expect_shape_error(
        call(q.as_ref(), k3.as_ref(), k3.as_ref(), out.as_mut(), None),
        "Hkv ∤ H",
        |e| matches!(e, ShapeError::ShapeMismatch { name: "k", .. }),
    );
    let kd = t(&[1, 2, 8, 32]);
    expect_shape_error(
        call(q.as_ref(), kd.as_ref(), kd.as_ref(), out.as_mut(), None),
        "head dims",
        |e| matches!(e, ShapeError::ShapeMismatch { name: "k", .. }),
    );
    let v9 = t(&[1, 2, 9, 64]);
    expect_shape_error(
        call(q.as_ref(), k.as_ref(), v9.as_ref(), out.as_mut(), None),
        "v unlike k",
        |e| matches!(e, ShapeError::ShapeMismatch { name: "v", .. }),
    );
    let q3 = TensorRef::contiguous(q.handle(), &[4, 8, 64], DType::F32);
    expect_shape_error(
        call(q3, k.as_ref(), k.as_ref(), out.as_mut(), None),
        "rank",
        |e| matches!(e, ShapeError::Rank { name: "q", .. }),
    );
    let k16 = TensorRef::contiguous(k.handle(), &[1, 2, 8, 64], DType::F16);
    expect_shape_error(
        call(q.as_ref(), k16.clone(), k16, out.as_mut(), None),
        "k dtype",
        |e| matches!(e, ShapeError::DTypeMismatch { name: "k", .. }),
    );
    let o_small = TensorMut::contiguous(out.handle(), &[1, 4, 8, 32], DType::F32);
    expect_shape_error(
        call(q.as_ref(), k.as_ref(), k.as_ref(), o_small, None),
        "out shape",
        |e| matches!(e, ShapeError::ShapeMismatch { name: "out", .. }),
    );
    let overlapping = TensorMut::new(out.handle(), &[1, 4, 8, 64], &[2048, 0, 64, 1], DType::F32);
    expect_shape_error(
        call(q.as_ref(), k.as_ref(), k.as_ref(), overlapping, None),
        "overlapping out",
        |e| matches!(e, ShapeError::NotContiguous { name: "out", .. }),
    );
    let q_col = TensorRef::new(q.handle(), &[1, 4, 8, 64], &[2048, 512, 1, 8], DType::F32);
    expect_shape_error(
        call(q_col, k.as_ref(), k.as_ref(), out.as_mut(), None),
        "D stride",
        |e| matches!(e, ShapeError::NotContiguous { name: "q", .. }),
    );
    let q_far = TensorRef::new(q.handle(), &[1, 4, 8, 64], &[0, 4096, 64, 1], DType::F32);
    expect_shape_error(
        call(q_far, k.as_ref(), k.as_ref(), out.as_mut(), None),
        "q past its buffer",
        |e| matches!(e, ShapeError::BufferTooSmall { name: "q", .. }),
    );
    let mut lse_bad = poisoned::<R, f32>(client, &[1, 4, 7]).unwrap();
    expect_shape_error(
        call(
            q.as_ref(),
            k.as_ref(),
            k.as_ref(),
            out.as_mut(),
            Some(lse_bad.as_mut()),
        ),
        "lse",
        |e| matches!(e, ShapeError::ShapeMismatch { name: "lse", .. }),
    );
    let q_empty = TensorRef::contiguous(q.handle(), &[1, 4, 0, 64], DType::F32);
    let o_empty = TensorMut::contiguous(out.handle(), &[1, 4, 0, 64], DType::F32);
    expect_shape_error(
        call(q_empty, k.as_ref(), k.as_ref(), o_empty, None),
        "empty",
        |e| matches!(e, ShapeError::Empty { name: "q", .. }),
    );
    let r = cubeport::attention_into(
        client,
        q.as_ref(),
        k.as_ref(),
        k.as_ref(),
        out.as_mut(),
        None,
        opts.scale(f32::INFINITY),
    );
    expect_shape_error(r, "scale", |e| {
        matches!(e, ShapeError::InvalidParameter { name: "scale", .. })
    });
    let q256 = t(&[1, 1, 4, 256]);
    let mut o256 = poisoned::<R, f32>(client, &[1, 1, 4, 256]).unwrap();
    let r = cubeport::attention_into(
        client,
        q256.as_ref(),
        q256.as_ref(),
        q256.as_ref(),
        o256.as_mut(),
        None,
        opts,
    );
    assert!(
        matches!(r, Err(Error::Unsupported { .. })),
        "D = 256: {r:?}"
    );
    if cubeport::caps_of(client).plane.fixed_width().is_none() {
        let r = cubeport::attention_with(
            client,
            q.as_ref(),
            k.as_ref(),
            k.as_ref(),
            out.as_mut(),
            None,
            opts,
            AttentionVariant::Simt(ReducePath::Plane),
        );
        assert!(
            matches!(r, Err(Error::Unsupported { .. })),
            "plane without a fixed width: {r:?}"
        );
    }
    for (what, t) in [("out", &out), ("o256", &o256), ("lse", &lse_bad)] {
        assert!(
            t.to_vec(client)
                .unwrap()
                .iter()
                .all(|&v| v == poison::<f32>()),
            "a rejected call wrote {what}"
        );
    }
}
