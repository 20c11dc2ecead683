#!/usr/bin/env bash
# s20-d: what s20-c left out (same binaries, 605bf81): its attention bench and strict attention
# tests were cut by their time limits (compile-bound), and the host path needs wgpu beside CUDA.
#  1. Strict CUDA attention tests (the new softmax; attention_any_scale), 12 threads.
#  2. Attention f16 automatic, old kernel (fa567f6) and new, and PyTorch SDPA.
#  3. Small ops back to back: PyTorch, `cubeport bench --family activation` on CUDA and wgpu.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=330 bash docs/bench-h200/s20-d/commands.sh
set -u
LIMIT=${LIMIT:-330}
source docs/bench-h200/lib.sh
B=.gpu/bin
export CUBEPORT_KERNEL_CACHE=off
{
stamp
CUBEPORT_STRICT=1 timeout 110 $B/main --test-threads 12 "cuda::attention" > "$OUT/att-tests.txt" 2>&1
echo "exit $?"; grep -E '^test result|FAILED|panicked|SKIP|running for' "$OUT/att-tests.txt" | head -20
grep -cE '^test .* ok$' "$OUT/att-tests.txt"
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
{
stamp
S=4x32x4096x128
echo "##### attention before 9479be4 (automatic, f16)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=$S run 50 $B/bench-attention-old --bench 'attention/(causal_)?auto'
echo "##### attention now (automatic, f16)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=$S run 55 $B/bench-attention --bench 'attention/(causal_)?auto'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 20 ] && timeout $(( l < 25 ? l : 25 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient) B4 H32 S4096 D(128|64) float16'
stamp
} > "$OUT/bench.txt" 2>&1
{
stamp
echo "=== torch"; timeout 20 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
for be in cuda wgpu; do
  echo "=== cubeport bench $be, activation family"
  l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 45 ? l - 3 : 42 )) $B/cubeport bench --backend $be --family activation > "$OUT/host-$be.txt" 2>&1
  echo "exit $?"; grep -E '^(op |launch)' "$OUT/host-$be.txt"
done
stamp
} > "$OUT/host.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
cat "$OUT/tests.txt" "$OUT/bench.txt" "$OUT/host.txt"
