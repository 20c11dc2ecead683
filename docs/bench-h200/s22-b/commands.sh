#!/usr/bin/env bash
# s22-b (planned in s22, which had no GPU): issue 22's "either side" — products with few
# columns (m = k = 4096, n ∈ {1, 8, 64}), which the automatic choice gives tiled kernels: the automatic
# choice (f32: 64 × 64 stream-K SIMT blocks, or 16-tiles below 4096 outputs; halves: 64 × 128
# manual-MMA blocks, B padded where its rows are not 16-byte vectors) against cuBLAS at the
# same shape, s22's `narrow` kernels (a unit per row of A, A streamed once, B broadcast; A loaded
# per unit, or `narrow_staged` through shared tiles of whole 128-byte lines; neither chosen
# automatically yet), the split manual-MMA shape forced, and the roof (A + B + C over the
# copy rate). These decide for which n and dtypes the automatic choice takes a narrow kernel. Then
# memcheck and racecheck of both (matmul_variants' shapes, every dtype, plain and fused).
# Pack: scripts/gpu-pack.sh (the s22-a pack serves).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=400 bash docs/bench-h200/s22-b/commands.sh
set -u
LIMIT=${LIMIT:-400}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
S=4096x1x4096,4096x8x4096,4096x64x4096,4095x7x4093
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
for d in f32 f16 bf16; do
  echo "##### $d few columns: automatic, forced split shape, cuBLAS"
  extra=narrow,narrow_staged; [ $d != f32 ] && extra=narrow,narrow_staged,tc64x64x64_w2x2_a3_mma_split1,tc64x128x64_w2x2_a3_mma
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=$d CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$extra \
    CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 80 $B/bench-matmul --bench 'matmul'
done
for tool in memcheck racecheck; do
  l=$(left); [ "$l" -gt 40 ] || break
  echo "##### $tool: narrow, narrow_staged"
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow,narrow_staged timeout 60 \
    compute-sanitizer --tool $tool $B/example-matmul_variants 2>&1 | grep -E 'SUMMARY|Hazard|Invalid|max \|err' | head -30
done
stamp
} > "$OUT/narrow.txt" 2>&1
kill $dog 2>/dev/null
tail -c 6000 "$OUT/narrow.txt"
