#!/usr/bin/env bash
# s26-b (the s26-a pack). Issue 22: halves at small depth (k = 128), where the automatic
# register-staged 32-deep WMMA tile runs 0.42-0.49x cuBLAS (s17-c, s18-a): tile shapes on
# manual MMA with fewer or more stages and 32- or 64-deep tiles against it and cuBLAS, then the
# batched shapes' automatic choice against cuBLAS strided-batched.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=400 bash docs/bench-h200/s26-b/commands.sh
set -u
LIMIT=${LIMIT:-400}
source docs/bench-h200/lib.sh
B=.gpu/bin
S=4096x4096x128,8192x8192x128
V=tc128x128x32_w4x2_a3,tc128x128x32_w2x2_a2_mma,tc128x128x32_w2x2_a4_mma,tc128x128x64_w2x2_a2_mma,tc128x128x32_w4x2_a3_mma,tc128x256x32_w2x4_a3_mma,tc64x128x32_w2x2_a4_mma
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### f16 small depth: tile shapes, cuBLAS; batched: automatic, cuBLAS strided-batched"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 \
  run 170 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|auto[^/]*[^u]|cublas)/'
echo "##### bf16 batched: automatic, cuBLAS strided-batched"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=bf16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc128x128x32_w2x2_a2_mma \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 \
  run 80 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
stamp
} > "$OUT/matmul.txt" 2>&1
kill $dog 2>/dev/null
grep -E '^(matmul|copy)/|time:|panick|rror' "$OUT/matmul.txt" | paste - - | awk '{print $1, $(NF-3), $(NF-2)}'
