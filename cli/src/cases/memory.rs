use super::*;

/// The device copy of `n` f32 (the bandwidth anchor of the memory-bound families).
///
/// # Errors
/// Allocation or launch errors; a wrong copy.
pub fn copy_case<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Case<'c>, Error> {
    copy_case_of::<R, f32>(client, n)
}

/// The device copy of `n` elements of `E` (bytes: read + write).
///
/// # Errors
/// As [`copy_case`].
pub fn copy_case_of<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Case<'c>, Error> {
    let x: Vec<E> = seeded(77, n, -1.0, 1.0);
    let dx = DeviceTensor::from_slice(client, &x, &[n])?;
    let mut dy = poisoned::<R, E>(client, &[n])?;
    cubeport::copy_into(client, dx.as_ref(), dy.as_mut())?;
    verify(
        cubeport::testing::to_f64(&dy.to_vec(client)?) == cubeport::testing::to_f64(&x),
        "copy",
    )?;
    Ok(Case {
        dtype: E::DTYPE,
        family: "copy",
        variant: "vec".into(),
        size: size_name(n),
        bytes: (2 * n * E::DTYPE.size()) as u64,
        flops: 0,
        run: Box::new(move || cubeport::copy_into(client, dx.as_ref(), dy.as_mut())),
        own_sync: None,
    })
}

/// Transposes of a square f32 matrix, one case per variant (bytes: read + write).
///
/// # Errors
/// As [`copy_case`].
pub fn transpose_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = cubeport::caps_of(client);
    let side = match scale {
        Scale::Quick => 1024,
        Scale::Full if caps.max_alloc_bytes >= 1 << 28 => 8192,
        Scale::Full => 4096,
    };
    let n = side * side;
    let x: Vec<f32> = seeded(78, n, -1.0, 1.0);
    let want = {
        let mut t = vec![0f32; n];
        for r in 0..side {
            for c in 0..side {
                t[c * side + r] = x[r * side + c];
            }
        }
        t
    };
    let dx = std::sync::Arc::new(DeviceTensor::from_slice(client, &x, &[side, side])?);
    let mut cases = vec![copy_case(client, n)?];
    for v in [
        TransposeVariant::Tiled { tile: 64, pad: 1 },
        TransposeVariant::Tiled { tile: 32, pad: 1 },
        TransposeVariant::Tiled { tile: 32, pad: 0 },
        TransposeVariant::Tiled { tile: 16, pad: 1 },
        TransposeVariant::Naive,
    ] {
        let mut dy = poisoned::<R, f32>(client, &[side, side])?;
        cubeport::transpose_with(client, dx.as_ref().as_ref(), dy.as_mut(), v)?;
        verify(dy.to_vec(client)? == want, &format!("transpose {v}"))?;
        let dx = dx.clone();
        cases.push(Case {
            dtype: DType::F32,
            family: "transpose",
            variant: v.to_string(),
            size: format!("{side}x{side}"),
            bytes: 2 * n as u64 * 4,
            flops: 0,
            run: Box::new(move || {
                cubeport::transpose_with(client, dx.as_ref().as_ref(), dy.as_mut(), v)
            }),
            own_sync: None,
        });
    }
    Ok(cases)
}

/// 256-bin histograms of f32 (uniform in `[0, 1)`, and all in one bin), one case per variant,
/// with the copy of the same number of elements as the anchor (bytes: the input read once).
///
/// # Errors
/// As [`copy_case`].
pub fn histogram_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = cubeport::caps_of(client);
    let n = match scale {
        Scale::Quick => 1 << 20,
        Scale::Full => (512usize << 20).min(caps.max_alloc_bytes as usize / 4 / 2),
    };
    let bins = 256;
    let mut cases = vec![copy_case(client, n)?];
    for (data, values) in [
        ("uniform", seeded_uniform(79, n, 0.0, 1.0)),
        ("one_bin", vec![0.5f32; n]),
    ] {
        let want = reference::histogram_range(&values, bins, 0.0, 1.0);
        let dx = std::sync::Arc::new(DeviceTensor::from_slice(client, &values, &[n])?);
        drop(values);
        let auto = HistogramVariant::select(&caps, bins);
        let mut variants = vec![(format!("auto_{auto}"), None)];
        variants.extend(HistogramVariant::ALL.map(|v| (v.to_string(), Some(v))));
        for (name, v) in variants {
            let mut counts =
                DeviceTensor::<u32>::from_slice(client, &vec![u32::MAX; bins], &[bins])?;
            let binning = Binning::Range { lo: 0.0, hi: 1.0 };
            let dx = dx.clone();
            let go = move |counts: &mut DeviceTensor<u32>| {
                let x = dx.as_ref().as_ref();
                match v {
                    None => cubeport::histogram_into(client, x, counts.as_mut(), binning),
                    Some(v) => cubeport::histogram_with(client, x, counts.as_mut(), binning, v),
                }
            };
            go(&mut counts)?;
            verify(
                counts.to_vec(client)? == want,
                &format!("histogram {name} {data}"),
            )?;
            cases.push(Case {
                dtype: DType::F32,
                family: "histogram",
                variant: format!("{name}_{data}"),
                size: size_name(n),
                bytes: n as u64 * 4,
                flops: 0,
                run: Box::new(move || go(&mut counts)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}
