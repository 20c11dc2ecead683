use super::*;

/// The row-reduction families over one f32 `rows × cols` matrix (16384 × 4096 at `Full`,
/// 4096 × 4096 where one buffer may not hold 256 MiB, 256 × 4096 at `Quick`): sum and max of
/// everything, per-row sums, per-column sums (the strided axis), softmax along rows with the
/// automatic variant and every forced row-group width the device runs, and GEMV `A·v` and
/// `Aᵀ·v` with every variant. The device copy of the matrix comes first (the anchor). Bytes:
/// inputs read once, outputs written once. FLOPs nominal (1 per element; softmax 5; GEMV 2).
///
/// # Errors
/// As [`copy_case`].
pub fn reduce_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::reference::{Reduction, Tolerance};
    use cubeport::{GemvVariant, ReducePath, RowGroup, Transpose};
    use std::sync::Arc;
    let caps = cubeport::caps_of(client);
    let (rows, cols) = match scale {
        Scale::Quick => (256, 4096),
        Scale::Full if caps.max_alloc_bytes >= 1 << 28 => (16384, 4096),
        Scale::Full => (4096, 4096),
    };
    let n = rows * cols;
    let x: Vec<f32> = seeded(92, n, -1.0, 1.0);
    let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, cols])?);
    let xf = cubeport::testing::to_f64(&x);
    drop(x);
    let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
    let size = format!("{rows}x{cols}");
    let case = |family, variant: String, bytes: usize, flops: usize, run| Case {
        dtype: DType::F32,
        family,
        variant,
        size: size.clone(),
        bytes: (bytes * 4) as u64,
        flops: flops as u64,
        run,
        own_sync: None,
    };
    let mut cases = vec![copy_case(client, n)?];
    // Whole-array sum and max, per-row and per-column sums.
    for (name, axis, op, out_len) in [
        ("sum", None, Reduction::Sum, 1),
        ("max", None, Reduction::Max, 1),
        ("sum", Some(1), Reduction::Sum, rows),
        ("sum", Some(0), Reduction::Sum, cols),
    ] {
        let mut dy = poisoned::<R, f32>(client, &[out_len])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            cubeport::reduce_into(client, d.as_ref().as_ref(), y.as_mut(), axis, op)
        };
        go(&mut dy)?;
        let want = reference::reduce(&xf, &[rows, cols], axis, op);
        let sum_abs = reference::reduce(&abs, &[rows, cols], axis, Reduction::Sum);
        let k = axis.map_or(n, |a| [rows, cols][a]);
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| match op {
            Reduction::Sum => Tolerance::reduction(DType::F32, k, sum_abs[i]),
            _ => Tolerance::EXACT,
        })
        .ok();
        verify(ok, name)?;
        let shape: &[usize] = if axis.is_none() { &[n] } else { &[rows, cols] };
        let variant = cubeport::ops::reduce::reduce_variant(client, shape, DType::F32, axis);
        cases.push(case(
            "reduce",
            // `sum_all_plane`, `sum_rows_plane256`, `sum_strided`, …
            format!("{name}_{}", variant.to_string().replace('/', "_")),
            n + out_len,
            n,
            Box::new(move || go(&mut dy)),
        ));
    }
    // Softmax along rows: the automatic choice, then every row group the device runs.
    let want = reference::softmax(&xf, cols, false);
    let tol = Tolerance::softmax(DType::F32, cols, false);
    let auto = cubeport::ops::softmax::softmax_variant(client, cols, DType::F32);
    let mut forced = vec![(None, format!("auto_{auto}"))];
    let mut groups = vec![RowGroup {
        path: ReducePath::Shared,
        group: 256,
    }];
    if let Some(w) = caps.plane.fixed_width() {
        groups.extend(
            [w, 64, 128, 256]
                .into_iter()
                .filter(|&g| g >= w && g % w == 0)
                .map(|group| RowGroup {
                    path: ReducePath::Plane,
                    group,
                }),
        );
    }
    groups.dedup();
    forced.extend(groups.into_iter().map(|g| (Some(g), g.to_string())));
    for (group, variant) in forced {
        let mut dy = poisoned::<R, f32>(client, &[rows, cols])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| match group {
            None => cubeport::softmax_into(client, d.as_ref().as_ref(), y.as_mut(), 1),
            Some(g) => cubeport::softmax_with(client, d.as_ref().as_ref(), y.as_mut(), 1, false, g),
        };
        go(&mut dy)?;
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        verify(
            reference::compare(&got, &want, tol).ok(),
            &format!("softmax {variant}"),
        )?;
        cases.push(case(
            "softmax",
            variant,
            2 * n,
            5 * n,
            Box::new(move || go(&mut dy)),
        ));
    }
    drop(want);
    // GEMV y = A·v and y = Aᵀ·v over the same matrix, every variant the device runs.
    let v: Vec<f32> = seeded(93, rows.max(cols), -1.0, 1.0);
    let vf = cubeport::testing::to_f64(&v);
    let mut variants = vec![
        (Transpose::No, GemvVariant::ThreadRow),
        (Transpose::No, GemvVariant::CubeRow(ReducePath::Shared)),
        (Transpose::Yes, GemvVariant::Columns),
    ];
    if caps.plane.fixed_width().is_some() {
        variants.push((Transpose::No, GemvVariant::PlaneRow));
        variants.push((Transpose::No, GemvVariant::CubeRow(ReducePath::Plane)));
    }
    for (t, variant) in variants {
        let tr = t == Transpose::Yes;
        let (xl, yl) = if tr { (rows, cols) } else { (cols, rows) };
        let dv = DeviceTensor::from_slice(client, &v[..xl], &[xl])?;
        let mut dy = poisoned::<R, f32>(client, &[yl])?;
        let d = dx.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            cubeport::gemv_with(
                client,
                d.as_ref().as_ref(),
                dv.as_ref(),
                y.as_mut(),
                t,
                variant,
            )
        };
        go(&mut dy)?;
        let want = reference::gemv(&xf, rows, cols, &vf[..xl], tr);
        let vabs: Vec<f64> = vf[..xl].iter().map(|v| v.abs()).collect();
        let sum_abs = reference::gemv(&abs, rows, cols, &vabs, tr);
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| {
            Tolerance::reduction(DType::F32, xl, sum_abs[i])
        })
        .ok();
        verify(ok, &format!("gemv {variant}"))?;
        let name = if tr { "gemv_t" } else { "gemv" };
        cases.push(case(
            "gemv",
            format!("{name}_{variant}"),
            n + xl + yl,
            2 * n,
            Box::new(move || go(&mut dy)),
        ));
    }
    Ok(cases)
}
