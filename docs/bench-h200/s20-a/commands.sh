#!/usr/bin/env bash
# s20-a: s19-a (never run: no GPU in s19) on the binaries of s20 (9479be4 and the host-path
# launches after it); 9479be4 changes the
# tensor-core attention's softmax (max on raw scores, one FFMA and the exponential per score,
# no per-score NaN flag). The attention bench of the commit before it (fa567f6) runs first as
# .gpu/bin/bench-attention-old (automatic variant, f16), so the change is timed against the
# old kernel in the same call.
#  - Strict CUDA tests: attention (now with attention_any_scale: scales -0.4, 0, 6), every
#    matmul reference case in f16/bf16/f32, the norm reference cases; one process per group.
#  - wgpu-spirv on the H200's Vulkan driver: the strict wgpu matmul tests and the f16 speed
#    of tc64x128x32_w2x2_p2 against cmma and CUDA's automatic choice.
#  - Attention against PyTorch SDPA in the same call.
# Pack: /tmp/pack19.sh recipe (gpu/pack.sh --tests, then the wgpu-spirv main test and matmul
# bench stripped into .gpu/bin as main-spirv and bench-matmul-spirv), plus the previous
# commit's bench-attention as bench-attention-old.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=540 bash docs/bench-h200/s20-a/commands.sh
set -u
LIMIT=${LIMIT:-540}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_STRICT=1 CUBEPORT_KERNEL_CACHE=off
mkdir -p "$OUT/t"
{
stamp
pids=""
i=0
for f in "cuda::attention" "cuda::matmul_matches_reference::dtype_2" "cuda::matmul_matches_reference::dtype_3" \
         "cuda::matmul_matches_reference::dtype_1" "cuda::norm_matches_reference"; do
  i=$((i+1)); timeout 240 $M --test-threads 3 "$f" > "$OUT/t/$i.txt" 2>&1 & pids="$pids $!"
done
[ -x $B/main-spirv ] && { CUBEPORT_BACKEND=wgpu timeout 240 $B/main-spirv --test-threads 3 "wgpu::matmul" > "$OUT/t/spirv.txt" 2>&1 & pids="$pids $!"; }
wait $pids
for f in "$OUT"/t/*.txt; do echo "## $(basename "$f" .txt)"; grep -E '^test result|FAILED|panicked|SKIP' "$f" | head -8; done
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
for f in "$OUT"/t/*.txt; do echo "## $f"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -40; done > "$OUT/tests-full.txt"
rm -rf "$OUT/t"
{
stamp
echo "##### attention before 9479be4 (fa567f6's kernel; automatic, f16)"
[ -x $B/bench-attention-old ] && CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 run 60 $B/bench-attention-old --bench 'attention/(causal_)?auto'
echo "##### attention (criterion, CUDA)"
CUBEPORT_BACKEND=cuda run 100 $B/bench-attention --bench
echo "##### PyTorch SDPA anchors (same call)"
l=$(left); [ "$l" -gt 20 ] && timeout $(( l < 90 ? l : 90 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient) B4 H32 S4096|^[0-9]'
echo "##### f16 matmul through SPIR-V: automatic (cmma), tc64x128x32_w2x2_p2; CUDA automatic"
[ -x $B/bench-matmul-spirv ] && CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2_p2 \
  CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096 \
  run 100 $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_PEER_SIZES=4096x4096x4096 run 40 $B/bench-matmul --bench 'matmul/auto[^/]*/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/tests.txt"; grep -cE 'time:' "$OUT/bench.txt"
