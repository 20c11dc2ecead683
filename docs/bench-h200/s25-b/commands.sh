#!/usr/bin/env bash
# s25-b. Issue 22: `narrow_mma` cube shapes (rows per cube, planes per cube, steps loaded
# ahead) at the sizes where s25-a's automatic shape fell behind cuBLAS (16384 rows: 32-row
# cubes of 5 planes, 0.65-0.78x) and where it led (4096 rows: 16-row cubes of 8 planes), f16,
# against cuBLAS and the copy in the same call; the strict tests of the forced shapes.
# Issue 24: f16 RMSNorm's automatic choice, LayerNorm and add+RMSNorm in halves, against the copy
# (s25-a ran out before them).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=400 bash docs/bench-h200/s25-b/commands.sh
set -u
LIMIT=${LIMIT:-400}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
{
stamp
CUBEPORT_STRICT=1 timeout 100 $M --test-threads 16 cuda::matmul_narrow_mma > "$OUT/tests-full.txt" 2>&1
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
stamp
} > "$OUT/tests.txt" 2>&1
S=4096x8x4096,16384x8x4096,16384x16x4096,8192x8x8192
V=narrow_mma_r16_w8_s2,narrow_mma_r16_w4_s4,narrow_mma_r16_w8_s4,narrow_mma_r16_w4_s8,narrow_mma_r32_w4_s2,narrow_mma_r32_w4_s4,narrow_mma_r32_w8_s4
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### f16 few columns: automatic, narrow_mma shapes, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 150 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*[0-9a-z]|narrow_mma[a-z0-9_]*|cublas)/'
stamp
} > "$OUT/matmul.txt" 2>&1
{
stamp
echo "##### RMSNorm f16, LayerNorm and add+RMSNorm f16/bf16: automatic, copy of the same size"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
  run 70 $B/bench-reduce --bench '(norm/(rms_norm_auto[a-z0-9_]*/cuda/f16|layer_norm_auto|add_rms_norm_auto)|copy/)'
stamp
} > "$OUT/norm.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT/tests.txt"; grep -E '^(matmul|copy|norm)/|time:' "$OUT/matmul.txt" "$OUT/norm.txt" | paste - - | awk '{print $1, $(NF-3), $(NF-2)}'
