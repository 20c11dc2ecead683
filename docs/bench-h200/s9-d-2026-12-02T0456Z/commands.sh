#!/usr/bin/env bash
# Session 9, call D (main's binary): f32 stream-K (tail at 2·bk, then CUBEPORT_SK_DEPTH=1: at bk)
# Ran on the binary of commit cfc734c; CUBEPORT_SK_DEPTH was an experiment toggle, removed after this call (the 2·bk default kept).
# against the plain kernel and cuBLAS sgemm, one process each; ncu kernel durations; tensor-core
# headline with cuBLAS and cubek's two best strategies; the strict suite, in parallel.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
F32="CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192"
{
echo "##### f32 tail depth 2bk"
env $F32 MATMUL_VARIANTS=simt128x256x8_8x16_s1_g8 MATMUL_FILTER='matmul/((auto|cublas|simt)[^/]*/cuda/f32/)' OUT=$OUT/b1 timeout 150 bash scripts/gpu-run.sh matmul; cat $OUT/b1/date.txt
echo "##### f32 tail depth bk (CUBEPORT_SK_DEPTH=1)"
env $F32 CUBEPORT_SK_DEPTH=1 MATMUL_FILTER='matmul/((auto|cublas)[^/]*/cuda/f32/)' OUT=$OUT/b3 timeout 120 bash scripts/gpu-run.sh matmul; cat $OUT/b3/date.txt
echo "##### f16 bf16"
CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 PEER_SIZES=8192x8192x8192 \
  MATMUL_FILTER='matmul/((auto|cublas)[^/]*/cuda/(f16|bf16)/8192|cubek_double_tma_c?mma/cuda/(f16|bf16)/8192)' OUT=$OUT/b2 timeout 150 bash scripts/gpu-run.sh matmul; cat $OUT/b2/date.txt
} > $OUT/bench.txt 2>&1
rm -rf $OUT/b1 $OUT/b2 $OUT/b3
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
grep -E 'wrong|panick|error|unavailable' $OUT/bench.txt | head
for d in 2 1; do echo "##### ncu depth $d"; CUBEPORT_SK_DEPTH=$d CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread -k regex:simt -c 12 .gpu/bin/bench-matmul --bench 'matmul/auto[^/]*/cuda/f32/' 2>&1 \
  | grep -E '^  [a-z_]+simt|gpu__time|registers' | sed 's/  */ /g'; done > $OUT/ncu.txt
cat $OUT/ncu.txt
( sleep ${LIMIT:-220}; pkill -f '.gpu/bin/main' ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1; cat $OUT/tc/date.txt > $OUT/date.txt ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
wait $p1 $p2 $p3; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt; mv $OUT/tr/tests.txt $OUT/tests-rest.txt
rm -rf $OUT/tc $OUT/tw $OUT/tr
for f in tests-matmul-cuda tests-matmul-wgpu tests-rest; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -30; done
ls -la $OUT
