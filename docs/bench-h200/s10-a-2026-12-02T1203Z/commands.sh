#!/usr/bin/env bash
# Session 10, call A: the stream-K whole blocks on a 1-D grid of exactly `dp` cubes (`linear`,
# no cube for the tail blocks) — f32 against the plain kernel and cuBLAS sgemm in one process,
# with the `_g4`/`_g16` column strips beside the automatic `_g8`; ncu kernel durations;
# compute-sanitizer on `_sk3` (whole blocks on the linear grid); the strict suite, in parallel.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
F32="CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192"
{
echo "##### f32"
env $F32 MATMUL_VARIANTS=simt128x256x8_8x16_s1_g8,simt128x256x8_8x16_s1_g4_sk,simt128x256x8_8x16_s1_g16_sk \
  MATMUL_FILTER='matmul/((auto|cublas|simt)[^/]*/cuda/f32/)' OUT=$OUT/b1 timeout 260 bash scripts/gpu-run.sh matmul; cat $OUT/b1/date.txt
} > $OUT/bench.txt 2>&1
rm -rf $OUT/b1
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
grep -E 'wrong|panick|error|unavailable' $OUT/bench.txt | head
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread -k regex:simt -c 12 .gpu/bin/bench-matmul --bench 'matmul/auto[^/]*/cuda/f32/' 2>&1 \
  | grep -E '^  [a-z_]+simt|gpu__time|registers' | sed 's/  */ /g' > $OUT/ncu.txt
cat $OUT/ncu.txt
( sleep ${LIMIT:-230}; pkill -f '.gpu/bin/main'; pkill -f compute-sanitizer; pkill -f example-matmul ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1; cat $OUT/tc/date.txt > $OUT/date.txt ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
( SANITIZE_VARIANTS=simt128x256x8_8x16_s1_g8_sk3 OUT=$OUT/ts bash scripts/gpu-run.sh sanitize-matmul > /dev/null 2>&1 ) & p4=$!
wait $p1 $p2 $p3 $p4; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt; mv $OUT/tr/tests.txt $OUT/tests-rest.txt
mv $OUT/ts/sanitize-matmul-*.txt $OUT/
rm -rf $OUT/tc $OUT/tw $OUT/tr $OUT/ts
for f in tests-matmul-cuda tests-matmul-wgpu tests-rest; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -30; done
for t in memcheck racecheck; do echo "== $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/sanitize-matmul-$t.txt | tail -3; grep -c 'max |err|' $OUT/sanitize-matmul-$t.txt; done
ls -la $OUT
