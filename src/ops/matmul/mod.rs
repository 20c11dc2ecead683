//! Matrix products with fused epilogues: `C = act(A·B + bias)`.
//!
//! | variant | kernel | needs | chosen automatically |
//! |---|---|---|---|
//! | `naive` | one unit per output, operands from global memory | — | never (the baseline) |
//! | `tiled16` | 16 × 16 shared tiles, one output per unit | — | tiny outputs |
//! | `skinny` | few rows (decode): a cube per 16 rows (fewer for smaller `m`) × 32 column vectors of B × a depth chunk, 8 depth slices per cube summed in shared memory; the depth split over the grid until the cubes fill the device, f32 partial sums added in order by a second pass | — | products of at most 16 rows (any dtype) where no split tensor-core shape takes them; on CUDA cores up to 64 rows where 64 × 64 blocks under-fill the device |
//! | `narrow` | few columns: a unit per row of A holding up to 16 outputs (more columns: one group of 16 per cube row, each reading A again), A streamed once as 16-byte vectors with four in flight per unit, B read at one address per plane (vectors along its rows where the layout allows), the depth split over the grid until the cubes fill the device, f32 partial sums added in order by the skinny kernel's second pass | — | more than 64 rows and up to 8 columns where A's rows are 16-byte vectors and `narrow_plane` is not chosen: f32, and halves of one column |
//! | `narrow_staged` | as `narrow`, A through shared tiles: the cube loads its rows' next 128 bytes each with whole lines per instruction, then each unit reads its row (conflict-free, rows padded by one vector) | — | not yet, as `narrow` |
//! | `narrow_plane` | few columns, A across the lanes of a plane: each plane (or group of 8 units without plane ops) owns 4 rows of A and its lanes split their depths, so each load instruction reads whole lines of one row, two 16-byte vectors per row in flight; each B row a lane loads serves the 4 rows (up to 16 columns per group); every output summed across the lanes (plane sums, or a padded shared-memory transpose); the depth split as `narrow` | — | more than 64 rows and up to 8 columns where the device has plane sums and A is row-major: one column, f32 where A's rows are not 16-byte vectors, halves where 64 × 128 blocks under-fill the device |
//! | `narrow_mma[_r<rows>_w<planes>_s<steps>]` ([`NarrowMmaShape`]) | few columns on tensor cores: a cube per 16 or 32 rows of A × up to 16 columns, each plane a slice of the depth; lanes load A's rows as 16-byte vectors straight into m16n8k16 A fragments (depths permuted within a fragment), B's rows staged per plane and read back by a transposing `ldmatrix` with the same permutation; the planes' sums added in shared memory in plane order, the depth split over the grid as well where the planes under-fill the device | f16/bf16, manual MMA; a ragged or transposed A is copied into 16-byte rows first | more than 64 rows and up to 16 columns of halves where A's rows are 16-byte vectors |
//! | `blocked64` | 64 × 64 blocks, 4 × 4 register tiles, 16-deep shared tiles | — | where `simt64x64x16_4x4_s2` does not fit the device |
//! | `blocked128` | 128 × 128 blocks, 8 × 8 register tiles (split 4 + 4 for conflict-free reads), 8-deep tiles, each 32 units covering 8 × 4 tiles | — | where `simt128x128x16_8x16_s1` does not fit the device |
//! | `blocked128_db` | the same, double-buffered (tile `t + 1` fetched into registers while tile `t` is multiplied, one barrier per tile) | — | never (more registers than `blocked128` for no gain) |
//! | `simt<bm>x<bn>x<bk>_<tm>x<tn>_s<stages>[_g<rows>]` ([`SimtShape`]) | the vectorized CUDA-core kernel: shared tiles held as 4-wide vectors (one 16-byte read feeds 16 FMAs), 4-wide B loads and C stores where B's and C's rows allow, loads two tiles ahead through registers, 1 or 2 shared stages; `_g<rows>` walks the cubes in column strips | the shape fits the device ([`SimtShape::check`]) | f32 (and f16 without tensor cores): `simt128x256x8_8x16_s1_g8` for large outputs where the device reports no SM count, `simt128x128x16_8x16_s1` and `simt64x64x16_4x4_s2` for smaller ones (shallow ones, or where the SM count is unknown) |
//! | `simt…_s<stages>[_g<rows>]_sk[<cubes>]` ([`SimtShape::stream_k`]) | the same kernel for all but the last `blocks mod SMs` blocks (a whole number of waves), then a stream-K tail: one cube per SM takes an equal run of the last blocks' depth tiles, at most 8 cubes per block, and a fixup pass sums each block's f32 pieces in a fixed order before the epilogue | `_sk`: an SM count | large f32 outputs where the device reports its SM count (`simt128x256x8_8x16_s1_g8_sk`) |
//! | `simt<bm>x<bn>x<bk>_<tm>x<tn>_a<stages>` ([`SimtShape`] with `async_copy`) | the same register tiles fed by `cp.async`: A kept row-major and read 4 depths per 16-byte read, 2–4 stages on mbarriers, one barrier per tile, no register staging | f32, `cp.async`; A or B rows that are not 16-byte vectors are copied into padded buffers first | never (not timed on a GPU yet) |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>` ([`TcShape`]) | tensor cores (cubecl `cmma` → WMMA on CUDA): `wm × wn` planes per cube, each a grid of 16 × 16 fragments, 16-byte vector loads into padded shared tiles, two stages, loads two tiles ahead through registers | f16/bf16, tensor cores, 32-wide planes | f16/bf16 without `cp.async` (`tc128x128x32_w4x2`), and, without manual MMA, outputs too small to fill the device with 128 × 128 blocks (`tc64x128x32_w2x2`) |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_p<passes>` ([`TcShape`] with `passes`) | the register-staged kernel with its f32 accumulators staged for the epilogue in `passes` passes of `frags_m / passes` fragment rows per plane (a `passes`-th of the shared memory) | as `tc…` | on Vulkan (48 KiB, no `cp.async`): `tc128x128x16_w2x4_p4` where 128 × 128 blocks make two waves, else `tc64x128x32_w2x2_p2` |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_sc` ([`TcShape`] with `scratch`) | the register-staged kernel with its epilogue one fragment at a time through a 16 × 16 f32 scratch tile per plane (the `cp.async` kernel's), so shared memory holds the two stages and 1 KiB a plane | as `tc…` | not yet (larger blocks than `_p<passes>` allows under Vulkan's 48 KiB; to be timed there) |
//! | `tc…_r2` ([`TcShape`] with `deep_prefetch`, register-staged shapes) | the register-staged kernel with two tiles in flight in registers (loads issued three tiles ahead), iterations unrolled in pairs so the register sets keep constant indices | as `tc…` | not yet (for drivers that keep one cube per SM; to be timed on Vulkan) |
//! | `tc…_v<load>` ([`TcShape`] with `load`) | the register-staged kernel with its global loads and shared tiles `load` elements wide instead of 16 bytes; rows keep their 16-byte padding | as `tc…` | never (16 bytes ran faster on CUDA and through SPIR-V) |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_a<stages>` ([`TcShape`] with `stages`) | the same fragments fed by `cp.async` (global → shared, no registers) through 2–4 stages on mbarriers; outputs leave one fragment at a time through a per-plane scratch tile | as `tc…`, and `cp.async`; A or B rows that are not 16-byte vectors are copied into padded buffers first | f16/bf16 products of depth ≤ 128 that 128 × 128 blocks fill (`tc128x128x32_w4x2_a3`), and outputs that 128 × 128 blocks fill where the manual-MMA shapes do not fit |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_a<stages>[_g<rows>]_mma` ([`TcShape`] with `mma`) | the same `cp.async` pipeline (2–8 stages) with hand-placed fragments: cubecl's manual MMA (`ldmatrix`, `mma.sync.m16n8k16`), f32 accumulators in registers, fragments double-buffered in registers across 16-deep steps, the next tile's first fragments loaded right after the tile barrier, stages unrolled so barriers and offsets are constants, epilogue straight from the registers; `_g<rows>` walks the cubes in column strips | as `tc…_a<stages>`, and manual MMA | f16/bf16 with `cp.async`: outputs that 128 × 256 blocks fill (`tc128x256x64_w2x4_a3_g8_mma`), else that 128 × 128 blocks fill (`tc128x128x64_w2x2_a3_mma`), else `tc64x128x64_w2x2_a3_mma`; ragged ones padded |
//! | `tc<bm>x<bn>x<bk>_w<wm>x<wn>_a<stages>_mma_split<c>` ([`TcShape`] with `split`) | the manual-MMA kernel on short blocks (16, 32 or 64 rows) with the depth cut into chunks until the grid holds about `c` cubes per SM; each cube writes its chunk's f32 sums, and the skinny kernel's fixup pass adds them in chunk order (deterministic) before the epilogue; no split where the blocks fill the device | as `tc…_a<stages>_mma` | f16/bf16 products of at most 64 rows where B's rows are 16-byte vectors (`tc16x128x64_w1x4_a3_mma_split2`, `tc32x128x64_w1x4_a3_mma_split2`, `tc64x64x64_w2x2_a3_mma_split1`; the six-stage `tc64x64x64_w2x2_a6_mma_split1` is built and tested, not yet chosen) |
//! | `tc…_tf32` ([`TcShape`] with `tf32`) | the WMMA kernels above on f32 inputs with TF32 fragments (16 × 16 × 8, 10-bit mantissas, f32 accumulation; tolerance [`Tolerance::matmul_tf32`](crate::reference::Tolerance::matmul_tf32)) | TF32 tensor cores | never: the explicit opt-in (`tc128x128x32_w4x2_a3_tf32`) |
//! | `cmma` | tensor cores, the plain form: 64 × 64 blocks of 2 × 2 planes, scalar loads, f16/bf16 in, f32 accumulation | f16/bf16, tensor cores, 32-wide planes | f16/bf16 where no tiled tensor-core shape fits the device |
//!
//! f32 never runs on tensor cores unless a `_tf32` shape is forced (no silent TF32). Every
//! variant accumulates in f32, handles ragged `m`, `n`, `k` (zero-filled loads, masked stores),
//! batches with a broadcast batch of 1, and operands given by strides (transposed views need no
//! copy). cubecl 0.10 emits WMMA / `mma.sync`, not Hopper's `wgmma`, which caps tensor-core
//! throughput well below cuBLAS on Hopper GPUs. Measured figures: BENCHMARKS.md.
//!
//! Every op runs validate (`spec.rs`) → plan → launch. The plan ([`MatmulPlan`], made by one
//! function, `MatmulVariant::plan` in `plan.rs`) decides everything from the device's
//! capabilities, the problem and the operands' layout: the variant (forced or automatic), the
//! kernel it runs and every vector width; the launcher (`launch.rs`) runs exactly that plan.

