#!/usr/bin/env bash
# s22-a (planned in s22, which had no GPU): the norm kernel of 2e06a18 (fewer instructions per
# element) timed against its predecessor, checked strictly on CUDA and under compute-sanitizer;
# the cooperative-matrix probe on CUDA and on Vulkan (SPIR-V); small ops on wgpu at three
# `CUBECL_WGPU_MAX_TASKS` (cubecl-wgpu submits every 32 dispatches by default and blocks at 64
# pending uniform writes, so 63 is the largest that cannot stall). As run (s23): the host phase
# before the criterion norms, which time the new kernel in every dtype before the old one.
# Pack: `bash docs/bench-h200/s22-a/pack.sh` (scripts/gpu-pack.sh, plus the wgpu-spirv build
# of `cmma_probe` as example-cmma_probe-spirv and 5b77a78's `reduce` bench, the norm kernel
# before 2e06a18, as bench-reduce-old). Then:
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=570 bash docs/bench-h200/s22-a/commands.sh
set -u
LIMIT=${LIMIT:-570}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_KERNEL_CACHE=off
mkdir -p "$OUT/t"
{
stamp
# In parallel, before anything is timed: strict CUDA norm tests; memcheck and racecheck of the
# automatic norms (every dtype, a ragged and a long shape).
CUBEPORT_STRICT=1 timeout 120 $M --test-threads 6 "cuda::norm" > "$OUT/t/norm.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_NORM_SHAPE=37x4099 timeout 120 compute-sanitizer --tool $tool \
    $B/example-norm_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA norm tests: $(grep -cE '^test .* ok$' "$OUT/t/norm.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP' "$OUT/t/norm.txt" | head -12
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|tolerance|f16|bf16|f32' "$OUT/t/san-$tool.txt" | head -14; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
{
stamp
echo "##### cooperative-matrix probe: CUDA (WMMA), then Vulkan (SPIR-V KHR cooperative matrices)"
CUBEPORT_BACKEND=cuda timeout 30 $B/example-cmma_probe 2>&1 | grep -vE '^wgpu|^cuda' | tail -6
timeout 45 $B/example-cmma_probe-spirv 2>&1 | grep -vE '^wgpu|^cuda' | tail -6
echo "##### PyTorch norms (same call)"
timeout 50 python3 scripts/anchors_norm.py 2>&1 | tail -20
stamp
} > "$OUT/probe.txt" 2>&1
{
stamp
echo "=== torch"; timeout 25 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
echo "=== cubeport bench cuda --family ops"
timeout 50 $B/cubeport bench --backend cuda --family ops 2>&1 | grep -E '^(op |launch)|rror'
for t in 32 63 16; do
  l=$(left); [ "$l" -gt 55 ] || break
  echo "=== cubeport bench wgpu --family ops, CUBECL_WGPU_MAX_TASKS=$t"
  CUBECL_WGPU_MAX_TASKS=$t timeout 50 $B/cubeport bench --backend wgpu --family ops 2>&1 | grep -E '^(op |launch)|rror'
done
stamp
} > "$OUT/host.txt" 2>&1
{
stamp
# One dtype per process: a process builds and checks every case against f64 before timing any.
# The new kernel in every dtype first, then the old one where time is left (f16 first: its
# LayerNorm was the furthest from the target).
for dv in f16:new bf16:new f32:new f16:old bf16:old; do
  d=${dv%:*}; v=${dv#*:}
  bin=$B/bench-reduce; [ $v = old ] && bin=$B/bench-reduce-old
  echo "##### $d, norm $v kernel (with the copy anchor)"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=$d CUBEPORT_NORM_SHAPES=16384x4096,4096x16384 \
    run 60 $bin --bench '(norm/[a-z_]*_auto|copy/)'
done
stamp
} > "$OUT/norm.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT"/tests.txt "$OUT"/probe.txt "$OUT"/host.txt "$OUT"/norm.txt | tail -c 11000
