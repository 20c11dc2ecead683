//! Pure validation and selection of histograms: no device, so every error path is unit-tested.

use crate::ops::unsupported;
use crate::{BackendKind, Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::histogram::HistConfig;
use std::fmt;

/// How input values map to bins.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
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

/// Vectors each unit of the histogram kernel loads before binning them (`HistConfig::batch`):
/// more loads in flight per unit where the grid is already as large as the device holds. On
/// the H100, CUDA ran 3% slower with 8 than with 4 and wgpu-Vulkan 3% faster (16 no faster
/// than 8); 1 was 1.25× slower on wgpu (BENCHMARKS.md, wgpu section).
fn default_batch(caps: &Caps) -> usize {
    match caps.backend {
        BackendKind::Cuda => 4,
        _ => 8,
    }
}

/// A batch set by [`crate::testing::set_histogram_batch`] (0: the backend's own), so a
/// benchmark can time other batches on one device without a rebuild.
#[cfg(feature = "testing")]
pub(crate) static BATCH_OVERRIDE: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The vectors per unit and step the histogram kernel is built for.
fn load_batch(caps: &Caps) -> usize {
    #[cfg(feature = "testing")]
    {
        let b = BATCH_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed);
        if b > 0 {
            return b;
        }
    }
    default_batch(caps)
}

/// A histogram variant: where the bins live, and whether each unit aggregates runs of equal
/// bins before its atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HistogramVariant {
    /// Private per-cube bins in shared memory, one shared atomic per element.
    Shared,
    /// Private per-cube bins, one shared atomic per run of equal bins.
    SharedRuns,
    /// Bins in global memory, one global atomic per run of equal bins.
    GlobalRuns,
    /// Bins in global memory, one global atomic per element (the naive baseline).
    Global,
}

impl fmt::Display for HistogramVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HistogramVariant::Shared => "shared",
            HistogramVariant::SharedRuns => "shared_runs",
            HistogramVariant::GlobalRuns => "global_runs",
            HistogramVariant::Global => "global",
        })
    }
}

impl HistogramVariant {
    /// Every variant (for tests and benchmarks).
    pub const ALL: [HistogramVariant; 4] = [
        HistogramVariant::SharedRuns,
        HistogramVariant::Shared,
        HistogramVariant::GlobalRuns,
        HistogramVariant::Global,
    ];

    /// Whether the bins live in shared memory (then at most [`Self::max_shared_bins`]).
    pub fn is_shared(self) -> bool {
        matches!(
            self,
            HistogramVariant::Shared | HistogramVariant::SharedRuns
        )
    }

    fn runs(self) -> bool {
        matches!(
            self,
            HistogramVariant::SharedRuns | HistogramVariant::GlobalRuns
        )
    }

    /// Most bins the shared variants hold: a quarter of the device's shared memory, at most
    /// 4096 (more would cut occupancy and make the per-cube merge dominate).
    pub fn max_shared_bins(caps: &Caps) -> usize {
        (caps.max_shared_bytes / 4 / 4).min(4096)
    }

    /// The automatic choice: privatized bins when they fit, else global atomics with run
    /// aggregation (see the module docs for why).
    pub(crate) fn select(caps: &Caps, spec: &HistogramSpec) -> Self {
        if spec.bins <= Self::max_shared_bins(caps) {
            HistogramVariant::Shared
        } else {
            HistogramVariant::GlobalRuns
        }
    }

    /// The kernel configuration, or [`Error::Unsupported`] for shared bins beyond
    /// [`Self::max_shared_bins`].
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &HistogramSpec,
        op: &'static str,
    ) -> Result<HistConfig, Error> {
        let shared = self.is_shared();
        if shared && spec.bins > Self::max_shared_bins(caps) {
            return Err(unsupported(
                caps,
                op,
                format!(
                    "{self} holds at most {} bins on this device, asked for {}",
                    Self::max_shared_bins(caps),
                    spec.bins
                ),
            ));
        }
        Ok(HistConfig {
            shared,
            runs: self.runs(),
            float: spec.float,
            shared_bins: if shared { spec.bins } else { 0 },
            batch: load_batch(caps),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;

    /// Each backend's batch of loads per unit: 4 on CUDA, 8 on wgpu (what s30-a timed best).
    #[test]
    fn batch_per_backend() {
        let mut caps = Caps::cuda_h100_model();
        assert_eq!(default_batch(&caps), 4);
        caps.backend = BackendKind::Wgpu;
        assert_eq!(default_batch(&caps), 8);
    }

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
