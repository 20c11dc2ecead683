//! The one decision of a matmul: which kernel runs for (device, problem, operand layout), with
//! which vector widths, on which grid. [`MatmulVariant::plan`] makes it; the launcher runs the
//! [`MatmulPlan`] as it is, and [`crate::matmul_plan`] and [`crate::matmul_variant`] report it.

use super::spec::MatmulSpec;
use super::stream_k::StreamK;
use super::{MatmulVariant, NarrowMmaShape, SimtShape, TcShape};
use crate::ops::{expect_dtype_supported, unsupported};
use crate::{Caps, DType, Error};
use cubeport_kernels::matmul::{
    BlockConfig, CmmaConfig, NarrowConfig, NarrowMmaConfig, NarrowPlaneConfig, SimtConfig,
    SkinnyConfig, TcConfig,
};
use std::fmt;

const OP: &str = "matmul";

/// Elements per access that the operands' layouts allow, from their strides, row lengths and
/// buffer offsets (1 where a layout does not allow a vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Widths {
    /// A's rows as 16-byte vectors along k (`v16` elements).
    a16: usize,
    /// B's rows as 16-byte vectors along n.
    b16: usize,
    /// B's rows as 4-wide vectors (the SIMT kernel's loads).
    b4: usize,
    /// C's rows as 4-wide vectors.
    c4: usize,
    /// C's rows as column pairs (the manual-MMA epilogue).
    c2: usize,
    /// Elements per 16-byte vector of the dtype.
    v16: usize,
}

impl Widths {
    fn of(spec: &MatmulSpec) -> Self {
        Self::padded(spec, [None; 2])
    }

    /// The widths once the operands of `pad` are copied into their padded buffers: a padded
    /// operand is dense from offset 0, and its vectors may run to the pitch (past the row's
    /// true end, into the zeros), so the pitch stands for the row length.
    fn padded(spec: &MatmulSpec, pad: [Option<Pad>; 2]) -> Self {
        let elem = spec.dtype.size();
        let v16 = 16 / elem;
        let [a, b, c] = spec.offsets;
        let c_strides = [0, spec.c_pitch, 1];
        let (a_strides, a_len, a) = match pad[0] {
            Some(p) => (p.strides(), p.pitch, 0),
            None => (spec.a_strides, spec.k, a),
        };
        let (b_strides, b_len, b) = match pad[1] {
            Some(p) => (p.strides(), p.pitch, 0),
            None => (spec.b_strides, spec.n, b),
        };
        Widths {
            a16: vector_width(v16, a_strides, a_len, a, elem),
            b16: vector_width(v16, b_strides, b_len, b, elem),
            b4: vector_width(4, b_strides, b_len, b, elem),
            c4: vector_width(4, c_strides, spec.n, c, elem),
            c2: vector_width(2, c_strides, spec.n, c, elem),
            v16,
        }
    }

    /// Whether A and B both move as 16-byte vectors (what `cp.async` copies).
    fn rows16(&self) -> bool {
        self.a16 == self.v16 && self.b16 == self.v16
    }
}

/// `width` when an operand can be read or written as `width`-wide vectors along its rows: unit
/// column stride, batch and row strides and the row length multiples of `width`, buffer offset
/// (bytes) aligned to the vector; else 1.
fn vector_width(
    width: usize,
    [batch, row, col]: [usize; 3],
    row_len: usize,
    offset: u64,
    elem: usize,
) -> usize {
    let fits = col == 1
        && batch.is_multiple_of(width)
        && row.is_multiple_of(width)
        && row_len.is_multiple_of(width)
        && offset.is_multiple_of((width * elem) as u64);
    if fits { width } else { 1 }
}

/// A copy the plan runs before the product: operand A (`[batch, m, k]`) or B (`[batch, k, n]`)
/// into a dense `[batch, rows, pitch]` buffer, `pitch` the row length rounded up to whole
/// 16-byte and 4-wide vectors, the row tails zero ([`fn@cubeport_kernels::matmul::matmul_pad_kernel`]).
/// `batch` is 1 where the operand is broadcast (batch stride 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Pad {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
    pub pitch: usize,
}

impl Pad {
    fn new(batch_stride: usize, batch: usize, rows: usize, cols: usize, v16: usize) -> Self {
        Pad {
            batch: if batch_stride == 0 { 1 } else { batch },
            rows,
            cols,
            pitch: cols.next_multiple_of(v16.max(4)),
        }
    }

    /// `[batch, row, col]` element strides of the padded buffer (batch stride 0 when one).
    pub(crate) fn strides(&self) -> [usize; 3] {
        let batch = if self.batch > 1 {
            self.rows * self.pitch
        } else {
            0
        };
        [batch, self.pitch, 1]
    }

    /// Elements of the padded buffer.
    pub(crate) fn len(&self) -> usize {
        self.batch * self.rows * self.pitch
    }
}

/// Rows of the product from which the register-loaded SIMT kernels take a padded copy of a B
/// whose rows are not 4-wide vectors: the copy moves `k · n` elements once, about `1/m` of the
/// product's time per row of A at these kernels' rates, so from here on it costs a few percent
/// and buys 16-byte B loads.
const SIMT_PAD_MIN_M: usize = 1024;

/// Whether `variant` copies its tiles by `cp.async` (16-byte vectors only).
fn copies_async(variant: MatmulVariant) -> bool {
    match variant {
        MatmulVariant::Tc(s) => s.stages > 0,
        MatmulVariant::Simt(s) => s.async_copy,
        _ => false,
    }
}

/// The operands (A, B) `variant` copies into padded buffers first: every operand whose rows
/// are not 16-byte vectors for the `cp.async` kernels (which copy nothing narrower), and B
/// where the register-loaded SIMT kernel would read it by scalars on a product of at least
/// [`SIMT_PAD_MIN_M`] rows.
fn pads(variant: MatmulVariant, spec: &MatmulSpec, w: &Widths) -> [Option<Pad>; 2] {
    let pad_a = || Pad::new(spec.a_strides[0], spec.batch, spec.m, spec.k, w.v16);
    let pad_b = || Pad::new(spec.b_strides[0], spec.batch, spec.k, spec.n, w.v16);
    if copies_async(variant) {
        [(w.a16 != w.v16).then(pad_a), (w.b16 != w.v16).then(pad_b)]
    } else if matches!(variant, MatmulVariant::NarrowMma(_)) {
        // Its lanes load A's rows as 16-byte vectors straight into fragments; B, the small
        // operand, is read at any width.
        [(w.a16 != w.v16).then(pad_a), None]
    } else if matches!(variant, MatmulVariant::Simt(_)) && w.b4 != 4 && spec.m >= SIMT_PAD_MIN_M {
        [None, Some(pad_b())]
    } else {
        [None; 2]
    }
}

