#!/usr/bin/env bash
# Session 11, call B (same binary as call A, 4ce999f): the screen's two leads, the serpentine FMA
# order (CUBEPORT_SIMT_TWEAK=2) and the 16×8 unit tile, and the B-first fetch (5), each with
# cuBLAS sgemm in the same process at 4096³ and 8192³ (call A's picker read criterion's change
# lines as times and chose tweak 1; its screen.txt medians are right).
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32 \
  CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_MATMUL_VARIANTS=simt128x256x8_16x8_s1_g8_sk
{
date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in 2 0 5; do
  echo "## tweak $t"
  CUBEPORT_SIMT_TWEAK=$t timeout 150 .gpu/bin/bench-matmul --bench 'matmul/(auto_simt[^/]*_sk|cublas|simt128x256x8_16x8[^/]*)/cuda/f32/' 2>&1 \
    | grep -E '^matmul/|time:|wrong|panick|error' | grep -v '%'
done
date -u +%FT%TZ
} > $OUT/bench.txt 2>&1
cat $OUT/bench.txt
