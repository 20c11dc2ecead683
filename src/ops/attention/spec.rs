//! Pure validation and selection of attention: no device, so every error path is unit-tested.

use crate::ops::{ReducePath, RowGroup};
use crate::{Caps, DType, Error, Layout, ShapeError};
use cubeport_kernels::attention::{AttentionConfig, AttentionMmaConfig};
use std::fmt;

/// Keys per tile of the SIMT kernel, widest first (one unit each; also the row group of its
/// reductions).
const SIMT_KEYS: [u32; 3] = [32, 16, 8];
/// Query rows per cube of the SIMT kernel.
const SIMT_ROWS: u32 = 8;
/// Largest head dimension the SIMT kernel stages in shared memory.
pub(crate) const SIMT_MAX_HEAD_DIM: usize = 128;

/// Which scores a query sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Mask {
    /// Every key.
    #[default]
    None,
    /// Causal, aligned to the bottom-right corner: query `i` sees key `j` when
    /// `j + Sq ≤ i + Sk` (FlashAttention's convention, PyTorch's `causal_lower_right`; the
    /// usual lower triangle when `Sq == Sk`).
    Causal,
}

/// Options of an attention call.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AttentionOptions {
    /// The mask.
    pub mask: Mask,
    /// Multiplies the scores before the softmax; `None` is `1/√D`.
    pub scale: Option<f32>,
}

impl AttentionOptions {
    /// The causal mask.
    pub fn causal(mut self) -> Self {
        self.mask = Mask::Causal;
        self
    }

    /// A softmax scale other than `1/√D`.
    pub fn scale(mut self, scale: f32) -> Self {
        self.scale = Some(scale);
        self
    }
}

/// An attention variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttentionVariant {
    /// `attention_simt_kernel`: K/V tiles of 32 keys (16 or 8 where shared memory is short) in
    /// shared memory, one unit per key and query row, the row's reductions along `path`; f32
    /// arithmetic on every backend, head dims up to 128.
    Simt(ReducePath),
    /// `attention_mma_kernel` (CUDA): `mma.sync` tensor cores, `rows` query rows per plane and
    /// `warps` planes per cube, K/V tiles of `keys` keys through a two-stage `cp.async`
    /// pipeline; f16/bf16, head dims a multiple of 16 up to 128, strides multiples of 8.
    Mma {
        /// Planes per cube.
        warps: u8,
        /// Keys per tile (a multiple of 16).
        keys: u16,
        /// Query rows per plane: 16 (Q fragments held in registers) or 32 (two row tiles share
        /// every K/V fragment read; Q fragments re-read from shared memory each tile).
        rows: u8,
    },
}

impl AttentionVariant {
    /// 4 planes of 16 query rows (Q fragments held in registers), 64 keys: the tensor-core
    /// shape the automatic choice takes for short query sequences and small grids.
    pub const MMA: AttentionVariant = AttentionVariant::Mma {
        warps: 4,
        keys: 64,
        rows: 16,
    };
}

impl fmt::Display for AttentionVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttentionVariant::Simt(path) => write!(f, "simt_{path}"),
            AttentionVariant::Mma {
                warps,
                keys,
                rows: 16,
            } => write!(f, "mma_w{warps}_k{keys}"),
            AttentionVariant::Mma { warps, keys, rows } => {
                write!(f, "mma_w{warps}_k{keys}_r{rows}")
            }
        }
    }
}

/// The tensors of one call, as layouts.
pub(crate) struct AttentionLayouts<'a> {
    pub q: &'a Layout,
    pub k: &'a Layout,
    pub v: &'a Layout,
    pub out: &'a Layout,
    pub lse: Option<&'a Layout>,
}

/// A validated attention problem.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttentionSpec {
    pub batch: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub sq: usize,
    pub sk: usize,
    pub head_dim: usize,
    /// `[batch, head, row]` strides (elements) of q, k, v and out; `D` has unit stride.
    pub strides: [[usize; 3]; 4],
    /// Elements each of q, k, v, out spans.
    pub spans: [usize; 4],
    pub dtype: DType,
    pub causal: bool,
    pub lse: bool,
    pub scale: f32,
}

fn rank4(name: &'static str, l: &Layout) -> Result<[usize; 4], ShapeError> {
    <[usize; 4]>::try_from(l.shape.as_slice()).map_err(|_| ShapeError::Rank {
        name,
        expected: 4,
        shape: l.shape.clone(),
    })
}