/// Exactly the kernels a plan launches: their comptime configurations and the width of each
/// vectorized operand (the launch's `Size` arguments, which the configurations' flags match).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kernel {
    /// `matmul_naive_kernel`.
    Naive,
    /// `matmul_blocked_kernel`.
    Blocked(BlockConfig),
    /// `matmul_cmma_kernel`.
    Cmma(CmmaConfig),
    /// `matmul_simt_kernel`, B loaded `nb` and C stored `nc` wide. With `stream_k`, it runs the
    /// whole blocks on a 1-D grid, then `matmul_simt_sk_kernel` and `matmul_simt_fixup_kernel`
    /// the tail.
    Simt {
        cfg: SimtConfig,
        nb: usize,
        nc: usize,
        stream_k: Option<StreamK>,
    },
    /// `matmul_simt_async_kernel`, A and B copied as `nv`-wide (16-byte) vectors, C stored
    /// `nc` wide.
    SimtAsync {
        cfg: SimtConfig,
        nv: usize,
        nc: usize,
    },
    /// `matmul_skinny_kernel`, B loaded `nb` wide, the depth in `chunks` chunks of `chunk_k`
    /// rows; with more than one chunk, `matmul_skinny_fixup_kernel` sums them.
    Skinny {
        cfg: SkinnyConfig,
        nb: usize,
        chunks: usize,
        chunk_k: usize,
    },
    /// `matmul_narrow_kernel`, A loaded `na` and B `nb` wide, the depth in `chunks` chunks of
    /// `chunk_k` rows; with more than one chunk, `matmul_skinny_fixup_kernel` sums them.
    Narrow {
        cfg: NarrowConfig,
        na: usize,
        nb: usize,
        chunks: usize,
        chunk_k: usize,
    },
    /// `matmul_narrow_plane_kernel`, A loaded `na` and B `nb` wide, the depth in `chunks`
    /// chunks of `chunk_k` rows; with more than one chunk, `matmul_skinny_fixup_kernel` sums
    /// them.
    NarrowPlane {
        cfg: NarrowPlaneConfig,
        na: usize,
        nb: usize,
        chunks: usize,
        chunk_k: usize,
    },
    /// `matmul_narrow_mma_kernel`, A loaded `na` (8) and B `nb` wide, the depth in `chunks`
    /// chunks of `chunk_k` rows; with more than one chunk, `matmul_skinny_fixup_kernel` sums
    /// them.
    NarrowMma {
        cfg: NarrowMmaConfig,
        na: usize,
        nb: usize,
        chunks: usize,
        chunk_k: usize,
    },
    /// `matmul_tc_kernel`: A loaded `na`, B `nb` wide, shared tiles of `nv`-wide vectors, C
    /// stored `nc` wide.
    Tc {
        cfg: TcConfig,
        na: usize,
        nb: usize,
        nv: usize,
        nc: usize,
    },
    /// `matmul_tc_async_kernel`: `stages` `cp.async` stages of `nv`-wide vectors, C stored `nc`
    /// wide.
    TcAsync {
        cfg: TcConfig,
        nv: usize,
        nc: usize,
        stages: usize,
    },
    /// `matmul_tc_mma_kernel`: as `TcAsync`, C stored `nc` (1 or 2) wide; with `cfg.split`,
    /// the depth in `chunks` chunks of `chunk_k` rows, summed by `matmul_skinny_fixup_kernel`.
    TcMma {
        cfg: TcConfig,
        nv: usize,
        nc: usize,
        stages: usize,
        chunks: usize,
        chunk_k: usize,
    },
}

/// The suffix of a depth-split kernel's name: its chunk count where the fixup pass runs.
fn write_split(f: &mut fmt::Formatter<'_>, chunks: usize) -> fmt::Result {
    if chunks > 1 {
        write!(f, ", depth in {chunks} chunks + fixup")?;
    }
    Ok(())
}

impl fmt::Display for Kernel {
    /// The kernel's name without `matmul_` and `_kernel`, then the operands' vector widths.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Kernel::Naive => f.write_str("naive"),
            Kernel::Blocked(_) => f.write_str("blocked"),
            Kernel::Cmma(_) => f.write_str("cmma"),
            Kernel::Simt {
                nb, nc, stream_k, ..
            } => {
                write!(f, "simt b{nb} c{nc}")?;
                match stream_k {
                    None => Ok(()),
                    Some(sk) => write!(
                        f,
                        ", stream-K: {} whole blocks, {} shared by {} cubes + fixup",
                        sk.split.dp, sk.split.tail, sk.split.runs
                    ),
                }
            }
            Kernel::SimtAsync { nv, nc, .. } => write!(f, "simt_async a{nv} b{nv} c{nc}"),
            Kernel::Skinny {
                cfg, nb, chunks, ..
            } => {
                write!(f, "skinny b{nb} rows {}", cfg.tm)?;
                write_split(f, chunks)
            }
            Kernel::Narrow {
                cfg,
                na,
                nb,
                chunks,
                ..
            } => {
                let staged = if cfg.staged { " staged" } else { "" };
                write!(f, "narrow{staged} a{na} b{nb} cols {}", cfg.nc)?;
                write_split(f, chunks)
            }
            Kernel::NarrowPlane {
                cfg,
                na,
                nb,
                chunks,
                ..
            } => {
                let sums = if cfg.plane { "plane" } else { "shared" };
                write!(
                    f,
                    "narrow_plane a{na} b{nb} cols {} rows {} lanes {} {sums}",
                    cfg.nc, cfg.rows, cfg.group
                )?;
                write_split(f, chunks)
            }
            Kernel::NarrowMma {
                cfg,
                na,
                nb,
                chunks,
                ..
            } => {
                write!(
                    f,
                    "narrow_mma a{na} b{nb} rows {} cols {} planes {} steps {}",
                    16 * cfg.m_tiles,
                    8 * cfg.n_tiles,
                    cfg.warps,
                    cfg.steps
                )?;
                write_split(f, chunks)
            }
            Kernel::Tc { na, nb, nc, .. } => write!(f, "tc a{na} b{nb} c{nc}"),
            Kernel::TcAsync { nv, nc, .. } => write!(f, "tc_async a{nv} b{nv} c{nc}"),
            Kernel::TcMma { nv, nc, chunks, .. } => {
                write!(f, "tc_mma a{nv} b{nv} c{nc}")?;
                write_split(f, chunks)
            }
        }
    }
}

/// What a matmul runs: the variant, exactly its kernels with the vector widths the operands
/// allow, the pad copies that run first, and the grid. Made only by one function, which
/// [`crate::matmul_into`], [`crate::matmul_with`] and [`crate::matmul_plan`] share, so the plan
/// reported is the plan that runs. Its `Display` is the id logs and tests compare:
/// `<variant> (<kernel> <widths>)`, e.g. `simt64x64x16_4x4_s2 (simt b4 c4)`, with `, pad a`,
/// `, pad b` or `, pad a b` where operands are copied into padded buffers first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MatmulPlan {
    variant: MatmulVariant,
    pub(crate) kernel: Kernel,
    /// The pad copies of A and B that run before the product ([`Pad`]).
    pub(crate) pad: [Option<Pad>; 2],
    /// Cubes `(x, y, z)` of the main launch: `(⌈n/bn⌉, ⌈m/bm⌉, batch)`.
    pub(crate) grid: [u32; 3],
    /// Units per cube `(x, y)`.
    pub(crate) cube_dim: [u32; 2],
}

impl MatmulPlan {
    /// The variant that runs: the one forced, or the automatic choice.
    pub fn variant(&self) -> MatmulVariant {
        self.variant
    }

    /// Whether A and B (in that order) are copied into padded buffers before the product.
    pub fn pads(&self) -> [bool; 2] {
        self.pad.map(|p| p.is_some())
    }
}

impl fmt::Display for MatmulPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.variant, self.kernel)?;
        match self.pads() {
            [true, true] => f.write_str(", pad a b")?,
            [true, false] => f.write_str(", pad a")?,
            [false, true] => f.write_str(", pad b")?,
            [false, false] => {}
        }
        f.write_str(")")
    }
}

