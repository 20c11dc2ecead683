#!/usr/bin/env bash
# s18-c: issue 24 norms with held parameters (held_<group>: about one wave of cubes looping
# over rows, weight and bias converted to f32 once per cube) against the automatic choice,
# every dtype; the strict CUDA norm tests on that path, racecheck and memcheck on its looping
# cubes; issue 23 diagnostics on the wgpu-spirv build (s18-b): why the register-staged
# tensor-core shapes were not timed, and the one failing wgpu test.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=300 bash docs/bench-h200/s18-c/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-300}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
B=.gpu/bin; M=$B/main
{
stamp
pids=""
for f in "cuda::norm_matches_reference" "cuda::norm_add_rms" "cuda::norm_padded cuda::norm_edge cuda::norm_in_place cuda::norm_owned cuda::norm_rejects"; do
  n=$(echo "$f" | cut -d' ' -f1 | tr -c 'a-z_\n' '_')
  CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off timeout 120 $M --test-threads 3 $f > "$OUT/t-$n.txt" 2>&1 & pids="$pids $!"
done
for pat in 'cuda::norm_matches_reference::dtype_2.*20011' 'cuda::norm_add_rms.*dtype_2.*20011'; do
  name=$($M --list 2>/dev/null | grep -E "^$pat" | head -1 | sed 's/: test$//')
  for tool in racecheck memcheck; do
    CUBEPORT_KERNEL_CACHE=off timeout 120 compute-sanitizer --tool $tool --print-limit 10 $M --exact "$name" > "$OUT/s-$tool-$(echo "$pat" | cut -c7-15).txt" 2>&1 & pids="$pids $!"
  done
done
echo "## spirv: forced register-staged tensor-core shapes, f16 1024^3"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2,tc128x128x32_w4x2 CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=1024x1024x1024 CUBEPORT_PEER_SIZES=1024x1024x1024 timeout 60 $B/bench-matmul-spirv --bench 'matmul/NONE' 2>&1 | grep -vE '^\s*$' | grep -iE 'matmul|error|panic|not timed' | head -20
echo "## spirv: the failing test"
CUBEPORT_STRICT=1 CUBEPORT_BACKEND=wgpu timeout 40 $B/main-spirv --exact wgpu::activation_rejects_unsupported_dtypes 2>&1 | grep -vE '^\s*$' | tail -15
wait $pids  # not a bare `wait`: it would wait for the watchdog too
for f in "$OUT"/t-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'test result|FAILED|panicked|SKIP' "$f" | head -10; done
for f in "$OUT"/s-*.txt; do echo "## $(basename "$f" .txt)"; grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|test result|FAILED' "$f" | head -5; done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
rm -f "$OUT"/t-*.txt "$OUT"/s-*.txt
pick() { grep -E '^(norm|copy)/|time:|SKIP|panick|error|wrong|unavailable|Unsupported' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### norm 16384x4096, every dtype: automatic, held_plane128, held_plane256"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096 CUBEPORT_NORM_VARIANTS=held_plane128,held_plane256 \
  run 120 $B/bench-reduce --bench
echo "##### norm 4096x16384 f16: held_plane512"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_NORM_SHAPES=4096x16384 CUBEPORT_NORM_VARIANTS=held_plane512 \
  run 40 $B/bench-reduce --bench 'held|copy'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
