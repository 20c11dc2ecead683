use super::*;

/// Reductions over the shared f32 row matrix (`RowMatrix`): sum and max of everything,
/// per-row sums and per-column sums (the strided axis), each with the variant the op selects.
/// The device copy of the matrix comes first (the anchor of the row families). Bytes: input
/// read once, output written once. FLOPs nominal (1 per element).
///
/// # Errors
/// As [`copy_case`].
pub fn reduce_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::reference::{Reduction, Tolerance};
    let m = RowMatrix::new(client, scale)?;
    let (rows, cols, n) = (m.rows, m.cols, m.len());
    let mut cases = vec![copy_case(client, n)?];
    for (name, axis, op, out_len) in [
        ("sum", None, Reduction::Sum, 1),
        ("max", None, Reduction::Max, 1),
        ("sum", Some(1), Reduction::Sum, rows),
        ("sum", Some(0), Reduction::Sum, cols),
    ] {
        let mut dy = poisoned::<R, f32>(client, &[out_len])?;
        let d = m.device.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            cubeport::reduce_into(client, d.as_ref().as_ref(), y.as_mut(), axis, op)
        };
        go(&mut dy)?;
        let want = reference::reduce(&m.values, &[rows, cols], axis, op);
        let sum_abs = reference::reduce(&m.abs, &[rows, cols], axis, Reduction::Sum);
        let k = axis.map_or(n, |a| [rows, cols][a]);
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        let ok = reference::compare_each(&got, &want, |i| match op {
            Reduction::Sum => Tolerance::reduction(DType::F32, k, sum_abs[i]),
            _ => Tolerance::EXACT,
        })
        .ok();
        verify(ok, name)?;
        let variant = cubeport::reduce_variant(client, &m.device.as_ref().as_ref(), axis)?;
        cases.push(m.case(
            "reduce",
            // `sum_all_plane`, `sum_rows_plane256`, `sum_strided`, …
            format!("{name}_{}", variant.to_string().replace('/', "_")),
            n + out_len,
            n,
            Box::new(move || go(&mut dy)),
        ));
    }
    Ok(cases)
}
