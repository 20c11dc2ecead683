//! Generic bodies for histograms: exact agreement with the reference, every variant, integer
//! and float input, ragged lengths, skewed data, and every validation error.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{histogram_index, histogram_range};
use cubeport::testing::{seeded, seeded_uniform};
use cubeport::{Binning, DType, DeviceTensor, Element, Error, HistogramVariant, ShapeError};

/// Written into counts before every launch: the op must overwrite every bin.
const POISON: u32 = 0xDEAD_BEEF;

fn poisoned_counts<R: Runtime>(client: &ComputeClient<R>, bins: usize) -> DeviceTensor<u32> {
    DeviceTensor::from_slice(client, &vec![POISON; bins], &[bins]).unwrap()
}

fn check<R: Runtime>(
    client: &ComputeClient<R>,
    input: cubeport::TensorRef<'_>,
    binning: Binning,
    want: &[u32],
    what: &str,
) {
    let bins = want.len();
    let caps = cubeport::caps_of(client);
    let mut variants: Vec<Option<HistogramVariant>> = vec![None];
    variants.extend(
        HistogramVariant::ALL
            .into_iter()
            .filter(|v| !v.is_shared() || bins <= HistogramVariant::max_shared_bins(&caps))
            .map(Some),
    );
    for v in variants {
        let mut counts = poisoned_counts(client, bins);
        let r = match v {
            None => cubeport::histogram_into(client, input.clone(), counts.as_mut(), binning),
            Some(v) => cubeport::histogram_with(client, input.clone(), counts.as_mut(), binning, v),
        };
        r.unwrap_or_else(|e| panic!("{what} {v:?}: {e}"));
        let got = counts.to_vec(client).unwrap();
        if got != want {
            let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "histogram {what} variant {v:?} on {}: bin {first} got {} want {} (total got {} want {})",
                R::name(client),
                got[first],
                want[first],
                got.iter().map(|&c| c as u64).sum::<u64>(),
                want.iter().map(|&c| c as u64).sum::<u64>(),
            );
        }
    }
}

/// Float input over `[−1, 3]` drawn from a wider range (values on both sides are dropped),
/// with NaN, ±inf and both bounds planted.
pub fn histc_matches<R: Runtime>(client: &ComputeClient<R>, dtype: DType, len: usize, bins: usize) {
    let (lo, hi) = (-1.0f32, 3.0f32);
    with_dtype!(dtype, E => {
        let mut x: Vec<E> = seeded(len as u64 * 31 + bins as u64, len, -1.5, 3.5);
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, lo, hi, 0.0, -0.0];
        for (k, s) in specials.iter().enumerate() {
            if len > 2 * specials.len() {
                x[(k * 7919) % len] = E::from_f64(*s as f64);
            }
        }
        let xf: Vec<f32> = x.iter().map(|v| v.to_f64() as f32).collect();
        let want = histogram_range(&xf, bins, lo, hi);
        let dx = DeviceTensor::from_slice(client, &x, &[len]).unwrap();
        check(client, dx.as_ref(), Binning::Range { lo, hi }, &want, &format!("histc {dtype} len {len} bins {bins}"));
    })
}

/// Integer input in `[−5, bins + 5)` (i32) or `[0, bins + 5)` (u32): values outside dropped.
pub fn bincount_matches<R: Runtime>(
    client: &ComputeClient<R>,
    signed: bool,
    len: usize,
    bins: usize,
) {
    let lo = if signed { -5.0 } else { 0.0 };
    let raw: Vec<i64> = seeded_uniform(len as u64 + 3 * bins as u64, len, lo, bins as f32 + 5.0)
        .into_iter()
        .map(|v| v.floor() as i64)
        .collect();
    let want = histogram_index(&raw, bins);
    let what = format!(
        "bincount {} len {len} bins {bins}",
        if signed { "i32" } else { "u32" }
    );
    if signed {
        let x: Vec<i32> = raw.iter().map(|&v| v as i32).collect();
        let dx = DeviceTensor::from_slice(client, &x, &[len]).unwrap();
        check(client, dx.as_ref(), Binning::Index, &want, &what);
    } else {
        let x: Vec<u32> = raw.iter().map(|&v| v as u32).collect();
        let dx = DeviceTensor::from_slice(client, &x, &[len]).unwrap();
        check(client, dx.as_ref(), Binning::Index, &want, &what);
    }
}

