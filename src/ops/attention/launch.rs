//! The attention launcher (the only `unsafe` of the family). It runs an [`AttentionPlan`], which
//! only [`super::spec::AttentionVariant::plan`] builds.

use super::spec::{AttentionPlan, AttentionSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::spread_cubes;
use crate::{Caps, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::attention::{attention_mma_kernel, attention_simt_kernel};

/// The device buffers of one call (`lse`: the caller's, or a one-word stand-in never written).
pub(crate) struct AttentionHandles<'a> {
    pub q: &'a Handle,
    pub k: &'a Handle,
    pub v: &'a Handle,
    pub out: &'a Handle,
    pub lse: &'a Handle,
}

fn seq<R: Runtime>(values: &[usize]) -> SequenceArg<R, usize> {
    let mut arg = SequenceArg::new();
    for &v in values {
        arg.push(v);
    }
    arg
}

/// Launches the attention `spec` describes.
pub(crate) fn attention<R: Runtime>(
    client: &ComputeClient<R>,
    caps: &Caps,
    h: &AttentionHandles<'_>,
    spec: &AttentionSpec,
    plan: AttentionPlan,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => {
        typed::<R, E>(client, caps, h, spec, plan);
        Ok(())
    }, other => Err(crate::ops::unsupported_dtype(caps, "attention", other)))
}

fn typed<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    caps: &Caps,
    h: &AttentionHandles<'_>,
    spec: &AttentionSpec,
    plan: AttentionPlan,
) {
    let rows = match plan {
        AttentionPlan::Simt(cfg) => cfg.group.groups_per_cube as usize,
        AttentionPlan::Mma(cfg) => cfg.rows(),
    };
    let row_blocks = spec.sq.div_ceil(rows);
    let cubes = spec.batch * spec.heads * row_blocks;
    let lse_len = if spec.lse {
        spec.batch * spec.heads * spec.sq
    } else {
        1
    };
    let [qs, ks, vs, os] = spec.strides;
    let dims = [
        spec.heads,
        spec.heads / spec.kv_heads,
        spec.sq,
        spec.sk,
        row_blocks,
        cubes,
    ];
    let count = spread_cubes(caps, cubes);
    // SAFETY: each call below passes a handle with the element count its tensor spans (see
    // the block comment on the launch).
    let arr = |h: &Handle, len: usize| unsafe { ArrayArg::from_raw_parts(h.clone(), len) };
    // SAFETY (both arms): `AttentionSpec::new` proved q/out `[B, H, Sq, D]` and k/v
    // `[B, Hkv, Sk, D]` with `Hkv | H`, unit stride along D and every index the strides reach
    // inside the spans passed here (out with no two indices on one element), one float dtype,
    // and `lse` (when written) dense `[B, H, Sq]` f32; cubes past `cubes` exit before any
    // barrier. SIMT: `plan` checked the row group, `D ≤ 128` and the shared memory. MMA: `plan`
    // checked manual MMA, cp.async and 32-wide planes, f16/bf16, `D` a multiple of 16 up to 128,
    // q/k/v strides multiples of 8 (so the spans are whole 16-byte vectors) and the shared
    // memory.
    unsafe {
        match plan {
            AttentionPlan::Simt(cfg) => attention_simt_kernel::launch_unchecked::<E, R>(
                client,
                count,
                CubeDim::new_2d(cfg.group.group, cfg.group.groups_per_cube),
                arr(h.q, spec.spans[0]),
                arr(h.k, spec.spans[1]),
                arr(h.v, spec.spans[2]),
                arr(h.out, spec.spans[3]),
                arr(h.lse, lse_len),
                seq(&qs),
                seq(&ks),
                seq(&vs),
                seq(&os),
                seq(&dims),
                spec.scale,
                f32::INFINITY,
                cfg,
            ),
            AttentionPlan::Mma(cfg) => attention_mma_kernel::launch_unchecked::<E, R>(
                client,
                count,
                CubeDim::new_1d(32 * cfg.warps as u32),
                8,
                arr(h.q, spec.spans[0]),
                arr(h.k, spec.spans[1]),
                arr(h.v, spec.spans[2]),
                arr(h.out, spec.spans[3]),
                arr(h.lse, lse_len),
                seq(&qs),
                seq(&ks),
                seq(&vs),
                seq(&os),
                seq(&dims),
                spec.scale,
                f32::INFINITY,
                cfg,
            ),
        }
    }
}