impl MatmulVariant {
    /// The plan of a product: `forced`, or else the automatic choice; then exactly the kernel
    /// it runs for these operands. In order:
    /// 1. a dtype the device lacks is [`Error::UnsupportedDType`];
    /// 2. the variant must run on the device ([`MatmulVariant::runs_on`]), else
    ///    [`Error::Unsupported`]: a forced variant is never replaced by another;
    /// 3. operands the variant cannot read as they lie are copied into padded buffers first
    ///    (`pads`: A or B rows that are not 16-byte vectors for a `cp.async` shape, a
    ///    scalar-only B for the register-loaded SIMT kernel on a tall product);
    /// 4. the kernel and its vector widths follow from the (padded) layouts; a stream-K shape
    ///    takes its tail where one helps ([`SimtShape::stream_k`]);
    /// 5. a grid beyond the device's limits is [`Error::Unsupported`].
    pub(crate) fn plan(
        caps: &Caps,
        spec: &MatmulSpec,
        forced: Option<MatmulVariant>,
    ) -> Result<MatmulPlan, Error> {
        expect_dtype_supported(caps, OP, spec.dtype)?;
        let variant = forced.unwrap_or_else(|| auto(caps, spec, &Widths::of(spec)));
        variant
            .requirements(caps, spec.dtype)
            .map_err(|reason| unsupported(caps, OP, reason))?;
        let pad = pads(variant, spec, &Widths::of(spec));
        let widths = Widths::padded(spec, pad);
        debug_assert!(
            !copies_async(variant) || widths.rows16(),
            "{variant}: {widths:?}"
        );
        let grid = match variant {
            MatmulVariant::Skinny => skinny(caps, spec, &widths).1,
            MatmulVariant::Narrow => narrow(caps, spec, &widths, false).1,
            MatmulVariant::NarrowStaged => narrow(caps, spec, &widths, true).1,
            MatmulVariant::NarrowPlane => narrow_plane(caps, spec, &widths).1,
            MatmulVariant::NarrowMma(s) => narrow_mma(caps, spec, &widths, s).1,
            MatmulVariant::Tc(s) if s.split > 0 => {
                let (bm, bn) = (s.bm(), s.bn());
                let chunks = tc_split(caps, spec, s).0;
                [
                    spec.n.div_ceil(bn),
                    spec.m.div_ceil(bm),
                    spec.batch * chunks,
                ]
            }
            _ => {
                let (bm, bn) = variant.block();
                [spec.n.div_ceil(bn), spec.m.div_ceil(bm), spec.batch]
            }
        };
        for (axis, (&g, &max)) in grid.iter().zip(&caps.max_cube_count).enumerate() {
            if g > max as usize {
                return Err(unsupported(
                    caps,
                    OP,
                    format!(
                        "{g} cubes along grid axis {axis} exceed the device's {max} (m {}, n {}, \
                         batch {})",
                        spec.m, spec.n, spec.batch
                    ),
                ));
            }
        }
        let (kernel, cube_dim) = variant.kernel(caps, spec, &widths, grid.iter().product());
        Ok(MatmulPlan {
            variant,
            kernel,
            pad,
            grid: grid.map(|g| g as u32),
            cube_dim,
        })
    }

    /// Output block `(bm, bn)` of one cube.
    fn block(&self) -> (usize, usize) {
        match self {
            // The skinny grid is not one of blocks (see `skinny`); this is its largest row group.
            MatmulVariant::Naive | MatmulVariant::Tiled16 | MatmulVariant::Skinny => (16, 16),
            // The narrow grid is not one of blocks either (see `narrow`): a cube's rows and
            // its column group.
            MatmulVariant::Narrow | MatmulVariant::NarrowStaged => (NARROW_UNITS, NARROW_MAX_N),
            // Nor is `narrow_plane`'s (see `narrow_plane`): 4 groups of its rows where the
            // groups are planes of 32.
            MatmulVariant::NarrowPlane => (NARROW_PLANE_ROWS * 4, NARROW_MAX_N),
            // Nor is `narrow_mma`'s (see `narrow_mma`): its smaller row tile.
            MatmulVariant::NarrowMma(_) => (16, NARROW_MMA_MAX_N),
            MatmulVariant::Blocked64 | MatmulVariant::Cmma => (64, 64),
            MatmulVariant::Blocked128 { .. } => (128, 128),
            MatmulVariant::Simt(s) => (s.bm as usize, s.bn as usize),
            MatmulVariant::Tc(s) => (s.bm(), s.bn()),
        }
    }

    /// The kernel of this (layout-resolved) variant and its units per cube; `blocks` output
    /// blocks in all.
    fn kernel(
        &self,
        caps: &Caps,
        spec: &MatmulSpec,
        w: &Widths,
        blocks: usize,
    ) -> (Kernel, [u32; 2]) {
        let bias = spec.bias;
        let blocked = |bm, bk, tm, pad, double_buffer| {
            let cfg = BlockConfig {
                bm,
                bn: bm,
                bk,
                tm,
                tn: tm,
                pad,
                double_buffer,
                bias,
            };
            let dim = [(cfg.bn / cfg.tn) as u32, (cfg.bm / cfg.tm) as u32];
            (Kernel::Blocked(cfg), dim)
        };
        match *self {
            MatmulVariant::Naive => (Kernel::Naive, [16, 16]),
            MatmulVariant::Skinny => (skinny(caps, spec, w).0, SKINNY_UNITS.map(|u| u as u32)),
            MatmulVariant::Narrow => (narrow(caps, spec, w, false).0, [NARROW_UNITS as u32, 1]),
            MatmulVariant::NarrowStaged => {
                (narrow(caps, spec, w, true).0, [NARROW_UNITS as u32, 1])
            }
            MatmulVariant::NarrowPlane => {
                let (kernel, _, dim) = narrow_plane(caps, spec, w);
                (kernel, dim)
            }
            MatmulVariant::NarrowMma(s) => {
                let (kernel, _, dim) = narrow_mma(caps, spec, w, s);
                (kernel, dim)
            }
            MatmulVariant::Tiled16 => blocked(16, 16, 1, 1, false),
            MatmulVariant::Blocked64 => blocked(64, 16, 4, 4, false),
            MatmulVariant::Blocked128 { double_buffer } => blocked(128, 8, 8, 4, double_buffer),
            MatmulVariant::Cmma => {
                let cfg = CmmaConfig {
                    planes_m: 2,
                    planes_n: 2,
                    bk: 32,
                    plane: 32,
                    bias,
                };
                (Kernel::Cmma(cfg), [32, 4])
            }
            MatmulVariant::Simt(s) => {
                let units = [s.units() as u32, 1];
                let kernel = if s.async_copy {
                    let cfg = s.config(bias, true, w.c4 == 4);
                    Kernel::SimtAsync {
                        cfg,
                        nv: w.v16,
                        nc: w.c4,
                    }
                } else {
                    let cfg = s.config(bias, w.b4 == 4, w.c4 == 4);
                    Kernel::Simt {
                        cfg,
                        nb: w.b4,
                        nc: w.c4,
                        stream_k: s.stream_k_launch(caps, spec, blocks, cfg),
                    }
                };
                (kernel, units)
            }
            MatmulVariant::Tc(s) => {
                let units = [s.units() as u32, 1];
                let (dtype, nv, stages) = (spec.dtype, w.v16, s.stages as usize);
                // The async kernels copy A and B as 16-byte vectors: `pads` made rows16 hold.
                let kernel = if s.stages == 0 {
                    let (a_vec, b_vec) = (w.a16 == nv, w.b16 == nv);
                    // 16 bytes unless the shape forces a width: also on Vulkan, whose vectors
                    // stop at 4 (a 16-byte vector of halves is two 8-byte accesses there),
                    // 8-wide loads ran 1.07–1.14× faster than 4-wide ones through SPIR-V, and
                    // 3.0× faster on CUDA (BENCHMARKS.md, wgpu section).
                    let load = match s.load {
                        0 => nv,
                        l => l as usize,
                    };
                    let width = |vec: bool| if vec { load } else { 1 };
                    Kernel::Tc {
                        cfg: s.config(dtype, bias, a_vec, b_vec, w.c4 == 4),
                        na: width(a_vec),
                        nb: width(b_vec),
                        nv: load,
                        nc: w.c4,
                    }
                } else if s.mma {
                    let (chunks, chunk_k) = if s.split > 0 {
                        tc_split(caps, spec, s)
                    } else {
                        (1, spec.k)
                    };
                    let cfg = TcConfig {
                        split: chunks > 1,
                        ..s.config(dtype, bias, true, true, w.c2 == 2)
                    };
                    Kernel::TcMma {
                        cfg,
                        nv,
                        nc: w.c2,
                        stages,
                        chunks,
                        chunk_k,
                    }
                } else {
                    Kernel::TcAsync {
                        cfg: s.config(dtype, bias, true, true, w.c4 == 4),
                        nv,
                        nc: w.c4,
                        stages,
                    }
                };
                (kernel, units)
            }
        }
    }
}

