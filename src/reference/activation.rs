use crate::{Activation, GeluApprox};

/// `0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³)))` in f64.
pub fn gelu_tanh(v: f64) -> f64 {
    let inner = (2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v);
    0.5 * v * (1.0 + inner.tanh())
}

/// `0.5·v·(1 + erf(v/√2))` in f64.
pub fn gelu_erf(v: f64) -> f64 {
    0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
}

/// erf to ~1e-16 relative (Abramowitz–Stegun 7.1.26 is too coarse; this is a Taylor series
/// for |x| < 2.5 and a continued fraction of erfc beyond).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let a = x.abs();
    let r = if a < 2.5 {
        // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))
        let mut term = a;
        let mut sum = a;
        let x2 = a * a;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if a.is_infinite() {
        1.0
    } else {
        // erfc(x) = exp(-x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + …))))
        let mut f = a;
        for k in (1..60).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    };
    r.copysign(x)
}

/// `act(input[i] + bias[j])` with `j = i` (bias as long as the input) or `j = i mod bias.len()`
/// (one row broadcast). Returns an empty vector for an empty bias.
pub fn bias_activation(input: &[f64], bias: &[f64], act: Activation) -> Vec<f64> {
    if bias.is_empty() {
        return Vec::new();
    }
    use rayon::prelude::*;
    input
        .par_iter()
        .enumerate()
        .map(|(i, &x)| {
            let v = x + bias[i % bias.len()];
            match act {
                Activation::Identity => v,
                // NaN propagates, as `torch.relu`.
                Activation::ReluScale { scale } => (if v < 0.0 { 0.0 } else { v }) * scale as f64,
                Activation::Gelu(GeluApprox::Tanh) => gelu_tanh(v),
                Activation::Gelu(GeluApprox::Erf) => gelu_erf(v),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.0, 0.999_977_909_503_001_4),
            (-1.0, -0.842_700_792_949_714_9),
        ] {
            assert!(
                (erf(x) - want).abs() < 1e-14,
                "erf({x}) = {} want {want}",
                erf(x)
            );
        }
    }

    #[test]
    fn gelu_edges() {
        assert_eq!(gelu_tanh(0.0), 0.0);
        assert!((gelu_tanh(1.0) - 0.841_191_990_607_477_2).abs() < 1e-12);
        assert!((gelu_erf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-12);
        assert!(gelu_tanh(f64::NAN).is_nan());
        assert_eq!(gelu_tanh(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn relu_propagates_nan_and_broadcasts() {
        let got = bias_activation(
            &[1.0, -3.0, f64::NAN, 2.0],
            &[1.0, 0.5],
            Activation::ReluScale { scale: 2.0 },
        );
        assert_eq!(got[0], 4.0);
        assert_eq!(got[1], 0.0);
        assert!(got[2].is_nan());
        assert_eq!(got[3], 5.0);
        assert!(bias_activation(&[1.0], &[], Activation::Identity).is_empty());
    }
}