mod launch;
mod plan;
mod simt_shape;
mod spec;
mod stream_k;
mod tc_shape;
mod variant;

pub use plan::MatmulPlan;
pub use simt_shape::SimtShape;
pub use tc_shape::TcShape;
pub use variant::{MatmulVariant, NarrowMmaShape};

#[cfg(feature = "testing")]
pub(crate) use launch::last_plan;

use crate::guard::LaunchKey;
use crate::{
    Activation, Caps, DType, DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of,
};
use cubecl::prelude::*;
use spec::MatmulSpec;

const OP: &str = "matmul";

/// `c = a · b`: `[m, k] · [k, n] → [m, n]`, or batched `[batch, m, k] · [batch, k, n]` where
/// either batch may be 1 (broadcast). f32 accumulation; f32 products never use TF32.
///
/// Operands may have any strides (a transposed view of a row-major buffer is a valid `a` or
/// `b`); `c` is row-major, dense or with padded rows (a row pitch, as frameworks allocate).
/// See [`matmul_fused_into`] for the fused epilogue, [`matmul_plan`] for what runs.
///
/// # Errors
/// [`Error::Shape`]: ranks other than 2 or 3, empty dimensions, inner dimensions that differ,
/// batches that neither match nor broadcast, a `c` of the wrong shape or dtype, strides that
/// reach past a buffer; [`Error::UnsupportedDType`] (bf16 on WGSL, integers);
/// [`Error::Unsupported`] when the grid exceeds the device's launch limits; [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::DeviceTensor;
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let a = DeviceTensor::from_slice(client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let b = DeviceTensor::from_slice(client, &[5.0f32, 6.0, 7.0, 8.0], &[2, 2])?;
/// let mut c = DeviceTensor::<f32>::empty(client, &[2, 2])?;
/// cubeport::matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut())?;
/// assert_eq!(c.to_vec(client)?, vec![19.0, 22.0, 43.0, 50.0]);
/// # Ok(()) }
/// ```
pub fn matmul_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    c: TensorMut<'_>,
) -> Result<(), Error> {
    matmul_impl(client, a, b, None, Activation::Identity, c, None)
}

