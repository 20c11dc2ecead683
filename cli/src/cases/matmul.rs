use super::*;

/// `m × n × k` products of `E`, verified on a sample of entries against f64 dot products.
///
/// Cases: every variant that runs on the device for the dtype (the naive and 16-tiled kernels
/// only up to 1024 and 4096), plus the fused `bias + GELU(tanh)` epilogue with the automatic
/// variant. Sizes: 1024, 4096, 8192 squares and a ragged `4095 × 4097 × 4093` (`Full`), or 256
/// and `257 × 255 × 129` (`Quick`). FLOPs count 2 per multiply-add.
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    matmul_cases_with::<R, E>(client, scale, &[])
}

/// [`matmul_cases`] plus `extra` variants (e.g. SIMT tile shapes under tuning), each run at
/// every size where the device can run it. A forced variant that fails to launch or to match
/// the sampled reference is reported on stderr and left out (never timed); a failure of the
/// automatic choice is an error.
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases_with<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
    extra: &[cubeport::ops::matmul::MatmulVariant],
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::ops::matmul::MatmulVariant;
    let variants: Vec<MatmulVariant> = MatmulVariant::ALL.iter().chain(extra).copied().collect();
    matmul_cases_for::<R, E>(client, &matmul_sizes(scale), &variants)
}

/// The `(m, n, k)` products the matmul cases run: 1024, 4096, 8192 squares and a ragged
/// `4095 × 4097 × 4093` (`Full`), or 256³ and `257 × 255 × 129` (`Quick`).
pub fn matmul_sizes(scale: Scale) -> Vec<(usize, usize, usize)> {
    match scale {
        Scale::Quick => vec![(256, 256, 256), (257, 255, 129)],
        Scale::Full => vec![
            (1024, 1024, 1024),
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (4095, 4097, 4093),
        ],
    }
}

/// The shape sweep of `cubeport bench`: products with `m` from decode-like to square rows at
/// a fixed `n = k` (`Full`: `m ∈ {1, 8, 64, 512, 4096}`, `n = k = 4096`; `Quick`: `m ∈ {1, 8,
/// 64}`, 512), each with its ragged neighbour (`m` or `m - 1` where `m` is the square's, `n + 1`,
/// `k - 3`: rows that are not 16-byte vectors), then the mirror image of the few-row shapes:
/// few columns (`n ∈ {1, 8, 64}` at `m = k`; a product's small side can be either one, and
/// frameworks run both, e.g. a weight times a handful of vectors). Only the automatic choice
/// runs at these sizes.
pub fn matmul_shape_sizes(scale: Scale) -> Vec<(usize, usize, usize)> {
    let (rows, side): (&[usize], usize) = match scale {
        Scale::Quick => (&[1, 8, 64], 512),
        Scale::Full => (&[1, 8, 64, 512, 4096], 4096),
    };
    let mut sizes: Vec<_> = rows
        .iter()
        .flat_map(|&m| {
            let ragged_m = if m == side { m - 1 } else { m };
            [(m, side, side), (ragged_m, side + 1, side - 3)]
        })
        .collect();
    sizes.extend(NARROW_COLS.iter().map(|&n| (side, n, side)));
    sizes
}

/// The column counts of the sweep's few-column products.
const NARROW_COLS: [usize; 3] = [1, 8, 64];

