#!/usr/bin/env bash
# Session 11, call C, binary of the serpentine-order commit (no experiment knob): f32 automatic
# choice, fused bias+GELU and cuBLAS sgemm at 4096³/8192³ in one process; f16/bf16 at 8192³ with
# cuBLAS and cubek's best; ncu kernel durations; the strict suite and compute-sanitizer on
# `_sk3` and the default `_sk`, in parallel.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1
pick() { grep -E '^matmul/|time:|wrong|panick|error|unavailable' | grep -v '%'; }
{
date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "##### f32"
CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  timeout 120 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/f32/' 2>&1 | pick
echo "##### f16 bf16"
CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 CUBEPORT_PEER_SIZES=8192x8192x8192 \
  timeout 150 .gpu/bin/bench-matmul --bench 'matmul/((auto|cublas)[^/]*/cuda/(f16|bf16)/8192|cubek_double_tma_c?mma/cuda/(f16|bf16)/8192)' 2>&1 | pick
echo "##### ncu"
CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 timeout 50 ncu --clock-control none \
  --metrics gpu__time_duration.sum,launch__registers_per_thread -k regex:simt -c 12 .gpu/bin/bench-matmul --bench 'matmul/auto[^/]*/cuda/f32/' 2>&1 \
  | grep -E '^  [a-z_]+simt|gpu__time|registers' | sed 's/  */ /g'
date -u +%FT%TZ
} > $OUT/bench.txt 2>&1
cat $OUT/bench.txt
( sleep ${LIMIT:-230}; pkill -f '.gpu/bin/main'; pkill -f compute-sanitizer; pkill -f example-matmul ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
( SANITIZE_VARIANTS=simt128x256x8_8x16_s1_g8_sk3,simt128x256x8_8x16_s1_g8_sk OUT=$OUT/ts bash scripts/gpu-run.sh sanitize-matmul > /dev/null 2>&1 ) & p4=$!
wait $p1 $p2 $p3 $p4; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt; mv $OUT/tr/tests.txt $OUT/tests-rest.txt
for t in memcheck racecheck; do grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard|max \|err\|' $OUT/ts/sanitize-matmul-$t.txt | tail -8 > $OUT/sanitize-$t.txt; grep -c 'max |err|' $OUT/ts/sanitize-matmul-$t.txt >> $OUT/sanitize-$t.txt; done
rm -rf $OUT/tc $OUT/tw $OUT/tr $OUT/ts
date -u +%FT%TZ
for f in tests-matmul-cuda tests-matmul-wgpu tests-rest; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -30; done
for t in memcheck racecheck; do echo "== $t"; cat $OUT/sanitize-$t.txt; done
