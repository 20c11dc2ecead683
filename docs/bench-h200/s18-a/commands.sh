#!/usr/bin/env bash
# s18-a: issue 24 norms without per-element NaN tests on CUDA (IEEE arithmetic carries NaN),
# every dtype and shape, with wider row groups for 16384-element rows; the strict CUDA norm
# tests (NaN/∞ rows on the new path) and the CUDA matmul tests other than the reference shapes,
# one process per test (s17 cut them short in one process, compile-bound); then issue 22's
# automatic choices at mid, batched and decode shapes, cuBLAS in the same process.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=570 bash docs/bench-h200/s18-a/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-570}
T=${T:-210}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/' ) > /dev/null 2>&1 & dog=$!
M=.gpu/bin/main
export CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off
mkdir -p "$OUT/t"
[ "${SKIP_TESTS:-0}" = 1 ] || {
stamp
# One process per test: NVRTC compiles run on 16 cores instead of behind one client.
$M --list "cuda::matmul" --skip "cuda::matmul_matches_reference" 2>/dev/null | sed -n 's/: test$//p' > "$OUT/t/list"
echo "cuda::norm" >> "$OUT/t/list"
wc -l < "$OUT/t/list"
i=0; pids=""
while read -r name; do
  i=$((i+1))
  if [ "$name" = "cuda::norm" ]; then
    timeout "$T" $M --test-threads 4 "$name" > "$OUT/t/$i.txt" 2>&1 &
  else
    timeout "$T" $M --exact "$name" > "$OUT/t/$i.txt" 2>&1 &
  fi
  pids="$pids $!"
done < "$OUT/t/list"
wait $pids  # not a bare `wait`: it would wait for the watchdog too
for f in "$OUT"/t/[0-9]*.txt; do
  r=$(grep -E '^test result' "$f" || echo "NO RESULT (timeout $T s)")
  echo "$(grep -m1 -oE '^test [^ ]+' "$f" | head -1) :: $r"
  grep -E 'FAILED|panicked|SKIP' "$f" | head -5
done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable|Unsupported' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
MM='matmul/(auto[^/]*[^u]|cublas)/cuda/'
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 25 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### norm, every dtype, the full shapes: automatic"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096,4096x16384,262144x256,1024x65536 \
  run 90 .gpu/bin/bench-reduce --bench
echo "##### norm 4096x16384 f32/f16: plane512, plane1024"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f32,f16 CUBEPORT_NORM_SHAPES=4096x16384 \
  CUBEPORT_NORM_VARIANTS=plane512,plane1024 run 40 .gpu/bin/bench-reduce --bench 'plane(512|1024)'
echo "##### decode shapes, every dtype: automatic and cuBLAS"
D=8x4096x4096,32x4096x4096,64x4096x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 60 .gpu/bin/bench-matmul --bench "$MM"
echo "##### mid sizes, every dtype: automatic and cuBLAS"
D=512x512x512,1024x1024x1024,2048x2048x2048,1000x1000x1000
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 90 .gpu/bin/bench-matmul --bench "$MM"
echo "##### batched products, every dtype: automatic and strided-batched cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=256x256x256 CUBEPORT_PEER_SIZES=256x256x256 \
  CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 run 70 .gpu/bin/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