/// The matmul cases at `sizes` (`m, n, k`) for the automatic choice, its fused
/// `bias + GELU(tanh)` form and each of `variants` that runs on the device for `E` (the naive
/// and 16-tiled kernels only up to 1024 and 4096; with tensor cores, f16/bf16 keep only the
/// tensor-core variants and one CUDA-core kernel). Checked as [`matmul_cases_with`].
///
/// # Errors
/// As [`copy_case`].
pub fn matmul_cases_for<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    sizes: &[(usize, usize, usize)],
    variants: &[cubeport::ops::matmul::MatmulVariant],
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::ops::matmul::{MatmulVariant, matmul_flops};
    use cubeport::{Activation, GeluApprox};
    let caps = cubeport::caps_of(client);
    let dtype = E::DTYPE;
    if !dtype.is_supported_by(&caps) {
        return Ok(Vec::new());
    }
    // A forced variant (one outside the catalogue, whose device-specific entries are left out
    // quietly) that the device cannot run is said once, not dropped in silence: missing from
    // a GPU run's timings it would look like a cut run.
    for v in variants.iter().filter(|v| !MatmulVariant::ALL.contains(v)) {
        if let Err(why) = v.requirements(&caps, dtype) {
            eprintln!("matmul {v} {dtype}: not timed: {why}");
        }
    }
    let mut cases = Vec::new();
    for &(m, n, k) in sizes {
        let a: Vec<E> = seeded(80, m * k, -1.0, 1.0);
        let b: Vec<E> = seeded(81, k * n, -1.0, 1.0);
        let bias: Vec<E> = seeded(82, n, -0.5, 0.5);
        let da = std::sync::Arc::new(DeviceTensor::from_slice(client, &a, &[m, k])?);
        let db = std::sync::Arc::new(DeviceTensor::from_slice(client, &b, &[k, n])?);
        let dbias = std::sync::Arc::new(DeviceTensor::from_slice(client, &bias, &[n])?);
        // 64 sampled entries, f64 dot products (a full reference at 8192³ would take minutes).
        let samples: Vec<(usize, usize)> = seeded_uniform(83, 128, 0.0, 1.0)
            .chunks(2)
            .map(|p| {
                (
                    ((p[0] * m as f32) as usize).min(m - 1),
                    ((p[1] * n as f32) as usize).min(n - 1),
                )
            })
            .collect();
        let check = |c: &DeviceTensor<E>,
                     fused: bool,
                     v: Option<MatmulVariant>,
                     what: &str|
         -> Result<(), Error> {
            let act = Activation::Gelu(GeluApprox::Tanh);
            let epilogue = |dot: f64, j: usize| {
                if fused {
                    reference::bias_activation(&[dot], &[bias[j].to_f64()], act)[0]
                } else {
                    dot
                }
            };
            let entries = samples.iter().copied();
            verify_matmul_entries(
                &c.to_vec(client)?,
                &a,
                &b,
                (n, k),
                entries,
                epilogue,
                v,
                what,
            )
        };
        let size = format!("{m}x{n}x{k}");
        let flops = matmul_flops(1, m, n, k);
        let auto = cubeport::ops::matmul::matmul_variant(client, dtype, 1, (m, n, k))?;
        let mut runs: Vec<(String, Option<MatmulVariant>, bool)> =
            vec![(format!("auto_{auto}"), None, false)];
        for &v in variants {
            let small_only = matches!(v, MatmulVariant::Naive) && m > 1024
                || matches!(v, MatmulVariant::Tiled16) && m > 4096;
            // With tensor cores, f16/bf16 keep one CUDA-core tile kernel for comparison, and
            // the bandwidth-bound few-row and few-column kernels.
            let tc_only = MatmulVariant::Cmma.runs_on(&caps, dtype)
                && !matches!(
                    v,
                    MatmulVariant::Blocked128 {
                        double_buffer: true
                    } | MatmulVariant::Cmma
                        | MatmulVariant::Tc(_)
                        | MatmulVariant::Skinny
                        | MatmulVariant::Narrow
                        | MatmulVariant::NarrowStaged
                        | MatmulVariant::NarrowPlane
                        | MatmulVariant::NarrowMma(_)
                );
            if v.runs_on(&caps, dtype) && !small_only && !tc_only && v != auto {
                runs.push((v.to_string(), Some(v), false));
            }
        }
        runs.push((format!("auto_{auto}_bias_gelu"), None, true));
        for (name, v, fused) in runs {
            let mut dc = poisoned::<R, E>(client, &[m, n])?;
            let (da, db, dbias) = (da.clone(), db.clone(), dbias.clone());
            let go = move |c: &mut DeviceTensor<E>| {
                let bias = fused.then(|| dbias.as_ref().as_ref());
                let act = if fused {
                    Activation::Gelu(GeluApprox::Tanh)
                } else {
                    Activation::Identity
                };
                let (x, y) = (da.as_ref().as_ref(), db.as_ref().as_ref());
                match v {
                    None => cubeport::matmul_fused_into(client, x, y, bias, act, c.as_mut()),
                    Some(v) => cubeport::matmul_with(client, x, y, bias, act, c.as_mut(), v),
                }
            };
            let outcome = go(&mut dc)
                .and_then(|()| check(&dc, fused, v, &format!("matmul {name} {dtype} {size}")));
            match (outcome, v) {
                (Ok(()), _) => {}
                // The automatic choice must be right; a forced variant that fails (a tuning
                // shape, say) is reported and left out of the timings.
                (Err(e), None) => return Err(e),
                (Err(e), Some(_)) => {
                    eprintln!("matmul {name} {dtype} {size}: not timed: {e}");
                    continue;
                }
            }
            cases.push(Case {
                dtype,
                family: "matmul",
                variant: name,
                size: size.clone(),
                bytes: ((m * k + k * n + m * n) * dtype.size()) as u64,
                flops,
                run: Box::new(move || go(&mut dc)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}

/// Batched products `[batch, m, k] · [batch, k, n]` at `sizes` (`batch, m, n, k`; dense, no
/// broadcast), the automatic choice only, checked on sampled entries of the first and the last
/// product before it is returned. The anchor is `cublas_batched_case` (strided-batched cuBLAS).
///
/// # Errors
/// As [`copy_case`]; a sampled entry outside the matmul tolerance.
pub fn matmul_batched_cases_for<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    sizes: &[(usize, usize, usize, usize)],
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::ops::matmul::matmul_flops;
    if !E::DTYPE.is_supported_by(&cubeport::caps_of(client)) {
        return Ok(Vec::new());
    }
    let mut cases = Vec::new();
    for &(batch, m, n, k) in sizes {
        let a: Vec<E> = seeded(80, batch * m * k, -1.0, 1.0);
        let b: Vec<E> = seeded(81, batch * k * n, -1.0, 1.0);
        let da = DeviceTensor::from_slice(client, &a, &[batch, m, k])?;
        let db = DeviceTensor::from_slice(client, &b, &[batch, k, n])?;
        let mut dc = poisoned::<R, E>(client, &[batch, m, n])?;
        let auto = cubeport::ops::matmul::matmul_variant(client, E::DTYPE, batch, (m, n, k))?;
        let size = batched_size_name(batch, m, n, k);
        let go = move |c: &mut DeviceTensor<E>| {
            cubeport::matmul_into(client, da.as_ref(), db.as_ref(), c.as_mut())
        };
        go(&mut dc)?;
        let got = dc.to_vec(client)?;
        for z in [0, batch - 1] {
            let (pa, pb, pc) = (z * m * k, z * k * n, z * m * n);
            let what = format!("matmul auto_{auto} {} {size}, product {z}", E::DTYPE);
            verify_matmul_sample(
                &got[pc..pc + m * n],
                &a[pa..pa + m * k],
                &b[pb..pb + k * n],
                (m, n, k),
                32,
                &what,
            )?;
        }
        cases.push(Case {
            dtype: E::DTYPE,
            family: "matmul",
            variant: format!("auto_{auto}"),
            size,
            bytes: (batch * (m * k + k * n + m * n) * E::DTYPE.size()) as u64,
            flops: matmul_flops(batch, m, n, k),
            run: Box::new(move || go(&mut dc)),
            own_sync: None,
        });
    }
    Ok(cases)
}

/// The compute ceiling: 8 independent FMA chains per unit, `E` arithmetic, enough cubes to
/// fill the device several times (FLOPs: 2 per FMA).
///
/// # Errors
/// Allocation or launch errors.
pub fn fma_case<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Case<'c>, Error> {
    let caps = cubeport::caps_of(client);
    let units = caps.num_sms.map_or(64, |s| s as usize) * 2048 * 4;
    let iters: u32 = match scale {
        Scale::Quick => 64,
        Scale::Full => 4096,
    };
    let out = DeviceTensor::<E>::empty(client, &[units])?;
    let go = move || {
        cubeport::checked_launch(client, "fma_peak", || {
            // SAFETY: `out` holds `units` elements, one per launched unit.
            unsafe {
                cubeport_kernels::peak::fma_peak_kernel::launch_unchecked::<E, R>(
                    client,
                    CubeCount::new_1d((units / 256) as u32),
                    CubeDim::new_1d(256),
                    ArrayArg::from_raw_parts(out.handle().clone(), units),
                    0.999,
                    0.001,
                    iters,
                );
            }
            Ok(())
        })
    };
    Ok(Case {
        dtype: E::DTYPE,
        family: "fma_peak",
        variant: "8_chains".into(),
        size: format!("{units}x{iters}"),
        bytes: (units * E::DTYPE.size()) as u64,
        flops: 16 * units as u64 * iters as u64,
        run: Box::new(go),
        own_sync: None,
    })
}
