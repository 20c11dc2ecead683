//! Property tests: random shapes, axes and values — NaN, ±inf, signed zeros, subnormals, huge
//! values among ordinary ones — against the f64 reference (rounded to f32). Every call either matches the
//! reference or returns a typed error; none panics. Deterministic (ChaCha, fixed seed) and
//! bounded (a few dozen cases per family) so CI stays fast.

use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Reduction, Tolerance};
use cubeport::testing::{compare_each, poisoned, to_f64};
use cubeport::{Activation, DeviceTensor, Error, GeluApprox, SoftmaxKind};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        20 => -8.0f32..8.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(-0.0f32),
        1 => Just(1.0e-40f32),
        // Huge but not at the edge: sums of a few dozen stay finite in f32. Intermediate f32
        // overflow (3e38 + 3e38) is inf by the documented f32-arithmetic contract, while the
        // f64 reference stays finite; that boundary is not what these properties test.
        1 => Just(1.0e30f32),
        1 => Just(-1.0e30f32),
    ]
}

fn values(n: usize) -> impl Strategy<Value = Vec<f32>> {
    proptest::collection::vec(value(), n)
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..40, 1..4)
}

pub fn activation_props<R: Runtime>(client: &ComputeClient<R>) {
    let acts = [
        Activation::Identity,
        Activation::ReluScale { scale: 0.5 },
        Activation::Gelu(GeluApprox::Tanh),
        Activation::Gelu(GeluApprox::Erf),
    ];
    let strategy = (shape(), 0usize..4, 0usize..3).prop_flat_map(|(shape, act, bias_kind)| {
        let n: usize = shape.iter().product();
        let last = *shape.last().unwrap_or(&1);
        // 0: full bias, 1: one row, 2: a wrong shape (must be a typed error)
        let bias_shape = match bias_kind {
            0 => shape.clone(),
            1 => vec![last],
            _ => vec![last + 1],
        };
        let nb: usize = bias_shape.iter().product();
        (
            Just(shape),
            Just(bias_shape),
            Just(act),
            values(n),
            values(nb),
        )
    });
    runner(32)
        .run(&strategy, |(shape, bias_shape, act, x, b)| {
            let act = acts[act];
            let dx = DeviceTensor::from_slice(client, &x, &shape).unwrap();
            let db = DeviceTensor::from_slice(client, &b, &bias_shape).unwrap();
            let mut dy = poisoned::<R, f32>(client, &shape).unwrap();
            match cubeport::bias_activation_into(client, dx.as_ref(), db.as_ref(), dy.as_mut(), act)
            {
                Ok(()) => {
                    let got = to_f64(&dy.to_vec(client).unwrap());
                    let want: Vec<f64> = reference::bias_activation(&to_f64(&x), &to_f64(&b), act)
                        .into_iter()
                        .map(|v| v as f32 as f64)
                        .collect();
                    let c = compare_each(&got, &want, |_| {
                        Tolerance::elementwise(cubeport::DType::F32)
                    });
                    prop_assert!(c.ok(), "{} {shape:?} bias {bias_shape:?}: {c}", act.name());
                }
                Err(Error::Shape { .. }) => {
                    prop_assert!(bias_shape != shape && bias_shape != [*shape.last().unwrap()])
                }
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
            Ok(())
        })
        .unwrap();
}

pub fn reduce_props<R: Runtime>(client: &ComputeClient<R>) {
    let strategy = (shape(), 0usize..5, 0usize..4).prop_flat_map(|(shape, axis, op)| {
        let n: usize = shape.iter().product();
        (Just(shape), Just(axis), Just(op), values(n))
    });
    runner(32)
        .run(&strategy, |(shape, axis, op, x)| {
            let op = Reduction::ALL[op];
            let rank = shape.len();
            let axis = if axis == 4 { None } else { Some(axis) };
            let out_shape: Vec<usize> = match axis {
                None => vec![1],
                Some(a) if a < rank => shape
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != a)
                    .map(|(_, &d)| d)
                    .collect(),
                Some(_) => vec![1],
            };
            let dx = DeviceTensor::from_slice(client, &x, &shape).unwrap();
            let mut dy = poisoned::<R, f32>(client, &out_shape).unwrap();
            match cubeport::reduce_into(client, dx.as_ref(), dy.as_mut(), axis, op) {
                Ok(()) => {
                    let xf = to_f64(&x);
                    let want: Vec<f64> = reference::reduce(&xf, &shape, axis, op)
                        .into_iter()
                        .map(|v| v as f32 as f64)
                        .collect();
                    let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
                    let sum_abs = reference::reduce(&abs, &shape, axis, Reduction::Sum);
                    let k = axis.map_or(x.len(), |a| shape[a]);
                    let got = to_f64(&dy.to_vec(client).unwrap());
                    // Subnormal inputs may be flushed to zero (NVIDIA's Vulkan driver does), so
                    // max/min agree to the smallest normal f32 rather than bit-exactly.
                    let c = compare_each(&got, &want, |i| {
                        let t = Tolerance::reduce(op, cubeport::DType::F32, k, sum_abs[i]);
                        Tolerance {
                            atol: t.atol.max(f32::MIN_POSITIVE as f64),
                            ..t
                        }
                    });
                    prop_assert!(c.ok(), "{} {shape:?} axis {axis:?}: {c}", op.name());
                }
                Err(Error::Shape { .. }) => prop_assert!(axis.is_some_and(|a| a >= rank)),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
            Ok(())
        })
        .unwrap();
}

pub fn softmax_transpose_props<R: Runtime>(client: &ComputeClient<R>) {
    let strategy = (1usize..20, 1usize..300, any::<bool>())
        .prop_flat_map(|(rows, len, log)| (Just(rows), Just(len), Just(log), values(rows * len)));
    runner(24)
        .run(&strategy, |(rows, len, log, x)| {
            let dx = DeviceTensor::from_slice(client, &x, &[rows, len]).unwrap();
            let mut dy = poisoned::<R, f32>(client, &[rows, len]).unwrap();
            let kind = SoftmaxKind::ALL[usize::from(log)];
            match kind {
                SoftmaxKind::LogSoftmax => {
                    cubeport::log_softmax_into(client, dx.as_ref(), dy.as_mut(), 1).unwrap()
                }
                _ => cubeport::softmax_into(client, dx.as_ref(), dy.as_mut(), 1).unwrap(),
            }
            let got = to_f64(&dy.to_vec(client).unwrap());
            let (want, tol) =
                super::softmax::reference_of(kind, &to_f64(&x), len, cubeport::DType::F32);
            let want: Vec<f64> = want.into_iter().map(|v| v as f32 as f64).collect();
            let c = compare_each(&got, &want, |_| tol);
            prop_assert!(c.ok(), "{kind} {rows}x{len}: {c}");

            let mut dt = poisoned::<R, f32>(client, &[len, rows]).unwrap();
            cubeport::transpose_into(client, dx.as_ref(), dt.as_mut()).unwrap();
            let got = to_f64(&dt.to_vec(client).unwrap());
            let want = reference::transpose(&to_f64(&x), 1, rows, len);
            let c = compare_each(&got, &want, |_| Tolerance::EXACT);
            prop_assert!(c.ok(), "transpose {rows}x{len}: {c}");
            Ok(())
        })
        .unwrap();
}

/// RMSNorm, LayerNorm and the residual add + RMSNorm on random shapes and edge values (rows of
/// NaN, ±inf, huge values whose squares overflow f32), with weights and biases of the right
/// shape or a wrong one (a typed error).
pub fn norm_props<R: Runtime>(client: &ComputeClient<R>) {
    use cubeport::NormKind;
    const EPS: f32 = 1e-5;
    let strategy = (shape(), 0usize..3, 0usize..3).prop_flat_map(|(shape, op, param)| {
        let n: usize = shape.iter().product();
        let last = *shape.last().unwrap_or(&1);
        // 0: no weight, 1: a row, 2: a wrong length (must be a typed error)
        let p_len = if param == 2 { last + 1 } else { last };
        let ordinary = proptest::collection::vec(-2.0f32..2.0, p_len);
        (
            Just(shape),
            Just(op),
            Just(param),
            values(n),
            values(n),
            ordinary.clone(),
            ordinary,
        )
    });
    runner(32)
        .run(&strategy, |(shape, op, param, x, r, w, b)| {
            let len = *shape.last().unwrap_or(&1);
            let dx = DeviceTensor::from_slice(client, &x, &shape).unwrap();
            let dr = DeviceTensor::from_slice(client, &r, &shape).unwrap();
            let dw = DeviceTensor::from_slice(client, &w, &[w.len()]).unwrap();
            let db = DeviceTensor::from_slice(client, &b, &[b.len()]).unwrap();
            let mut dy = poisoned::<R, f32>(client, &shape).unwrap();
            let mut ds = poisoned::<R, f32>(client, &shape).unwrap();
            let weight = (param > 0).then(|| dw.as_ref());
            let kind = if op == 1 {
                NormKind::Layer
            } else {
                NormKind::Rms
            };
            let result = match op {
                0 => cubeport::rms_norm_into(client, dx.as_ref(), weight, dy.as_mut(), EPS),
                1 => cubeport::layer_norm_into(
                    client,
                    dx.as_ref(),
                    weight,
                    (param > 0).then(|| db.as_ref()),
                    dy.as_mut(),
                    EPS,
                ),
                _ => cubeport::add_rms_norm_into(
                    client,
                    dx.as_ref(),
                    dr.as_ref(),
                    weight,
                    ds.as_mut(),
                    dy.as_mut(),
                    EPS,
                ),
            };
            match result {
                Ok(()) => {
                    prop_assert!(param < 2, "a wrong-length weight was accepted");
                    let mut xf = to_f64(&x);
                    if op == 2 {
                        xf = xf
                            .iter()
                            .zip(&r)
                            .map(|(a, b)| (a + *b as f64) as f32 as f64)
                            .collect();
                        let got_sum = to_f64(&ds.to_vec(client).unwrap());
                        // Exact, but for subnormal sums that devices may flush to zero
                        // (NVIDIA's Vulkan driver does).
                        let flush = Tolerance {
                            atol: f32::MIN_POSITIVE as f64,
                            rtol: 0.0,
                        };
                        let c = compare_each(&got_sum, &xf, |_| flush);
                        prop_assert!(c.ok(), "add_rms_norm sum {shape:?}: {c}");
                    }
                    let (wf, bf) = (to_f64(&w), to_f64(&b));
                    let (wo, bo) = (
                        (param > 0).then_some(&wf[..]),
                        (param > 0 && op == 1).then_some(&bf[..]),
                    );
                    let eps = EPS as f64;
                    let want: Vec<f64> = match kind {
                        NormKind::Layer => reference::layer_norm(&xf, wo, bo, len, eps),
                        _ => reference::rms_norm(&xf, wo, len, eps),
                    }
                    .into_iter()
                    .map(|v| v as f32 as f64)
                    .collect();
                    let mags = reference::norm_magnitudes(&xf, wo, bo, len, eps, op == 1);
                    let got = to_f64(&dy.to_vec(client).unwrap());
                    let c = compare_each(&got, &want, |i| {
                        let t = Tolerance::norm(cubeport::DType::F32, len, mags[i]);
                        // Subnormal inputs may be flushed to zero (NVIDIA's Vulkan driver does).
                        Tolerance {
                            atol: t.atol.max(f32::MIN_POSITIVE as f64 * 1e3),
                            ..t
                        }
                    });
                    prop_assert!(c.ok(), "{kind} op {op} {shape:?} weight {param}: {c}");
                }
                Err(Error::Shape { .. }) => prop_assert!(param == 2, "typed error for valid input"),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
            Ok(())
        })
        .unwrap();
}

/// Matmul over random shapes: 1–39 rows and columns, depth 1–1199 (deep enough for every
/// narrow form to split its depth), either operand transposed, either or both batched, the fused epilogue or not, f32 or f16 (where the
/// device has it): the automatic choice and the few-row and few-column kernels (`skinny`,
/// `narrow`, `narrow_staged`, whose grids and depth splits follow the shape) each against f64 into a poisoned
/// output. Only the shapes are random here: `variants_match` draws seeded values in [-1, 1]
/// (matmul's NaN and ±inf semantics are not a property yet).
pub fn matmul_props<R: Runtime>(client: &ComputeClient<R>) {
    use crate::suite::matmul::{Problem, variants_match};
    use cubeport::{DType, MatmulVariant};
    let caps = cubeport::caps_of(client);
    let f16 = caps.f16;
    let strategy = (
        1usize..40,
        1usize..40,
        1usize..1200,
        any::<bool>(),
        any::<bool>(),
        (0usize..3, 0usize..3),
        any::<bool>(),
        any::<bool>(),
    );
    let variants = [
        None,
        Some(MatmulVariant::Narrow),
        Some(MatmulVariant::NarrowStaged),
        Some(MatmulVariant::NarrowPlane),
        Some(MatmulVariant::Skinny),
    ];
    runner(24)
        .run(
            &strategy,
            |(m, n, k, trans_a, trans_b, (batch_a, batch_b), fused, half)| {
                // Batches of 0 (rank 2), 1 or 2; 2 against 0 or 1 broadcasts the other.
                let p = Problem {
                    batch_a,
                    batch_b,
                    m,
                    n,
                    k,
                    trans_a,
                    trans_b,
                };
                let dtype = if half && f16 { DType::F16 } else { DType::F32 };
                variants_match(client, dtype, p, fused, &variants);
                // The tensor-core few-column kernel where the device runs it (halves, manual MMA).
                if MatmulVariant::NARROW_MMA.runs_on(&caps, dtype) {
                    variants_match(client, dtype, p, fused, &[Some(MatmulVariant::NARROW_MMA)]);
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Attention values: ordinary ones with NaN, signed zeros and subnormals among them (±∞ and
/// huge values would overflow the scores, whose f32 arithmetic the reference does not model).
fn attention_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        40 => -2.0f32..2.0,
        1 => Just(f32::NAN),
        1 => Just(-0.0f32),
        1 => Just(1.0e-40f32),
    ]
}

pub fn attention_props<R: Runtime>(client: &ComputeClient<R>) {
    use cubeport::AttentionOptions;
    // (batch, kv heads, group, sq, sk, head dim, causal, scale, broken): `broken` gives the
    // keys a head count that does not divide the queries' (must be a typed error).
    let dims = (
        1usize..3,
        1usize..3,
        1usize..3,
        1usize..40,
        1usize..60,
        prop_oneof![1usize..33, Just(64usize)],
        any::<bool>(),
        prop_oneof![Just(None), (0.05f32..1.0).prop_map(Some)],
        prop_oneof![9 => Just(false), 1 => Just(true)],
    );
    let strategy = dims.prop_flat_map(|(b, hk, g, sq, sk, d, causal, scale, broken)| {
        let h = hk * g;
        // A key head count that divides no query head count of at least 2: h + 1.
        let hk = if broken { h + 1 } else { hk };
        let v = |n| proptest::collection::vec(attention_value(), n);
        (
            Just((b, h, hk, sq, sk, d, causal, scale, broken)),
            v(b * h * sq * d),
            v(b * hk * sk * d),
            v(b * hk * sk * d),
        )
    });
    runner(24)
        .run(
            &strategy,
            |((b, h, hk, sq, sk, d, causal, scale, broken), q, k, v)| {
                let dq = DeviceTensor::from_slice(client, &q, &[b, h, sq, d]).unwrap();
                let dk = DeviceTensor::from_slice(client, &k, &[b, hk, sk, d]).unwrap();
                let dv = DeviceTensor::from_slice(client, &v, &[b, hk, sk, d]).unwrap();
                let mut out = poisoned::<R, f32>(client, &[b, h, sq, d]).unwrap();
                let mut opts = AttentionOptions::default();
                if causal {
                    opts = opts.causal();
                }
                if let Some(s) = scale {
                    opts = opts.scale(s);
                }
                let what =
                    format!("B{b} H{h}/{hk} Sq{sq} Sk{sk} D{d} causal {causal} scale {scale:?}");
                let result = cubeport::attention_into(
                    client,
                    dq.as_ref(),
                    dk.as_ref(),
                    dv.as_ref(),
                    out.as_mut(),
                    None,
                    opts,
                );
                match result {
                    Ok(()) => {
                        prop_assert!(
                            !broken,
                            "{what}: key heads not dividing the query heads were accepted"
                        );
                        let s = scale.map_or(1.0 / (d as f64).sqrt(), f64::from);
                        let (want, _, tol) = crate::suite::attention::reference_of::<f32>(
                            &to_f64(&q),
                            &to_f64(&k),
                            &to_f64(&v),
                            (b, h, hk, sq, sk, d, causal),
                            s,
                        );
                        let got = to_f64(&out.to_vec(client).unwrap());
                        let c = compare_each(&got, &want, |i| {
                            let t = tol[i];
                            // Subnormal inputs may be flushed to zero (NVIDIA's Vulkan driver does).
                            Tolerance {
                                atol: t.atol.max(f32::MIN_POSITIVE as f64 * 1e3),
                                ..t
                            }
                        });
                        prop_assert!(c.ok(), "{what}: {c}");
                    }
                    Err(Error::Shape { .. }) => {
                        prop_assert!(broken, "{what}: typed error for valid input")
                    }
                    Err(e) => prop_assert!(false, "{what}: unexpected error {e}"),
                }
                Ok(())
            },
        )
        .unwrap();
}
