#!/usr/bin/env bash
# s17-c (issue 22): the strict CUDA matmul tests other than the reference shapes to completion
# (s17-b's 240 s cut them short), then mid-sized products swept against cuBLAS at each shape:
# f16 manual-MMA cp.async shapes (s17-b: the automatic register-staged tc64x128x32_w2x2 ran at
# 0.23-0.47x cuBLAS) and a small-depth proxy of the batched products; f32 stream-K tiles.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=520 bash docs/bench-h200/s17-c/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-520}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/' ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
S="CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off"
{
stamp
(
  env $S timeout 300 $M --test-threads 8 "cuda::matmul" --skip "cuda::matmul_matches_reference" > "$OUT/t-mm-rest.txt" 2>&1
)
grep -vE '^test .* ok$' "$OUT/t-mm-rest.txt" | grep -v '^$' | head -40
grep -cE '^test .* ok$' "$OUT/t-mm-rest.txt"
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable|Unsupported' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### f16 mid sizes and a small depth: manual-MMA cp.async shapes, automatic, cuBLAS"
V=tc64x64x64_w2x2_a3_mma,tc64x128x64_w2x2_a3_mma,tc128x128x64_w2x2_a3_mma,tc64x64x64_w2x2_a3_mma_split1,tc128x128x32_w4x2_a3
D=512x512x512,1024x1024x1024,2048x2048x2048,1000x1000x1000,4096x4096x128
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 130 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|tc[^/]*[^u]|cublas)/cuda/'
echo "##### f32 mid sizes: stream-K SIMT tiles, automatic, cuBLAS"
V=simt64x64x16_4x4_s2_sk,simt64x128x16_4x8_s2_sk,simt128x128x16_8x16_s1_sk,simt128x256x8_8x16_s1_g8_sk
D=512x512x512,1024x1024x1024,2048x2048x2048,1000x1000x1000
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 100 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|simt[^/]*[^u]|cublas)/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
