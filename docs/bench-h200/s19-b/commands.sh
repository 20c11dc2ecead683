#!/usr/bin/env bash
# s19-b: profiles before changing code (same binaries as s19-a).
#  - ncu on the norm kernels at 16384 x 4096 in f32 / f16 / bf16 (why halves and LayerNorm
#    trail the copy: occupancy, stall reasons, DRAM throughput);
#  - ncu kernel durations of the decode-shape matmuls (f16, m = 1 / 8 / 64) and cuBLAS's, to
#    split the host-timed gap into device time and host time;
#  - ncu stall reasons of the automatic attention kernel (f16 D128);
#  - compute-sanitizer racecheck / memcheck of tc64x128x32_w2x2_p2 (new in s18).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=420 bash docs/bench-h200/s19-b/commands.sh
set -u
LIMIT=${LIMIT:-420}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
NCU="ncu --clock-control none"
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
grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Stall|One or More' "$OUT/ncu-norm.txt" | head -60
cat "$OUT/sanitizer.txt" | tail -20
