//! Attention forward, FlashAttention-2's algorithm: K/V streamed through shared memory in tiles,
//! an online softmax per query row, the score matrix never written to memory.
//!
//! | kernel | mapping | arithmetic |
//! |---|---|---|
//! | [`attention_simt_kernel()`] | one group of `CUBE_DIM_X` units per query row, `CUBE_DIM_Y` rows per cube; unit `x` scores key `x` of each tile and owns output dims `x, x + G, …` | f32 CUDA cores / shader ALUs, every backend |
//! | [`attention_mma_kernel()`] | 16 or 32 query rows per plane, K/V tiles through a two-stage `cp.async` pipeline | `mma.sync` tensor cores (CUDA), f16/bf16 |
//!
//! Per tile of `G` keys: the tile's keys and values are staged in shared memory (f32), each unit
//! scores its key against the row's query, the group takes the tile's maximum and the sum of
//! `exp(s − m)`, rescales its running output by `exp(m_old − m_new)` and adds `Σ p·v`. Causal
//! masks are aligned to the bottom-right corner (key `j` is visible to query `i` when
//! `j + Sq ≤ i + Sk`), and a cube stops at the last tile any of its rows can see.

mod mma;

pub use mma::*;

use crate::reduce::{GroupConfig, Max, ReduceOp, Sum, group_reduce};
use cubecl::prelude::*;

/// Comptime configuration of [`attention_simt_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttentionConfig {
    /// `group`: keys per tile, one unit each (also the row's group for the reductions);
    /// `groups_per_cube`: query rows per cube.
    pub group: GroupConfig,
    /// Head dimension `D`.
    pub head_dim: usize,
    /// Bottom-right causal mask.
    pub causal: bool,
    /// Write the log-sum-exp of each row's scores to `lse`.
    pub lse: bool,
}

impl AttentionConfig {
    /// Output dims each unit owns.
    pub fn dims_per_unit(&self) -> usize {
        self.head_dim.div_ceil(self.group.group as usize)
    }

    /// Shared-memory words the kernel needs: the query rows, the K tile (rows padded by one
    /// word so units reading different keys at the same dim hit different banks), the V tile
    /// and the tile's probabilities, plus the reductions' scratch.
    pub fn shared_words(&self) -> usize {
        let (g, r, d) = (
            self.group.group as usize,
            self.group.groups_per_cube as usize,
            self.head_dim,
        );
        r * d + g * (d + 1) + g * d + r * g + self.group.shared_len()
    }
}

