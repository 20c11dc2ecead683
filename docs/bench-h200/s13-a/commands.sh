#!/usr/bin/env bash
# Session 13 (issue 21, restructure): the headline ratios re-measured after the change, each with
# its anchor in the same call — activation vs the device copy, softmax vs torch.softmax, f32
# matmul vs cuBLAS sgemm at 4096³/8192³, f16/bf16 vs cuBLAS at 8192³ — then (part `tests`) the
# strict suite on CUDA and wgpu-Vulkan, compute-sanitizer memcheck + racecheck and the main job.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh && bash docs/bench-h200/s13-a/commands.sh bench|tests
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
part=${1:-bench}
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; }
if [ "$part" = bench ]; then
{
stamp
echo "##### activation vs copy (criterion, CUDA, f32, 64M)"
CUBEPORT_BACKEND=cuda timeout 150 .gpu/bin/bench-activation --bench '(copy/vec|activation/(bias_relu_scale|bias_gelu_tanh|bias_gelu_erf|add)_full)/.*/f32/' 2>&1 \
  | grep -E '^(activation|copy)/|thrpt|time:|SKIP|panick|error'
echo "##### softmax (criterion, CUDA, f32 16384x4096) and torch.softmax"
CUBEPORT_BACKEND=cuda timeout 100 .gpu/bin/bench-reduce --bench '(softmax|copy)/.*/cuda/f32/' 2>&1 | grep -E '^(softmax|copy)/|thrpt|time:|SKIP|panick|error'
timeout 60 python3 .gpu/anchors_torch.py softmax copy_and_reduce 2>&1
echo "##### matmul f32 with cuBLAS sgemm"
pick() { grep -E '^matmul/|time:|wrong|panick|error|unavailable' | grep -v '%'; }
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_PEER_SIZES=4096x4096x4096,8192x8192x8192 \
  timeout 130 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/f32/' 2>&1 | pick
echo "##### matmul f16 bf16 with cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_SIZES=8192x8192x8192 \
  CUBEPORT_PEER_SIZES=8192x8192x8192 \
  timeout 130 .gpu/bin/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/(f16|bf16)/8192' 2>&1 | pick
stamp
} > "$OUT/bench.txt" 2>&1
cat "$OUT/bench.txt"
else
stamp | tee "$OUT/date.txt"
( sleep ${LIMIT:-420}; pkill -f '.gpu/bin/main'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
( TEST_BACKEND=cuda OUT=$OUT/tc bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p1=$!
( TEST_BACKEND=wgpu OUT=$OUT/tw bash scripts/gpu-run.sh tests-matmul > /dev/null 2>&1 ) & p2=$!
( TEST_THREADS=4 TEST_FILTER="--skip ::matmul" OUT=$OUT/tr bash scripts/gpu-run.sh tests > /dev/null 2>&1 ) & p3=$!
( OUT=$OUT/ts bash scripts/gpu-run.sh sanitize > /dev/null 2>&1 ) & p4=$!
( CUBEPORT_STRICT=1 timeout 300 .gpu/bin/cli > "$OUT/cli-tests.txt" 2>&1; CUBEPORT_STRICT=1 timeout 60 .gpu/bin/swallowed_panic >> "$OUT/cli-tests.txt" 2>&1;
  timeout 300 .gpu/bin/cubeport check > "$OUT/check.txt" 2>&1; echo "check exit $?" >> "$OUT/check.txt" ) & p5=$!
wait $p1 $p2 $p3 $p4 $p5; pkill -P $dog 2>/dev/null; kill $dog 2>/dev/null
for d in tc tw; do f=$OUT/$d/tests-matmul.txt; [ -s $f ] || for s in $OUT/$d/shard-*.txt; do echo "## $(basename $s .txt) (cut)"; grep -vE '^test .* ok$' $s; done > $f; done
mv $OUT/tc/tests-matmul.txt $OUT/tests-matmul-cuda.txt; mv $OUT/tw/tests-matmul.txt $OUT/tests-matmul-wgpu.txt; mv $OUT/tr/tests.txt $OUT/tests-rest.txt
cat $OUT/ts/sanitize-memcheck.txt $OUT/ts/sanitize-racecheck.txt > $OUT/sanitize.txt 2>&1
rm -rf $OUT/tc $OUT/tw $OUT/tr $OUT/ts
date -u +%FT%TZ
for f in tests-matmul-cuda tests-matmul-wgpu tests-rest cli-tests; do echo "== $f"; grep -E '^## |test result|FAILED|panicked|SKIP' $OUT/$f.txt | head -30; done
echo "== sanitize"; cat $OUT/sanitize.txt
echo "== check"; tail -4 $OUT/check.txt
fi
