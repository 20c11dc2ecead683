use crate::DType;

/// `|got − want| ≤ atol + rtol·|want|`, the only way cubeport compares floats.
///
/// | op class | f32 | f16 / bf16 |
/// |---|---|---|
/// | elementwise and activations | rtol 1e-5, atol 1e-6 | rtol 2ε, atol ε of the dtype |
/// | RMSNorm / LayerNorm over rows of K, terms of size M | the above + atol 4·√K·ε(f32)·M | the same |
/// | attention over K keys of D dims, Σp\|v\| = M, scores ≤ S | the above + atol 4·ε(f32)·(√K + √D·S)·M | the same |
/// | reductions of length K | the above + 4·√K·ε(f32)·Σ\|terms\|/\|want\| | the same + output rounding |
/// | matmul entries (K-deep, fused epilogue) | the above with 8·√K·ε(f32)·Σ\|a·b\| | the same |
/// | matmul entries on TF32 tensor cores (f32 inputs, opt-in) | the f32 matmul bound + rtol 2⁻⁹ + 8·2⁻¹⁰·Σ\|a·b\|/√K | — |
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute slack.
    pub atol: f64,
    /// Slack relative to the reference value.
    pub rtol: f64,
}

impl Tolerance {
    /// Exact agreement (transposes, copies, histogram counts).
    pub const EXACT: Tolerance = Tolerance {
        atol: 0.0,
        rtol: 0.0,
    };

    /// Elementwise ops and activations computed in f32 and stored as `dtype`.
    pub fn elementwise(dtype: DType) -> Self {
        match dtype {
            DType::F32 => Tolerance {
                atol: 1e-6,
                rtol: 1e-5,
            },
            other => Tolerance {
                atol: other.epsilon(),
                rtol: 2.0 * other.epsilon(),
            },
        }
    }

    /// A sum of `k` terms whose magnitudes add up to `sum_abs`, accumulated in f32 and stored as
    /// `dtype`: the elementwise tolerance plus `4·√k·ε(f32)·sum_abs` absolute.
    pub fn reduction(dtype: DType, k: usize, sum_abs: f64) -> Self {
        let base = Self::elementwise(dtype);
        let extra = 4.0 * (k.max(1) as f64).sqrt() * f32::EPSILON as f64 * sum_abs;
        Tolerance {
            atol: base.atol + extra,
            rtol: base.rtol,
        }
    }

    /// A product entry `act(Σ_k a·b + bias)` whose terms' magnitudes add up to `sum_abs`:
    /// [`Tolerance::reduction`] with the accumulation term doubled (the activations' slopes stay
    /// below 1.2, and the bias add rounds once more).
    pub fn matmul(dtype: DType, k: usize, sum_abs: f64) -> Self {
        let t = Self::reduction(dtype, k, sum_abs);
        let base = Self::elementwise(dtype);
        Tolerance {
            atol: base.atol + 2.0 * (t.atol - base.atol),
            rtol: base.rtol,
        }
    }

    /// A product entry of f32 inputs multiplied on TF32 tensor cores (10 explicit mantissa
    /// bits, the low 13 bits of each operand dropped): the f32 [`Tolerance::matmul`] plus the
    /// operand rounding. Each term `a·b` is off by at most `2·2⁻¹⁰·|a·b|` (truncation of both
    /// operands), biased towards zero: the bias scales the whole sum (`rtol 2⁻⁹`) and the
    /// spread around it adds up like a random walk (`8·2⁻¹⁰·Σ|a·b|/√k` absolute, about 15
    /// standard deviations) — still below one term's size, `Σ|a·b|/k`, for k ≤ 64 and well
    /// below a missing or doubled term's error for any k the tests run.
    pub fn matmul_tf32(k: usize, sum_abs: f64) -> Self {
        let t = Self::matmul(DType::F32, k, sum_abs);
        let u = 2f64.powi(-10);
        Tolerance {
            atol: t.atol + 8.0 * u * sum_abs / (k.max(1) as f64).sqrt(),
            rtol: t.rtol + 2.0 * u,
        }
    }

    /// A reduction `op` over `k` terms whose magnitudes add up to `sum_abs`: exact for
    /// max/min (they select an input), [`Tolerance::reduction`] for sum, scaled by `1/k` for mean.
    pub fn reduce(op: crate::Reduction, dtype: DType, k: usize, sum_abs: f64) -> Self {
        match op {
            crate::Reduction::Max | crate::Reduction::Min => Tolerance::EXACT,
            crate::Reduction::Sum => Self::reduction(dtype, k, sum_abs),
            crate::Reduction::Mean => Self::reduction(dtype, k, sum_abs / k.max(1) as f64),
        }
    }