/// `out = softmax(scale · q·kᵀ + mask) · v` per (batch, head), and optionally the log-sum-exp
/// of the scaled, masked scores.
///
/// Tensors: `q`, `out` `[B, H, Sq, D]`, `k`, `v` `[B, Hkv, Sk, D]` (head `h` reads kv head
/// `h / kv_group`), each with strides `[batch, head, row]` in elements and unit stride along
/// `D`; `lse` dense `[B, H, Sq]`. Cube `c` (linear `CUBE_POS`, `c < cubes`) takes rows
/// `(c mod row_blocks) · CUBE_DIM_Y …` of head `(c / row_blocks) mod heads` of batch
/// `c / (row_blocks · heads)`.
///
/// Edge semantics (the f64 reference's): a row that sees no key (causal with `Sq > Sk`) gives 0
/// and `lse = −∞`; a NaN in the query, a visible key or a visible value makes the row NaN.
///
/// Preconditions: every index the strides reach lies in its array; `cfg.group` as in
/// [`GroupConfig`] with `CUBE_DIM = (group, groups_per_cube)`; `cfg.head_dim ≥ 1`; the shared
/// memory of [`AttentionConfig::shared_words`] fits the device; `inf = +∞`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::collapsible_if)] // comptime and runtime conditions stay apart
pub fn attention_simt_kernel<F: Float>(
    q: &Array<F>,
    k: &Array<F>,
    v: &Array<F>,
    out: &mut Array<F>,
    lse: &mut Array<f32>,
    q_strides: Sequence<usize>,
    k_strides: Sequence<usize>,
    v_strides: Sequence<usize>,
    o_strides: Sequence<usize>,
    dims: Sequence<usize>,
    scale: f32,
    inf: f32,
    #[comptime] cfg: AttentionConfig,
) {
    // dims: heads, kv_group, sq, sk, row_blocks, cubes
    let heads = dims[0];
    let sq = dims[2];
    let sk = dims[3];
    let row_blocks = dims[4];
    if CUBE_POS >= dims[5] {
        terminate!(); // a whole cube past the work (spread grids): no barrier is skipped
    }
    let g = comptime!(cfg.group.group as usize);
    let r = comptime!(cfg.group.groups_per_cube as usize);
    let d = cfg.head_dim;
    let kd = comptime!(cfg.head_dim + 1);
    let x = UNIT_POS_X as usize;
    let y = UNIT_POS_Y as usize;
    let tid = UNIT_POS as usize;
    let units = comptime!(cfg.group.group as usize * cfg.group.groups_per_cube as usize);
    let rb = CUBE_POS % row_blocks;
    let bh = CUBE_POS / row_blocks;
    let h = bh % heads;
    let b = bh / heads;
    let hk = h / dims[1];
    let row0 = rb * r;
    let i = row0 + y;
    let valid = i < sq;
    let neg_inf = -inf;

    let mut q_s =
        SharedMemory::<f32>::new(comptime!(cfg.group.groups_per_cube as usize * cfg.head_dim));
    let mut k_s =
        SharedMemory::<f32>::new(comptime!(cfg.group.group as usize * (cfg.head_dim + 1)));
    let mut v_s = SharedMemory::<f32>::new(comptime!(cfg.group.group as usize * cfg.head_dim));
    let mut p_s = SharedMemory::<f32>::new(comptime!(
        cfg.group.group as usize * cfg.group.groups_per_cube as usize
    ));

    let q_base = b * q_strides[0] + h * q_strides[1];
    let mut idx = tid;
    while idx < r * d {
        let row = row0 + idx / d;
        let mut val = 0.0f32;
        if row < sq {
            val = f32::cast_from(q[q_base + row * q_strides[2] + idx % d]) * scale;
        }
        q_s[idx] = val;
        idx += units;
    }

    // The keys any row of this cube sees: all of them, or (causal) up to the last row's
    // diagonal.
    let mut key_end = sk;
    if comptime!(cfg.causal) {
        key_end = causal_key_end(row0 + r, sq, sk);
    }
    let tiles = key_end.div_ceil(g);
    let k_base = b * k_strides[0] + hk * k_strides[1];
    let v_base = b * v_strides[0] + hk * v_strides[1];

    let mut m = neg_inf;
    let mut l = 0.0f32;
    let mut o = Array::<f32>::new(comptime!(cfg.head_dim.div_ceil(cfg.group.group as usize)));
    #[unroll]
    for c in 0..comptime!(cfg.head_dim.div_ceil(cfg.group.group as usize)) {
        o[c] = 0.0;
    }
    for t in 0..tiles {
        let j0 = t * g;
        sync_cube(); // the previous tile's readers (and the query load) are done
        let mut idx = tid;
        while idx < g * d {
            let jj = idx / d;
            let dd = idx % d;
            let j = j0 + jj;
            let mut kv = 0.0f32;
            let mut vv = 0.0f32;
            if j < sk {
                kv = f32::cast_from(k[k_base + j * k_strides[2] + dd]);
                vv = f32::cast_from(v[v_base + j * v_strides[2] + dd]);
            }
            k_s[jj * kd + dd] = kv;
            v_s[idx] = vv;
            idx += units;
        }
        sync_cube();
        let j = j0 + x;
        let mut visible = valid && j < sk;
        if comptime!(cfg.causal) {
            visible = visible && j + sq <= i + sk;
        }
        let mut s = neg_inf;
        if visible {
            let mut acc = 0.0f32;
            #[unroll]
            for dd in 0..cfg.head_dim {
                acc += q_s[y * d + dd] * k_s[x * kd + dd];
            }
            s = acc;
        }
        let tile_max = group_reduce::<Max>(s, inf, cfg.group);
        let m_new = Max::combine(m, tile_max);
        // Masked scores and rows that have seen nothing yet add nothing (exp(−∞ − −∞) would be
        // NaN); a NaN score or maximum stays NaN.
        let p = select(s == neg_inf || m_new == neg_inf, 0.0, f32::exp(s - m_new));
        let tile_sum = group_reduce::<Sum>(p, inf, cfg.group);
        let alpha = select(m == neg_inf, 0.0, f32::exp(m - m_new));
        l = l * alpha + tile_sum;
        m = m_new;
        p_s[y * g + x] = p;
        sync_cube();
        // A tile the row sees whole takes plain FMAs; on the diagonal a masked key's weight is
        // 0 but its value may be NaN or ∞ (0 · NaN = NaN), so masked keys are selected out.
        let mut whole = true;
        if comptime!(cfg.causal) {
            whole = j0 + g + sq <= i + sk;
        }
        #[unroll]
        for c in 0..comptime!(cfg.head_dim.div_ceil(cfg.group.group as usize)) {
            let dd = x + c * g;
            if dd < d {
                let mut acc = o[c] * alpha;
                if whole {
                    #[unroll]
                    for jj in 0..g {
                        acc += p_s[y * g + jj] * v_s[jj * d + dd];
                    }
                } else {
                    #[unroll]
                    for jj in 0..g {
                        let seen = j0 + jj + sq <= i + sk;
                        acc += select(seen, p_s[y * g + jj] * v_s[jj * d + dd], 0.0);
                    }
                }
                o[c] = acc;
            }
        }
    }
    if valid {
        // NaN kept through `is_nan` (drivers may assume no NaN in arithmetic); a quiet NaN from
        // +∞'s bits, since CUDA cannot reinterpret a literal.
        let qnan = f32::reinterpret(u32::reinterpret(inf) | 0x0040_0000u32);
        let dead = m.is_nan() || l.is_nan();
        let inv = select(l == 0.0, 0.0, 1.0 / l);
        let o_base = b * o_strides[0] + h * o_strides[1] + i * o_strides[2];
        #[unroll]
        for c in 0..comptime!(cfg.head_dim.div_ceil(cfg.group.group as usize)) {
            let dd = x + c * g;
            if dd < d {
                out[o_base + dd] = F::cast_from(select(dead, qnan, o[c] * inv));
            }
        }
        if comptime!(cfg.lse) {
            if x == 0 {
                let lse_row = select(l == 0.0, neg_inf, m + f32::ln(l));
                lse[(b * heads + h) * sq + i] = select(dead, qnan, lse_row);
            }
        }
    }
}

/// The keys that rows below `rows_end` see under the bottom-right causal mask (row `i` sees
/// the keys below `i + sk − sq + 1`): `min(rows_end + sk − sq, sk)`, 0 where that is not
/// positive.
#[cube]
fn causal_key_end(rows_end: usize, sq: usize, sk: usize) -> usize {
    select(rows_end + sk > sq, min_index(rows_end + sk - sq, sk), 0)
}

/// The smaller of two indices.
#[cube]
fn min_index(a: usize, b: usize) -> usize {
    select(a < b, a, b)
}
