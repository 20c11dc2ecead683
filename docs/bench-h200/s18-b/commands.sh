#!/usr/bin/env bash
# s18-b: issue 24 norms with the automatic row group widened to 1024 units for long rows (and
# no per-element NaN tests on CUDA), every dtype; issue 23: a wgpu-spirv build on the H200's
# Vulkan driver: its devices line, the strict wgpu suite on SPIR-V, and f16 matmul through
# cooperative matrices (the register-staged tensor-core shapes) against CUDA's f16 automatic
# choice in the same call.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=480 bash docs/bench-h200/s18-b/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-480}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/' ) > /dev/null 2>&1 & dog=$!
B=.gpu/bin
{
stamp
echo "##### wgpu-spirv devices"
timeout 60 $B/cubeport-spirv devices 2>&1 | head -40
echo "##### strict wgpu suite on SPIR-V (H200 Vulkan)"
CUBEPORT_STRICT=1 CUBEPORT_BACKEND=wgpu timeout 170 $B/main-spirv --test-threads 8 "wgpu::" > "$OUT/t-spirv.txt" 2>&1
echo "exit $?"
grep -E '^test result|FAILED|panicked' "$OUT/t-spirv.txt" | head -40
grep -cE '^test .* ok$' "$OUT/t-spirv.txt"
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
grep -vE '^test .* ok$' "$OUT/t-spirv.txt" | grep -v '^$' | head -300 > "$OUT/tests-full.txt"; rm -f "$OUT/t-spirv.txt"
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable|Unsupported|needs' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### f16 matmul on wgpu-spirv: automatic, cmma, register-staged tensor-core shapes"
V=cmma,tc64x128x32_w2x2,tc128x128x32_w4x2,tc128x128x32_w2x4,tc128x256x32_w2x4
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096 \
  run 110 $B/bench-matmul-spirv --bench 'matmul/(auto|tc|cmma)[^/]*/wgpu/'
echo "##### f16 matmul on CUDA: automatic"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096 \
  run 40 $B/bench-matmul --bench 'matmul/auto[^/]*/cuda/'
echo "##### norm, every dtype, 16384x4096 and 4096x16384: automatic"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096,4096x16384 \
  run 200 $B/bench-reduce --bench
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
