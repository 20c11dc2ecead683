#!/usr/bin/env bash
# Session 9, call B (main's binary): f32 (automatic = stream-K, plain kernel, cuBLAS sgemm) and
# tensor-core headline (cuBLAS, cubek) in one process each; then the rest of the strict suite.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
{
echo "##### f32"
CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  MATMUL_VARIANTS=${F32_VARIANTS:-simt128x256x8_8x16_s1_g8} \
  MATMUL_FILTER='matmul/((auto|cublas|simt)[^/]*/cuda/f32/)' OUT=$OUT/b1 timeout 200 bash scripts/gpu-run.sh matmul; cat $OUT/b1/date.txt
echo "##### f16 bf16"
CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 PEER_SIZES=8192x8192x8192 \
  MATMUL_FILTER='matmul/((auto|cublas)[^/]*/cuda/(f16|bf16)/8192|cubek_[^/]*/cuda/(f16|bf16)/8192)' OUT=$OUT/b2 timeout 220 bash scripts/gpu-run.sh matmul; cat $OUT/b2/date.txt
} > $OUT/bench.txt 2>&1
rm -rf $OUT/b1 $OUT/b2
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
grep -E 'wrong|panick|error|unavailable' $OUT/bench.txt | head
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr timeout ${LIMIT:-150} bash scripts/gpu-run.sh tests > /dev/null 2>&1 )
mv $OUT/tr/tests.txt $OUT/tests-rest.txt; cat $OUT/tr/date.txt > $OUT/date.txt; rm -rf $OUT/tr
echo "== rest"; grep -E 'test result|FAILED|panicked|SKIP' $OUT/tests-rest.txt | head -20
ls -la $OUT
