//! The GEMV launcher (the only `unsafe` of the family). It runs a [`GemvPlan`], which only
//! [`super::spec::GemvVariant::plan`] builds.

use super::spec::{GemvPlan, GemvSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::{axis_chunks, spread_cubes};
use crate::ops::width_dividing;
use crate::{Caps, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::gemv::{gemv_cols_kernel, gemv_rows_kernel};
use cubeport_kernels::reduce::{Sum, reduce_strided_kernel};

/// The three tensors of `y = A·x` / `y = Aᵀ·x`.
pub(crate) struct Operands<'a> {
    pub a: &'a Handle,
    pub x: &'a Handle,
    pub y: &'a Handle,
}

/// Launches the product `spec` describes as `plan` says.
pub(crate) fn gemv<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    io: &Operands<'_>,
    spec: &GemvSpec,
    plan: GemvPlan,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, caps, io, spec, plan);
        Ok(())
    }, other => Err(crate::ops::unsupported_dtype(caps, "gemv", other)))
}

fn typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    io: &Operands<'_>,
    spec: &GemvSpec,
    plan: GemvPlan,
) {
    let (rows, cols) = (spec.rows, spec.cols);
    let n = width_dividing(caps, spec.dtype, cols);
    match plan {
        GemvPlan::Rows(cfg) => {
            let cubes = rows.div_ceil(cfg.groups_per_cube as usize);
            // SAFETY: `GemvSpec::new` proved `a` dense `rows × cols`, `x` `cols`, `y` `rows`;
            // `n` divides `cols`; `cfg` was checked by `RowGroup::config`.
            unsafe {
                gemv_rows_kernel::launch_unchecked::<E, R>(
                    client,
                    spread_cubes(caps, cubes),
                    CubeDim::new_2d(cfg.group, cfg.groups_per_cube),
                    n,
                    ArrayArg::from_raw_parts(io.a.clone(), rows * cols),
                    ArrayArg::from_raw_parts(io.x.clone(), cols),
                    ArrayArg::from_raw_parts(io.y.clone(), rows),
                    rows,
                    cols / n,
                    f32::INFINITY,
                    cfg,
                )
            }
        }
        GemvPlan::Columns => {
            // Enough (chunk, column-vector) pairs to fill the device, chunks of ≥ 16 rows.
            let col_vecs = cols / n;
            let chunks = axis_chunks(caps, col_vecs, rows.div_ceil(16));
            let chunk_rows = rows.div_ceil(chunks);
            let chunks = rows.div_ceil(chunk_rows);
            let partials = client.empty(chunks * cols * 4);
            let outputs = chunks * col_vecs;
            // SAFETY: `a` is dense `rows × cols` with `n | cols`; `x` holds `rows` scalars;
            // `partials` holds `chunks · cols` f32 = `chunks · col_vecs` vectors.
            unsafe {
                gemv_cols_kernel::launch_unchecked::<E, R>(
                    client,
                    CubeCount::new_1d(outputs.div_ceil(256).min(65_535) as u32),
                    CubeDim::new_1d(256),
                    n,
                    ArrayArg::from_raw_parts(io.a.clone(), rows * cols),
                    ArrayArg::from_raw_parts(io.x.clone(), rows),
                    ArrayArg::from_raw_parts(partials.clone(), chunks * cols),
                    rows,
                    col_vecs,
                    chunk_rows,
                )
            }
            // SAFETY: `partials` is dense `[1, chunks, cols]`, `y` holds `cols`; `n | cols`.
            unsafe {
                reduce_strided_kernel::launch_unchecked::<f32, E, Sum, R>(
                    client,
                    CubeCount::new_1d(col_vecs.div_ceil(256).min(65_535) as u32),
                    CubeDim::new_1d(256),
                    n,
                    ArrayArg::from_raw_parts(partials.clone(), chunks * cols),
                    ArrayArg::from_raw_parts(io.y.clone(), cols),
                    chunks,
                    col_vecs,
                    1,
                    chunks,
                    1.0,
                    f32::INFINITY,
                )
            }
        }
    }
}