    /// Softmax over rows of `k`: relative, the normalising sum adds `4·√k·ε(f32)` to the
    /// elementwise bound.
    pub fn softmax(dtype: DType, k: usize) -> Self {
        let base = Self::elementwise(dtype);
        Tolerance {
            atol: base.atol,
            rtol: base.rtol + Self::row_sum_slack(k),
        }
    }

    /// An RMSNorm / LayerNorm output over rows of `k` made of terms of size `magnitude`
    /// ([`crate::reference::norm_magnitudes`]: `(|x| + |mean|)·|w|/σ + |b|`): the elementwise
    /// bound plus `4·√k·ε(f32)·magnitude` absolute, the f32 rounding of the row's mean and mean
    /// square carried through the scale.
    pub fn norm(dtype: DType, k: usize, magnitude: f64) -> Self {
        let base = Self::elementwise(dtype);
        Tolerance {
            atol: base.atol + Self::row_sum_slack(k) * magnitude,
            rtol: base.rtol,
        }
    }

    /// An attention output over `keys` visible keys of `head_dim` dims whose terms have size
    /// `magnitude` ([`crate::reference::attention_magnitudes`]: `Σ p·|v|`), where `score_abs`
    /// bounds `scale·Σ_d |q·k|`: the elementwise bound plus `magnitude·4·ε(f32)·(√keys +
    /// √head_dim·score_abs)` absolute. A score off by δ scales its weight by about `1 + δ`, and
    /// the sums of `keys` weights and values round like any f32 sum.
    pub fn attention(
        dtype: DType,
        keys: usize,
        head_dim: usize,
        magnitude: f64,
        score_abs: f64,
    ) -> Self {
        let base = Self::elementwise(dtype);
        let slack = Self::row_sum_slack(keys) + Self::row_sum_slack(head_dim) * score_abs;
        Tolerance {
            atol: base.atol + slack * magnitude,
            rtol: base.rtol,
        }
    }

    /// Log-softmax over rows of `k`: absolute (the log of the sum is added, not multiplied),
    /// `1e-5 + 4·√k·ε(f32)` on top of the elementwise bound.
    pub fn log_softmax(dtype: DType, k: usize) -> Self {
        let base = Self::elementwise(dtype);
        Tolerance {
            atol: base.atol + Self::row_sum_slack(k) + 1e-5,
            rtol: base.rtol,
        }
    }

    /// The rounding of a row sum of `k` positive terms accumulated in f32.
    fn row_sum_slack(k: usize) -> f64 {
        4.0 * (k.max(1) as f64).sqrt() * f32::EPSILON as f64
    }

    /// Twice this tolerance: what two results, each within it of the reference, may differ by.
    pub fn doubled(self) -> Self {
        Tolerance {
            atol: 2.0 * self.atol,
            rtol: 2.0 * self.rtol,
        }
    }

    /// Whether `got` is within tolerance of `want`. NaN must meet NaN and ±inf the same ±inf.
    pub fn accepts(&self, got: f64, want: f64) -> bool {
        if want.is_nan() || got.is_nan() {
            return want.is_nan() && got.is_nan();
        }
        if want.is_infinite() || got.is_infinite() {
            return got == want;
        }
        (got - want).abs() <= self.atol + self.rtol * want.abs()
    }
}

/// The outcome of comparing a result with its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Elements compared.
    pub len: usize,
    /// Largest `|got − want|` over finite pairs.
    pub max_abs: f64,
    /// Largest `|got − want| / |want|` over finite pairs where the relative term dominates the
    /// tolerance (`|want| > atol / rtol`; every nonzero `want` when `atol` is 0).
    pub max_rel: f64,
    /// Elements outside tolerance (length mismatch counts every missing element).
    pub failures: usize,
    /// The first failing index with its values, if any.
    pub first_failure: Option<(usize, f64, f64)>,
}

impl Comparison {
    /// Whether every element passed.
    pub fn ok(&self) -> bool {
        self.failures == 0
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} outside tolerance, max abs {:.3e}, max rel {:.3e}",
            self.failures, self.len, self.max_abs, self.max_rel
        )?;
        if let Some((i, got, want)) = self.first_failure {
            write!(f, "; first at [{i}]: got {got:e}, want {want:e}")?;
        }
        Ok(())
    }
}

/// Compares `got` with `want` under `tol`.
pub fn compare(got: &[f64], want: &[f64], tol: Tolerance) -> Comparison {
    compare_each(got, want, |_| tol)
}

