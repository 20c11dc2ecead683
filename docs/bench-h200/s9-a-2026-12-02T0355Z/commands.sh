#!/usr/bin/env bash
# Session 9, call A: f32 stream-K (automatic choice simt128x256x8_8x16_s1_g8_sk) against the
# plain kernel and cuBLAS sgemm in one process; then the strict CUDA and wgpu-Vulkan matmul
# suites and compute-sanitizer on the stream-K kernels, in parallel.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
{
echo "##### f32"
CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  MATMUL_VARIANTS=simt128x256x8_8x16_s1_g8 \
  MATMUL_FILTER='matmul/((auto|cublas|simt)[^/]*/cuda/f32/)' OUT=$OUT/b1 timeout 200 bash scripts/gpu-run.sh matmul; cat $OUT/b1/date.txt
} > $OUT/bench.txt 2>&1
rm -rf $OUT/b1
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
grep -E 'wrong|panick|error|unavailable' $OUT/bench.txt | head
( sleep ${LIMIT:-330}; pkill -f '.gpu/bin/main'; pkill -f compute-sanitizer; pkill -f example-matmul ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1; cat $OUT/tc/date.txt > $OUT/date.txt ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( SANITIZE_VARIANTS=simt128x256x8_8x16_s1_g8_sk,simt128x256x8_8x16_s1_g8_sk3 OUT=$OUT/ts bash scripts/gpu-run.sh sanitize-matmul > /dev/null 2>&1 ) & p4=$!
wait $p1 $p2 $p4; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt
mv $OUT/ts/sanitize-matmul-*.txt $OUT/
rm -rf $OUT/tc $OUT/tw $OUT/ts
for f in tests-matmul-cuda tests-matmul-wgpu; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -40; done
for t in memcheck racecheck; do echo "== $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/sanitize-matmul-$t.txt | tail -3; grep -c 'max |err|' $OUT/sanitize-matmul-$t.txt; done
ls -la $OUT