/// Every value in one bin (the contention case), plus a 2-D input (flattened).
pub fn histogram_skewed<R: Runtime>(client: &ComputeClient<R>) {
    let len = 70_007;
    let x = vec![0.3f32; len];
    let want = histogram_range(&x, 256, 0.0, 1.0);
    assert_eq!(want[76], len as u32);
    let dx = DeviceTensor::from_slice(client, &x, &[7, 10_001][..]).unwrap();
    check(
        client,
        dx.as_ref(),
        Binning::Range { lo: 0.0, hi: 1.0 },
        &want,
        "skewed",
    );
    // The owned forms count the same.
    let range = Binning::Range { lo: 0.0, hi: 1.0 };
    let owned = cubeport::histogram(client, &dx, 256, range).unwrap();
    assert_eq!(owned.to_vec(client).unwrap(), want, "owned histogram");
    let owned = cubeport::histc(client, &dx, 256, 0.0, 1.0).unwrap();
    assert_eq!(owned.to_vec(client).unwrap(), want, "owned histc");
    let xi = vec![5u32; len];
    let dx = DeviceTensor::from_slice(client, &xi, &[len]).unwrap();
    let owned = cubeport::bincount(client, &dx, 8).unwrap();
    assert_eq!(
        owned.to_vec(client).unwrap(),
        histogram_index(&[5; 70_007], 8)
    );
    check(
        client,
        dx.as_ref(),
        Binning::Index,
        &histogram_index(&[5; 70_007], 8),
        "skewed index",
    );
}

pub fn histogram_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let caps = cubeport::caps_of(client);
    let x = DeviceTensor::from_slice(client, &seeded::<f32>(1, 64, 0.0, 1.0), &[64]).unwrap();
    let xi = DeviceTensor::from_slice(client, &[1i32; 64], &[64]).unwrap();
    let counts = poisoned_counts(client, 8);
    let range = Binning::Range { lo: 0.0, hi: 1.0 };
    let shape_err = |r: Result<(), Error>| match r {
        Err(Error::Shape { source, .. }) => source,
        other => panic!("expected a shape error, got {other:?}"),
    };
    let h = |input, counts, binning| cubeport::histogram_into(client, input, counts, binning);
    let c = counts.handle().clone();
    let view = |shape: &[usize], dt| cubeport::TensorMut::contiguous(&c, shape, dt);
    assert_eq!(
        shape_err(h(x.as_ref(), view(&[0], DType::U32), range)),
        ShapeError::NoBins
    );
    assert!(matches!(
        shape_err(h(x.as_ref(), view(&[8], DType::F32), range)),
        ShapeError::DTypeMismatch { name: "counts", .. }
    ));
    assert!(matches!(
        shape_err(h(x.as_ref(), view(&[2, 4], DType::U32), range)),
        ShapeError::Rank { name: "counts", .. }
    ));
    assert!(matches!(
        shape_err(h(x.as_ref(), view(&[8], DType::U32), Binning::Index)),
        ShapeError::DTypeKind { name: "input", .. }
    ));
    assert!(matches!(
        shape_err(h(xi.as_ref(), view(&[8], DType::U32), range)),
        ShapeError::DTypeKind { name: "input", .. }
    ));
    assert!(matches!(
        shape_err(h(
            cubeport::TensorRef::contiguous(x.handle(), &[0], DType::F32),
            view(&[8], DType::U32),
            range
        )),
        ShapeError::Empty { .. }
    ));
    for (lo, hi) in [
        (1.0, 1.0),
        (1.0, 0.0),
        (f32::NAN, 1.0),
        (0.0, f32::INFINITY),
    ] {
        assert!(matches!(
            shape_err(h(
                x.as_ref(),
                view(&[8], DType::U32),
                Binning::Range { lo, hi }
            )),
            ShapeError::BadRange { .. }
        ));
    }
    if !caps.bf16 {
        let xb = DeviceTensor::from_slice(client, &seeded::<half::bf16>(1, 64, 0.0, 1.0), &[64])
            .unwrap();
        let r = h(xb.as_ref(), view(&[8], DType::U32), range);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
    }
    let too_many = HistogramVariant::max_shared_bins(&caps) + 1;
    let mut big = poisoned_counts(client, too_many);
    let r = cubeport::histogram_with(
        client,
        x.as_ref(),
        big.as_mut(),
        range,
        HistogramVariant::SharedRuns,
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let r = cubeport::histogram_with(
        client,
        x.as_ref(),
        big.as_mut(),
        range,
        HistogramVariant::Shared,
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    assert!(
        big.to_vec(client).unwrap().iter().all(|&v| v == POISON),
        "a rejected call wrote counts"
    );
    // The automatic choice for that many bins is a global variant, and it runs.
    let auto = cubeport::histogram_variant(client, &x.as_ref(), too_many, range).unwrap();
    assert!(!auto.is_shared(), "{auto}");
    cubeport::histogram_with(client, x.as_ref(), big.as_mut(), range, auto).unwrap();
    assert!(
        counts.to_vec(client).unwrap().iter().all(|&v| v == POISON),
        "a rejected call wrote counts"
    );
    // The float ops refuse integer tensors with a typed error.
    let mut yi = DeviceTensor::<i32>::empty(client, &[64]).unwrap();
    let r = cubeport::softmax_into(client, xi.as_ref(), yi.as_mut(), 0);
    assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
}
