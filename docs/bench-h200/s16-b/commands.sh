#!/usr/bin/env bash
# s16-b: the strict CUDA matmul and norm suites to completion (s16-a's 200 s limit cut the
# f16/bf16 reference tests short), racecheck's summary on the new matmul paths; then the split
# tensor-core shapes swept (cubes per SM, block shapes) at the decode shapes against cuBLAS,
# and the norm's new automatic group for f16/bf16 against the forced groups, with the copy
# ceiling in the same call; batched products against strided-batched cuBLAS.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=540 bash docs/bench-h200/s16-b/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-540}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
NEW=tc16x128x64_w1x4_a3_mma_split2,tc32x64x64_w2x2_a3_mma_split2,tc64x64x64_w2x2_a3_mma_split2,tc128x256x64_w2x4_a3_g8_mma
{
stamp
(
  T=290
  for d in 2 3; do for f in 1_false 2_true; do
    skip=$([ $f = 1_false ] && echo fused_2_true || echo fused_1_false)
    env $S timeout $T $M --test-threads 3 "cuda::matmul_matches_reference::dtype_$d" --skip "$skip" > "$OUT/t-mm-$d-$f.txt" 2>&1 &
  done; done
  env $S timeout $T $M --test-threads 3 "cuda::matmul" --skip "cuda::matmul_matches_reference" > "$OUT/t-mm-rest.txt" 2>&1 &
  env $S timeout $T $M --test-threads 3 "cuda::norm" > "$OUT/t-norm.txt" 2>&1 &
  CUBEPORT_BACKEND=cuda CUBEPORT_KERNEL_CACHE=off CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$NEW \
    timeout $T compute-sanitizer --tool racecheck --print-limit 20 .gpu/bin/example-matmul_variants > "$OUT/s-racecheck.txt" 2>&1 &
  wait
)
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -20; done
echo "## racecheck"; grep -cE 'max \|err\|' "$OUT/s-racecheck.txt"; grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|FAILED|failed' "$OUT/s-racecheck.txt" | head; tail -3 "$OUT/s-racecheck.txt"
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -60; done > "$OUT/tests-full.txt"
rm -f "$OUT"/t-*.txt "$OUT"/s-*.txt
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 25 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### norm f16/bf16 16384x4096: automatic (new group), plane32 (the old choice), plane256, shared256"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=16384x4096 \
  CUBEPORT_NORM_VARIANTS=plane32,plane256,shared256 run 60 .gpu/bin/bench-reduce --bench
echo "##### batched products: automatic choice and strided-batched cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32,f16 CUBEPORT_MATMUL_SIZES=256x256x256 \
  CUBEPORT_PEER_SIZES=256x256x256 CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 \
  run 70 .gpu/bin/bench-matmul --bench 'matmul/(auto[^/]*|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
echo "##### decode shapes f16: split shapes swept, cuBLAS at each shape"
V=tc16x128x64_w1x4_a3_mma_split4,tc16x256x64_w1x4_a3_mma_split2,tc32x128x64_w1x4_a3_mma_split2,tc64x128x64_w2x2_a3_mma_split2,tc64x64x64_w2x2_a3_mma_split4,tc64x64x64_w2x2_a4_mma_split2
D=1x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,4x14336x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 130 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|tc[^/]*|cublas)/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
