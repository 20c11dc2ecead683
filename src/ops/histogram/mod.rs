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
//! turns a unit's whole share into one atomic, so the hot bin is not serialized. Global atomics
//! on one hot bin serialize across the whole device, so the global fallback always aggregates
//! runs. Privatized bins absorb the same contention in shared memory, where runs only add the
//! compare, so the shared default does not aggregate (BENCHMARKS.md has the measurements).
//!
//! Counts are u32. The input is limited to `u32::MAX` elements ([`ShapeError::TooLarge`](crate::ShapeError::TooLarge)), so
//! no count can overflow.

mod launch;
pub(crate) mod spec;

pub use spec::{Binning, HistogramVariant};

use crate::guard::LaunchKey;
use crate::ops::unsupported_dtype;
use crate::{DeviceTensor, Element, Error, Layout, Scalar, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use spec::HistogramSpec;

const OP: &str = "histogram";

/// Counts `input` into `counts` (overwritten): `counts[b] = #{ i : bin(input[i]) = b }`, with
/// `bins = counts.len()` and the bin of a value given by `binning` ([`Binning`]).
///
/// Shapes: `input` dense of any shape (flattened), non-empty, at most `u32::MAX` elements;
/// `counts` dense, rank 1, dtype u32, at least one bin. Results are exact.
///
/// # Errors
/// [`Error::Shape`]: empty input, no bins ([`ShapeError::NoBins`](crate::ShapeError::NoBins)), counts not u32 or not
/// rank 1, an input dtype that does not fit `binning` ([`ShapeError::DTypeKind`](crate::ShapeError::DTypeKind)), a range that
/// is not finite and increasing ([`ShapeError::BadRange`](crate::ShapeError::BadRange)), strides; [`Error::UnsupportedDType`]
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

/// [`histogram_into`] into a new `[bins]` u32 tensor.
///
/// # Errors
/// As [`histogram_into`].
pub fn histogram<R: Runtime, S: Scalar>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<S>,
    bins: usize,
    binning: Binning,
) -> Result<DeviceTensor<u32>, Error> {
    let mut counts = DeviceTensor::<u32>::empty(client, &[bins])?;
    histogram_into(client, input.as_ref(), counts.as_mut(), binning)?;
    Ok(counts)
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
    histogram(client, input, bins, Binning::Index)
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
    histogram(client, input, bins, Binning::Range { lo, hi })
}

/// The variant [`histogram_into`] runs for `input` counted into `bins` bins (for reports).
///
/// # Errors
/// As [`histogram_into`]'s validation of `input`, `bins` and `binning`.
pub fn histogram_variant<R: Runtime>(
    client: &ComputeClient<R>,
    input: &TensorRef<'_>,
    bins: usize,
    binning: Binning,
) -> Result<HistogramVariant, Error> {
    let counts = Layout::dense_unbounded(&[bins], crate::DType::U32);
    let spec = HistogramSpec::new(&input.layout, &counts, binning).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(unsupported_dtype(&caps, OP, spec.dtype));
    }
    Ok(HistogramVariant::select(&caps, &spec))
}

fn histogram_impl<R: Runtime>(
    client: &ComputeClient<R>,
    input: TensorRef<'_>,
    counts: TensorMut<'_>,
    binning: Binning,
    forced: Option<HistogramVariant>,
) -> Result<(), Error> {
    let spec =
        HistogramSpec::new(&input.layout, &counts.layout, binning).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    if !spec.dtype.is_supported_by(&caps) {
        return Err(unsupported_dtype(&caps, OP, spec.dtype));
    }
    let variant = forced.unwrap_or_else(|| HistogramVariant::select(&caps, &spec));
    let cfg = variant.plan(&caps, &spec, OP)?;
    let key = LaunchKey::new(OP)
        .layout(&input.layout)
        .layout(&counts.layout)
        .with((std::mem::discriminant(&binning), variant));
    crate::guard::launch_op(client, OP, key, || {
        launch::histogram(client, &caps, input.handle, counts.handle, &spec, cfg);
        Ok(())
    })
}
