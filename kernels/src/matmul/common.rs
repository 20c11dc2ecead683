//! What the tiled matmul kernels share: the prologue and block placement ([`Place`]), the block
//! order (grouped strips, the stream-K numbering), the mbarrier pipeline of the `cp.async`
//! kernels, WMMA fragments, and the epilogue (bias, activation, masked or vector stores).

use crate::activation::Activation;
use cubecl::prelude::barrier::Barrier;
use cubecl::prelude::*;

/// Where one cube's operands lie: its batch `z` and that batch's offsets into A and B, the
/// block origin `(row0, col0)`, the problem size, and the row and column strides of A and B.
#[derive(CubeType, Clone, Copy)]
pub(super) struct Place {
    pub(super) z: usize,
    pub(super) a_base: usize,
    pub(super) b_base: usize,
    pub(super) row0: usize,
    pub(super) col0: usize,
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
    pub(super) a_sr: usize,
    pub(super) a_sc: usize,
    pub(super) b_sr: usize,
    pub(super) b_sc: usize,
}

#[cube]
impl Place {
    /// Output block `block` (`bm × bn` outputs at block-row `block.row`, block-column
    /// `block.col` of batch `block.z`) of an `m × n × k` product with `[batch, row, col]`
    /// element strides.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        a_strides: &Sequence<usize>,
        b_strides: &Sequence<usize>,
        m: usize,
        n: usize,
        k: usize,
        block: Block,
        #[comptime] bm: usize,
        #[comptime] bn: usize,
    ) -> Place {
        Place {
            z: block.z,
            a_base: block.z * a_strides[0],
            b_base: block.z * b_strides[0],
            row0: block.row * bm,
            col0: block.col * bn,
            m,
            n,
            k,
            a_sr: a_strides[1],
            a_sc: a_strides[2],
            b_sr: b_strides[1],
            b_sc: b_strides[2],
        }
    }
}

/// An output block: batch `z`, block-row `row`, block-column `col`.
#[derive(CubeType, Clone, Copy)]
pub(super) struct Block {
    pub(super) z: usize,
    pub(super) row: usize,
    pub(super) col: usize,
}

/// This cube's block on a `(⌈n/bn⌉, ⌈m/bm⌉, batch)` grid: batch `CUBE_POS_Z`, the block-row
/// and column of [`grouped_block`] (the launch order for `group ≤ 1`). With [`Place::new`],
/// the prologue of every tiled kernel.
#[cube]
pub(super) fn cube_block(#[comptime] group: usize) -> Block {
    let (row, col) = grouped_block(group);
    Block {
        z: CUBE_POS_Z as usize,
        row,
        col,
    }
}

/// This cube's `(block_row, block_col)`: with `group > 1` the launch order is remapped so that
/// consecutive cubes go down a strip `group` block-rows tall before moving right (the last
/// strip shorter), so the cubes resident at once read fewer distinct A and B tiles and reuse
/// them from L2. A bijection of the 2-D grid for any grid size.
#[cube]
pub(super) fn grouped_block(#[comptime] group: usize) -> (usize, usize) {
    let mut by = CUBE_POS_Y as usize;
    let mut bx = CUBE_POS_X as usize;
    if comptime!(group > 1) {
        let gx = CUBE_COUNT_X as usize;
        let (y, x) = grouped_tile(by * gx + bx, gx, CUBE_COUNT_Y as usize, group);
        by = y;
        bx = x;
    }
    (by, bx)
}

/// The `(block_row, block_col)` of the `lin`-th block of a `gx × gy` grid in the order of
/// [`grouped_block`] (`group ≤ 1`: row by row).
#[cube]
pub(super) fn grouped_tile(
    lin: usize,
    gx: usize,
    gy: usize,
    #[comptime] group: usize,
) -> (usize, usize) {
    let mut by = lin / gx;
    let mut bx = lin % gx;
    if comptime!(group > 1) {
        let per_strip = group * gx;
        let first = (lin / per_strip) * group;
        let rows = select(gy - first < group, gy - first, group);
        let within = lin % per_strip;
        by = first + within % rows;
        bx = within / rows;
    }
    (by, bx)
}

