//! Histograms: `counts[b] = #{ i : bin(input[i]) = b }`, u32 counts.
//!
//! | kernel | bins live in | per element |
//! |---|---|---|
//! | [`histogram_kernel()`] with `cfg.shared` | shared memory, one private copy per cube, merged with one global atomic per non-empty bin | a shared-memory atomic |
//! | [`histogram_kernel()`] without `cfg.shared` | global memory | a global atomic |
//!
//! With `cfg.runs`, each unit counts runs of equal bins in registers and issues one atomic per
//! run instead of one per element: on skewed data (every value in one bin) the atomics of a
//! whole unit's share collapse to one, so contention on the hot bin disappears; on uniform data
//! it costs a compare per element.
//!
//! Binning ([`bin_of()`]): integer input is its own bin (values ≥ `bins`, and negative `i32`
//! read as `u32`, fall outside); float input maps `[lo, hi]` onto `bins` equal bins in f32
//! arithmetic, `x == hi` in the last bin (as `torch.histc`), NaN and values outside dropped.

use cubecl::prelude::*;

/// Comptime configuration of [`histogram_kernel()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HistConfig {
    /// Private per-cube bins in shared memory (`bins` words of it); else global atomics.
    pub shared: bool,
    /// Aggregate runs of equal bins per unit before each atomic.
    pub runs: bool,
    /// Float input binned over `[lo, hi]`; else integer input used as the bin index.
    pub float: bool,
    /// Number of bins, when `shared` (sizes the shared array); 0 otherwise.
    pub shared_bins: usize,
    /// Vectors each unit loads (one grid apart) before it bins any of them (at least 1): the
    /// loads in flight per unit, which the atomics between one load and the next otherwise
    /// hold to one.
    pub batch: usize,
}

/// The bin of `x`, or `bins` (outside every bin) when it falls outside.
/// Float: `u32((x − lo) · scale)` clamped to `bins − 1`, for `lo ≤ x ≤ hi`, NaN excluded.
#[cube]
#[allow(unused_assignments)] // `b` is set in exactly one comptime branch
pub fn bin_of<T: Scalar>(
    x: T,
    bins: u32,
    lo: f32,
    hi: f32,
    scale: f32,
    #[comptime] float: bool,
) -> u32 {
    let mut b = bins;
    if comptime!(float) {
        let v = f32::cast_from(x);
        let inside = !v.is_nan() && v >= lo && v <= hi;
        let raw = u32::cast_from(f32::max((v - lo) * scale, 0.0));
        b = select(inside, u32::min(raw, bins - 1), bins);
    } else {
        b = u32::cast_from(x);
    }
    b
}

/// Adds `n` to bin `b` of the private (shared) or global histogram; `b ≥ bins` is dropped.
#[cube]
fn add_to_bin(
    local: &SharedMemory<Atomic<u32>>,
    counts: &mut Array<Atomic<u32>>,
    b: u32,
    n: u32,
    bins: u32,
    #[comptime] shared: bool,
) {
    if b < bins && n > 0 {
        if comptime!(shared) {
            local[b as usize].fetch_add(n);
        } else {
            counts[b as usize].fetch_add(n);
        }
    }
}

/// Grid-stride histogram over `len_vecs` vectors of `input` into `counts` (which must hold
/// `bins` zeroed or accumulating words; the kernel only adds).
///
/// Preconditions: `counts.len() ≥ bins`; with `cfg.shared`, `cfg.shared_bins == bins`;
/// `scale = bins / (hi − lo)` computed in f32 (the reference uses the same value).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn histogram_kernel<T: Scalar, N: Size>(
    input: &Array<Vector<T, N>>,
    counts: &mut Array<Atomic<u32>>,
    len_vecs: usize,
    bins: u32,
    lo: f32,
    hi: f32,
    scale: f32,
    #[comptime] cfg: HistConfig,
) {
    let local =
        SharedMemory::<Atomic<u32>>::new(comptime!(if cfg.shared { cfg.shared_bins } else { 1 }));
    if comptime!(cfg.shared) {
        let mut b = UNIT_POS as usize;
        while b < cfg.shared_bins {
            local[b].store(0u32);
            b += CUBE_DIM as usize;
        }
        sync_cube();
    }
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut run_bin = bins;
    let mut run_len = 0u32;
    let mut held = Array::<Vector<T, N>>::new(comptime!(cfg.batch));
    // Every unit runs the same trip count, its last element-free steps predicated: the
    // cube's barrier below then follows a uniform loop exit, which lavapipe's SPIR-V path
    // needs (after a divergent exit it lost the shared counts of the units that had looped).
    let steps = len_vecs.div_ceil(grid * cfg.batch);
    for step in 0..steps {
        let first = ABSOLUTE_POS + step * grid * cfg.batch;
        // All of a step's loads before its atomics: a driver does not move a load above an
        // atomic, so one at a time each unit would wait out every load's latency.
        #[unroll]
        for u in 0..cfg.batch {
            let i = first + u * grid;
            if i < len_vecs {
                held[u] = input[i];
            }
        }
        #[unroll]
        for u in 0..cfg.batch {
            if first + u * grid < len_vecs {
                let v = held[u];
                #[unroll]
                for k in 0..N::value() {
                    let b = bin_of::<T>(v[k], bins, lo, hi, scale, cfg.float);
                    if comptime!(cfg.runs) {
                        if b == run_bin {
                            run_len += 1;
                        } else {
                            add_to_bin(&local, counts, run_bin, run_len, bins, cfg.shared);
                            run_bin = b;
                            run_len = 1;
                        }
                    } else {
                        add_to_bin(&local, counts, b, 1u32, bins, cfg.shared);
                    }
                }
            }
        }
        // The unit's last run goes out in the last step, not after the loop: lavapipe's SPIR-V
        // path dropped a post-loop atomic that depends on the loop's carried values.
        if comptime!(cfg.runs) && step + 1 == steps {
            add_to_bin(&local, counts, run_bin, run_len, bins, cfg.shared);
        }
    }
    if comptime!(cfg.shared) {
        sync_cube();
        let mut b = UNIT_POS as usize;
        while b < cfg.shared_bins {
            let c = local[b].load();
            if c > 0u32 {
                counts[b].fetch_add(c);
            }
            b += CUBE_DIM as usize;
        }
    }
}

/// `out[i] = value` for `i < len` (zeroes the counts before a histogram).
#[cube(launch_unchecked)]
pub fn fill_u32_kernel(out: &mut Array<u32>, len: usize, value: u32) {
    let grid = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < len {
        out[i] = value;
        i += grid;
    }
}
