use super::*;

/// Fused bias + activation, every activation (`add`, `bias_relu_scale`, `bias_gelu_tanh`,
/// `bias_gelu_erf`) with a full-length bias (`_full`) and with one row of 4096 broadcast over
/// the rows (`_row`), in f32 and, where the device has it, f16; each dtype's device copy of the
/// same length comes first (the anchor). Bytes: input and bias read once, output written once.
/// FLOPs are nominal (1, 3, 12, 12 per element). `n` = 64 M elements at `Full` (fewer where one
/// buffer may not be that large), 1 M at `Quick`.
///
/// # Errors
/// As [`copy_case`].
pub fn activation_cases<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    scale: Scale,
) -> Result<Vec<Case<'c>>, Error> {
    let caps = cubeport::caps_of(client);
    let n = match scale {
        Scale::Quick => 1 << 20,
        Scale::Full => (64usize << 20).min(caps.max_alloc_bytes as usize / 4),
    };
    let mut cases = activation_cases_of::<R, f32>(client, n)?;
    if DType::F16.is_supported_by(&caps) {
        cases.extend(activation_cases_of::<R, half::f16>(client, n)?);
    }
    Ok(cases)
}

/// Row length of the broadcast-bias activation cases (an LLM hidden size).
const BIAS_ROW: usize = 4096;

fn activation_cases_of<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    n: usize,
) -> Result<Vec<Case<'c>>, Error> {
    use cubeport::{Activation, GeluApprox};
    use rayon::prelude::*;
    use std::sync::Arc;
    let n = n / BIAS_ROW * BIAS_ROW;
    let x: Vec<E> = seeded(90, n, -4.0, 4.0);
    let b: Vec<E> = seeded(91, n, -1.0, 1.0);
    let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[n])?);
    let db = Arc::new(DeviceTensor::from_slice(client, &b, &[n])?);
    let db_row = Arc::new(DeviceTensor::from_slice(
        client,
        &b[..BIAS_ROW],
        &[BIAS_ROW],
    )?);
    let (xf, bf) = (cubeport::testing::to_f64(&x), cubeport::testing::to_f64(&b));
    drop((x, b));
    let mut cases = vec![copy_case_of::<R, E>(client, n)?];
    for (act, flops) in [
        (Activation::Identity, 1),
        (Activation::ReluScale { scale: 0.5 }, 3),
        (Activation::Gelu(GeluApprox::Tanh), 12),
        (Activation::Gelu(GeluApprox::Erf), 12),
    ] {
        for (bias_name, bias, shape) in [
            ("full", &db, vec![n]),
            ("row", &db_row, vec![n / BIAS_ROW, BIAS_ROW]),
        ] {
            let mut dy = poisoned::<R, E>(client, &shape)?;
            let (dx, bias) = (dx.clone(), bias.clone());
            let go = move |y: &mut DeviceTensor<E>| {
                let input = cubeport::TensorRef::contiguous(dx.handle(), &shape, E::DTYPE);
                cubeport::bias_activation_into(
                    client,
                    input,
                    bias.as_ref().as_ref(),
                    y.as_mut(),
                    act,
                )
            };
            go(&mut dy)?;
            let blen = if bias_name == "full" { n } else { BIAS_ROW };
            let want: Vec<f64> = reference::bias_activation(&xf, &bf[..blen], act)
                .into_par_iter()
                .map(|v| E::from_f64(v).to_f64())
                .collect();
            let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
            let what = format!("{} {bias_name} {}", act.name(), E::DTYPE);
            verify(
                reference::compare(&got, &want, reference::Tolerance::elementwise(E::DTYPE)).ok(),
                &what,
            )?;
            cases.push(Case {
                dtype: E::DTYPE,
                family: "activation",
                variant: format!("{}_{bias_name}", act.name()),
                size: size_name(n),
                bytes: ((2 * n + blen) * E::DTYPE.size()) as u64,
                flops: flops * n as u64,
                run: Box::new(move || go(&mut dy)),
                own_sync: None,
            });
        }
    }
    Ok(cases)
}
