#!/usr/bin/env bash
# Session 8, final call on main's binary: f32 and tensor-core headline with cuBLAS and cubek in the same call, then the strict suite.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
{
echo "##### f32"
CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  MATMUL_FILTER='matmul/((auto|cublas)[^/]*/cuda/f32/)' OUT=$OUT/b1 timeout 120 bash scripts/gpu-run.sh matmul; cat $OUT/b1/date.txt
echo "##### f16 bf16"
CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 PEER_SIZES=8192x8192x8192 \
  MATMUL_FILTER='matmul/((auto|cublas)[^/]*/cuda/(f16|bf16)/8192|cubek_[^/]*/cuda/(f16|bf16)/8192)' OUT=$OUT/b2 timeout 200 bash scripts/gpu-run.sh matmul; cat $OUT/b2/date.txt
} > $OUT/bench.txt 2>&1
rm -rf $OUT/b1 $OUT/b2
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
( sleep ${LIMIT:-200}; pkill -f '.gpu/bin/main' ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
wait $p1 $p2 $p3; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt; mv $OUT/tr/tests.txt $OUT/tests-rest.txt
cat $OUT/tc/date.txt > $OUT/date.txt; rm -rf $OUT/tc $OUT/tw $OUT/tr
for f in tests-matmul-cuda tests-matmul-wgpu tests-rest; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -20; done