impl AttentionSpec {
    pub(crate) fn new(
        t: &AttentionLayouts<'_>,
        opts: AttentionOptions,
    ) -> Result<Self, ShapeError> {
        let [batch, heads, sq, head_dim] = rank4("q", t.q)?;
        let [kb, kv_heads, sk, kd] = rank4("k", t.k)?;
        t.q.expect_nonempty("q")?;
        t.k.expect_nonempty("k")?;
        if kb != batch || kd != head_dim || !heads.is_multiple_of(kv_heads) {
            return Err(ShapeError::ShapeMismatch {
                name: "k",
                expected: vec![batch, kv_heads.max(1), sk, head_dim],
                got: t.k.shape.clone(),
            });
        }
        if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return Err(ShapeError::ShapeMismatch {
                name: "k",
                expected: vec![batch, heads, sk, head_dim],
                got: t.k.shape.clone(),
            });
        }
        t.v.expect_matches("v", t.k)?;
        t.k.expect_matches(
            "k",
            &Layout {
                dtype: t.q.dtype,
                ..t.k.clone()
            },
        )?;
        t.out.expect_matches("out", t.q)?;
        let spans = [
            t.q.expect_strided("q", false)?,
            t.k.expect_strided("k", false)?,
            t.v.expect_strided("v", false)?,
            t.out.expect_strided("out", true)?,
        ];
        if let Some(lse) = t.lse {
            let want = Layout {
                shape: vec![batch, heads, sq],
                dtype: DType::F32,
                ..lse.clone()
            };
            lse.expect_matches("lse", &want)?;
            lse.expect_dense("lse")?;
        }
        let scale = opts.scale.unwrap_or(1.0 / (head_dim as f32).sqrt());
        if !scale.is_finite() {
            return Err(ShapeError::InvalidParameter {
                name: "scale",
                value: scale.to_string(),
                expected: "finite",
            });
        }
        let s = |l: &Layout| [l.strides[0], l.strides[1], l.strides[2]];
        Ok(Self {
            batch,
            heads,
            kv_heads,
            sq,
            sk,
            head_dim,
            strides: [s(t.q), s(t.k), s(t.v), s(t.out)],
            spans,
            dtype: t.q.dtype,
            causal: opts.mask == Mask::Causal,
            lse: t.lse.is_some(),
            scale,
        })
    }
}

/// What the launcher runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttentionPlan {
    Simt(AttentionConfig),
    Mma(AttentionMmaConfig),
}

impl AttentionVariant {
    /// The automatic choice: on tensor cores, [`AttentionVariant::tensor_core`]; else the SIMT
    /// kernel, combining through planes where the device advertises plane ops and a tile width
    /// that is a multiple of the plane width fits.
    pub(crate) fn select(caps: &Caps, spec: &AttentionSpec) -> Self {
        let mma = Self::tensor_core(caps, spec);
        if mma.plan(caps, spec, "attention").is_ok() {
            return mma;
        }
        if AttentionVariant::MMA.plan(caps, spec, "attention").is_ok() {
            return AttentionVariant::MMA;
        }
        let plane = AttentionVariant::Simt(ReducePath::Plane);
        if caps.plane.ops && plane.plan(caps, spec, "attention").is_ok() {
            plane
        } else {
            AttentionVariant::Simt(ReducePath::Shared)
        }
    }

    /// The tensor-core shape for a problem: two row tiles per plane (every K/V fragment read
    /// from shared memory feeds four MMAs instead of two; Q re-read from shared memory per
    /// tile) with 32-key tiles, or 64-key tiles for head dims up to 64, FlashAttention-2's
    /// shapes (causal too since a masked tile costs nothing on the others: BENCHMARKS.md); [`AttentionVariant::MMA`] (64 rows per cube) where the queries are too few to
    /// fill 128-row cubes or the cubes too few to cover every SM.
    pub(crate) fn tensor_core(caps: &Caps, spec: &AttentionSpec) -> Self {
        let cubes = spec.batch * spec.heads * spec.sq.div_ceil(128);
        if spec.sq <= 64 || cubes < caps.num_sms.map_or(0, |s| s as usize) {
            return AttentionVariant::MMA;
        }
        let keys = if spec.head_dim <= 64 { 64 } else { 32 };
        AttentionVariant::Mma {
            warps: 4,
            keys,
            rows: 32,
        }
    }

