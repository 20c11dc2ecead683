//! Histograms: bincount-style over integer input, histc-style over a float range.
//!
//! | variant | bins live in | per element | automatic choice |
//! |---|---|---|---|
//! | `shared` | shared memory per cube, merged with one global atomic per non-empty bin | one shared atomic | bins fit in a quarter of shared memory (≤ 4096 bins) |
//! | `shared_runs` | same | one shared atomic per run of equal bins | forced only |
//! | `global_runs` | global memory | one global atomic per run of equal bins | more bins than fit |
//! | `global` | global memory | one global atomic | forced only (the naive baseline) |
//!
//! Runs: each unit counts consecutive equal bins in a register and issues one atomic per run.
//! On uniform data this costs one compare per element; when every value falls in one bin it
//! turns a unit's whole share into one atomic, so the hot bin is not serialized. Measured on
//! the H200 (BENCHMARKS.md), 256 bins over 512M f32: global atomics lose 585× on one-bin data
//! without runs and 1.7× with them, so the global fallback always aggregates runs; the
//! privatized bins absorb the same contention in shared memory (one-bin data runs as fast as
//! uniform data with or without runs) and runs only cost there (10% on uniform data), so the
//! shared variant does not aggregate.
//!
//! Counts are u32. The input is limited to `u32::MAX` elements ([`ShapeError::TooLarge`]), so
//! no count can overflow.

use crate::guard::LaunchKey;
use crate::ops::group::spread_cubes;
use crate::ops::{split_body_tail, unsupported_dtype, width_dividing};
use crate::{
    Caps, DType, DeviceTensor, Element, Error, Layout, Scalar, ShapeError, TensorMut, TensorRef,
    caps_of,
};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::histogram::{HistConfig, fill_u32_kernel, histogram_kernel};
use std::fmt;

/// How input values map to bins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binning {
    /// Integer input (`u32` or `i32`): value `v` counts in bin `v` when `0 ≤ v < bins`; other
    /// values are dropped (`torch.bincount(x, minlength=bins)` restricted to `bins`).
    Index,
    /// Float input (f32/f16/bf16): `bins` equal-width bins over `[lo, hi]`; bin
    /// `⌊(x − lo) · s⌋` with `s = bins / (hi − lo)`, both computed in f32, clamped so `x = hi`
    /// lands in the last bin. Values outside `[lo, hi]` and NaN are dropped (as `torch.histc`).
    Range {
        /// Lower bound (inclusive).
        lo: f32,
        /// Upper bound (inclusive).
        hi: f32,
    },
}

/// A histogram variant (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HistogramVariant {
    /// Private per-cube bins in shared memory (else global atomics).
    pub shared: bool,
    /// One atomic per run of equal bins (else one per element).
    pub runs: bool,
}

impl fmt::Display for HistogramVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.shared { "shared" } else { "global" })?;
        if self.runs {
            f.write_str("_runs")?;
        }
        Ok(())
    }
}

impl HistogramVariant {
    /// Every variant (for tests and benchmarks).
    pub const ALL: [HistogramVariant; 4] = [
        HistogramVariant {
            shared: true,
            runs: true,
        },
        HistogramVariant {
            shared: true,
            runs: false,
        },
        HistogramVariant {
            shared: false,
            runs: true,
        },
        HistogramVariant {
            shared: false,
            runs: false,
        },
    ];

    /// Most bins the shared variants hold: a quarter of the device's shared memory, at most
    /// 4096 (more would cut occupancy and make the per-cube merge dominate).
    pub fn max_shared_bins(caps: &Caps) -> usize {
        (caps.max_shared_bytes / 4 / 4).min(4096)
    }

    /// The automatic choice for `bins` bins: privatized bins when they fit, else global
    /// atomics with run aggregation (see the module docs for the measurements).
    pub fn select(caps: &Caps, bins: usize) -> Self {
        let shared = bins <= Self::max_shared_bins(caps);
        HistogramVariant {
            shared,
            runs: !shared,
        }
    }
}

/// A validated histogram problem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HistogramSpec {
    pub len: usize,
    pub bins: usize,
    pub dtype: DType,
    pub lo: f32,
    pub hi: f32,
    pub scale: f32,
    pub float: bool,
}

