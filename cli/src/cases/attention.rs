use super::*;

/// The attention problems timed: `(batch, heads, S, D)` with `Sq = Sk = S`. Full: the
/// issue's B4 H32 S4096 at D 128 and 64 (the PyTorch anchors' shapes); Quick: one small one.
pub fn attention_shapes(scale: Scale) -> &'static [(usize, usize, usize, usize)] {
    match scale {
        Scale::Quick => &[(1, 2, 256, 64)],
        Scale::Full => &[(4, 32, 4096, 128), (4, 32, 4096, 64)],
    }
}

/// Attention forward (the automatic variant; where that is the tensor-core kernel, its
/// 32-rows-per-plane and 8-plane shapes and, not causal, the SIMT kernel, forced for comparison) in f16 and bf16 where the device has them (f32 on devices with neither), causal
/// and not. FLOPs: `4·B·H·S²·D`, halved when causal. Each case checks 24 sampled rows against
/// an f64 evaluation of those rows before it is returned.
///
/// # Errors
/// Allocation or launch errors; a sampled row outside the attention tolerance.
pub fn attention_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    attention_cases_for(client, &[DType::F16, DType::BF16], attention_shapes(scale))
}

/// [`attention_cases`] for these dtypes (those the device runs; f32 where it runs neither f16
/// nor bf16) and `(batch, heads, S, D)` shapes.
///
/// # Errors
/// As [`attention_cases`].
pub fn attention_cases_for<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    dtypes: &[DType],
    shapes: &[(usize, usize, usize, usize)],
) -> Result<Vec<Case<'c>>, Error> {
    let caps = cubeport::caps_of(client);
    let mut dtypes: Vec<DType> = dtypes
        .iter()
        .copied()
        .filter(|d| d.is_supported_by(&caps))
        .collect();
    if dtypes.is_empty() {
        dtypes.push(DType::F32);
    }
    let mut cases = Vec::new();
    for dtype in dtypes {
        for &shape in shapes {
            match dtype {
                DType::F16 => attention_cases_of::<R, half::f16>(client, shape, &mut cases)?,
                DType::BF16 => attention_cases_of::<R, half::bf16>(client, shape, &mut cases)?,
                _ => attention_cases_of::<R, f32>(client, shape, &mut cases)?,
            }
        }
    }
    Ok(cases)
}

