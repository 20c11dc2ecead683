#!/usr/bin/env bash
# s24-a. Issue 24: the tensor-core attention kernel's leaner online softmax (maxima of raw
# scores with the scale inside each exponent's FMA, NaN carried by the row sums instead of a
# flag per score, no select per score for rows that have seen only −∞, the output rescale
# skipped where no row of the plane has a new maximum): strict CUDA attention tests and
# compute-sanitizer first (the kernel changed), then its shapes against PyTorch SDPA in the
# same call. Issue 22: the few-column automatic choice as changed from s23-b (f32 one column
# `narrow_plane`, up to 8 `narrow`, ragged A `narrow_plane`; halves one column `narrow`) and
# `narrow_plane` in halves, which s23-b's bench filter left out, against cuBLAS.
# Pack: `scripts/gpu-pack.sh` (then keep only the binaries below). Then:
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=420 bash docs/bench-h200/s24-a/commands.sh
set -u
LIMIT=${LIMIT:-420}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_KERNEL_CACHE=off
mkdir -p "$OUT/t"
{
stamp
CUBEPORT_STRICT=1 timeout 110 $M --test-threads 12 cuda::attention cuda::matmul_narrow cuda::matmul_prop > "$OUT/t/tests.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda timeout 110 compute-sanitizer --tool $tool $B/example-attention_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/t/tests.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP' "$OUT/t/tests.txt" | head -20
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; grep -cE 'attention_mma|mma_w' "$OUT/t/san-$tool.txt"; tail -3 "$OUT/t/san-$tool.txt"; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
{
stamp
echo "##### attention f16, D128 and D64: automatic, mma_w4_k64 (16 rows), mma_w4_k64_r32, mma_w4_k32_r32"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 150 $B/bench-attention --bench 'attention/(causal_)?(auto|mma_w4)'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 28 ? l - 2 : 26 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) float16'
stamp
} > "$OUT/attention.txt" 2>&1
S=4096x1x4096,4096x8x4096,16384x8x4096,4095x7x4093,4095x1x4093
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
for d in f32 f16; do
  echo "##### $d few columns: automatic, narrow, narrow_plane, cuBLAS"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=$d CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow,narrow_plane \
    CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 60 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*|narrow(_plane)?|cublas)/'
done
stamp
} > "$OUT/matmul.txt" 2>&1
kill $dog 2>/dev/null
tail -c 11000 "$OUT"/*.txt