/// `c = act(a · b + bias)` in one kernel: `bias` (optional) has shape `[n]` and is added to
/// every row before the activation; the product never round-trips through memory.
///
/// # Errors
/// As [`matmul_into`]; a bias not of shape `[n]` or of another dtype is [`Error::Shape`].
pub fn matmul_fused_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
) -> Result<(), Error> {
    matmul_impl(client, a, b, bias, act, c, None)
}

/// [`matmul_fused_into`] with a forced variant. The variant is never replaced by another; a
/// `cp.async` shape (`tc…_a<stages>…`, `simt…_a<stages>`) whose A or B rows are not 16-byte
/// vectors first copies them into padded buffers (the pitch rounded up to whole vectors, the
/// tails zero), which [`matmul_plan`] names (`, pad a b`); so does the register-loaded SIMT
/// kernel for a B of scalar rows on products of 1024 rows or more.
///
/// # Errors
/// As [`matmul_fused_into`]; [`Error::Unsupported`] when the device cannot run the variant for
/// this dtype ([`MatmulVariant::runs_on`]).
pub fn matmul_with<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
    variant: MatmulVariant,
) -> Result<(), Error> {
    matmul_impl(client, a, b, bias, act, c, Some(variant))
}

/// `a · b` into a new tensor (rank 2, or rank 3 when either input is).
///
/// # Errors
/// As [`matmul_into`].
pub fn matmul<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<E>,
    b: &DeviceTensor<E>,
) -> Result<DeviceTensor<E>, Error> {
    let (sa, sb) = (a.shape(), b.shape());
    let batch = if sa.len() == 3 || sb.len() == 3 {
        let ba = if sa.len() == 3 { sa[0] } else { 1 };
        let bb = if sb.len() == 3 { sb[0] } else { 1 };
        Some(ba.max(bb))
    } else {
        None
    };
    let m = sa.get(sa.len().saturating_sub(2)).copied().unwrap_or(0);
    let n = sb.last().copied().unwrap_or(0);
    let shape: Vec<usize> = batch.into_iter().chain([m, n]).collect();
    let mut c = DeviceTensor::<E>::empty(client, &shape)?;
    matmul_into(client, a.as_ref(), b.as_ref(), c.as_mut())?;
    Ok(c)
}