impl HistogramSpec {
    pub(crate) fn new(
        input: &Layout,
        counts: &Layout,
        binning: Binning,
    ) -> Result<Self, ShapeError> {
        input.expect_nonempty("input")?;
        input.expect_dense("input")?;
        if counts.dtype != DType::U32 {
            return Err(ShapeError::DTypeMismatch {
                name: "counts",
                expected: DType::U32,
                got: counts.dtype,
            });
        }
        if counts.shape.len() != 1 {
            return Err(ShapeError::Rank {
                name: "counts",
                expected: 1,
                shape: counts.shape.clone(),
            });
        }
        let bins = counts.shape[0];
        if bins == 0 {
            return Err(ShapeError::NoBins);
        }
        counts.expect_dense("counts")?;
        let (lo, hi, scale, float) = match binning {
            Binning::Index => {
                if !matches!(input.dtype, DType::U32 | DType::I32) {
                    return Err(ShapeError::DTypeKind {
                        name: "input",
                        expected: "u32 or i32 for Binning::Index",
                        got: input.dtype,
                    });
                }
                (0.0, 0.0, 0.0, false)
            }
            Binning::Range { lo, hi } => {
                if !input.dtype.is_float() {
                    return Err(ShapeError::DTypeKind {
                        name: "input",
                        expected: "a float for Binning::Range",
                        got: input.dtype,
                    });
                }
                let width = hi - lo;
                let scale = bins as f32 / width;
                let valid = lo.is_finite()
                    && hi.is_finite()
                    && lo < hi
                    && width.is_finite()
                    && scale.is_finite()
                    && scale > 0.0;
                if !valid {
                    return Err(ShapeError::BadRange {
                        lo: lo.to_string(),
                        hi: hi.to_string(),
                    });
                }
                (lo, hi, scale, true)
            }
        };
        Ok(Self {
            len: input.num_elems(),
            bins,
            dtype: input.dtype,
            lo,
            hi,
            scale,
            float,
        })
    }
}

/// Counts `input` into `counts` (overwritten): `counts[b] = #{ i : bin(input[i]) = b }`, with
/// `bins = counts.len()` and the bin of a value given by `binning` ([`Binning`]).
///
/// Shapes: `input` dense of any shape (flattened), non-empty, at most `u32::MAX` elements;
/// `counts` dense, rank 1, dtype u32, at least one bin. Results are exact.
///
/// # Errors
/// [`Error::Shape`]: empty input, no bins ([`ShapeError::NoBins`]), counts not u32 or not
/// rank 1, an input dtype that does not fit `binning` ([`ShapeError::DTypeKind`]), a range that
/// is not finite and increasing ([`ShapeError::BadRange`]), strides; [`Error::UnsupportedDType`]
/// (bf16 on WGSL); [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{DeviceTensor, ops::histogram::Binning};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let x = DeviceTensor::from_slice(client, &[0.1f32, 0.5, 0.55, 0.99], &[4])?;
/// let mut counts = DeviceTensor::<u32>::empty(client, &[2])?;
/// cubeport::histogram_into(client, x.as_ref(), counts.as_mut(), Binning::Range { lo: 0.0, hi: 1.0 })?;
/// assert_eq!(counts.to_vec(client)?, vec![1, 3]);
/// # Ok(()) }
/// ```
pub fn histogram_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    counts: TensorMut<'_>,
    binning: Binning,
) -> Result<(), Error> {
    histogram_impl(client, input, counts, binning, None)
}

/// [`histogram_into`] with a forced variant.
///
/// # Errors
/// As [`histogram_into`]; [`Error::Unsupported`] for a shared variant with more bins than
/// [`HistogramVariant::max_shared_bins`].
pub fn histogram_with<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    counts: TensorMut<'_>,
    binning: Binning,
    variant: HistogramVariant,
) -> Result<(), Error> {
    histogram_impl(client, input, counts, binning, Some(variant))
}

/// `torch.bincount`-style counts of `u32`/`i32` values into `bins` bins (values outside
/// `0..bins` dropped), as a new tensor.
///
/// # Errors
/// As [`histogram_into`].
pub fn bincount<R: Runtime, S: Scalar>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<S>,
    bins: usize,
) -> Result<DeviceTensor<u32>, Error> {
    let mut counts = DeviceTensor::<u32>::empty(client, &[bins])?;
    histogram_into(client, input.as_ref(), counts.as_mut(), Binning::Index)?;
    Ok(counts)
}

/// `torch.histc`-style counts of float values over `[lo, hi]` in `bins` bins, as a new tensor.
///
/// # Errors
/// As [`histogram_into`].
pub fn histc<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<E>,
    bins: usize,
    lo: f32,
    hi: f32,
) -> Result<DeviceTensor<u32>, Error> {
    let mut counts = DeviceTensor::<u32>::empty(client, &[bins])?;
    histogram_into(
        client,
        input.as_ref(),
        counts.as_mut(),
        Binning::Range { lo, hi },
    )?;
    Ok(counts)
}

fn histogram_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    counts: TensorMut<'_>,
    binning: Binning,
    forced: Option<HistogramVariant>,
) -> Result<(), Error> {
    const OP: &str = "histogram";
    let spec =
        HistogramSpec::new(&input.layout, &counts.layout, binning).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(unsupported_dtype(&caps, OP, spec.dtype));
    }
    let variant = forced.unwrap_or_else(|| HistogramVariant::select(&caps, spec.bins));
    if variant.shared && spec.bins > HistogramVariant::max_shared_bins(&caps) {
        return Err(Error::Unsupported {
            op: OP,
            backend: caps.backend,
            reason: format!(
                "{variant} holds at most {} bins on this device, asked for {}",
                HistogramVariant::max_shared_bins(&caps),
                spec.bins
            ),
        });
    }
    let key = LaunchKey::new(OP)
        .layout(&input.layout)
        .layout(&counts.layout)
        .with((std::mem::discriminant(&binning), variant));
    crate::guard::launch_op(client, OP, key, || {
        launch(client, &caps, input.handle, counts.handle, &spec, variant)
    })
}

