//! Pure validation and selection of RMSNorm / LayerNorm: no device, so every error path is
//! unit-tested.

use crate::ops::group::CUBE_UNITS;
use crate::ops::{RowGroup, gcd, width_dividing};
use crate::{Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::norm::NormConfig;
use std::fmt;

/// Vectors per unit the automatic choice aims for: a plane per 4096-element row of halves
/// (512 vectors of 8) holds 16 vectors per lane and measured far below the copy, while f32
/// rows at 4 vectors per unit come close to it, also for 16384-element rows in cubes of 1024
/// units where 256 units (16 vectors each) were far below (BENCHMARKS.md, Norm): more units
/// per row keep more loads in flight per SM.
const NORM_VECTORS_PER_UNIT: usize = 4;

/// Most vectors a unit of a cube of up to 256 units keeps in registers between the passes
/// (more would spill; fewer in larger cubes, see `cached_vectors`).
const MAX_CACHED: usize = 16;

/// Which normalization of the row the op computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NormKind {
    /// `x / √(mean(x²) + eps) · w`.
    Rms,
    /// `(x − mean) / √(var + eps) · w + b` (biased variance).
    Layer,
}

impl NormKind {
    /// Both kinds (for tests and benchmarks).
    pub const ALL: [NormKind; 2] = [NormKind::Rms, NormKind::Layer];

    /// The op's name: `rms_norm` or `layer_norm`.
    pub fn name(self) -> &'static str {
        match self {
            NormKind::Rms => "rms_norm",
            NormKind::Layer => "layer_norm",
        }
    }
}

impl fmt::Display for NormKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A normalization variant: how units group over a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NormVariant {
    /// `norm_rows_kernel` with this row group: the row's statistics combined over the group
    /// (plane shuffles or a shared-memory tree), then the write.
    Rows(RowGroup),
    /// The same kernel with the row never held in registers: one pass of sums, then a second
    /// read (mostly from L2) that writes. What rows too long for the registers take anyway;
    /// forced, it trades registers (more resident rows per SM) for the second read.
    Streamed(RowGroup),
}

impl fmt::Display for NormVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NormVariant::Rows(group) => group.fmt(f),
            NormVariant::Streamed(group) => write!(f, "streamed_{group}"),
        }
    }
}

/// The tensors of one call, as layouts (validation needs no handles).
pub(crate) struct NormLayouts<'a> {
    pub input: &'a Layout,
    pub residual: Option<&'a Layout>,
    pub weight: Option<&'a Layout>,
    pub bias: Option<&'a Layout>,
    pub sum: Option<&'a Layout>,
    pub output: &'a Layout,
}

/// A validated normalization problem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NormSpec {
    pub rows: usize,
    pub row_len: usize,
    /// Row pitches (elements) of input, residual, sum and output (`row_len` when dense; the
    /// input's stands in for an absent residual, the output's for an absent sum).
    pub pitches: [usize; 4],
    pub dtype: DType,
    pub kind: NormKind,
    pub weight: bool,
    pub bias: bool,
    pub residual: bool,
    pub eps: f32,
}

impl NormSpec {
    pub(crate) fn new(t: &NormLayouts<'_>, kind: NormKind, eps: f32) -> Result<Self, ShapeError> {
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(ShapeError::InvalidParameter {
                name: "eps",
                value: eps.to_string(),
                expected: "finite and ≥ 0",
            });
        }
        if t.input.shape.is_empty() {
            return Err(ShapeError::AxisOutOfRange { axis: 0, rank: 0 });
        }
        t.input.expect_nonempty("input")?;
        let (rows, row_len, in_pitch) = t.input.expect_rows("input")?;
        let (_, _, out_pitch) = t.output.expect_rows("output")?;
        t.output.expect_matches("output", t.input)?;
        if t.residual.is_some() != t.sum.is_some() {
            // The public ops pass both or neither; this guards the internal contract.
            return Err(ShapeError::InvalidParameter {
                name: "residual",
                value: "given without a sum (or a sum without it)".into(),
                expected: "both or neither",
            });
        }
        let res_pitch = match t.residual {
            Some(r) => {
                let (_, _, p) = r.expect_rows("residual")?;
                r.expect_matches("residual", t.input)?;
                p
            }
            None => in_pitch,
        };
        let sum_pitch = match t.sum {
            Some(s) => {
                let (_, _, p) = s.expect_rows("sum")?;
                s.expect_matches("sum", t.input)?;
                p
            }
            None => out_pitch,
        };
        for (name, param) in [("weight", t.weight), ("bias", t.bias)] {
            if let Some(p) = param {
                expect_row_param(name, p, row_len, t.input.dtype)?;
            }
        }
        Ok(Self {
            rows,
            row_len,
            pitches: [in_pitch, res_pitch, sum_pitch, out_pitch],
            dtype: t.input.dtype,
            kind,
            weight: t.weight.is_some(),
            bias: t.bias.is_some(),
            residual: t.residual.is_some(),
            eps,
        })
    }

    /// The vector width: the widest the device takes that divides the row and every pitch.
    pub(crate) fn vector(&self, caps: &Caps) -> usize {
        let granule = self.pitches.iter().fold(self.row_len, |g, &p| gcd(g, p));
        width_dividing(caps, self.dtype, granule)
    }
}