/// Output block `blk` in the numbering shared by the stream-K launch's kernels: `gx · gy`
/// blocks per batch (`gx = ⌈n/bn⌉`, `gy = ⌈m/bm⌉`), batch-major, each batch in the order of
/// `group` ([`grouped_tile`]).
#[cube]
pub(super) fn numbered_block(blk: usize, gx: usize, gy: usize, #[comptime] group: usize) -> Block {
    let (row, col) = grouped_tile(blk % (gx * gy), gx, gy, group);
    Block {
        z: blk / (gx * gy),
        row,
        col,
    }
}

/// `order[lin] = by · CUBE_COUNT_X + bx` for the cube at launch position
/// `lin = CUBE_POS_Y · CUBE_COUNT_X + CUBE_POS_X`, where `(by, bx)` is the block the grouped
/// order of the manual-MMA and SIMT kernels (`group` block-rows per strip) hands that cube — so
/// tests can check the remap on any backend. `CUBE_DIM = 1`; `order` holds the whole 2-D grid.
#[cube(launch_unchecked)]
pub fn grouped_order_kernel(order: &mut Array<u32>, #[comptime] group: usize) {
    let (by, bx) = grouped_block(group);
    let gx = CUBE_COUNT_X as usize;
    let lin = CUBE_POS_Y as usize * gx + CUBE_POS_X as usize;
    order[lin] = (by * gx + bx) as u32;
}

/// The `(x, y)` register tile of the unit at plain position `(tx, ty)` of a `ux × uy` grid of
/// unit tiles. Where the grid holds whole 8 × 4 groups, each run of 32 consecutive units (one
/// NVIDIA warp) covers 8 tiles across × 4 down instead of a strip of one row, so a warp's
/// shared-memory reads touch fewer distinct A rows and B columns per step. A pure relabeling of
/// the units: correct for any plane width.
#[cube]
pub(super) fn warp_tiles(
    tx: usize,
    ty: usize,
    #[comptime] ux: usize,
    #[comptime] uy: usize,
) -> (usize, usize) {
    let mut x = tx;
    let mut y = ty;
    if comptime!(ux.is_multiple_of(8) && uy.is_multiple_of(4)) {
        let u = UNIT_POS as usize;
        let group = u / 32;
        let lane = u % 32;
        let groups_x = comptime!(ux / 8);
        x = (group % groups_x) * 8 + lane % 8;
        y = (group / groups_x) * 4 + lane / 8;
    }
    (x, y)
}

/// `len` f32 accumulators in registers (a local array), zeroed.
#[cube]
pub(super) fn zeroed(#[comptime] len: usize) -> Array<f32> {
    let mut acc = Array::<f32>::new(len);
    #[unroll]
    for i in 0..len {
        acc[i] = 0.0;
    }
    acc
}

/// One mbarrier per pipeline stage, each expecting every unit of the cube (unit 0 initializes
/// them). The `cp.async` kernels fill stage `s` and arrive on barrier `s`, so a wait on it
/// covers every unit's copies into that stage.
#[cube]
pub(super) fn stage_barriers(#[comptime] stages: usize) -> Sequence<Shared<Barrier>> {
    let mut bars = Sequence::<Shared<Barrier>>::new();
    #[unroll]
    for _ in 0..stages {
        bars.push(Barrier::shared(CUBE_DIM, UNIT_POS == 0));
    }
    bars
}

/// Makes this unit's copies so far count towards `bars[stage]` and arrives on it.
#[cube]
pub(super) fn commit_arrive(
    bars: &Sequence<Shared<Barrier>>,
    stage: usize,
    #[comptime] stages: usize,
) {
    #[unroll]
    for s in 0..stages {
        if stage == s {
            commit_at(bars, s);
        }
    }
}

/// [`commit_arrive`] for a stage known at compile time (no dispatch over the stages).
#[cube]
pub(super) fn commit_at(bars: &Sequence<Shared<Barrier>>, #[comptime] stage: usize) {
    let bar = bars.index(stage);
    bar.commit_copy_async();
    let _token = bar.arrive();
}

