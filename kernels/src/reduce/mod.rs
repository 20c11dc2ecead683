//! Reductions: a plane (warp/subgroup) butterfly and a shared-memory tree behind one helper,
//! [`group_reduce()`], and the kernels built on it.
//!
//! | kernel | mapping | reduction path |
//! |---|---|---|
//! | [`reduce_rows_kernel()`] | a group of `CUBE_DIM_X` units per contiguous row, `CUBE_DIM_Y` rows per cube | plane butterfly (+ shared partials) or shared tree |
//! | [`reduce_partials_kernel()`] | grid-stride over a whole array, one partial per cube | same |
//! | [`reduce_strided_kernel()`] | one unit per output (vectorized along the inner axis), loops over the reduced axis | none needed (coalesced across units) |
//!
//! Every kernel accumulates in f32 whatever the storage type. The plane path needs the
//! plane width fixed at launch (`GroupConfig::plane_width`) and a group size that is a
//! multiple of it, so planes never straddle two rows; it never assumes 32.

mod group;
mod kernels;
mod ops;

pub use group::*;
pub use kernels::*;
pub use ops::*;
