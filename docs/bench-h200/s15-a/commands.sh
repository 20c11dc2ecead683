#!/usr/bin/env bash
# Issue 21 wants, after the restructure: the strict suite on CUDA and wgpu-Vulkan (matmul
# included), compute-sanitizer 0 and the headline ratios; issue 22 the skinny (decode) matmul
# against cuBLAS at each shape; issue 24 the norm and attention targets. Two calls:
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s15-a/commands.sh tests
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s15-a/commands.sh bench
# Part `tests` runs in parallel processes (each its own cubecl client, kernel cache off); part
# `bench` times with nothing else on the GPU, headline ratios first.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-900}
part=${1:-all}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
stamp >> "$OUT/date.txt"
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer; pkill -f anchors_s14 ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
if [ "$part" != bench ]; then
(
  T=$(( $(left) * 2 / 3 ))
  for be in cuda wgpu; do
    for d in 1 2 3; do for f in 1_false 2_true; do
      skip=$([ $f = 1_false ] && echo fused_2_true || echo fused_1_false)
      env $S timeout $T $M --test-threads 2 "$be::matmul_matches_reference::dtype_$d" --skip "$skip" > "$OUT/t-$be-mm-$d-$f.txt" 2>&1 &
    done; done
    env $S timeout $T $M --test-threads 2 "$be::matmul" --skip "$be::matmul_matches_reference" > "$OUT/t-$be-mm-rest.txt" 2>&1 &
    env $S timeout $T $M --test-threads 4 "$be::" --skip ::matmul > "$OUT/t-$be-rest.txt" 2>&1 &
  done
  env $S timeout $T .gpu/bin/cli > "$OUT/t-cli.txt" 2>&1 &
  env $S timeout $T .gpu/bin/swallowed_panic >> "$OUT/t-cli.txt" 2>&1 &
  for tool in memcheck racecheck; do
    ( CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off CUBEPORT_MATMUL_ONLY=1 \
        CUBEPORT_MATMUL_VARIANTS=tc128x256x64_w2x4_a3_g8_mma,simt128x256x8_8x16_s1_g8_sk,tc128x128x32_w4x2,skinny \
        timeout $T compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-matmul_variants
      CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off timeout $T compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-attention_variants
    ) > "$OUT/s-$tool.txt" 2>&1 &
  done
  CUBEPORT_KERNEL_CACHE=/tmp/kc-check timeout $T .gpu/bin/cubeport check > "$OUT/check.txt" 2>&1 &
  wait
)
echo "tests done at $(( $(date +%s) - start )) s" >> "$OUT/date.txt"
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -20; done > "$OUT/tests.txt"
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -150; done > "$OUT/tests-full.txt"
rm -f "$OUT"/t-*.txt
for t in memcheck racecheck; do echo "## $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED|failed' "$OUT/s-$t.txt" | head -20; done > "$OUT/sanitize.txt"
rm -f "$OUT"/s-*.txt
cat "$OUT/tests.txt" "$OUT/sanitize.txt"; tail -3 "$OUT/check.txt"
fi
if [ "$part" != tests ]; then
pick() { grep -E '^(attention|norm|copy|activation|softmax|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### headline: bias+ReLU+scale vs copy, 64M f32"
CUBEPORT_BACKEND=cuda run 40 .gpu/bin/bench-activation --bench '(copy/vec|activation/bias_relu_scale_full)/.*/f32/'
echo "##### headline: softmax 16384x4096 f32 (auto)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=softmax run 30 .gpu/bin/bench-reduce --bench 'softmax/auto.*/cuda/f32/'
echo "##### headline: matmul f32 with cuBLAS sgemm"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_PEER_SIZES=4096x4096x4096,8192x8192x8192 run 75 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/f32/'
echo "##### headline: matmul f16 bf16 with cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 \
  CUBEPORT_PEER_SIZES=8192x8192x8192 run 70 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/(f16|bf16)/8192'
echo "##### matmul decode shapes: the automatic choice (skinny up to 16 rows), skinny forced, cuBLAS at each shape"
D=1x4096x4096,8x4096x4096,16x4096x4096,64x4096x4096,1x50257x4096,4x14336x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=skinny CUBEPORT_BENCH_DTYPES=f32,f16,bf16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 120 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|skinny|cublas)/cuda/'
echo "##### attention (criterion, CUDA): auto, mma_w4_k64_r32, mma_w8_k64"
CUBEPORT_BACKEND=cuda run 110 .gpu/bin/bench-attention --bench 'attention/(causal_)?(auto|mma)'
echo "##### norm (criterion, CUDA): f16/bf16 at 16384x4096, f32 LayerNorm and the long rows with their experiments"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm run 90 .gpu/bin/bench-reduce --bench 'norm/[^/]*/cuda/((f16|bf16)/16384x4096|f32/(4096x16384|1024x65536))|norm/layer[^/]*/cuda/f32/16384'
echo "##### PyTorch (one process)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l - 5 )) python3 scripts/anchors_s14.py 2>&1
stamp
} >> "$OUT/bench.txt" 2>&1
fi
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/date.txt"
cat "$OUT/date.txt"; grep -cE 'time:' "$OUT/bench.txt" 2>/dev/null