fn attention_cases_of<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    (b, h, s, d): (usize, usize, usize, usize),
    cases: &mut Vec<Case<'c>>,
) -> Result<(), Error> {
    use cubeport::{AttentionOptions, AttentionVariant, ReducePath};
    let n = b * h * s * d;
    let q: Vec<E> = seeded(97, n, -1.0, 1.0);
    let k: Vec<E> = seeded(98, n, -1.0, 1.0);
    let v: Vec<E> = seeded(99, n, -1.0, 1.0);
    let shape = [b, h, s, d];
    let dq = Arc::new(DeviceTensor::from_slice(client, &q, &shape)?);
    let dk = Arc::new(DeviceTensor::from_slice(client, &k, &shape)?);
    let dv = Arc::new(DeviceTensor::from_slice(client, &v, &shape)?);
    let (qf, kf, vf) = (to_f64(&q), to_f64(&k), to_f64(&v));
    for causal in [false, true] {
        let mut opts = AttentionOptions::default();
        if causal {
            opts = opts.causal();
        }
        let auto = cubeport::attention_variant(
            client,
            &dq.as_ref().as_ref(),
            &dk.as_ref().as_ref(),
            opts,
        )?;
        let mut variants = vec![(None, format!("auto_{auto}"))];
        let simt = AttentionVariant::Simt(ReducePath::Shared);
        if matches!(auto, AttentionVariant::Mma { .. }) {
            // Shapes timed beside the automatic one: one row tile per plane, two (with 64- and
            // 32-key tiles: FlashAttention-2's 128 × 64 and its sm8x 128 × 32; with 128-key
            // tiles at D ≤ 64, its 128 × 128 there), eight planes.
            let wide = (d <= 64).then_some(AttentionVariant::Mma {
                warps: 4,
                keys: 128,
                rows: 32,
            });
            for v in [
                AttentionVariant::MMA,
                AttentionVariant::Mma {
                    warps: 4,
                    keys: 64,
                    rows: 32,
                },
                AttentionVariant::Mma {
                    warps: 4,
                    keys: 32,
                    rows: 32,
                },
                AttentionVariant::Mma {
                    warps: 8,
                    keys: 64,
                    rows: 16,
                },
            ]
            .into_iter()
            .chain(wide)
            {
                if v != auto {
                    variants.push((Some(v), v.to_string()));
                }
            }
            if !causal {
                variants.push((Some(simt), simt.to_string()));
            }
        }
        for (variant, name) in variants {
            let mut out = poisoned::<R, E>(client, &shape)?;
            let (q, k, v) = (dq.clone(), dk.clone(), dv.clone());
            let go = move |o: &mut DeviceTensor<E>| {
                let (q, k, v) = (
                    q.as_ref().as_ref(),
                    k.as_ref().as_ref(),
                    v.as_ref().as_ref(),
                );
                match variant {
                    None => cubeport::attention_into(client, q, k, v, o.as_mut(), None, opts),
                    Some(var) => {
                        cubeport::attention_with(client, q, k, v, o.as_mut(), None, opts, var)
                    }
                }
            };
            go(&mut out)?;
            let got = to_f64(&out.to_vec(client)?);
            let what = format!("attention {name} {}", E::DTYPE);
            verify_attention_rows(&got, (&qf, &kf, &vf), (b, h, s, d), causal, E::DTYPE, &what)?;
            let flops = 4 * (b * h * s * s * d) as u64 / if causal { 2 } else { 1 };
            cases.push(Case {
                dtype: E::DTYPE,
                family: "attention",
                variant: format!("{}{name}", if causal { "causal_" } else { "" }),
                size: format!("B{b}H{h}S{s}D{d}"),
                bytes: (4 * n * E::DTYPE.size()) as u64,
                flops,
                run: Box::new(move || go(&mut out)),
                own_sync: None,
            });
        }
    }
    Ok(())
}

/// Checks 24 rows spread over batches, heads and positions against f64 (the attention
/// tolerance), so a full-size case is verified without an f64 pass over all of it.
fn verify_attention_rows(
    got: &[f64],
    (q, k, v): (&[f64], &[f64], &[f64]),
    (b, h, s, d): (usize, usize, usize, usize),
    causal: bool,
    dtype: DType,
    what: &str,
) -> Result<(), Error> {
    use cubeport::reference::Tolerance;
    let scale = 1.0 / (d as f64).sqrt();
    for sample in 0..24usize {
        let row = (sample * 7919 + sample * sample * 104_729) % (b * h * s);
        let (bh, i) = (row / s, row % s);
        let seen = if causal { i + 1 } else { s };
        let qi = &q[row * d..(row + 1) * d];
        let scores: Vec<f64> = (0..seen)
            .map(|j| {
                let kj = &k[(bh * s + j) * d..(bh * s + j + 1) * d];
                scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
            })
            .collect();
        let m = scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let p: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
        let l: f64 = p.iter().sum();
        for dd in 0..d {
            let (mut o, mut mag) = (0.0, 0.0);
            for (j, pj) in p.iter().enumerate() {
                let x = v[(bh * s + j) * d + dd];
                o += pj * x;
                mag += pj * x.abs();
            }
            let tol = Tolerance::attention(dtype, seen, d, mag / l, scale * d as f64);
            let g = got[row * d + dd];
            let want = o / l;
            verify(
                (g - want).abs() <= tol.atol + tol.rtol * want.abs(),
                &format!("{what}: row {row} dim {dd} = {g}, want {want}"),
            )?;
        }
    }
    Ok(())
}
