#!/usr/bin/env bash
# s16-a (issue 22): ragged operands padded for the cp.async kernels, and the split-depth
# tensor-core shapes for 1–64 rows. Checked first (strict CUDA matmul suite; memcheck and
# racecheck on the matmul example's new paths), then timed against cuBLAS at each shape with the
# copy ceiling in the same call; norms in f16/bf16 if time is left.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s16-a/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-560}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
NEW=tc16x128x64_w1x4_a3_mma_split,tc32x64x64_w2x2_a3_mma_split,tc64x64x64_w2x2_a3_mma_split,tc128x256x64_w2x4_a3_g8_mma,tc128x128x32_w4x2_a3,simt128x256x16_8x16_a3
{
stamp
# A subshell, so `wait` waits for these and not for the watchdog.
(
  T=200
  for d in 1 2 3; do
    env $S timeout $T $M --test-threads 3 "cuda::matmul_matches_reference::dtype_$d" > "$OUT/t-mm-$d.txt" 2>&1 &
  done
  env $S timeout $T $M --test-threads 3 "cuda::matmul" --skip "cuda::matmul_matches_reference" > "$OUT/t-mm-rest.txt" 2>&1 &
  for tool in memcheck racecheck; do
    CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$NEW \
      timeout $T compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-matmul_variants > "$OUT/s-$tool.txt" 2>&1 &
  done
  wait
)
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -20; done
for t in memcheck racecheck; do echo "## $t"; grep -cE 'max \|err\|' "$OUT/s-$t.txt"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED|failed' "$OUT/s-$t.txt" | head -20; done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -80; done > "$OUT/tests-full.txt"
grep -h 'max |err|' "$OUT"/s-memcheck.txt | head -200 > "$OUT/sanitize-rows.txt"
rm -f "$OUT"/t-*.txt "$OUT"/s-*.txt
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 30 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### ragged vs aligned neighbour: automatic choice (pads) and cuBLAS at each shape"
R=4096x4096x4096,4095x4097x4093
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16,bf16,f32 CUBEPORT_MATMUL_SIZES=$R \
  CUBEPORT_PEER_SIZES=$R run 110 .gpu/bin/bench-matmul --bench 'matmul/(auto[^/]*|cublas)/cuda/'
echo "##### decode shapes f16/bf16: automatic (split tensor cores), skinny forced, cuBLAS at each shape"
D=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,4x14336x4096,1x50257x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=skinny CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 150 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|skinny|cublas)/cuda/'
echo "##### norm f16/bf16 at 16384x4096"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=16384x4096 run 70 .gpu/bin/bench-reduce --bench
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
