use super::*;

/// GEMV `y = A·v` and `y = Aᵀ·v` over the shared f32 row matrix (`RowMatrix`), every variant
/// the device runs. Bytes: the matrix and `v` read once, `y` written once. FLOPs: 2 per matrix
/// element.
///
/// # Errors
/// As [`copy_case`].
pub fn gemv_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::reference::Tolerance;
    use cubeport::{GemvVariant, ReducePath, Transpose};
    let caps = cubeport::caps_of(client);
    let m = RowMatrix::new(client, scale)?;
    let (rows, cols, n) = (m.rows, m.cols, m.len());
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
    let mut cases = Vec::new();
    for (t, variant) in variants {
        let (xl, yl) = match t {
            Transpose::No => (cols, rows),
            Transpose::Yes => (rows, cols),
        };
        let dv = DeviceTensor::from_slice(client, &v[..xl], &[xl])?;
        let mut dy = poisoned::<R, f32>(client, &[yl])?;
        let d = m.device.clone();
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
        let want = reference::gemv(&m.values, rows, cols, &vf[..xl], t);
        let vabs: Vec<f64> = vf[..xl].iter().map(|v| v.abs()).collect();
        let sum_abs = reference::gemv(&m.abs, rows, cols, &vabs, t);
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| {
            Tolerance::reduction(DType::F32, xl, sum_abs[i])
        })
        .ok();
        verify(ok, &format!("gemv {variant}"))?;
        let name = match t {
            Transpose::No => "gemv",
            Transpose::Yes => "gemv_t",
        };
        cases.push(m.case(
            "gemv",
            format!("{name}_{variant}"),
            n + xl + yl,
            2 * n,
            Box::new(move || go(&mut dy)),
        ));
    }
    Ok(cases)
}
