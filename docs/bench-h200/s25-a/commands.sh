#!/usr/bin/env bash
# s25-a. Issue 24: the tensor-core attention kernel dispatches a head's causal row blocks
# longest first (the grid used to drain on the longest blocks of the last heads); bf16
# RMSNorm's automatic choice since 485d837 (1024 units on long rows) against the copy.
# Issue 22: `narrow_mma`, the new few-column kernel on tensor cores (halves up to 16 columns,
# A streamed straight into m16n8k16 fragments), now the automatic choice there; the plane-sum
# split case of `matmul_narrow` (depth 8192) that s24-c's plan assertion stopped.
# First the strict CUDA tests of all three with compute-sanitizer on `narrow_mma` beside them,
# then attention f16/bf16 against PyTorch SDPA, few columns against cuBLAS, norms.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s25-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
mkdir -p "$OUT/t"
{
stamp
CUBEPORT_STRICT=1 timeout 190 $M --test-threads 16 cuda::attention cuda::matmul_narrow cuda::matmul_props cuda::norm > "$OUT/tests-full.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=narrow_mma CUBEPORT_MATMUL_ONLY=1 timeout 150 compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; grep -c 'narrow_mma' "$OUT/t/san-$tool.txt"; tail -3 "$OUT/t/san-$tool.txt"; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
S=4096x1x4096,4096x8x4096,16384x8x4096,4096x16x4096,16384x16x4096,4095x7x4093
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
for d in f16 bf16; do
  echo "##### $d few columns: automatic, narrow_plane, narrow_mma, cuBLAS"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=$d CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow_plane,narrow_mma \
    CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 70 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*[0-9a-z]|narrow_(plane|mma)|cublas)/'
done
stamp
} > "$OUT/matmul.txt" 2>&1
{
stamp
for d in f16 bf16; do
  echo "##### attention $d, D128 and D64: automatic (causal and not), causal D64 mma_w4_k64_r32"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=$d CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
    run 80 $B/bench-attention --bench 'attention/(causal_)?(auto|mma_w4_k64_r32/cuda/[a-z0-9]*/B4H32S4096D64)'
done
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 40 ? l - 2 : 38 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) b?float16'
stamp
} > "$OUT/attention.txt" 2>&1
{
stamp
for d in bf16 f16; do
  echo "##### RMSNorm $d: automatic, copy of the same size"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=$d CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
    run 35 $B/bench-reduce --bench '(norm/rms_norm_auto|copy/)'
done
stamp
} > "$OUT/norm.txt" 2>&1
kill $dog 2>/dev/null
tail -c 2500 "$OUT/tests.txt"; tail -c 3000 "$OUT/matmul.txt"; tail -c 2500 "$OUT/attention.txt"; tail -c 1200 "$OUT/norm.txt"; grep -E 'FAILED|panicked' "$OUT/tests-full.txt" | head
