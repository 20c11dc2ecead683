#!/usr/bin/env bash
# s20-b: s19-b (never run: no GPU in s19) on the binaries of s20's host-path commit, plus the
# host path against PyTorch in the same call (issue 20: activation, softmax and norm launches
# now share the device properties instead of copying them per launch).
#  - Norm and softmax with their row loads issued together against the device copy, every
#    dtype, 16384 x 4096 and 4096 x 16384.
#  - f16 / bf16 m = 32 / 64 x 4096 x 4096: the automatic split shape against deeper cp.async
#    pipelines and cuBLAS, after matmul_variants checked them against f64.
#  - Small ops back to back: scripts/anchors_ops.py and `cubeport bench --family activation`.
#  - ncu: norm kernels, decode-shape matmul durations, the automatic attention kernel.
#  - compute-sanitizer racecheck / memcheck of tc64x128x32_w2x2_p2.
# Pack as s20-a's header says, keeping the cubeport binary.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s20-b/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
NCU="ncu --clock-control none"
DEEP=tc64x64x64_w2x2_a6_mma,tc64x64x64_w2x2_a8_mma,tc64x64x64_w2x2_a6_mma_split1,tc64x128x64_w2x2_a6_mma
{
stamp
echo "##### deep pipelines: matmul_variants against f64 (every dtype, forced)"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$DEEP timeout 90 $B/example-matmul_variants 2>&1 | grep -vE ' = [0-9.]+e-(0[4-9]|[1-9][0-9])$' | head -30
echo "##### copy, norm and softmax, every dtype (automatic)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/(f32|f16|bf16)/'
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm,softmax CUBEPORT_NORM_SHAPES=16384x4096,4096x16384 \
  run 150 $B/bench-reduce --bench '(norm/[a-z_]*_auto|softmax/[a-z_]*auto)'
echo "##### m = 64 (and 32) f16 / bf16: automatic, deep pipelines, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$DEEP CUBEPORT_BENCH_DTYPES=f16,bf16 \
  CUBEPORT_MATMUL_SIZES=32x4096x4096,64x4096x4096 CUBEPORT_PEER_SIZES=32x4096x4096,64x4096x4096 \
  run 90 $B/bench-matmul --bench 'matmul/(auto|tc|cublas)[^/]*/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
{
stamp
echo "=== torch"; timeout 60 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
echo "=== cubeport bench cuda, activation family (ops, launch floor)"
l=$(left); [ "$l" -gt 90 ] && timeout 80 $B/cubeport bench --backend cuda --family activation > "$OUT/host-bench.txt" 2>&1
echo "exit $?"; grep -E '^(op |launch)' "$OUT/host-bench.txt"; rm -f "$OUT/host-bench.txt"
} > "$OUT/host.txt" 2>&1
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
stamp > "$OUT/ncu-norm.txt"
for d in f32 f16 bf16; do
  l=$(left); [ "$l" -gt 60 ] || break
  echo "##### norm $d (check launches of rms, layer, add+rms in build order)" >> "$OUT/ncu-norm.txt"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096 CUBEPORT_BENCH_DTYPES=$d \
    timeout 60 $NCU $SEC -k regex:norm --launch-count 3 $B/bench-reduce --bench 'nothing-timed' >> "$OUT/ncu-norm.txt" 2>&1
done
{
stamp
echo "##### decode matmul f16 / bf16 m = 1, 8, 64 x 4096 x 4096: every kernel's duration (ours and cuBLAS's)"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=1x4096x4096,8x4096x4096,64x4096x4096 \
  CUBEPORT_PEER_SIZES=1x4096x4096,8x4096x4096,64x4096x4096 timeout 90 $NCU --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
  --launch-count 80 $B/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/f16/(1|8|64)x' --warm-up-time 0.1 --measurement-time 0.1 2>&1 \
  | grep -E '^  [a-zA-Z_].*\(|gpu__time|grid_size|block_size|registers|^matmul/|time:' | cut -c1-160
} > "$OUT/ncu-matmul.txt" 2>&1
{
stamp
echo "##### attention f16 D128 automatic: stall reasons"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128 timeout 90 $NCU $SEC \
  --section ComputeWorkloadAnalysis --section InstructionStats -k regex:attention --launch-count 1 $B/bench-attention --bench 'nothing-timed'
} > "$OUT/ncu-attention.txt" 2>&1
{
stamp
echo "##### compute-sanitizer on tc64x128x32_w2x2_p2 (matmul_variants, every dtype)"
for tool in memcheck racecheck; do
  l=$(left); [ "$l" -gt 30 ] || break
  echo "## $tool"
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2_p2 \
    timeout $(( l < 120 ? l - 10 : 110 )) compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/san-$tool.txt" 2>&1
  grep -E 'SUMMARY|FAIL|fail|rror' "$OUT/san-$tool.txt" | head -8; tail -3 "$OUT/san-$tool.txt"; rm -f "$OUT/san-$tool.txt"
done
stamp
} > "$OUT/sanitizer.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/sanitizer.txt"
cat "$OUT/host.txt"
grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Stall|One or More' "$OUT/ncu-norm.txt" | head -60
cat "$OUT/sanitizer.txt" | tail -20