/// A weight or bias: one dense row of `row_len` in the input's dtype.
fn expect_row_param(
    name: &'static str,
    p: &Layout,
    row_len: usize,
    dtype: DType,
) -> Result<(), ShapeError> {
    if p.dtype != dtype {
        return Err(ShapeError::DTypeMismatch {
            name,
            expected: dtype,
            got: p.dtype,
        });
    }
    if p.shape != [row_len] {
        return Err(ShapeError::ShapeMismatch {
            name,
            expected: vec![row_len],
            got: p.shape.clone(),
        });
    }
    p.expect_dense(name)
}

/// What the launcher runs: the vector width and the checked comptime configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NormPlan {
    pub vector: usize,
    pub cfg: NormConfig,
}

impl NormVariant {
    /// The automatic choice: [`RowGroup::select`] for the row's vectors, widened (up to a
    /// cube of 1024 units, or the device's largest cube) until each unit holds at most
    /// [`NORM_VECTORS_PER_UNIT`] vectors; bf16 RMSNorm rows of 8-wide vectors that this gives
    /// 512 units take 1024 (LayerNorm keeps 512: at 1024 it ran 0.70 of the copy against 0.98).
    pub(crate) fn select(caps: &Caps, spec: &NormSpec) -> Self {
        let row_vecs = spec.row_len / spec.vector(caps);
        let base = RowGroup::select(caps, row_vecs);
        let want = row_vecs.div_ceil(NORM_VECTORS_PER_UNIT).next_power_of_two();
        let widest = RowGroup::widest(caps);
        let mut group = base.group.max(want.min(widest as usize) as u32);
        // bf16 rows at 512 units of 4 vectors: NVRTC keeps the unpacked halves of the cached
        // vectors and takes 40 registers (offline SASS), so three such cubes fit an SM where
        // f16's 32 registers fit four; 1024 units of 2 vectors take 32 (BENCHMARKS.md, Norm).
        if spec.dtype == DType::BF16
            && spec.kind == NormKind::Rms
            && spec.vector(caps) == 8
            && group == 512
            && widest >= 1024
        {
            group = 1024;
        }
        NormVariant::Rows(RowGroup { group, ..base })
    }

    /// The launch plan of this variant for `spec`, or [`Error::Unsupported`] when the device
    /// cannot run its row group.
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &NormSpec,
        op: &'static str,
    ) -> Result<NormPlan, Error> {
        let (group, streamed) = match self {
            NormVariant::Rows(group) => (group, false),
            NormVariant::Streamed(group) => (group, true),
        };
        let cfg = group.config(caps, op)?;
        let vector = spec.vector(caps);
        Ok(NormPlan {
            vector,
            cfg: NormConfig {
                group: cfg,
                layer: spec.kind == NormKind::Layer,
                weight: spec.weight,
                bias: spec.bias,
                residual: spec.residual,
                nan_checks: !caps.ieee_nan,
                // f16 squares (at most 65504² each) cannot overflow an f32 sum.
                scaled: spec.dtype != DType::F16,
                cached: if streamed {
                    0
                } else {
                    cached_vectors(spec.row_len / vector, cfg.group)
                },
            },
        })
    }
}