    /// The launch plan, or [`Error::Unsupported`] when the device or the problem rules the
    /// variant out (a head dim beyond 128, a tile that fits neither the shared memory nor, on
    /// the plane path, a multiple of the plane width). Tiles take 32 keys where they fit, else
    /// 16 or 8 (devices with 32 KiB of shared memory at head dim 128).
    pub(crate) fn plan(
        self,
        caps: &Caps,
        spec: &AttentionSpec,
        op: &'static str,
    ) -> Result<AttentionPlan, Error> {
        let path = match self {
            AttentionVariant::Simt(path) => path,
            AttentionVariant::Mma { warps, keys, rows } => {
                return mma_plan(caps, spec, op, warps as usize, keys as usize, rows as usize)
                    .map(AttentionPlan::Mma);
            }
        };
        if spec.head_dim > SIMT_MAX_HEAD_DIM {
            return Err(crate::ops::unsupported(
                caps,
                op,
                format!(
                    "head dim {} > {SIMT_MAX_HEAD_DIM} (the SIMT kernel stages K/V tiles in shared memory)",
                    spec.head_dim
                ),
            ));
        }
        let mut last_err = None;
        for keys in SIMT_KEYS {
            let group = match (RowGroup { path, group: keys }).config(caps, op) {
                Ok(mut g) => {
                    g.groups_per_cube = SIMT_ROWS;
                    g
                }
                Err(e) => {
                    last_err = Some(e);
                    continue;
                }
            };
            let cfg = AttentionConfig {
                group,
                head_dim: spec.head_dim,
                causal: spec.causal,
                lse: spec.lse,
            };
            let bytes = cfg.shared_words() * 4;
            if bytes <= caps.max_shared_bytes {
                return Ok(AttentionPlan::Simt(cfg));
            }
            last_err = Some(crate::ops::unsupported(
                caps,
                op,
                format!(
                    "{bytes} bytes of shared memory needed at {keys} keys per tile, device has {}",
                    caps.max_shared_bytes
                ),
            ));
        }
        Err(last_err.unwrap_or_else(|| crate::ops::unsupported(caps, op, "no tile width fits")))
    }
}

