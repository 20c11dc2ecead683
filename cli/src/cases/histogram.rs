use super::*;
use cubeport::{Binning, HistogramVariant};

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
        let binning = Binning::Range { lo: 0.0, hi: 1.0 };
        let auto = cubeport::histogram_variant(client, &dx.as_ref().as_ref(), bins, binning)?;
        let mut variants = vec![(format!("auto_{auto}"), None)];
        variants.extend(HistogramVariant::ALL.map(|v| (v.to_string(), Some(v))));
        for (name, v) in variants {
            let mut counts =
                DeviceTensor::<u32>::from_slice(client, &vec![u32::MAX; bins], &[bins])?;
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
