use super::*;

/// Softmax along the rows of the shared f32 row matrix (`RowMatrix`): the automatic variant,
/// then every row group the device runs (`shared256`, and with a fixed plane width the plane
/// groups from one plane to a whole cube). Bytes: read once, written once. FLOPs nominal (5 per
/// element).
///
/// # Errors
/// As [`copy_case`].
pub fn softmax_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::reference::Tolerance;
    use cubeport::{ReducePath, RowGroup, SoftmaxKind, SoftmaxVariant};
    let caps = cubeport::caps_of(client);
    let m = RowMatrix::new(client, scale)?;
    let (rows, cols, n) = (m.rows, m.cols, m.len());
    let want = reference::softmax(&m.values, cols);
    let tol = Tolerance::softmax(DType::F32, cols);
    let auto = cubeport::softmax_variant(client, &m.device.as_ref().as_ref(), 1)?;
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
    forced.extend(
        groups
            .into_iter()
            .map(|g| (Some(SoftmaxVariant::Rows(g)), g.to_string())),
    );
    let mut cases = Vec::new();
    for (variant, name) in forced {
        let mut dy = poisoned::<R, f32>(client, &[rows, cols])?;
        let d = m.device.clone();
        let go = move |y: &mut DeviceTensor<f32>| {
            let x = d.as_ref().as_ref();
            match variant {
                None => cubeport::softmax_into(client, x, y.as_mut(), 1),
                Some(v) => {
                    cubeport::softmax_with(client, x, y.as_mut(), 1, SoftmaxKind::Softmax, v)
                }
            }
        };
        go(&mut dy)?;
        let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
        verify(
            reference::compare(&got, &want, tol).ok(),
            &format!("softmax {name}"),
        )?;
        cases.push(m.case("softmax", name, 2 * n, 5 * n, Box::new(move || go(&mut dy))));
    }
    Ok(cases)
}