/// Waits until every unit's copies into `stage` have landed (the `phase`-parity completion of
/// its barrier).
#[cube]
pub(super) fn wait_stage(
    bars: &Sequence<Shared<Barrier>>,
    stage: usize,
    phase: u32,
    #[comptime] stages: usize,
) {
    #[unroll]
    for s in 0..stages {
        if stage == s {
            bars[s].wait_parity(phase);
        }
    }
}

/// `count` manual-MMA accumulators (`vectors` f32 vectors of `NC` each per lane), zeroed.
#[cube]
pub(super) fn mma_accumulators<NC: Size>(
    #[comptime] count: usize,
    #[comptime] vectors: usize,
) -> Sequence<Array<Vector<f32, NC>>> {
    let mut acc = Sequence::<Array<Vector<f32, NC>>>::new();
    #[unroll]
    for _ in 0..count {
        let mut t = Array::<Vector<f32, NC>>::new(vectors);
        #[unroll]
        for v in 0..vectors {
            t[v] = Vector::<f32, NC>::new(0.0);
        }
        acc.push(t);
    }
    acc
}

/// `count` 16 × 16 f32 accumulator fragments of depth `kf`, zeroed.
#[cube]
pub(super) fn zero_accumulators(
    #[comptime] count: usize,
    #[comptime] kf: usize,
) -> Sequence<cmma::Matrix<f32>> {
    let mut acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..count {
        acc.push(cmma::Matrix::<f32>::from_value(
            cmma::MatrixIdent::Accumulator,
            16usize,
            16usize,
            kf,
            cmma::MatrixLayout::Undefined,
            0.0,
        ));
    }
    acc
}

/// A row-major 16 × 16 × `kf` fragment (`ident`: A or B) loaded from `from`, whose rows are
/// `stride` elements apart.
#[cube]
pub(super) fn load_fragment<FT: Numeric, S: CubePrimitive>(
    #[comptime] ident: cmma::MatrixIdent,
    from: &Slice<S>,
    stride: u32,
    #[comptime] kf: usize,
) -> cmma::Matrix<FT> {
    // SAFETY: loaded in full on the next line before any use.
    let frag = unsafe {
        cmma::Matrix::<FT>::uninitialized(ident, 16usize, 16usize, kf, cmma::MatrixLayout::RowMajor)
    };
    cmma::load(&frag, from, stride);
    frag
}

/// `v` after the epilogue: `+ bias[col]` (when `with_bias`), then the activation.
#[cube]
pub(super) fn epilogue<F: Float, A: Activation>(
    v: f32,
    bias: &Array<F>,
    col: usize,
    scale: f32,
    #[comptime] with_bias: bool,
) -> F {
    let mut x = v;
    if comptime!(with_bias) {
        x += f32::cast_from(bias[col]);
    }
    F::cast_from(A::apply(x, scale))
}

/// Writes `src[at..at + 4]` through the epilogue to columns `col..col + 4` of output row `r`
/// (starting at `row_start`): one 4-wide store with `c_vec` (`NC = 4`, `n` and the row pitch
/// multiples of 4), else masked scalars.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn store4<F: Float, NC: Size, A: Activation, L: List<f32>>(
    c: &mut Array<Vector<F, NC>>,
    src: &L,
    at: usize,
    r: usize,
    col: usize,
    row_start: usize,
    m: usize,
    n: usize,
    bias: &Array<F>,
    scale: f32,
    #[comptime] c_vec: bool,
    #[comptime] with_bias: bool,
) {
    if comptime!(c_vec) {
        if r < m && col < n {
            let mut v = Vector::<F, NC>::empty();
            #[unroll]
            for j in 0..4usize {
                v[j] = epilogue::<F, A>(L::read(src, at + j), bias, col + j, scale, with_bias);
            }
            c[(row_start + col) / 4] = v;
        }
    } else {
        #[unroll]
        for j in 0..4usize {
            if r < m && col + j < n {
                let y = epilogue::<F, A>(L::read(src, at + j), bias, col + j, scale, with_bias);
                c[row_start + col + j] = Vector::<F, NC>::new(y);
            }
        }
    }
}
