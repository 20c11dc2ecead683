#!/usr/bin/env bash
# Session 8: strict matmul suites (CUDA and wgpu-Vulkan), the rest of the strict suite, sanitizer on the SIMT and TC choices.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_SIMT_EXP=${EXP:-none}
echo "CUBEPORT_SIMT_EXP=$CUBEPORT_SIMT_EXP" > $OUT/date.txt
( sleep ${LIMIT:-520}; pkill -f '.gpu/bin/main'; pkill -f compute-sanitizer; pkill -f example-matmul ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1; cat $OUT/tc/date.txt >> $OUT/date.txt ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
( SANITIZE_VARIANTS=simt128x256x8_8x16_s1_g8,tc128x256x64_w2x4_a3_g8_mma OUT=$OUT/ts bash scripts/gpu-run.sh sanitize-matmul > /dev/null 2>&1 ) & p4=$!
wait $p1 $p2 $p3 $p4; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt
mv $OUT/tr/tests.txt $OUT/tests-rest.txt; mv $OUT/ts/sanitize-matmul-*.txt $OUT/
rm -rf $OUT/tc $OUT/tw $OUT/tr $OUT/ts
for f in tests-matmul-cuda tests-matmul-wgpu; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -40; done
echo "== rest"; grep -E 'test result|FAILED|panicked|SKIP' $OUT/tests-rest.txt | head -20
for t in memcheck racecheck; do echo "== $t"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/sanitize-matmul-$t.txt | tail -3; grep -c 'max |err|' $OUT/sanitize-matmul-$t.txt; done
ls -la $OUT
