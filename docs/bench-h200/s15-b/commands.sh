#!/usr/bin/env bash
# s15-b: the skinny (decode) matmul after staging A in shared memory and eight depth rows in
# flight, checked (strict skinny tests on CUDA and wgpu-Vulkan, memcheck and racecheck on the
# matmul example's skinny runs) and timed against cuBLAS at each shape with the copy ceiling in
# the same call; norms in f16/bf16 and the long f32 rows; attention at D64; PyTorch anchors.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=520 bash docs/bench-h200/s15-b/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-520}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer; pkill -f anchors_s15 ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
{
stamp
# A subshell, so `wait` waits for these and not for the watchdog (the 2026-12-03T14:11Z call's
# test step waited out the whole limit that way and left the bench step nothing).
(
for be in cuda wgpu; do
  env $S timeout 150 $M --test-threads 2 "$be::matmul_skinny" > "$OUT/t-$be.txt" 2>&1 &
done
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=skinny \
    timeout 150 compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-matmul_variants > "$OUT/s-$tool.txt" 2>&1 &
done
wait
)
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -20; done
for t in memcheck racecheck; do echo "## $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|skinny|FAILED|failed' "$OUT/s-$t.txt" | head -30; done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
rm -f "$OUT"/t-*.txt "$OUT"/s-*.txt
pick() { grep -E '^(attention|norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 30 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### matmul decode shapes: the automatic choice, skinny forced, cuBLAS at each shape"
D=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,1x50257x4096,4x14336x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=skinny CUBEPORT_BENCH_DTYPES=f32,f16,bf16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 170 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|skinny|cublas)/cuda/'
echo "##### norm f16/bf16 at 16384x4096 (with the copy anchor per dtype)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=16384x4096 run 70 .gpu/bin/bench-reduce --bench
echo "##### norm f32: 16384x4096 and 1024x65536 with the long-row experiments"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_NORM_SHAPES=16384x4096,1024x65536 run 60 .gpu/bin/bench-reduce --bench
echo "##### attention f16 D64: auto, mma_w4_k64_r32, mma_w8_k64, simt"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x64 run 70 .gpu/bin/bench-attention --bench
echo "##### PyTorch (one process)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l - 5 )) python3 scripts/anchors_s15.py 2>&1
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
