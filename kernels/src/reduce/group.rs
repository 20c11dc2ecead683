use super::ReduceOp;
use cubecl::prelude::*;

/// How the units of a cube are grouped for [`group_reduce()`].
///
/// The cube is `CUBE_DIM = (group, groups_per_cube)`; each row of units (same `UNIT_POS_Y`)
/// reduces together. `group` must be a power of two. With `plane`, `group` must be a multiple
/// of `plane_width` (the device's fixed plane width, 8 on lavapipe, 32 on NVIDIA, 64 on some
/// AMD) so that no plane spans two groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupConfig {
    /// Units per group (`CUBE_DIM_X`).
    pub group: u32,
    /// Groups per cube (`CUBE_DIM_Y`).
    pub groups_per_cube: u32,
    /// Use plane shuffles (else a shared-memory tree).
    pub plane: bool,
    /// The fixed plane width the launch relies on (ignored without `plane`).
    pub plane_width: u32,
}

impl GroupConfig {
    /// Shared-memory words [`group_reduce()`] needs.
    pub fn shared_len(&self) -> usize {
        let per_group = if self.plane {
            (self.group / self.plane_width.max(1)).max(1)
        } else {
            self.group
        };
        (per_group * self.groups_per_cube) as usize
    }
}

/// Butterfly over the plane with `plane_shuffle_xor`: every lane ends with the combination of
/// all `PLANE_DIM` lanes, whatever the width.
#[cube]
pub fn plane_combine<O: ReduceOp>(value: f32) -> f32 {
    let mut v = value;
    let mut offset = 1u32;
    while offset < PLANE_DIM {
        v = O::combine(v, plane_shuffle_xor(v, offset));
        offset *= 2;
    }
    v
}

/// Reduces `value` over the `cfg.group` units of this unit's group and returns the result to
/// every unit of the group. Every unit of the cube must call it (it synchronizes the cube).
#[cube]
#[allow(unused_assignments)] // `result` is assigned in exactly one comptime branch
pub fn group_reduce<O: ReduceOp>(value: f32, inf: f32, #[comptime] cfg: GroupConfig) -> f32 {
    let mut result = value;
    if comptime!(cfg.plane) {
        result = group_reduce_plane::<O>(value, inf, cfg);
    } else {
        result = group_reduce_shared::<O>(value, cfg);
    }
    result
}

/// Plane path: butterfly within each plane, then (groups wider than a plane) the per-plane
/// partials through shared memory and a second butterfly.
#[cube]
fn group_reduce_plane<O: ReduceOp>(value: f32, inf: f32, #[comptime] cfg: GroupConfig) -> f32 {
    let mut result = plane_combine::<O>(value);
    if comptime!(cfg.group > cfg.plane_width) {
        let x = UNIT_POS_X as usize;
        let y = UNIT_POS_Y as usize;
        let mut shared = SharedMemory::<f32>::new(comptime!(cfg.shared_len()));
        let planes = comptime!((cfg.group / cfg.plane_width) as usize);
        // The lane is derived from UNIT_POS_X (groups are whole planes, x-major): WGSL rejects
        // `subgroup_invocation_id` in multi-dimensional workgroups.
        let lane = x % PLANE_DIM as usize;
        if lane == 0 {
            shared[y * planes + x / PLANE_DIM as usize] = result;
        }
        sync_cube();
        // Every plane of the group combines all partials, so every unit gets the result.
        let mut acc = O::identity(inf);
        let mut j = lane;
        while j < planes {
            acc = O::combine(acc, shared[y * planes + j]);
            j += PLANE_DIM as usize;
        }
        result = plane_combine::<O>(acc);
    }
    result
}

/// Shared-memory path: a tree over the group's slots, `log2(group)` barriers.
#[cube]
fn group_reduce_shared<O: ReduceOp>(value: f32, #[comptime] cfg: GroupConfig) -> f32 {
    let x = UNIT_POS_X as usize;
    let y = UNIT_POS_Y as usize;
    let group = comptime!(cfg.group as usize);
    let mut shared = SharedMemory::<f32>::new(comptime!(cfg.shared_len()));
    shared[y * group + x] = value;
    sync_cube();
    let mut stride = CUBE_DIM_X as usize / 2;
    while stride > 0 {
        if x < stride {
            shared[y * group + x] =
                O::combine(shared[y * group + x], shared[y * group + x + stride]);
        }
        sync_cube();
        stride /= 2;
    }
    shared[y * group]
}

/// [`group_reduce()`] of two values at once: the same combine over the group for `a` and for
/// `b`, with the barriers (and on the plane path the shared partials) of a single reduction.
/// Every unit of the cube must call it.
#[cube]
#[allow(unused_assignments)] // the results are assigned in exactly one comptime branch
pub fn group_reduce_pair<O: ReduceOp>(
    a: f32,
    b: f32,
    inf: f32,
    #[comptime] cfg: GroupConfig,
) -> (f32, f32) {
    let x = UNIT_POS_X as usize;
    let y = UNIT_POS_Y as usize;
    let mut ra = a;
    let mut rb = b;
    if comptime!(cfg.plane) {
        ra = plane_combine::<O>(a);
        rb = plane_combine::<O>(b);
        if comptime!(cfg.group > cfg.plane_width) {
            let planes = comptime!((cfg.group / cfg.plane_width) as usize);
            let half = comptime!(cfg.shared_len());
            let mut shared = SharedMemory::<f32>::new(comptime!(2 * cfg.shared_len()));
            let lane = x % PLANE_DIM as usize;
            if lane == 0 {
                shared[y * planes + x / PLANE_DIM as usize] = ra;
                shared[half + y * planes + x / PLANE_DIM as usize] = rb;
            }
            sync_cube();
            let mut acc_a = O::identity(inf);
            let mut acc_b = O::identity(inf);
            let mut j = lane;
            while j < planes {
                acc_a = O::combine(acc_a, shared[y * planes + j]);
                acc_b = O::combine(acc_b, shared[half + y * planes + j]);
                j += PLANE_DIM as usize;
            }
            ra = plane_combine::<O>(acc_a);
            rb = plane_combine::<O>(acc_b);
        }
    } else {
        let group = comptime!(cfg.group as usize);
        let half = comptime!(cfg.shared_len());
        let mut shared = SharedMemory::<f32>::new(comptime!(2 * cfg.shared_len()));
        shared[y * group + x] = a;
        shared[half + y * group + x] = b;
        sync_cube();
        let mut stride = CUBE_DIM_X as usize / 2;
        while stride > 0 {
            if x < stride {
                shared[y * group + x] =
                    O::combine(shared[y * group + x], shared[y * group + x + stride]);
                shared[half + y * group + x] = O::combine(
                    shared[half + y * group + x],
                    shared[half + y * group + x + stride],
                );
            }
            sync_cube();
            stride /= 2;
        }
        ra = shared[y * group];
        rb = shared[half + y * group];
    }
    (ra, rb)
}
