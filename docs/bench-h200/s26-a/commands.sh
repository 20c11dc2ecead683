#!/usr/bin/env bash
# s26-a. Issue 24: the tensor-core attention kernel masks a tile in one branch around the whole
# tile (the per-score causal test was predicated into every tile: offline SASS of the causal
# D64 kernel 2850 -> 2515 instructions, within 90 of the non-causal one); strict attention
# tests, bf16 attention against PyTorch SDPA. Issue 22 (s25-b, not run then: no machine):
# `narrow_mma` cube shapes at 4096 and 16384 rows against cuBLAS and the copy, strict tests of
# the forced shapes. Issue 24: norms in halves against the copy.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s26-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
{
stamp
CUBEPORT_STRICT=1 timeout 150 $M --test-threads 16 cuda::attention cuda::matmul_narrow_mma > "$OUT/tests-full.txt" 2>&1
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
stamp
} > "$OUT/tests.txt" 2>&1
{
stamp
echo "##### attention bf16, D128 and D64, automatic (causal and not), D64 mma_w4_k64_r32 and k128_r32"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=bf16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 95 $B/bench-attention --bench 'attention/(causal_)?(auto|mma_w4_k(64|128)_r32/cuda/[a-z0-9]*/B4H32S4096D64)'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 40 ? l - 2 : 38 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) bfloat16'
stamp
} > "$OUT/attention.txt" 2>&1
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
cat "$OUT/tests.txt"; tail -c 2500 "$OUT/attention.txt"
grep -E '^(matmul|copy|norm)/|time:' "$OUT/matmul.txt" "$OUT/norm.txt" | paste - - | awk '{print $1, $(NF-3), $(NF-2)}'