/// Depth chunks of a split tensor-core product (`(chunks, chunk_k)`): enough cubes for
/// `s.split` per SM, each chunk a whole number of tiles and at least 4 of them deep (so the `cp.async`
/// prologue and drain stay a small part of a cube's work); `(1, k)`, no split, where the
/// blocks alone give every SM two cubes or the depth is too shallow to cut.
fn tc_split(caps: &Caps, spec: &MatmulSpec, s: TcShape) -> (usize, usize) {
    let bk = s.bk as usize;
    let blocks = spec.batch * spec.m.div_ceil(s.bm()) * spec.n.div_ceil(s.bn());
    let target = s.split as usize * caps.num_sms.map_or(64, |s| s as usize);
    let tiles = spec.k.div_ceil(bk);
    let want = target.div_ceil(blocks).min(tiles / 4).max(1);
    if want == 1 {
        return (1, spec.k);
    }
    let chunk_k = tiles.div_ceil(want) * bk;
    (spec.k.div_ceil(chunk_k), chunk_k)
}

/// Units of a skinny cube: `(ux, uk)`, 32 column vectors (one contiguous run of a depth row,
/// a warp on NVIDIA) by 8 depth slices.
const SKINNY_UNITS: [usize; 2] = [32, 8];

/// Largest f32 accumulators per unit of the skinny kernel (`rows × vector width`): beyond it
/// the registers spill.
const SKINNY_ACC: usize = 64;

/// The skinny kernel for `spec` and its grid `(⌈(n/nb)/32⌉, row groups · chunks, batch)`:
/// B read as 16-byte vectors where its layout and the device allow (else 4 lanes, else
/// scalars), up to 16 rows per cube (fewer vector lanes where the accumulators would pass
/// `SKINNY_ACC`), and the depth split into chunks until the cubes fill the device (8 per SM, 64
/// SMs where the count is unknown), while every depth slice keeps ≥ 8 rows and the partial
/// sums' traffic (8 bytes each, written and read) stays within an eighth of B's bytes; more
/// chunks where one would not fit A's slab in shared memory.
fn skinny(caps: &Caps, spec: &MatmulSpec, w: &Widths) -> (Kernel, [usize; 3]) {
    let [ux, uk] = SKINNY_UNITS;
    let mut nb = b_width(caps, w, None);
    let tm = spec.m.next_power_of_two().min(16);
    while tm * nb > SKINNY_ACC {
        nb /= 2;
    }
    let col_vecs = spec.n / nb;
    let groups = spec.m.div_ceil(tm);
    let base = col_vecs.div_ceil(ux) * groups * spec.batch;
    let fill = caps.num_sms.map_or(64, |s| s as usize) * 8;
    let by_fill = fill.div_ceil(base);
    let by_depth = spec.k / (uk * 8);
    let by_traffic = spec.k * spec.dtype.size() / (64 * spec.m);
    // A's slab per cube: at most 16 KiB of f32 beside the depth slices' sums, a power of two of
    // depth rows (one compiled kernel per size class).
    let sums = uk * ux * nb * 4;
    let budget = caps.max_shared_bytes.saturating_sub(sums).min(16 << 10);
    let cap = prev_power_of_two((budget / (4 * tm)).max(4 * uk));
    let chunks = by_fill
        .min(by_depth)
        .min(by_traffic)
        .max(1)
        .max(spec.k.div_ceil(cap));
    // Whole steps of eight depth rows per slice in every chunk but the last: a partial step
    // runs row by row, each row a DRAM round trip.
    let step = 8 * uk;
    let chunk_k = spec.k.div_ceil(chunks).next_multiple_of(step).min(cap);
    let chunks = spec.k.div_ceil(chunk_k);
    let cfg = SkinnyConfig {
        tm,
        ux,
        uk,
        slab: chunk_k.next_power_of_two().clamp(4 * uk, cap),
        direct: chunks == 1,
        bias: spec.bias,
    };
    let kernel = Kernel::Skinny {
        cfg,
        nb,
        chunks,
        chunk_k,
    };
    (kernel, [col_vecs.div_ceil(ux), groups * chunks, spec.batch])
}

/// Units of a narrow cube (one row of A each).
const NARROW_UNITS: usize = 128;

/// Columns per narrow cube: the f32 accumulators of each unit.
const NARROW_MAX_N: usize = 16;

/// Most columns the automatic choice gives the narrow kernels (f32): at 16 the tile kernel was
/// faster.
const NARROW_AUTO_MAX_N: usize = 8;

/// The narrow kernel for `spec` and its grid `(⌈m/128⌉, column groups · chunks, batch)`: A
/// read as 16-byte vectors where its layout and the device allow (else scalars), four vectors
/// (or eight scalars) in flight per unit; up to `NARROW_MAX_N` columns per group; B's rows as
/// 16-byte or 4-wide vectors where its layout allows and the width divides the group; the depth
/// split into chunks until the cubes fill the device (8 per SM, `UNKNOWN_SMS` where the count
/// is unknown), while every chunk keeps ≥ 8 steps and the partial sums' traffic (8 bytes each,
/// written and read) stays within an eighth of A's bytes. `staged`: A through shared tiles of
/// rows of 8 vectors (128 bytes), or of 16 scalars where A has no vectors.
fn narrow(caps: &Caps, spec: &MatmulSpec, w: &Widths, staged: bool) -> (Kernel, [usize; 3]) {
    let na = a_width(caps, w);
    // Staged scalar rows (a transposed A) read one row's depths `a_sc` apart with 16
    // consecutive units, about a line each; the direct form reads adjacent rows instead. The
    // staged form is kept forceable there for its tests; which one serves is for timing.
    let steps = match (staged, na > 1) {
        (false, true) => 4,
        (false, false) => 8,
        (true, true) => 8,
        (true, false) => 16,
    };
    let nc = spec.n.min(NARROW_MAX_N);
    let nb = b_width(caps, w, Some(nc));
    let groups = spec.n.div_ceil(nc);
    let row_cubes = spec.m.div_ceil(NARROW_UNITS);
    let step = steps * na;
    let (chunks, chunk_k) = narrow_split(caps, spec, row_cubes * groups, nc, step, 8 * step);
    let cfg = NarrowConfig {
        nc,
        steps,
        rows: NARROW_UNITS,
        staged,
        direct: chunks == 1,
        bias: spec.bias,
    };
    let kernel = Kernel::Narrow {
        cfg,
        na,
        nb,
        chunks,
        chunk_k,
    };
    (kernel, [row_cubes, groups * chunks, spec.batch])
}

