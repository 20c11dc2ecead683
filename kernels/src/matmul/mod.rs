//! Matrix products `C[z] = act(A[z]·B[z] + bias)`, f32 accumulation whatever the storage type.
//!
//! | kernel | mapping | memory pattern |
//! |---|---|---|
//! | [`matmul_naive_kernel()`] | one unit per output | every operand read from global memory (L1/L2) |
//! | [`matmul_blocked_kernel()`] | a cube per `bm × bn` block, each unit a `tm × tn` register tile | `bk`-deep tiles of A (stored transposed) and B in shared memory; optional ping-pong double buffer |
//! | [`matmul_simt_kernel()`] | as the blocked kernel, each unit `tm × tn` in 4 × 4 groups | shared tiles stored as 4-wide vectors (16-byte reads), 16-byte B loads and C stores where the layout allows, next tile prefetched into registers, 1 or 2 stages |
//! | [`matmul_simt_sk_kernel()`] + [`matmul_simt_fixup_kernel()`] | the SIMT kernel's blocks; whole blocks for all but the last `tiles mod SMs`, which one cube per SM shares as a stream of depth tiles (stream-K) | as the SIMT kernel; tail pieces go to an f32 workspace, and the fixup pass sums each tail block's pieces in a fixed order before the epilogue |
//! | [`matmul_simt_async_kernel()`] | as the SIMT kernel (f32) | A and B tiles copied global → shared by `cp.async` into 2–4 stages on mbarriers (A row-major, read 4 depths at a time), one barrier per tile |
//! | [`matmul_tc_kernel()`] | a cube of `warps_m × warps_n` planes, each a grid of 16×16 fragments | 16-byte vector loads into padded shared tiles, two stages, loads two tiles ahead through registers; tensor cores through `cmma` |
//! | [`matmul_tc_async_kernel()`] | as the tiled tensor-core kernel | A and B tiles copied global → shared by `cp.async` into 2–4 stages on mbarriers; outputs leave one fragment at a time through a per-plane scratch tile |
//! | [`matmul_tc_mma_kernel()`] | as the tiled tensor-core kernel, fragments placed by hand | the `cp.async` pipeline; `ldmatrix` + `mma.sync.m16n8k16`, f32 accumulators and the epilogue in registers |
//! | [`matmul_skinny_kernel()`] + [`matmul_skinny_fixup_kernel()`] | few rows (decode): a cube per `tm` rows × `ux·NB` columns × depth chunk, `uk` depth slices per cube | B streamed once as vectors along its rows, A broadcast from L1; slices summed in shared memory, depth chunks (split-K) in an f32 workspace summed in order by the fixup pass |
//! | [`matmul_narrow_kernel()`] + [`matmul_skinny_fixup_kernel()`] | few columns: a unit per row of A × all `nc` columns of its group, the depth split over the grid | A streamed once as 16-byte vectors along its rows (several in flight per unit), B read at one address per plane (broadcast); no reduction across units |
//! | [`matmul_narrow_mma_kernel()`] + [`matmul_skinny_fixup_kernel()`] | few columns on tensor cores (f16/bf16): a cube per 16–32 rows × 8 columns, its planes splitting the depth, the depth also split over the grid where that fills the device | A streamed once as 16-byte vectors straight into m16n8k16 fragments (depths permuted within a fragment to match), B staged per plane and read back by a transposing `ldmatrix`; plane sums added in shared memory in plane order |
//! | [`matmul_pad_kernel()`] | one unit per output vector (grid-stride) | copies a ragged operand into a dense buffer whose row pitch is a 16-byte multiple, the row tails zero-filled, so the `cp.async` kernels run it |
//! | [`matmul_cmma_kernel()`] | a cube of planes, each plane a 32 × 32 tile of 2 × 2 16×16 fragments | shared tiles, tensor cores through cubecl's `cmma` (WMMA on CUDA) |
//!
//! Operands are addressed through element strides (batch, row, column), so transposed and
//! broadcast (batch stride 0) inputs need no copy; C is `[batch, m, n]` with rows `c_pitch ≥ n`
//! apart (dense when `c_pitch = n`; frameworks pad rows). Ragged edges are zero-filled on load
//! and masked on store. The epilogue adds a per-column bias (when `bias`) and applies the
//! [`Activation`](crate::activation::Activation) in f32 before the single store.
//!
//! `common.rs` holds what the kernels share: the prologue and block placement (`Place`), the
//! block order (grouped strips, the stream-K numbering), the mbarrier pipeline, WMMA
//! fragments and the epilogue.

mod blocked;
mod cmma;
mod common;
mod naive;
mod narrow;
mod narrow_mma;
mod pad;
mod simt;
mod simt_async;
mod skinny;
mod tc;
mod tc_async;
mod tc_mma;
pub use blocked::{BlockConfig, matmul_blocked_kernel};
pub use cmma::{CmmaConfig, matmul_cmma_kernel};
pub use common::grouped_order_kernel;
pub use naive::matmul_naive_kernel;
pub use narrow::{
    NarrowConfig, NarrowPlaneConfig, matmul_narrow_kernel, matmul_narrow_plane_kernel,
};
pub use narrow_mma::{NarrowMmaConfig, matmul_narrow_mma_kernel};
pub use pad::matmul_pad_kernel;
pub use simt::{SimtConfig, matmul_simt_fixup_kernel, matmul_simt_kernel, matmul_simt_sk_kernel};
pub use simt_async::matmul_simt_async_kernel;
pub use skinny::{SkinnyConfig, matmul_skinny_fixup_kernel, matmul_skinny_kernel};
pub use tc::{TcConfig, matmul_tc_kernel};
pub use tc_async::matmul_tc_async_kernel;
pub use tc_mma::matmul_tc_mma_kernel;
