#!/usr/bin/env bash
# s23-b (planned in s23; not run: the session's device time went to failed machine starts).
# Issue 22: `narrow_plane` (few columns, A across the lanes of a plane, 4 rows per plane, B rows
# shared by them; forced only) against `narrow` (the automatic f32 choice for n ≤ 16 since s23),
# the tile kernels (the automatic choice before; in halves still) and cuBLAS, f32/f16/bf16,
# with a 128 MiB A (past L2 in halves). Issue 24: attention's automatic shapes since s23 (two
# row tiles per plane) against the previous one (`mma_w4_k64`), f16, with PyTorch SDPA. Then
# strict CUDA tests of the changed kernels and compute-sanitizer on `narrow_plane` (its
# plane-sum path has not run anywhere yet: lavapipe has no plane ops). Last, issue 23: the
# cooperative-matrix probe with per-iteration staging (`staged_vec4/8`), CUDA and SPIR-V.
# Pack: `bash docs/bench-h200/s23-b/pack.sh`. Then:
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=430 bash docs/bench-h200/s23-b/commands.sh
set -u
LIMIT=${LIMIT:-430}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_KERNEL_CACHE=off
S=4096x1x4096,4096x8x4096,4096x16x4096,16384x8x4096,4095x7x4093
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
for d in f32 f16 bf16; do
  echo "##### $d few columns: automatic, narrow, narrow_plane, the tile kernel (automatic before s23), cuBLAS"
  prev=tc64x128x64_w2x2_a3_mma; [ $d = f32 ] && prev=simt64x64x16_4x4_s2_sk
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=$d CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow,narrow_plane,$prev \
    CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 50 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*(narrow|mma|sk|[0-9])|narrow(_plane)?|simt[a-z0-9_]*|tc[a-z0-9_]*|cublas)/'
done
stamp
} > "$OUT/matmul.txt" 2>&1
# The tests and sanitizers only where their 90 s fit what is left.
if [ "$(left)" -gt 100 ]; then
mkdir -p "$OUT/t"
{
stamp
CUBEPORT_STRICT=1 timeout 90 $M --test-threads 12 cuda::matmul_narrow cuda::matmul_prop cuda::attention_owned cuda::attention_matches > "$OUT/t/tests.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow_plane timeout 90 \
    compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/t/tests.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP' "$OUT/t/tests.txt" | head -12
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; grep -c 'narrow_plane' "$OUT/t/san-$tool.txt"; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
fi
{
stamp
echo "##### attention f16, D128 and D64: automatic against mma_w4_k64 (the previous automatic choice)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 75 $B/bench-attention --bench 'attention/(causal_)?(auto|mma_w4_k64/)'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 28 ? l - 2 : 26 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64)'
echo "##### cooperative-matrix probe with staging (staged_vec: global -> shared each iteration): CUDA, then SPIR-V"
l=$(left); [ "$l" -gt 40 ] && CUBEPORT_BACKEND=cuda timeout 30 $B/example-cmma_probe 2>&1 | grep -vE '^wgpu|^cuda' | tail -6
l=$(left); [ "$l" -gt 40 ] && timeout 40 $B/example-cmma_probe-spirv 2>&1 | grep -vE '^wgpu|^cuda' | tail -6
stamp
} > "$OUT/attention.txt" 2>&1
kill $dog 2>/dev/null
tail -c 11000 "$OUT"/*.txt