/// The depth split of the narrow kernels, `(chunks, chunk_k)`: chunks until `cubes` cubes per
/// batch entry (one chunk each) fill the device (8 per SM, `UNKNOWN_SMS` where the count is
/// unknown), while every chunk keeps at least `min_depth` depths and the partial sums' traffic
/// (8 bytes per output of an `nc`-column group, written and read) stays within an eighth of A's
/// bytes; every chunk but the last a whole number of `step` depths.
fn narrow_split(
    caps: &Caps,
    spec: &MatmulSpec,
    cubes: usize,
    nc: usize,
    step: usize,
    min_depth: usize,
) -> (usize, usize) {
    let fill = crate::ops::group::resident_cubes(caps, 8);
    let by_depth = spec.k / min_depth;
    let by_traffic = spec.k * spec.dtype.size() / (64 * nc);
    let chunks = fill
        .div_ceil(cubes * spec.batch)
        .min(by_depth)
        .min(by_traffic)
        .max(1);
    let chunk_k = spec.k.div_ceil(chunks).next_multiple_of(step);
    (spec.k.div_ceil(chunk_k), chunk_k)
}

/// Rows of A per lane group of the `narrow_plane` kernel.
const NARROW_PLANE_ROWS: usize = 4;

/// The `narrow_plane` kernel for `spec`, its grid `(⌈m / (4 · groups)⌉, column groups ·
/// chunks, batch)` and its cube `(lanes, groups)`: lane groups of one plane where the device
/// has plane ops and a fixed width (sums by plane ops), else of 8 lanes summed through shared
/// memory (at most 16 KiB of it); up to 128 units per cube; 4 rows of A per group, two vectors
/// of each in flight per lane; A as in `narrow`; up to `NARROW_MAX_N` columns per group, B as
/// in `narrow`; the depth split as in `narrow`, every chunk a whole number of the group's steps
/// and at least four of them per lane.
fn narrow_plane(caps: &Caps, spec: &MatmulSpec, w: &Widths) -> (Kernel, [usize; 3], [u32; 2]) {
    let na = a_width(caps, w);
    let (group, plane) = match caps.plane.fixed_width() {
        Some(width) if caps.plane.ops => (width as usize, true),
        _ => (8, false),
    };
    let steps = 2;
    let nc = spec.n.min(NARROW_MAX_N);
    // The shared-memory sums take `groups · rows · nc · (group + 1)` words: at most 16 KiB.
    let mut groups = (128 / group).max(1);
    while !plane && groups > 1 && groups * NARROW_PLANE_ROWS * nc * (group + 1) * 4 > 16 << 10 {
        groups /= 2;
    }
    let nb = b_width(caps, w, Some(nc));
    let col_groups = spec.n.div_ceil(nc);
    let row_cubes = spec.m.div_ceil(NARROW_PLANE_ROWS * groups);
    let step = group * na;
    let (chunks, chunk_k) = narrow_split(
        caps,
        spec,
        row_cubes * col_groups,
        nc,
        step,
        4 * steps * step,
    );
    let cfg = NarrowPlaneConfig {
        nc,
        rows: NARROW_PLANE_ROWS,
        steps,
        group,
        groups,
        plane,
        direct: chunks == 1,
        bias: spec.bias,
    };
    let kernel = Kernel::NarrowPlane {
        cfg,
        na,
        nb,
        chunks,
        chunk_k,
    };
    let dim = [group as u32, groups as u32];
    (kernel, [row_cubes, col_groups * chunks, spec.batch], dim)
}

/// Columns per `narrow_mma` column group (two m16n8 tiles: every A fragment feeds both).
const NARROW_MMA_MAX_N: usize = 16;

/// Planes the `narrow_mma` grid aims at per SM: with two steps of 16-byte loads in flight per
/// lane, enough bytes in flight to cover DRAM latency.
const NARROW_MMA_PLANES_PER_SM: usize = 16;

/// The `narrow_mma` kernel for `spec` in `shape` (its zero fields chosen here), its grid
/// `(⌈m / rows⌉, column groups · chunks, batch)` and its cube `(32 · planes, 1)`: column groups
/// of up to `NARROW_MMA_MAX_N` columns; 32 rows per cube where that still gives every SM a
/// cube, else 16; planes per cube (each a slice of the depth, at least two 32-deep steps) until
/// the grid holds `NARROW_MMA_PLANES_PER_SM` planes per SM, at most 8, rounded down to a power
/// of two (5 planes ran 1.18x slower than 4 at 16384 × 16, BENCHMARKS.md); two steps loaded
/// ahead (more ran slower at every timed shape);
/// the depth split over the grid as well where the planes still reach under half of that
/// (chunks of whole 32-deep steps, at least two per plane, the partial sums' traffic within an
/// eighth of A's bytes).
fn narrow_mma(
    caps: &Caps,
    spec: &MatmulSpec,
    w: &Widths,
    shape: NarrowMmaShape,
) -> (Kernel, [usize; 3], [u32; 2]) {
    let sms = caps
        .num_sms
        .map_or(crate::ops::group::UNKNOWN_SMS, |s| s as usize);
    let n_tiles = spec.n.min(NARROW_MMA_MAX_N).div_ceil(8);
    let col_groups = spec.n.div_ceil(8 * n_tiles);
    let per_row_tile = col_groups * spec.batch;
    let m_tiles = match shape.rows {
        0 if spec.m.div_ceil(32) * per_row_tile >= sms => 2,
        0 => 1,
        rows => rows as usize / 16,
    };
    let row_cubes = spec.m.div_ceil(16 * m_tiles);
    let cubes = row_cubes * per_row_tile;
    let want = NARROW_MMA_PLANES_PER_SM * sms;
    let warps = match shape.warps {
        0 => {
            let w = want.div_ceil(cubes).min(8).min(spec.k.div_ceil(64)).max(1);
            1 << w.ilog2()
        }
        w => w as usize,
    };
    let mut chunks = 1;
    if 2 * cubes * warps < want {
        let by_depth = spec.k / (64 * warps);
        let by_traffic = spec.k * spec.dtype.size() / (64 * 8 * n_tiles);
        chunks = want
            .div_ceil(cubes * warps)
            .min(by_depth)
            .min(by_traffic)
            .max(1);
    }
    let chunk_k = spec.k.div_ceil(chunks).next_multiple_of(32);
    let chunks = spec.k.div_ceil(chunk_k);
    let cfg = NarrowMmaConfig {
        m_tiles,
        n_tiles,
        warps,
        steps: match shape.steps {
            0 => 2,
            s => s as usize,
        },
        direct: chunks == 1,
        bias: spec.bias,
    };
    let kernel = Kernel::NarrowMma {
        cfg,
        na: w.a16,
        nb: b_width(caps, w, Some(8)),
        chunks,
        chunk_k,
    };
    let dim = [32 * warps as u32, 1];
    (kernel, [row_cubes, col_groups * chunks, spec.batch], dim)
}

/// The width A's rows are read at by the narrow kernels: 16-byte vectors where A's layout and
/// the device allow them, else scalars.
fn a_width(caps: &Caps, w: &Widths) -> usize {
    if w.a16 == w.v16 && w.v16 <= caps.max_vector_size {
        w.v16
    } else {
        1
    }
}

/// The width B's rows are read at by the kernels that stream them as vectors (skinny,
/// narrow): 16-byte vectors where B's layout and the device allow them, else 4-wide, else
/// scalars; where given, a width must also divide `group` (the columns one cube takes).
fn b_width(caps: &Caps, w: &Widths, group: Option<usize>) -> usize {
    let fits = |v: usize| v <= caps.max_vector_size && group.is_none_or(|g| g.is_multiple_of(v));
    if w.b16 == w.v16 && fits(w.v16) {
        w.v16
    } else if w.b4 == 4 && fits(4) {
        4
    } else {
        1
    }
}

