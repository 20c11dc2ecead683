use super::*;
use cubeport::TransposeVariant;

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