/// Vectors each unit keeps in registers between the passes: rows that fit are read once;
/// longer rows are read twice. `0` means streamed. The bound is [`MAX_CACHED`] up to 256 units
/// per cube and shrinks in proportion above (8 at 512, 4 at 1024): cubecl compiles a kernel
/// for its cube size (`__launch_bounds__`), which leaves 64 registers per unit at 1024 units,
/// and 16 cached 16-byte vectors alone would take all of them.
fn cached_vectors(row_vecs: usize, group: u32) -> usize {
    let group = group.max(1) as usize;
    let per_unit = row_vecs.div_ceil(group);
    let cube = CUBE_UNITS as usize;
    let bound = MAX_CACHED * cube / group.max(cube);
    if per_unit <= bound { per_unit } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;

    fn layouts<'a>(x: &'a Layout, y: &'a Layout) -> NormLayouts<'a> {
        NormLayouts {
            input: x,
            residual: None,
            weight: None,
            bias: None,
            sum: None,
            output: y,
        }
    }

    /// The automatic row group on a CUDA device (1024 units per cube): about 4 vectors per
    /// unit, except bf16 RMSNorm rows that would take 512 units, which take 1024 (registers,
    /// see `NormVariant::select`; LayerNorm keeps 512); every group caches the whole row.
    #[test]
    fn row_groups_on_cuda() {
        let caps = Caps::cuda_h100_model();
        // (dtype, rows, row length, RMSNorm's group, LayerNorm's group, RMSNorm's cached vectors)
        for (dtype, rows, len, want, layer_want, cached) in [
            (DType::F32, 16384, 4096, 256, 256, 4),
            (DType::F16, 16384, 4096, 128, 128, 4),
            (DType::BF16, 16384, 4096, 128, 128, 4),
            (DType::F32, 4096, 16384, 1024, 1024, 4),
            (DType::F16, 4096, 16384, 512, 512, 4),
            (DType::BF16, 4096, 16384, 1024, 512, 2),
            (DType::BF16, 64, 32768, 1024, 1024, 4),
        ] {
            let x = dense(&[rows, len], dtype);
            let layer = NormSpec::new(&layouts(&x, &x), NormKind::Layer, 1e-5).unwrap();
            let NormVariant::Rows(lg) = NormVariant::select(&caps, &layer) else {
                panic!("{dtype} {rows}x{len}: LayerNorm not a row group");
            };
            assert_eq!(lg.group, layer_want, "LayerNorm {dtype} {rows}x{len}");
            let spec = NormSpec::new(&layouts(&x, &x), NormKind::Rms, 1e-5).unwrap();
            let NormVariant::Rows(group) = NormVariant::select(&caps, &spec) else {
                panic!("{dtype} {rows}x{len}: not a row group");
            };
            let plan = NormVariant::Rows(group)
                .plan(&caps, &spec, "rms_norm")
                .unwrap();
            assert_eq!(
                (group.group, plan.cfg.cached),
                (want, cached),
                "{dtype} {rows}x{len}"
            );
        }
    }

    #[test]
    fn validates_rows_and_parameters() {
        let x = dense(&[3, 8], DType::F32);
        let w = dense(&[8], DType::F32);
        let mut t = layouts(&x, &x);
        t.weight = Some(&w);
        t.bias = Some(&w);
        let spec = NormSpec::new(&t, NormKind::Layer, 1e-5).unwrap();
        assert_eq!((spec.rows, spec.row_len, spec.pitches), (3, 8, [8; 4]));
        assert!(spec.weight && spec.bias && !spec.residual);

        for eps in [-1.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                NormSpec::new(&t, NormKind::Rms, eps),
                Err(ShapeError::InvalidParameter { name: "eps", .. })
            ));
        }
        let short = dense(&[7], DType::F32);
        t.weight = Some(&short);
        assert!(matches!(
            NormSpec::new(&t, NormKind::Rms, 0.0),
            Err(ShapeError::ShapeMismatch { name: "weight", .. })
        ));
        let half = dense(&[8], DType::F16);
        t.weight = None;
        t.bias = Some(&half);
        assert!(matches!(
            NormSpec::new(&t, NormKind::Layer, 0.0),
            Err(ShapeError::DTypeMismatch { name: "bias", .. })
        ));
    }

    #[test]
    fn validates_tensors() {
        let x = dense(&[3, 8], DType::F32);
        let other = dense(&[8, 3], DType::F32);
        assert!(matches!(
            NormSpec::new(&layouts(&x, &other), NormKind::Rms, 0.0),
            Err(ShapeError::ShapeMismatch { name: "output", .. })
        ));
        let empty = dense(&[3, 0], DType::F32);
        assert!(matches!(
            NormSpec::new(&layouts(&empty, &empty), NormKind::Rms, 0.0),
            Err(ShapeError::Empty { .. })
        ));
        let scalar = dense(&[], DType::F32);
        assert!(matches!(
            NormSpec::new(&layouts(&scalar, &scalar), NormKind::Rms, 0.0),
            Err(ShapeError::AxisOutOfRange { axis: 0, rank: 0 })
        ));
        let mut t = layouts(&x, &x);
        t.residual = Some(&other);
        t.sum = Some(&x);
        assert!(matches!(
            NormSpec::new(&t, NormKind::Rms, 0.0),
            Err(ShapeError::ShapeMismatch {
                name: "residual",
                ..
            })
        ));
        t.residual = Some(&x);
        t.sum = None;
        assert!(matches!(
            NormSpec::new(&t, NormKind::Rms, 0.0),
            Err(ShapeError::InvalidParameter {
                name: "residual",
                ..
            })
        ));
    }

    #[test]
    fn pitched_rows_narrow_the_vector() {
        let mut x = dense(&[4, 8], DType::F32);
        x.strides = vec![12, 1];
        x.buffer_bytes = 4 * 12 * 4;
        let y = dense(&[4, 8], DType::F32);
        let spec = NormSpec::new(&layouts(&x, &y), NormKind::Rms, 0.0).unwrap();
        assert_eq!(spec.pitches, [12, 12, 8, 8]);
        assert_eq!(spec.pitches.iter().fold(spec.row_len, |g, &p| gcd(g, p)), 4);
    }

    #[test]
    fn caches_rows_that_fit_in_registers() {
        assert_eq!(cached_vectors(1024, 256), 4);
        assert_eq!(cached_vectors(16 * 256, 256), 16);
        assert_eq!(cached_vectors(16 * 256 + 1, 256), 0);
    }
}