/// The plan [`matmul_with`] (`forced`) or [`matmul_fused_into`] (`forced = None`) runs for
/// these operands: the variant, its kernel and the vector widths their layouts allow. It comes
/// from the same function the ops call, after the same validation.
///
/// # Errors
/// As [`matmul_with`], short of launching.
pub fn matmul_plan<R: Runtime>(
    client: &ComputeClient<R>,
    a: &TensorRef<'_>,
    b: &TensorRef<'_>,
    bias: Option<&TensorRef<'_>>,
    c: &TensorMut<'_>,
    forced: Option<MatmulVariant>,
) -> Result<MatmulPlan, Error> {
    plan_views(&caps_of(client), a, b, bias, c, forced).map(|(_, plan)| plan)
}

/// The variant [`matmul_into`] runs for a `batch × m × n × k` product of dense row-major
/// operands at the start of their buffers (as [`DeviceTensor::from_slice`] makes them): the
/// [`MatmulPlan::variant`] of [`matmul_plan`] for such operands.
///
/// # Errors
/// As [`matmul_into`]'s validation and planning (an empty dimension, an unsupported dtype, a
/// grid beyond the device's limits).
pub fn matmul_variant<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    batch: usize,
    (m, n, k): (usize, usize, usize),
) -> Result<MatmulVariant, Error> {
    let dense = |rows: usize, cols: usize| {
        let mut shape = vec![rows, cols];
        if batch != 1 {
            shape.insert(0, batch);
        }
        Layout::dense_unbounded(&shape, dtype)
    };
    let (a, b, c) = (dense(m, k), dense(k, n), dense(m, n));
    let (_, plan) = plan(&caps_of(client), &a, &b, None, &c, [0; 3], None)?;
    Ok(plan.variant())
}

