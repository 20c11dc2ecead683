//! The attention launcher (the only `unsafe` of the family). It runs an [`AttentionPlan`], which
//! only [`super::spec::AttentionVariant::plan`] builds.

use super::spec::{AttentionPlan, AttentionSpec};
use crate::dtype::float_dispatch;
use crate::ops::group::spread_cubes;
use crate::{Caps, Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::attention::attention_simt_kernel;

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
    let group = plan.cfg.group;
    let rows = group.groups_per_cube as usize;
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
    // SAFETY: `AttentionSpec::new` proved q/out `[B, H, Sq, D]` and k/v `[B, Hkv, Sk, D]` with
    // `Hkv | H`, unit stride along D and every index the strides reach inside the spans passed
    // here (out with no two indices on one element), one float dtype, and `lse` (when written)
    // dense `[B, H, Sq]` f32; `plan` checked the row group, `D ≤ 128` and the shared memory;
    // cubes past `cubes` exit before any barrier.
    unsafe {
        attention_simt_kernel::launch_unchecked::<E, R>(
            client,
            spread_cubes(caps, cubes),
            CubeDim::new_2d(group.group, group.groups_per_cube),
            ArrayArg::from_raw_parts(h.q.clone(), spec.spans[0]),
            ArrayArg::from_raw_parts(h.k.clone(), spec.spans[1]),
            ArrayArg::from_raw_parts(h.v.clone(), spec.spans[2]),
            ArrayArg::from_raw_parts(h.out.clone(), spec.spans[3]),
            ArrayArg::from_raw_parts(h.lse.clone(), lse_len),
            seq(&qs),
            seq(&ks),
            seq(&vs),
            seq(&os),
            seq(&dims),
            spec.scale,
            f32::INFINITY,
            plan.cfg,
        )
    }
}
