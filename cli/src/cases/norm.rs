use super::*;

/// The shapes the normalization cases run: `(rows, row length)`. Full: the 16384 × 4096 of
/// the anchor, short rows (256), long rows still held in registers (16384) and rows
/// long enough to stream (65536); each of 64M elements. Quick: two small ones of 1M.
pub fn norm_shapes(scale: Scale) -> &'static [(usize, usize)] {
    match scale {
        Scale::Quick => &[(256, 4096), (4096, 256)],
        Scale::Full => &[(16384, 4096), (262_144, 256), (4096, 16384), (1024, 65536)],
    }
}

/// RMSNorm, LayerNorm (weight and bias) and the fused residual add + RMSNorm in every float
/// dtype the device runs, at [`norm_shapes`] (the residual add at the first shape only; the
/// forced variants of `experiment_variants` at long rows), after
/// the device copy of the same element count and dtype (the anchor; every shape of a scale
/// holds as many elements). Bytes: every tensor
/// read once and written once (the weight and bias rows too).
///
/// # Errors
/// As [`copy_case`]; a result outside the norm tolerance.
pub fn norm_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    norm_cases_for(
        client,
        &[DType::F32, DType::F16, DType::BF16],
        norm_shapes(scale),
    )
}

/// [`norm_cases`] for these dtypes (those the device runs) and `(rows, row length)` shapes;
/// the residual add and the copy anchor at the first shape.
///
/// # Errors
/// As [`norm_cases`].
pub fn norm_cases_for<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    dtypes: &[DType],
    shapes: &[(usize, usize)],
) -> Result<Vec<Case<'c>>, Error> {
    let caps = cubeport::caps_of(client);
    let mut cases = Vec::new();
    for &dtype in dtypes {
        if !dtype.is_supported_by(&caps) {
            continue;
        }
        for (i, &(rows, len)) in shapes.iter().enumerate() {
            if (rows * len * dtype.size()) as u64 > caps.max_alloc_bytes {
                continue;
            }
            match dtype {
                DType::F32 => norm_cases_of::<R, f32>(client, rows, len, i == 0, &mut cases)?,
                DType::F16 => norm_cases_of::<R, half::f16>(client, rows, len, i == 0, &mut cases)?,
                DType::BF16 => {
                    norm_cases_of::<R, half::bf16>(client, rows, len, i == 0, &mut cases)?
                }
                _ => {}
            }
        }
    }
    Ok(cases)
}

/// The copy anchor and the normalization cases of one dtype and shape.
fn norm_cases_of<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    rows: usize,
    len: usize,
    residual: bool,
    cases: &mut Vec<Case<'c>>,
) -> Result<(), Error> {
    use cubeport::NormKind;
    use cubeport::reference::Tolerance;
    const EPS: f32 = 1e-5;
    let n = rows * len;
    if residual {
        // Every shape holds the same number of elements: one copy anchor per dtype.
        let mut copy = copy_case_of::<R, E>(client, n)?;
        copy.size = format!("{rows}x{len}");
        cases.push(copy);
    }
    let x: Vec<E> = seeded(93, n, -2.0, 2.0);
    let w: Vec<E> = seeded(94, len, 0.5, 1.5);
    let b: Vec<E> = seeded(95, len, -1.0, 1.0);
    let (xf, wf, bf) = (to_f64(&x), to_f64(&w), to_f64(&b));
    let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, len])?);
    let dw = Arc::new(DeviceTensor::from_slice(client, &w, &[len])?);
    let db = Arc::new(DeviceTensor::from_slice(client, &b, &[len])?);
    let dtype = E::DTYPE;
    let variant = cubeport::norm_variant(client, &dx.as_ref().as_ref())?;
    let round =
        |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|v| E::from_f64(v).to_f64()).collect() };
    let check = |got: &[E], want: &[f64], layer: bool, what: &str| {
        let mags = reference::norm_magnitudes(
            &xf,
            Some(&wf),
            layer.then_some(&bf[..]),
            len,
            EPS as f64,
            layer,
        );
        let c =
            reference::compare_each(&to_f64(got), want, |i| Tolerance::norm(dtype, len, mags[i]));
        verify(c.ok(), what)
    };
    let case =
        |op: String, tensors: usize, run: Box<dyn FnMut() -> Result<(), Error> + Send + 'c>| Case {
            dtype,
            family: "norm",
            variant: op,
            size: format!("{rows}x{len}"),
            bytes: ((tensors * n + 2 * len) * dtype.size()) as u64,
            flops: 4 * n as u64,
            run,
            own_sync: None,
        };
    for kind in NormKind::ALL {
        let layer = kind == NormKind::Layer;
        let want = round(match kind {
            NormKind::Layer => reference::layer_norm(&xf, Some(&wf), Some(&bf), len, EPS as f64),
            _ => reference::rms_norm(&xf, Some(&wf), len, EPS as f64),
        });
        let mut runs = vec![(None, format!("{}_auto_{variant}", kind.name()))];
        runs.extend(
            experiment_variants(client, len)
                .into_iter()
                .map(|v| (Some(v), format!("{}_{v}", kind.name()))),
        );
        for (forced, name) in runs {
            let mut dy = poisoned::<R, E>(client, &[rows, len])?;
            let (x, w, b) = (dx.clone(), dw.clone(), db.clone());
            let go = move |y: &mut DeviceTensor<E>| {
                let (x, w, b) = (
                    x.as_ref().as_ref(),
                    Some(w.as_ref().as_ref()),
                    Some(b.as_ref().as_ref()),
                );
                match (kind, forced) {
                    (NormKind::Layer, None) => {
                        cubeport::layer_norm_into(client, x, w, b, y.as_mut(), EPS)
                    }
                    (NormKind::Layer, Some(v)) => {
                        cubeport::layer_norm_with(client, x, w, b, y.as_mut(), EPS, v)
                    }
                    (_, None) => cubeport::rms_norm_into(client, x, w, y.as_mut(), EPS),
                    (_, Some(v)) => cubeport::rms_norm_with(client, x, w, y.as_mut(), EPS, v),
                }
            };
            go(&mut dy)?;
            check(
                &dy.to_vec(client)?,
                &want,
                layer,
                &format!("{name} {dtype} {rows}x{len}"),
            )?;
            cases.push(case(name, 2, Box::new(move || go(&mut dy))));
        }
    }
    if residual {
        let r: Vec<E> = seeded(96, n, -1.0, 1.0);
        let sum: Vec<f64> = xf
            .iter()
            .zip(&r)
            .map(|(a, b)| E::from_f64(a + cubeport::Element::to_f64(*b)).to_f64())
            .collect();
        let dr = DeviceTensor::from_slice(client, &r, &[rows, len])?;
        let mut ds = poisoned::<R, E>(client, &[rows, len])?;
        let mut dy = poisoned::<R, E>(client, &[rows, len])?;
        let (x, w) = (dx.clone(), dw.clone());
        let go = move |s: &mut DeviceTensor<E>, y: &mut DeviceTensor<E>| {
            cubeport::add_rms_norm_into(
                client,
                x.as_ref().as_ref(),
                dr.as_ref(),
                Some(w.as_ref().as_ref()),
                s.as_mut(),
                y.as_mut(),
                EPS,
            )
        };
        go(&mut ds, &mut dy)?;
        verify(to_f64(&ds.to_vec(client)?) == sum, "add_rms_norm sum")?;
        let mags = reference::norm_magnitudes(&sum, Some(&wf), None, len, EPS as f64, false);
        let want = round(reference::rms_norm(&sum, Some(&wf), len, EPS as f64));
        let c = reference::compare_each(&to_f64(&dy.to_vec(client)?), &want, |i| {
            Tolerance::norm(dtype, len, mags[i])
        });
        verify(c.ok(), &format!("add_rms_norm {dtype} {rows}x{len}"))?;
        cases.push(case(
            format!("add_rms_norm_auto_{variant}"),
            4,
            Box::new(move || go(&mut ds, &mut dy)),
        ));
    }
    Ok(())
}