/// The tensor-core configuration, or why it cannot run here.
fn mma_plan(
    caps: &Caps,
    spec: &AttentionSpec,
    op: &'static str,
    warps: usize,
    keys: usize,
    rows: usize,
) -> Result<AttentionMmaConfig, Error> {
    let no = |reason: String| Err(crate::ops::unsupported(caps, op, reason));
    if !(caps.manual_mma && caps.copy_async && caps.plane.fixed_width() == Some(32)) {
        return no(
            "the tensor-core kernel needs manual MMA, cp.async and 32-wide planes (CUDA sm ≥ 80)"
                .into(),
        );
    }
    if !matches!(spec.dtype, DType::F16 | DType::BF16) {
        return no(format!(
            "the tensor-core kernel takes f16 or bf16, not {}",
            spec.dtype
        ));
    }
    let d = spec.head_dim;
    if !d.is_multiple_of(16) || d > 128 {
        return no(format!("head dim {d} is not a multiple of 16 up to 128"));
    }
    if !(1..=8).contains(&warps) || keys == 0 || !keys.is_multiple_of(16) || keys > 128 {
        return no(format!(
            "{warps} planes of {keys}-key tiles: planes 1..8, keys a multiple of 16 up to 128"
        ));
    }
    if rows != 16 && rows != 32 {
        return no(format!("{rows} query rows per plane: 16 or 32"));
    }
    // Every unit issues the same number of 16-byte copies of the Q tile and of each K/V tile.
    let units = 32 * warps;
    if !(16 * warps * d / 8).is_multiple_of(units) || !(keys * d / 8).is_multiple_of(units) {
        return no(format!(
            "{warps} planes cannot share the copies of {keys}-key tiles at head dim {d} evenly"
        ));
    }
    // Rows are copied as 16-byte vectors.
    if spec.strides[..3]
        .iter()
        .flatten()
        .any(|s| !s.is_multiple_of(8))
    {
        return no("q, k and v strides must be multiples of 8 elements (16-byte rows)".into());
    }
    let cfg = AttentionMmaConfig {
        head_dim: d,
        warps,
        m_tiles: rows / 16,
        q_regs: rows == 16,
        keys,
        causal: spec.causal,
        lse: spec.lse,
        raw_scores: spec.scale > 0.0,
    };
    let bytes = cfg.shared_bytes(spec.dtype.size());
    if bytes > caps.max_shared_bytes {
        return no(format!(
            "{bytes} bytes of shared memory needed, device has {}",
            caps.max_shared_bytes
        ));
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;

    fn layouts<'a>(q: &'a Layout, k: &'a Layout, out: &'a Layout) -> AttentionLayouts<'a> {
        AttentionLayouts {
            q,
            k,
            v: k,
            out,
            lse: None,
        }
    }

    /// The automatic choice on a CUDA device (132 SMs): 32 rows per plane with 64-key tiles
    /// for heads up to 64 (causal or not), else 32-key tiles; 16 rows per plane (`MMA`) for short
    /// query sequences, for grids of 128-row cubes that would not cover the SMs, and where the
    /// 32-row shape cannot split its copies evenly (D = 80); the SIMT kernel for f32.
    #[test]
    fn choice_on_cuda() {
        let caps = Caps::cuda_h100_model();
        let r32 = |keys| AttentionVariant::Mma {
            warps: 4,
            keys,
            rows: 32,
        };
        let plane = AttentionVariant::Simt(ReducePath::Plane);
        for ((b, h, s, d, causal, dtype), want) in [
            ((4, 32, 4096, 128, false, DType::F16), r32(32)),
            ((4, 32, 4096, 128, true, DType::BF16), r32(32)),
            ((4, 32, 4096, 64, false, DType::F16), r32(64)),
            ((4, 32, 4096, 64, true, DType::F16), r32(64)),
            ((4, 32, 4096, 80, false, DType::F16), AttentionVariant::MMA),
            ((4, 32, 64, 128, false, DType::F16), AttentionVariant::MMA),
            ((1, 8, 1024, 128, false, DType::F16), AttentionVariant::MMA),
            ((4, 32, 4096, 64, false, DType::F32), plane),
        ] {
            let q = dense(&[b, h, s, d], dtype);
            let mut opts = AttentionOptions::default();
            if causal {
                opts = opts.causal();
            }
            let spec = AttentionSpec::new(&layouts(&q, &q, &q), opts).unwrap();
            assert_eq!(
                AttentionVariant::select(&caps, &spec),
                want,
                "B{b} H{h} S{s} D{d} causal {causal} {dtype}"
            );
        }
    }

    #[test]
    fn validates_shapes() {
        let q = dense(&[2, 8, 5, 64], DType::F16);
        let k = dense(&[2, 2, 7, 64], DType::F16);
        let spec =
            AttentionSpec::new(&layouts(&q, &k, &q), AttentionOptions::default().causal()).unwrap();
        assert_eq!((spec.heads, spec.kv_heads, spec.sq, spec.sk), (8, 2, 5, 7));
        assert!(spec.causal && (spec.scale - 0.125).abs() < 1e-7);
        let k3 = dense(&[2, 3, 7, 64], DType::F16);
        assert!(matches!(
            AttentionSpec::new(&layouts(&q, &k3, &q), AttentionOptions::default()),
            Err(ShapeError::ShapeMismatch { name: "k", .. })
        ));
        let kd = dense(&[2, 2, 7, 32], DType::F16);
        assert!(matches!(
            AttentionSpec::new(&layouts(&q, &kd, &q), AttentionOptions::default()),
            Err(ShapeError::ShapeMismatch { name: "k", .. })
        ));
        let q3 = dense(&[8, 5, 64], DType::F16);
        assert!(matches!(
            AttentionSpec::new(&layouts(&q3, &k, &q3), AttentionOptions::default()),
            Err(ShapeError::Rank { name: "q", .. })
        ));
        let kf = dense(&[2, 2, 7, 64], DType::F32);
        assert!(matches!(
            AttentionSpec::new(&layouts(&q, &kf, &q), AttentionOptions::default()),
            Err(ShapeError::DTypeMismatch { name: "k", .. })
        ));
        assert!(matches!(
            AttentionSpec::new(
                &layouts(&q, &k, &q),
                AttentionOptions::default().scale(f32::NAN)
            ),
            Err(ShapeError::InvalidParameter { name: "scale", .. })
        ));
    }

    #[test]
    fn accepts_head_major_views_and_refuses_overlapping_outputs() {
        // [B, S, H, D] memory viewed as [B, H, S, D].
        let mut q = dense(&[2, 8, 5, 64], DType::F32);
        q.strides = vec![5 * 8 * 64, 64, 8 * 64, 1];
        let k = dense(&[2, 8, 7, 64], DType::F32);
        let out = dense(&[2, 8, 5, 64], DType::F32);
        let spec = AttentionSpec::new(&layouts(&q, &k, &out), AttentionOptions::default()).unwrap();
        assert_eq!(spec.strides[0], [2560, 64, 512]);
        let mut bad = out.clone();
        bad.strides = vec![5 * 64, 0, 64, 1]; // every head writes the same rows
        assert!(matches!(
            AttentionSpec::new(&layouts(&q, &k, &bad), AttentionOptions::default()),
            Err(ShapeError::NotContiguous { name: "out", .. })
        ));
        let mut col = q.clone();
        col.strides[3] = 2;
        assert!(matches!(
            AttentionSpec::new(&layouts(&col, &k, &out), AttentionOptions::default()),
            Err(ShapeError::NotContiguous { name: "q", .. })
        ));
    }
}
