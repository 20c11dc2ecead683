#!/usr/bin/env bash
# s17-b (issue 22): the strict CUDA matmul suite in f16/bf16 to completion (s16-a's limit cut
# it short) with s17-a's new automatic decode choices, the norm and transfer tests, memcheck and
# racecheck on the new decode shapes; then, against cuBLAS at each shape in the same process:
# the decode shapes' new automatic choices, mid sizes (512–2048 and a ragged 1000³), batched
# products (strided-batched cuBLAS) and LLM projection shapes.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=540 bash docs/bench-h200/s17-b/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-540}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
NEW=${NEW:-tc32x128x64_w1x4_a3_mma_split2,tc64x64x64_w2x2_a3_mma_split1,simt32x128x16_4x8_s2_sk264,simt64x128x16_4x8_s2_sk264}
T=${T:-240}
{
stamp
(
  for d in 2 3; do for f in 1_false 2_true; do
    skip=$([ $f = 1_false ] && echo fused_2_true || echo fused_1_false)
    env $S timeout $T $M --test-threads 3 "cuda::matmul_matches_reference::dtype_$d" --skip "$skip" > "$OUT/t-mm-$d-$f.txt" 2>&1 &
  done; done
  env $S timeout $T $M --test-threads 3 "cuda::matmul" --skip "cuda::matmul_matches_reference" > "$OUT/t-mm-rest.txt" 2>&1 &
  env $S timeout $T $M --test-threads 3 "cuda::norm" "transfers" > "$OUT/t-norm-transfers.txt" 2>&1 &
  for tool in memcheck racecheck; do
    CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$NEW \
      timeout $T compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-matmul_variants > "$OUT/s-$tool.txt" 2>&1 &
  done
  wait
)
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -20; done
for t in memcheck racecheck; do echo "## $t"; grep -cE 'max \|err\|' "$OUT/s-$t.txt"; grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|FAILED|failed' "$OUT/s-$t.txt" | head; tail -2 "$OUT/s-$t.txt"; done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -60; done > "$OUT/tests-full.txt"
rm -f "$OUT"/t-*.txt "$OUT"/s-*.txt
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
MM='matmul/(auto[^/]*[^u]|cublas)/cuda/'
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 25 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### decode shapes: the new automatic choices, f32 stream-K at 8/16 rows, cuBLAS"
D=8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=simt32x128x16_4x8_s2_sk264 CUBEPORT_BENCH_DTYPES=f32,f16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 70 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|simt[^/]*[^u]|cublas)/cuda/'
echo "##### mid sizes, every dtype: automatic choice and cuBLAS"
D=512x512x512,1024x1024x1024,2048x2048x2048,1000x1000x1000
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 100 .gpu/bin/bench-matmul --bench "$MM"
echo "##### batched products, every dtype: automatic choice and strided-batched cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=256x256x256 CUBEPORT_PEER_SIZES=256x256x256 \
  CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 run 80 .gpu/bin/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
echo "##### LLM projection shapes f16/bf16: automatic choice and cuBLAS"
D=8192x4096x14336,8192x14336x4096,8192x128256x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 110 .gpu/bin/bench-matmul --bench "$MM"
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