/// Forced variants timed beside the automatic one on long rows (16384 elements and more), to
/// choose between holding a row in more units' registers and streaming it twice: cubes of 512
/// and 1024 units per row, and the streamed kernel at 256 and 1024. Plane groups where the
/// device advertises plane ops, else shared ones; nothing on shorter rows.
/// A norm variant id as printed (`plane256`, `shared64`, `streamed_plane256`).
fn parse_norm_variant(id: &str) -> Option<cubeport::NormVariant> {
    use cubeport::{NormVariant, ReducePath, RowGroup};
    let (streamed, group) = match id.strip_prefix("streamed_") {
        Some(g) => (true, g),
        None => (false, id),
    };
    let (path, units) = if let Some(u) = group.strip_prefix("plane") {
        (ReducePath::Plane, u)
    } else {
        (ReducePath::Shared, group.strip_prefix("shared")?)
    };
    let group = RowGroup {
        path,
        group: units.parse().ok()?,
    };
    Some(if streamed {
        NormVariant::Streamed(group)
    } else {
        NormVariant::Rows(group)
    })
}

/// The forced variants timed next to the automatic choice: `CUBEPORT_NORM_VARIANTS` (ids as
/// printed) where set, else the streamed and wider groups at rows of 16384 or more.
fn experiment_variants<R: Runtime>(
    client: &ComputeClient<R>,
    len: usize,
) -> Vec<cubeport::NormVariant> {
    use cubeport::{NormVariant, ReducePath, RowGroup};
    let caps = cubeport::caps_of(client);
    if let Ok(list) = std::env::var("CUBEPORT_NORM_VARIANTS") {
        return list
            .split(',')
            .filter_map(|id| {
                let v = parse_norm_variant(id);
                if v.is_none() {
                    eprintln!("CUBEPORT_NORM_VARIANTS: `{id}` is not <plane|shared><units> or streamed_<…>");
                }
                v
            })
            .collect();
    }
    if len < 16384 {
        return Vec::new();
    }
    let path = if caps.plane.ops && caps.plane.fixed_width().is_some() {
        ReducePath::Plane
    } else {
        ReducePath::Shared
    };
    let g = |group| RowGroup { path, group };
    let mut v = vec![NormVariant::Streamed(g(256))];
    if caps.max_units_per_cube >= 1024 {
        v.extend([
            NormVariant::Rows(g(512)),
            NormVariant::Rows(g(1024)),
            NormVariant::Streamed(g(1024)),
        ]);
    }
    v
}