/// The largest power of two not above `v` (`v ≥ 1`).
fn prev_power_of_two(v: usize) -> usize {
    1 << (usize::BITS - 1 - v.leading_zeros())
}

/// Products with at most this many rows take the skinny kernel: below it a tiled block is
/// mostly empty rows and the product is bound by B's bytes.
const SKINNY_MAX_M: usize = 16;

/// Products on tensor cores this shallow take 32-deep tiles (see `auto`).
const SHALLOW_K: usize = 128;

/// Products on CUDA cores whose 64 × 64 blocks under-fill the device share the depth among the
/// SMs from this depth on (below it the pieces are too short to pay for the fixup pass).
const STREAM_K_MIN_K: usize = 512;

/// Products on CUDA cores (f32, or halves without tensor cores) with at most this many rows
/// take the skinny kernel too where 64 × 64 tiles would not give every SM a block: its row
/// groups stream B again, but an under-filled tiled grid is slower still.
const SKINNY_MAX_M_SIMT: usize = 64;

/// The automatic choice for `spec` on `caps`:
/// - **Few rows.** For at most 64 rows on tensor cores with manual MMA, the split-depth shape
///   of that height ([`TcShape::split_for`]) where B's rows are 16-byte vectors. Else the
///   skinny kernel for at most `SKINNY_MAX_M` rows, or up to `SKINNY_MAX_M_SIMT` on CUDA cores
///   where 64 × 64 tiles under-fill the device; there, past `SKINNY_MAX_M` rows, from a depth
///   of `STREAM_K_MIN_K` and where the device reports its SM count, SIMT blocks of 32 or 64
///   rows with a stream-K tail of two cubes per SM instead.
/// - **Few columns on tensor cores** (more than `SKINNY_MAX_M_SIMT` rows, at most
///   `NARROW_MMA_MAX_N` columns, f16/bf16 with manual MMA, A's rows 16-byte vectors):
///   `narrow_mma`.
/// - **Few columns** (more than `SKINNY_MAX_M_SIMT` rows, at most `NARROW_AUTO_MAX_N`
///   columns), where the device has plane sums and A's depths are contiguous: `narrow_plane`
///   for one column, for f32 where A's rows are not 16-byte vectors, and for halves where
///   64 × 128 blocks under-fill the device. Else f32 (and one column of halves) `narrow`
///   where A's rows are 16-byte vectors.
/// - **Tensor cores (f16/bf16).** Products of at most `SHALLOW_K` depth take the 32-deep
///   128 × 128 `cp.async` shape where 128 × 128 blocks fill the device. Otherwise manual-MMA
///   128 × 256 × 64 blocks in column strips (or the WMMA `cp.async` shape) where 128 × 256
///   blocks fill it; manual-MMA 128 × 128 × 64 blocks (else the WMMA 128 × 128 shapes) where
///   128 × 128 blocks do; manual-MMA 64 × 128 × 64 blocks (else the register-staged WMMA
///   64 × 128) below that. Where the chosen shape does not run (Vulkan: 48 KiB of shared
///   memory, no `cp.async`), the register-staged 128 × 128 × 16 shape with its epilogue in
///   four passes where 128 × 128 blocks make two waves, else 64 × 128 in two passes, else `cmma`. Ragged layouts keep these
///   choices: the plan pads what a `cp.async` shape cannot copy (`pads`).
/// - **CUDA cores.** The vectorized SIMT kernel, the largest whose blocks fill the device
///   (128 × 256 in column strips, with its stream-K tail where the device reports its SM
///   count; 64 × 64 blocks sharing the depth among the SMs when even those under-fill it and
///   the depth is at least `STREAM_K_MIN_K`), and 16-tiles for tiny outputs.
///
/// "Fill": at least one block per SM (64 where the SM count is unknown).
fn auto(caps: &Caps, spec: &MatmulSpec, widths: &Widths) -> MatmulVariant {
    let dtype = spec.dtype;
    let blocks = |bm: usize, bn: usize| spec.batch * spec.m.div_ceil(bm) * spec.n.div_ceil(bn);
    let fill = caps.num_sms.map_or(64, |s| s as usize);
    let tensor_cores = MatmulVariant::Cmma.runs_on(caps, dtype);
    // Few columns of halves on manual MMA, A's rows 16-byte vectors as they lie: `narrow_mma`
    // up to its column group (A streamed once straight into fragments).
    if spec.m > SKINNY_MAX_M_SIMT
        && spec.n <= NARROW_MMA_MAX_N
        && widths.a16 == widths.v16
        && MatmulVariant::NARROW_MMA.runs_on(caps, dtype)
    {
        return MatmulVariant::NARROW_MMA;
    }
    // Few columns past the few-row sizes: bound by A's bytes, which the narrow kernels read
    // once (a tiled block would be mostly empty columns). Timed on CUDA (BENCHMARKS.md, few
    // columns): `narrow_plane` (whole lines of A per load instruction; it needs plane sums to
    // be fast, and A's depths side by side, as its lanes split them) for one column, for f32
    // up to `NARROW_AUTO_MAX_N` columns where A's rows are not 16-byte vectors, and for halves
    // up to that many where 64 × 128 tensor-core blocks under-fill the device (past that the
    // tile kernel streamed A faster); `narrow` for f32 up to that many where A's rows are
    // 16-byte vectors. More columns were faster in the tile kernels.
    if spec.m > SKINNY_MAX_M_SIMT && spec.n <= NARROW_AUTO_MAX_N {
        let plane_sums =
            caps.plane.ops && caps.plane.fixed_width().is_some() && spec.a_strides[2] == 1;
        let a_vectors = widths.a16 == widths.v16;
        let f32 = dtype == DType::F32;
        let plane = if f32 {
            spec.n == 1 || !a_vectors
        } else {
            spec.n == 1 || blocks(64, 128) < fill
        };
        if plane && plane_sums {
            return MatmulVariant::NarrowPlane;
        }
        if (f32 || spec.n == 1) && a_vectors {
            return MatmulVariant::Narrow;
        }
    }
    // Few rows on tensor cores: the split manual-MMA shapes where B's rows are 16-byte vectors
    // as they lie (padding B, the large operand, would double the traffic).
    if tensor_cores && widths.b16 == widths.v16 {
        let split = TcShape::split_for(spec.m).map(MatmulVariant::Tc);
        if let Some(v) = split.filter(|v| v.runs_on(caps, dtype)) {
            return v;
        }
    }
    let simt = |s: SimtShape| {
        let v = MatmulVariant::Simt(s);
        v.runs_on(caps, dtype).then_some(v)
    };
    let few_rows_simt = !tensor_cores && spec.m <= SKINNY_MAX_M_SIMT && blocks(64, 64) < fill;
    // 17–64 rows on CUDA cores where the device reports its SM count: a SIMT block as tall as
    // the rows with every block's depth shared among two cubes per SM (stream-K: while the
    // blocks are fewer than the cubes, all of them are the tail). The skinny kernel streams B
    // once per 16 rows and took 1.5–1.9× longer at 32 and 64 rows.
    if few_rows_simt
        && spec.m > SKINNY_MAX_M
        && spec.k >= STREAM_K_MIN_K
        && let Some(sms) = caps.num_sms
    {
        let shape = if spec.m <= 32 {
            SimtShape::S32X128
        } else {
            SimtShape::S64X128
        };
        let cubes = u16::try_from(2 * sms).unwrap_or(u16::MAX);
        if let Some(v) = simt(shape.with_stream_k(cubes)) {
            return v;
        }
    }
    if spec.m <= SKINNY_MAX_M || few_rows_simt {
        return MatmulVariant::Skinny;
    }
    if tensor_cores {
        let fits = |s: TcShape| s.check(caps, dtype).is_ok();
        // Depth of at most two 64-deep tiles: the 64-deep pipelines never fill, and 32-deep
        // tiles of the WMMA shape ran 1.5x faster (4096 × 4096 × 128, f16).
        let shallow = spec.k <= SHALLOW_K;
        let shape = if shallow && blocks(128, 128) >= fill && fits(TcShape::T128_W4X2_A3) {
            TcShape::T128_W4X2_A3
        } else if blocks(128, 256) >= fill && fits(TcShape::T128X256X64_A3_G8_MMA) {
            TcShape::T128X256X64_A3_G8_MMA
        } else if blocks(128, 256) >= fill && fits(TcShape::T128X256_A3) {
            TcShape::T128X256_A3
        } else if blocks(128, 128) >= fill && fits(TcShape::T128X128X64_A3_MMA) {
            TcShape::T128X128X64_A3_MMA
        } else if blocks(128, 128) >= fill && fits(TcShape::T128_W4X2_A3) {
            TcShape::T128_W4X2_A3
        } else if blocks(128, 128) >= fill {
            TcShape::T128_W4X2
        } else if fits(TcShape::T64X128X64_A3_MMA) {
            TcShape::T64X128X64_A3_MMA
        } else {
            TcShape::T64X128
        };
        let v = MatmulVariant::Tc(shape);
        if v.runs_on(caps, dtype) {
            return v;
        }
        // Where it does not run (Vulkan through SPIR-V: 48 KiB of shared memory, no
        // `cp.async`), the register-staged shapes that fit there: 128 × 128 × 16 blocks of
        // eight planes with the epilogue in four passes where 128 × 128 blocks give the device
        // two waves, else 64 × 128 (at 1024³ on the H100, 64 blocks of 128 × 128 ran at 0.65 of
        // 128 blocks of 64 × 128; from 2048³ the larger blocks ran 1.27–1.57× faster); `cmma`
        // where neither fits (BENCHMARKS.md, wgpu section).
        let staged = [
            (blocks(128, 128) >= 2 * fill).then_some(TcShape::T128X128X16_P4),
            Some(TcShape::T64X128_P2),
        ];
        return staged
            .into_iter()
            .flatten()
            .map(MatmulVariant::Tc)
            .find(|v| v.runs_on(caps, dtype))
            .unwrap_or(MatmulVariant::Cmma);
    }
    if blocks(128, 256) >= fill
        && let Some(v) = simt(SimtShape::S128X256_G8_SK).or_else(|| simt(SimtShape::S128X256_G8))
    {
        return v;
    }
    if blocks(128, 128) >= fill {
        simt(SimtShape::S128_WIDE).unwrap_or(MatmulVariant::Blocked128 {
            double_buffer: false,
        })
    } else if blocks(64, 64) >= fill / 2 || spec.m * spec.n >= 64 * 64 {
        // Deep products whose 64 × 64 blocks under-fill the device share their depth among
        // the SMs (stream-K; 512³ f32 ran 1.19x faster).
        let sk = (blocks(64, 64) < fill && spec.k >= STREAM_K_MIN_K && caps.num_sms.is_some())
            .then(|| simt(SimtShape::S64.with_stream_k(0)))
            .flatten();
        sk.or_else(|| simt(SimtShape::S64))
            .unwrap_or(MatmulVariant::Blocked64)
    } else {
        MatmulVariant::Tiled16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::dense;
    use crate::{DType, Layout, SimtShape, TcShape};

    fn widths(a: Layout, b: Layout, c: Layout, offsets: [u64; 3]) -> Widths {
        Widths::of(&MatmulSpec::new(&a, &b, None, &c, offsets).unwrap())
    }

    /// A width is allowed only where the row length, every stride and the view's offset are
    /// multiples of it and the rows are contiguous.
    #[test]
    fn widths_follow_lengths_strides_and_offsets() {
        let f16 = |s: &[usize]| dense(s, DType::F16);
        let all = |w: Widths| (w.a16, w.b16, w.b4, w.c4, w.c2, w.v16);
        let w = widths(f16(&[16, 32]), f16(&[32, 64]), f16(&[16, 64]), [0; 3]);
        assert_eq!(all(w), (8, 8, 4, 4, 2, 8));
        assert!(w.rows16());
        // k = 12, n = 36: A and B rows are not 16-byte vectors; B and C still 4-wide.
        let w = widths(f16(&[16, 12]), f16(&[12, 36]), f16(&[16, 36]), [0; 3]);
        assert_eq!(all(w), (1, 1, 4, 4, 2, 8));
        assert!(!w.rows16());
        // Views 8 bytes into B's and 4 into C's buffer: B 4-wide, C in pairs only.
        let w = widths(f16(&[16, 32]), f16(&[32, 64]), f16(&[16, 64]), [0, 8, 4]);
        assert_eq!(all(w), (8, 1, 4, 1, 2, 8));
        // A transposed view (column stride 16), odd n: scalars.
        let mut at = f16(&[32, 16]);
        (at.shape, at.strides) = (vec![16, 32], vec![1, 16]);
        let w = widths(at, f16(&[32, 7]), f16(&[16, 7]), [0; 3]);
        assert_eq!(all(w), (1, 1, 1, 1, 1, 8));
        // f32: a 16-byte vector is 4 elements; a batch stride breaks B's vectors.
        let f32s = |s: &[usize]| dense(s, DType::F32);
        let w = widths(f32s(&[8, 4]), f32s(&[4, 8]), f32s(&[8, 8]), [0; 3]);
        assert_eq!(all(w), (4, 4, 4, 4, 2, 4));
        let mut b = f32s(&[2, 4, 8]);
        b.strides = vec![34, 8, 1];
        b.buffer_bytes = 4 * 66;
        let w = widths(f32s(&[2, 8, 4]), b, f32s(&[2, 8, 8]), [0; 3]);
        assert_eq!(all(w), (4, 1, 1, 4, 2, 4));
    }

    /// The few-column automatic choice on a CUDA device (plane sums, manual MMA, 132 SMs), the
    /// device it was timed on: `narrow_mma` for halves up to 16 columns whose A rows are
    /// 16-byte vectors; `narrow_plane` for one column of f32 and for ragged rows; `narrow` for
    /// aligned f32 up to 8 columns; tile kernels for a transposed A (its depths are not side by
    /// side) and past those column counts.
    #[test]
    fn few_columns_on_cuda() {
        let caps = Caps::cuda_h100_model();
        let choice = |dtype, m: usize, n: usize, k: usize, trans_a: bool| {
            let mut a = dense(&[m, k], dtype);
            if trans_a {
                (a.shape, a.strides) = (vec![m, k], vec![1, m]);
            }
            let s = MatmulSpec::new(
                &a,
                &dense(&[k, n], dtype),
                None,
                &dense(&[m, n], dtype),
                [0; 3],
            )
            .unwrap();
            auto(&caps, &s, &Widths::of(&s))
        };
        use MatmulVariant::{Narrow, NarrowPlane};
        const NARROW_MMA: MatmulVariant = MatmulVariant::NARROW_MMA;
        for (dtype, m, n, k, trans_a, want) in [
            (DType::F32, 4096, 1, 4096, false, Some(NarrowPlane)),
            (DType::F32, 4095, 1, 4093, false, Some(NarrowPlane)),
            (DType::F32, 4096, 8, 4096, false, Some(Narrow)),
            (DType::F32, 16384, 8, 4096, false, Some(Narrow)),
            (DType::F32, 4095, 7, 4093, false, Some(NarrowPlane)),
            (DType::F32, 4096, 8, 4096, true, None),
            (DType::F32, 4096, 16, 4096, false, None),
            (DType::F16, 4096, 1, 4096, false, Some(NARROW_MMA)),
            (DType::BF16, 4096, 8, 4096, false, Some(NARROW_MMA)),
            (DType::F16, 16384, 8, 4096, false, Some(NARROW_MMA)),
            (DType::BF16, 4096, 16, 4096, false, Some(NARROW_MMA)),
            (DType::F16, 4095, 7, 4093, false, Some(NarrowPlane)),
            (DType::F16, 4096, 8, 4096, true, None),
            (DType::F16, 4096, 17, 4096, false, None),
            (DType::F16, 64, 8, 4096, false, None),
        ] {
            let got = choice(dtype, m, n, k, trans_a);
            let narrow =
                matches!(got, Narrow | NarrowPlane | MatmulVariant::NarrowMma(_)).then_some(got);
            assert_eq!(narrow, want, "{dtype} {m}x{n}x{k} trans_a {trans_a}: {got}");
        }
    }

    /// Vulkan through SPIR-V (what `devices` reported for the H100's Vulkan driver: 48 KiB of
    /// shared memory, vectors of 4, no `cp.async` or manual MMA, no SM count): halves take the
    /// register-staged 128 × 128 × 16 shape where 128 × 128 blocks make two waves of the
    /// assumed 64 SMs, else 64 × 128, and `cmma` where neither fits; f32 stays off tensor cores.
    #[test]
    fn tensor_cores_on_vulkan() {
        let mut caps = Caps::cuda_h100_model();
        caps.backend = crate::BackendKind::Wgpu;
        caps.max_shared_bytes = 48 << 10;
        caps.max_vector_size = 4;
        caps.num_sms = None;
        caps.copy_async = false;
        caps.manual_mma = false;
        caps.tf32 = false;
        let choice = |caps: &Caps, dtype, m: usize, n: usize, k: usize| {
            let s = MatmulSpec::new(
                &dense(&[m, k], dtype),
                &dense(&[k, n], dtype),
                None,
                &dense(&[m, n], dtype),
                [0; 3],
            )
            .unwrap();
            auto(caps, &s, &Widths::of(&s))
        };
        let tc = |s| MatmulVariant::Tc(s);
        for (dtype, m, n, k, want) in [
            (DType::F16, 4096, 4096, 4096, tc(TcShape::T128X128X16_P4)),
            (DType::BF16, 3000, 2500, 2000, tc(TcShape::T128X128X16_P4)),
            (DType::F16, 2048, 2048, 2048, tc(TcShape::T128X128X16_P4)),
            (DType::F16, 1024, 1024, 1024, tc(TcShape::T64X128_P2)),
            (DType::BF16, 1000, 1000, 1000, tc(TcShape::T64X128_P2)),
        ] {
            assert_eq!(choice(&caps, dtype, m, n, k), want, "{dtype} {m}x{n}x{k}");
        }
        assert!(!matches!(
            choice(&caps, DType::F32, 4096, 4096, 4096),
            MatmulVariant::Tc(_) | MatmulVariant::Cmma
        ));
        // 32 KiB of shared memory: neither register-staged shape fits.
        let mut small = caps.clone();
        small.max_shared_bytes = 32 << 10;
        assert_eq!(
            choice(&small, DType::F16, 4096, 4096, 4096),
            MatmulVariant::Cmma
        );
    }

    /// The register-staged kernel loads 16-byte vectors by default, also where the device's
    /// vectors stop at 4 (Vulkan), a forced `_v4` 4-wide ones, and scalars where the rows are
    /// not 16-byte vectors.
    #[test]
    fn register_staged_load_widths() {
        let mut vulkan = Caps::cuda_h100_model();
        vulkan.max_vector_size = 4;
        let spec = |k: usize| {
            let f16 = |s: &[usize]| dense(s, DType::F16);
            MatmulSpec::new(
                &f16(&[256, k]),
                &f16(&[k, 256]),
                None,
                &f16(&[256, 256]),
                [0; 3],
            )
            .unwrap()
        };
        let widths = |shape: TcShape, k: usize| {
            let s = spec(k);
            match MatmulVariant::Tc(shape)
                .kernel(&vulkan, &s, &Widths::of(&s), 1)
                .0
            {
                Kernel::Tc { na, nb, nv, .. } => (na, nb, nv),
                other => panic!("{other}"),
            }
        };
        assert_eq!(widths(TcShape::T64X128_P2, 64), (8, 8, 8));
        assert_eq!(widths(TcShape::T64X128_P2_V4, 64), (4, 4, 4));
        // k = 60: A's rows are not 16-byte vectors (B's are).
        assert_eq!(widths(TcShape::T64X128_P2, 60), (1, 8, 8));
        assert_eq!(widths(TcShape::T64X128_P2_V4, 60), (1, 4, 4));
    }

    /// The `cp.async` shapes pad exactly the operands whose rows are not 16-byte vectors, to a
    /// pitch of whole vectors, one copy for a broadcast batch, and the padded widths then allow
    /// 16-byte rows; register-loaded kernels pad nothing, except the SIMT kernel's scalar-row
    /// B on products of at least `SIMT_PAD_MIN_M` rows.
    #[test]
    fn pads_cover_what_the_kernels_cannot_read() {
        let spec =
            |a: Layout, b: Layout, c: Layout| MatmulSpec::new(&a, &b, None, &c, [0; 3]).unwrap();
        let f16 = |s: &[usize]| dense(s, DType::F16);
        let s = spec(f16(&[16, 12]), f16(&[12, 36]), f16(&[16, 36]));
        let w = Widths::of(&s);
        let pad = pads(MatmulVariant::Tc(TcShape::T128_W4X2_A3), &s, &w);
        let (a, b) = (pad[0].unwrap(), pad[1].unwrap());
        assert_eq!((a.batch, a.rows, a.cols, a.pitch), (1, 16, 12, 16));
        assert_eq!((b.batch, b.rows, b.cols, b.pitch), (1, 12, 36, 40));
        assert_eq!((a.strides(), a.len()), ([0, 16, 1], 256));
        assert!(Widths::padded(&s, pad).rows16());
        assert_eq!(
            pads(MatmulVariant::Tc(TcShape::T128_W4X2), &s, &w),
            [None; 2]
        );
        // A aligned (k = 16), B's n odd: B alone; a batch of 3 against a broadcast B.
        let s = spec(f16(&[3, 8, 16]), f16(&[16, 9]), f16(&[3, 8, 9]));
        let pad = pads(
            MatmulVariant::Tc(TcShape::T128X256X64_A3_G8_MMA),
            &s,
            &Widths::of(&s),
        );
        assert!(pad[0].is_none());
        let b = pad[1].unwrap();
        assert_eq!((b.batch, b.pitch, b.strides()), (1, 16, [0, 16, 1]));
        // f32, the register-loaded SIMT kernel: B of odd n only from 1024 rows on.
        let f32s = |s: &[usize]| dense(s, DType::F32);
        let simt = MatmulVariant::Simt(SimtShape::S64);
        for (m, n, want) in [(1024, 37, true), (1023, 37, false), (4096, 36, false)] {
            let s = spec(f32s(&[2, m, 8]), f32s(&[2, 8, n]), f32s(&[2, m, n]));
            let pad = pads(simt, &s, &Widths::of(&s));
            assert_eq!(
                (pad[0].is_some(), pad[1].is_some()),
                (false, want),
                "{m} {n}"
            );
            if want {
                let b = pad[1].unwrap();
                assert_eq!((b.batch, b.pitch, b.strides()), (2, 40, [320, 40, 1]));
                assert_eq!(Widths::padded(&s, pad).b4, 4);
            }
        }
    }
}