/// FLOPs of a `batch × m × n × k` product (2 per multiply-add).
pub fn matmul_flops(batch: usize, m: usize, n: usize, k: usize) -> u64 {
    2 * (batch * m * n * k) as u64
}

/// Validation, then the plan: what every op and query above goes through. `offsets`: bytes
/// from the start of each buffer (A, B, C) to its view.
fn plan(
    caps: &Caps,
    a: &Layout,
    b: &Layout,
    bias: Option<&Layout>,
    c: &Layout,
    offsets: [u64; 3],
    forced: Option<MatmulVariant>,
) -> Result<(MatmulSpec, MatmulPlan), Error> {
    let spec = MatmulSpec::new(a, b, bias, c, offsets).map_err(Error::shape(OP))?;
    let plan = MatmulVariant::plan(caps, &spec, forced)?;
    Ok((spec, plan))
}

/// [`plan`] for views: their layouts and where they start in their buffers.
fn plan_views(
    caps: &Caps,
    a: &TensorRef<'_>,
    b: &TensorRef<'_>,
    bias: Option<&TensorRef<'_>>,
    c: &TensorMut<'_>,
    forced: Option<MatmulVariant>,
) -> Result<(MatmulSpec, MatmulPlan), Error> {
    let offset = |h: &cubecl::server::Handle| h.offset_start.unwrap_or(0);
    let offsets = [offset(a.handle), offset(b.handle), offset(c.handle)];
    let bias = bias.map(|b| &b.layout);
    plan(caps, &a.layout, &b.layout, bias, &c.layout, offsets, forced)
}

fn matmul_impl<R: Runtime>(
    client: &ComputeClient<R>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    bias: Option<TensorRef<'_>>,
    act: Activation,
    c: TensorMut<'_>,
    forced: Option<MatmulVariant>,
) -> Result<(), Error> {
    let (spec, plan) = plan_views(&caps_of(client), &a, &b, bias.as_ref(), &c, forced)?;
    let ops = launch::Operands {
        a: a.handle,
        b: b.handle,
        bias: bias.as_ref().map_or(a.handle, |b| b.handle),
        c: c.handle,
    };
    let mut key = LaunchKey::new(OP)
        .layout(&a.layout)
        .layout(&b.layout)
        .layout(&c.layout)
        .with((&plan, act.name()));
    if let Some(bias) = &bias {
        key = key.layout(&bias.layout);
    }
    crate::guard::launch_op(client, OP, key, || {
        launch::matmul(client, &ops, &spec, &plan, act.act())
    })
}
