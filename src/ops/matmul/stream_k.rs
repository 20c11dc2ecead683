//! The stream-K split of a SIMT product: whole blocks for all but the last `blocks mod cubes`,
//! whose depth tiles `cubes` cubes share as one stream, so a grid of one cube per SM ends in a
//! full wave instead of a partial one.

use super::SimtShape;
use super::spec::MatmulSpec;
use crate::{Caps, DType};
use cubeport_kernels::matmul::SimtConfig;

/// How a stream-K SIMT launch divides `tiles` output blocks of `iters` depth tiles each:
/// blocks `0..dp` whole, one per cube; the last `tail = tiles − dp` blocks as one stream of
/// `total = tail · iters` depth tiles in `runs` runs of `chunk` (the last shorter), one per
/// cube, so each run covers pieces of at most two blocks. At most `STREAM_K_SHARE · tail`
/// cubes share the tail, so a block has at most `STREAM_K_SHARE + 1` pieces for the fixup
/// cube to sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StreamKPlan {
    pub dp: usize,
    pub tail: usize,
    pub chunk: usize,
    pub total: usize,
    pub runs: usize,
}

impl StreamKPlan {
    /// The split of `tiles` blocks among `cubes` tail cubes, or `None` where whole blocks
    /// already fill the last wave (`tiles mod cubes = 0`) or the tail runs would not be shorter
    /// than a block.
    fn new(tiles: usize, iters: usize, cubes: usize) -> Option<Self> {
        let tail = tiles % cubes.max(1);
        let total = tail * iters;
        let chunk = total.div_ceil(cubes.min(STREAM_K_SHARE * tail).max(1));
        (tail > 0 && chunk < iters).then(|| StreamKPlan {
            dp: tiles - tail,
            tail,
            chunk,
            total,
            runs: total.div_ceil(chunk),
        })
    }

    /// Workspace slots (one `bm × bn` f32 block each): run `j`'s piece of tail block `t` is
    /// slot `j + t`, unique because runs and blocks both advance along the stream.
    fn slots(&self) -> usize {
        self.runs + self.tail
    }
}

/// Cubes per tail block at most in a stream-K split (see [`StreamKPlan`]): one cube sums a
/// block's pieces, so a last wave of one block on a device of a hundred SMs takes 8 of them (1/8
/// of a block each), not all of them.
const STREAM_K_SHARE: usize = 8;

/// A stream-K launch: the split, the configuration of the tail kernels (deeper tiles, see
/// [`SimtShape::tail_depth`]), the workspace and the tail's grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StreamK {
    pub split: StreamKPlan,
    /// [`cubeport_kernels::matmul::matmul_simt_sk_kernel`] and the fixup run this
    /// configuration: the whole blocks' with the tail depth.
    pub tail: SimtConfig,
    /// f32 entries of the workspace: [`StreamKPlan::slots`] blocks of `bm × bn`.
    pub workspace: usize,
    /// Cubes of the tail pass, `(x, y)`: one per run, wrapped at the device's first axis.
    pub tail_grid: [u32; 2],
}

impl SimtShape {
    /// The cubes that share a stream-K tail on `caps` (`None`: no stream-K).
    fn stream_k_cubes(&self, caps: &Caps) -> Option<usize> {
        match self.stream_k? {
            0 => caps.num_sms.map(|s| s as usize),
            p => Some(p as usize),
        }
    }

    /// Depth of the shared tiles in a stream-K tail: twice `bk` where that shape is valid on
    /// the device, else `bk`. Concurrent tail cubes read different depths, so their loads
    /// find less in L2 and need the longer lead of a deeper tile.
    fn tail_depth(&self, caps: &Caps, dtype: DType) -> u16 {
        let deep = SimtShape {
            bk: 2 * self.bk,
            stream_k: None,
            ..*self
        };
        if deep.check(caps, dtype).is_ok() {
            deep.bk
        } else {
            self.bk
        }
    }