fn launch<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    input: &Handle,
    counts: &Handle,
    spec: &HistogramSpec,
    variant: HistogramVariant,
) -> Result<(), Error> {
    let cfg = HistConfig {
        shared: variant.shared,
        runs: variant.runs,
        float: spec.float,
        shared_bins: if variant.shared { spec.bins } else { 0 },
    };
    let fill_cubes = spec.bins.div_ceil(256).min(1024);
    // SAFETY: `HistogramSpec::new` proved `counts` dense with `bins` u32 words.
    unsafe {
        fill_u32_kernel::launch_unchecked::<R>(
            client,
            spread_cubes(caps, fill_cubes),
            CubeDim::new_1d(256),
            ArrayArg::from_raw_parts(counts.clone(), spec.bins),
            spec.bins,
            0u32,
        );
    }
    let vector = width_dividing(caps, spec.dtype, spec.len);
    let (body, tail) = split_body_tail(spec.len, vector, spec.dtype);
    let fill = caps.num_sms.map_or(256, |sms| sms as usize * 8);
    let mut parts = vec![(0usize, body, vector)];
    if tail > 0 {
        parts.push((body, tail, 1));
    }
    for (offset, len, n) in parts {
        let vecs = len / n;
        let cubes = vecs.div_ceil(256).clamp(1, fill);
        let handle = if offset == 0 {
            input.clone()
        } else {
            input
                .clone()
                .offset_start((offset * spec.dtype.size()) as u64)
        };
        macro_rules! go {
            ($T:ty) => {
                // SAFETY: `input` holds `spec.len` dense elements of `$T`'s size (i32 is read
                // as u32: negative values become ≥ 2^31 and fall outside every bin); this part
                // covers `len` of them from `offset`, `n` divides `len`; `counts` holds `bins`
                // words; `cfg.shared_bins == bins` when shared.
                unsafe {
                    histogram_kernel::launch_unchecked::<$T, R>(
                        client,
                        spread_cubes(caps, cubes),
                        CubeDim::new_1d(256),
                        n,
                        ArrayArg::from_raw_parts(handle, len),
                        ArrayArg::from_raw_parts(counts.clone(), spec.bins),
                        vecs,
                        spec.bins as u32,
                        spec.lo,
                        spec.hi,
                        spec.scale,
                        cfg,
                    )
                }
            };
        }
        match spec.dtype {
            DType::F32 => go!(f32),
            DType::F16 => go!(half::f16),
            DType::BF16 => go!(half::bf16),
            DType::U32 | DType::I32 => go!(u32),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;

    #[test]
    fn validates() {
        let x = dense(&[10], DType::F32);
        let xi = dense(&[10], DType::I32);
        let c = dense(&[4], DType::U32);
        let range = Binning::Range { lo: 0.0, hi: 1.0 };
        let ok = HistogramSpec::new(&x, &c, range).unwrap();
        assert_eq!((ok.bins, ok.len, ok.scale), (4, 10, 4.0));
        assert!(HistogramSpec::new(&xi, &c, Binning::Index).is_ok());
        assert_eq!(
            HistogramSpec::new(&x, &dense(&[0], DType::U32), range).unwrap_err(),
            ShapeError::NoBins
        );
        assert!(matches!(
            HistogramSpec::new(&dense(&[0], DType::F32), &c, range).unwrap_err(),
            ShapeError::Empty { .. }
        ));
        assert!(matches!(
            HistogramSpec::new(&x, &dense(&[4], DType::F32), range).unwrap_err(),
            ShapeError::DTypeMismatch { .. }
        ));
        assert!(matches!(
            HistogramSpec::new(&x, &dense(&[2, 2], DType::U32), range).unwrap_err(),
            ShapeError::Rank { .. }
        ));
        assert!(matches!(
            HistogramSpec::new(&x, &c, Binning::Index).unwrap_err(),
            ShapeError::DTypeKind { .. }
        ));
        assert!(matches!(
            HistogramSpec::new(&xi, &c, range).unwrap_err(),
            ShapeError::DTypeKind { .. }
        ));
        for (lo, hi) in [
            (1.0, 1.0),
            (2.0, 1.0),
            (f32::NAN, 1.0),
            (0.0, f32::NAN),
            (f32::NEG_INFINITY, 0.0),
            (0.0, f32::INFINITY),
            (-3e38, 3e38),
            (0.0, 1e-45),
        ] {
            assert!(
                matches!(
                    HistogramSpec::new(&x, &c, Binning::Range { lo, hi }).unwrap_err(),
                    ShapeError::BadRange { .. }
                ),
                "[{lo}, {hi}]"
            );
        }
    }
}