/// Compares `got` with `want`, element `i` under `tol(i)` (reductions, whose tolerance grows
/// with the magnitude of the terms summed into each output).
pub fn compare_each(
    got: &[f64],
    want: &[f64],
    tol: impl Fn(usize) -> Tolerance + Sync,
) -> Comparison {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let n = got.len().min(want.len());
    // Chunks in parallel, merged in index order (so `first_failure` is the lowest index).
    let parts: Vec<Comparison> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut part = Comparison {
                len: 0,
                max_abs: 0.0,
                max_rel: 0.0,
                failures: 0,
                first_failure: None,
            };
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let (g, w, tol) = (got[i], want[i], tol(i));
                if g.is_finite() && w.is_finite() {
                    let d = (g - w).abs();
                    part.max_abs = part.max_abs.max(d);
                    let floor = if tol.rtol > 0.0 {
                        tol.atol / tol.rtol
                    } else {
                        0.0
                    };
                    if w != 0.0 && w.abs() > floor {
                        part.max_rel = part.max_rel.max(d / w.abs());
                    }
                }
                if !tol.accepts(g, w) {
                    part.failures += 1;
                    part.first_failure.get_or_insert((i, g, w));
                }
            }
            part
        })
        .collect();
    let mut c = Comparison {
        len: want.len(),
        max_abs: 0.0,
        max_rel: 0.0,
        failures: got.len().abs_diff(want.len()),
        first_failure: None,
    };
    for p in parts {
        c.max_abs = c.max_abs.max(p.max_abs);
        c.max_rel = c.max_rel.max(p.max_rel);
        c.failures += p.failures;
        c.first_failure = c.first_failure.or(p.first_failure);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TF32 bound admits products of operands truncated to TF32 (the hardware's worst
    /// rounding) with room to spare, and still rejects a product missing one term.
    #[test]
    fn tf32_bound_admits_truncation_and_rejects_a_dropped_term() {
        let tf32 = |x: f32| f32::from_bits(x.to_bits() & 0xFFFF_E000) as f64;
        for (seed, k) in [
            (1u64, 1usize),
            (2, 9),
            (3, 31),
            (4, 72),
            (5, 520),
            (6, 2048),
        ] {
            let a: Vec<f32> = crate::testing::seeded(seed, 64 * k, -1.0, 1.0);
            let b: Vec<f32> = crate::testing::seeded(seed + 100, 64 * k, -1.0, 1.0);
            let (mut worst, mut caught) = (0.0f64, 0usize);
            for (ra, rb) in a.chunks(k).zip(b.chunks(k)) {
                let want: f64 = ra.iter().zip(rb).map(|(&x, &y)| x as f64 * y as f64).sum();
                let sum_abs: f64 = ra
                    .iter()
                    .zip(rb)
                    .map(|(&x, &y)| (x as f64 * y as f64).abs())
                    .sum();
                let got: f64 = ra.iter().zip(rb).map(|(&x, &y)| tf32(x) * tf32(y)).sum();
                let t = Tolerance::matmul_tf32(k, sum_abs);
                let slack = t.atol + t.rtol * want.abs();
                worst = worst.max((got - want).abs() / slack);
                // The same product without its largest term.
                let big = ra
                    .iter()
                    .zip(rb)
                    .map(|(&x, &y)| (x as f64 * y as f64).abs())
                    .fold(0.0, f64::max);
                caught += usize::from(!t.accepts(want - big.copysign(want), want) || big == 0.0);
            }
            assert!(
                worst < 0.5,
                "k {k}: truncation used {worst:.2} of the bound"
            );
            assert!(
                caught >= 60,
                "k {k}: a dropped term passed in {} of 64 rows",
                64 - caught
            );
        }
    }

    #[test]
    fn nan_and_inf_must_match() {
        let t = Tolerance::elementwise(DType::F32);
        assert!(t.accepts(f64::NAN, f64::NAN));
        assert!(!t.accepts(0.0, f64::NAN));
        assert!(!t.accepts(f64::NAN, 0.0));
        assert!(t.accepts(f64::INFINITY, f64::INFINITY));
        assert!(!t.accepts(f64::MAX, f64::INFINITY));
    }

    #[test]
    fn compare_counts_failures_and_length() {
        let c = compare(&[1.0, 2.0, 3.5], &[1.0, 2.0, 3.0, 4.0], Tolerance::EXACT);
        assert_eq!(c.failures, 2);
        assert_eq!(c.first_failure, Some((2, 3.5, 3.0)));
        assert!(!c.ok());
        assert!(compare(&[1.0], &[1.0 + 1e-7], Tolerance::elementwise(DType::F32)).ok());
    }

    #[test]
    fn compare_merges_parallel_chunks_in_index_order() {
        // Failures in the second and third 65536-element chunk: the first is reported.
        let want: Vec<f64> = (0..200_000).map(|i| i as f64).collect();
        let mut got = want.clone();
        got[140_000] += 1.0;
        got[70_000] -= 2.0;
        let c = compare(&got, &want, Tolerance::EXACT);
        assert_eq!(c.failures, 2);
        assert_eq!(c.first_failure, Some((70_000, 69_998.0, 70_000.0)));
        assert_eq!(c.max_abs, 2.0);
    }
}
