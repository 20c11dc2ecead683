#!/usr/bin/env bash
# s23-a: issue 24's attention shapes. The automatic `mma_w4_k64` (16 query rows per plane)
# against two row tiles per plane with 64-key tiles (FlashAttention-2's 128 × 64 on Hopper; offline
# SASS sm_90a: 253 registers without spills at D64, 28 bytes of spills at D128) and with 32-key
# tiles (its sm8x 128 × 32: 168 registers at D64, 12 bytes of spills at D128), and eight planes;
# f16, D128 and D64, causal and not; PyTorch SDPA in the same call. Each case is checked on
# sampled rows against f64 before it is timed.
# Pack: the s22-a pack with bench-attention of this commit added. Runs after s22-b in one call:
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=380 bash docs/bench-h200/s22-b/commands.sh; LIMIT=200 bash docs/bench-h200/s23-a/commands.sh
set -u
LIMIT=${LIMIT:-200}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
{
stamp
echo "##### attention f16, D128 and D64: automatic, mma_w4_k64_r32, mma_w4_k32_r32, mma_w8_k64"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 150 $B/bench-attention --bench 'attention/(causal_)?(auto|mma)'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 35 ? l - 2 : 33 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) float16'
stamp
} > "$OUT/attention.txt" 2>&1
kill $dog 2>/dev/null
tail -c 5000 "$OUT/attention.txt"
