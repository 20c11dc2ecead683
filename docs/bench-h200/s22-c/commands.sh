#!/usr/bin/env bash
# s22-c (planned in s22, which had no GPU): issue 23 item 1 — the wgpu grid-stride families
# (whole-array sum 0.56x of CUDA, histogram 0.15x, 2026-12-01). wgpu reports no SM count, and
# until s22 those kernels then launched 256 cubes of 256 units (CUDA: 8 per SM, 1056 on the
# H200), which leaves a 132-SM GPU a quarter occupied; since s22, 8 per SM of an assumed 256
# SMs. Old (5b77a78's benches) against new, on wgpu-Vulkan, with CUDA and the copy in the same
# call. Pack: `bash docs/bench-h200/s22-a/pack.sh` (bench-reduce-old, bench-memory-old).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=400 bash docs/bench-h200/s22-c/commands.sh
set -u
LIMIT=${LIMIT:-400}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
F='(reduce/(sum|max)_all|reduce/sum_strided|gemv/.*columns|histogram/auto|copy/)'
{
stamp
for be in wgpu cuda; do
  for v in new old; do
    [ $be = cuda ] && [ $v = old ] && continue
    sfx=""; [ $v = old ] && sfx=-old
    echo "##### $be, $v grid: whole-array and strided sums, Aᵀ·x"
    CUBEPORT_BACKEND=$be CUBEPORT_BENCH_FAMILIES=reduce,gemv run 70 $B/bench-reduce$sfx --bench "$F"
    echo "##### $be, $v grid: histograms"
    CUBEPORT_BACKEND=$be CUBEPORT_BENCH_FAMILIES=histogram run 70 $B/bench-memory$sfx --bench "$F"
  done
done
stamp
} > "$OUT/fill.txt" 2>&1
kill $dog 2>/dev/null
tail -c 11000 "$OUT/fill.txt"