    /// The stream-K launch of this shape for `spec` (`blocks` output blocks in all; `cfg` the
    /// whole blocks' configuration), or `None` where the plain kernel runs: no stream-K tail
    /// in the shape, no tail to share ([`StreamKPlan::new`]), or more whole blocks than the
    /// device's first grid axis holds (they run on a 1-D grid).
    pub(super) fn stream_k_launch(
        &self,
        caps: &Caps,
        spec: &MatmulSpec,
        blocks: usize,
        cfg: SimtConfig,
    ) -> Option<StreamK> {
        let cubes = self.stream_k_cubes(caps)?;
        let depth = self.tail_depth(caps, spec.dtype) as usize;
        let split = StreamKPlan::new(blocks, spec.k.div_ceil(depth), cubes)
            .filter(|split| split.dp <= caps.max_cube_count[0] as usize)?;
        let x = split.runs.min(caps.max_cube_count[0] as usize);
        Some(StreamK {
            split,
            tail: SimtConfig { bk: depth, ..cfg },
            workspace: split.slots() * cfg.bm * cfg.bn,
            tail_grid: [x as u32, split.runs.div_ceil(x) as u32],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::StreamKPlan;

    /// Walks every cube of a plan as `matmul_simt_sk_kernel` does and every tail block as
    /// `matmul_simt_fixup_kernel` does: each tail depth tile is computed exactly once, pieces
    /// land in distinct slots below `slots()`, each tail block has at least two pieces and the
    /// fixup sums exactly the slots that hold its block's pieces.
    #[test]
    fn stream_k_plans_cover_the_tail_once() {
        let mut planned = 0;
        for tiles in 1..300 {
            for iters in 1..40 {
                for cubes in (2..20).chain([132]) {
                    let Some(p) = StreamKPlan::new(tiles, iters, cubes) else {
                        let tail = tiles % cubes;
                        assert!(tail == 0 || (tail * iters).div_ceil(cubes) >= iters);
                        continue;
                    };
                    planned += 1;
                    assert_eq!(p.dp + p.tail, tiles);
                    assert!(p.runs <= cubes.min(super::STREAM_K_SHARE * p.tail));
                    assert!(p.chunk < iters);
                    let mut seen = vec![0u8; p.tail * iters];
                    let mut slot_of = vec![None; p.slots()];
                    for j in 0..p.runs {
                        let (mut it, end) = (
                            p.dp * iters + (j * p.chunk).min(p.total),
                            p.dp * iters + (j * p.chunk + p.chunk).min(p.total),
                        );
                        let mut pieces = 0;
                        while it < end {
                            let (blk, kt0) = (it / iters, it % iters);
                            let kt1 = (kt0 + end - it).min(iters);
                            for d in kt0..kt1 {
                                seen[(blk - p.dp) * iters + d] += 1;
                            }
                            let slot = j + blk - p.dp;
                            assert!(slot_of[slot].is_none(), "{p:?}: slot {slot} twice");
                            slot_of[slot] = Some(blk - p.dp);
                            it += kt1 - kt0;
                            pieces += 1;
                        }
                        assert!((1..=2).contains(&pieces), "{p:?}: run {j} has {pieces}");
                    }
                    assert!(seen.iter().all(|&s| s == 1), "{p:?}: {seen:?}");
                    for t in 0..p.tail {
                        let runs = t * iters / p.chunk..((t + 1) * iters - 1) / p.chunk + 1;
                        assert!(runs.len() >= 2, "{p:?}: block {t} in one piece");
                        assert!(runs.len() <= super::STREAM_K_SHARE + 1, "{p:?}: block {t}");
                        let summed: Vec<usize> = runs.map(|j| j + t).collect();
                        let held: Vec<usize> =
                            (0..p.slots()).filter(|&s| slot_of[s] == Some(t)).collect();
                        assert_eq!(summed, held, "{p:?}: block {t}");
                    }
                }
            }
        }
        assert!(planned > 1000, "{planned} plans");
    }
}
