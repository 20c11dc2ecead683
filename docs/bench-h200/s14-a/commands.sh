#!/usr/bin/env bash
# Session 14, one H200 call (issue 24: norms and attention; issue 21: headline ratios after the
# restructure). Part 1, correctness, in parallel processes (each its own cubecl client, so NVRTC
# compiles in parallel): the strict suite on CUDA and wgpu-Vulkan without the matmul tests,
# compute-sanitizer memcheck + racecheck on the new kernels, the main job. Part 2, timing, with
# nothing else on the GPU: attention, norms, the PyTorch anchors in one process, then the
# headline ratios (activation vs copy, softmax, f32 matmul vs sgemm at 4096³/8192³, f16/bf16 vs
# cuBLAS at 8192³). A watchdog ends the call at $LIMIT seconds with whatever was logged.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh && bash docs/bench-h200/s14-a/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-360}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
stamp > "$OUT/date.txt"
( sleep "$LIMIT"; pkill -f '.gpu/bin/' ; pkill -f compute-sanitizer; pkill -f anchors_s14 ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
# Parallel processes must not share cubecl's on-disk kernel cache: off for the tests.
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
keep() { grep -vE '^test .* ok$'; }
# ---- part 1: correctness
(
  env $S timeout 170 $M --test-threads 4 cuda::attention > "$OUT/t-cuda-attention.txt" 2>&1 &
  for dt in 1 2 3; do env $S timeout 170 $M --test-threads 4 "cuda::norm_matches_reference::dtype_$dt" > "$OUT/t-cuda-norm-$dt.txt" 2>&1 & done
  env $S timeout 170 $M --test-threads 4 cuda::norm --skip cuda::norm_matches_reference > "$OUT/t-cuda-norm-rest.txt" 2>&1 &
  env $S timeout 170 $M --test-threads 4 cuda:: --skip ::matmul --skip ::attention --skip ::norm > "$OUT/t-cuda-rest.txt" 2>&1 &
  env $S timeout 170 $M --test-threads 4 wgpu::attention wgpu::norm > "$OUT/t-wgpu-new.txt" 2>&1 &
  env $S timeout 170 $M --test-threads 4 wgpu:: --skip ::matmul --skip ::attention --skip ::norm > "$OUT/t-wgpu-rest.txt" 2>&1 &
  env $S timeout 150 .gpu/bin/cli > "$OUT/t-cli.txt" 2>&1 &
  env $S timeout 60 .gpu/bin/swallowed_panic >> "$OUT/t-cli.txt" 2>&1 &
  for tool in memcheck racecheck; do
    env CUBEPORT_KERNEL_CACHE=off timeout 170 compute-sanitizer --tool $tool --print-limit 20 $M --test-threads 1 \
      cuda::attention_matches_reference::dtype_2_DType__F16::p_3 cuda::attention_matches_reference::dtype_3_DType__BF16::p_2 \
      cuda::attention_matches_reference::dtype_1_DType__F32::p_4 cuda::attention_edge_rows::dtype_2 \
      cuda::norm_matches_reference::dtype_1_DType__F32::rows_len_5 cuda::norm_matches_reference::dtype_2_DType__F16::rows_len_8 \
      cuda::norm_add_rms_norm_matches_reference::dtype_3_DType__BF16::rows_len_2 cuda::norm_in_place \
      > "$OUT/s-$tool.txt" 2>&1 &
  done
  CUBEPORT_KERNEL_CACHE=/tmp/kc-check timeout 170 .gpu/bin/cubeport check > "$OUT/check.txt" 2>&1 &
  wait
) 
echo "part 1 done at $(( $(date +%s) - start )) s" >> "$OUT/date.txt"
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP|error' "$f" | head -20; done > "$OUT/tests.txt"
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; keep < "$f" | grep -v '^$' | head -200; done > "$OUT/tests-full.txt"
rm -f "$OUT"/t-*.txt
for t in memcheck racecheck; do echo "## $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|test result|FAILED' "$OUT/s-$t.txt" | head -20; done > "$OUT/sanitize.txt"
rm -f "$OUT"/s-*.txt
cat "$OUT/tests.txt" "$OUT/sanitize.txt"; tail -3 "$OUT/check.txt"
# ---- part 2: timing
pick() { grep -E '^(attention|norm|copy|activation|softmax|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### norm (criterion, CUDA)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm run 90 .gpu/bin/bench-reduce --bench
echo "##### attention (criterion, CUDA)"
CUBEPORT_BACKEND=cuda run 100 .gpu/bin/bench-attention --bench
echo "##### PyTorch (one process)"
l=$(left); [ "$l" -gt 20 ] && timeout $(( l < 80 ? l : 80 )) python3 scripts/anchors_s14.py 2>&1
echo "##### headline: bias+ReLU+scale vs copy, 64M f32"
CUBEPORT_BACKEND=cuda run 50 .gpu/bin/bench-activation --bench '(copy/vec|activation/bias_relu_scale_full)/.*/f32/'
echo "##### headline: softmax 16384x4096 f32 (auto)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=softmax run 40 .gpu/bin/bench-reduce --bench 'softmax/auto.*/cuda/f32/'
echo "##### headline: matmul f32 with cuBLAS sgemm"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_PEER_SIZES=4096x4096x4096,8192x8192x8192 run 80 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/f32/'
echo "##### headline: matmul f16 bf16 with cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 \
  CUBEPORT_PEER_SIZES=8192x8192x8192 run 80 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/(f16|bf16)/8192'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/date.txt"
cat "$OUT/date.txt"; grep -cE 'time:' "$OUT/bench.txt"
