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
