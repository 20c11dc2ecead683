#!/usr/bin/env bash
# s19-a (prepared at the end of s18; still not run: no GPU was lent in s19): what s18 changed
# without GPU time left. Build the binaries from the newest commit (s19 changed the norm and
# softmax loads, added attention property tests, 2-8 stage manual-MMA shapes).
#  - Strict CUDA tests: attention (the scores' exp through __expf), every matmul reference
#    case (now with tc64x128x32_w2x2_p2), the norm reference cases; one process per group.
#  - wgpu-spirv on the H200's Vulkan driver: the strict wgpu matmul tests (tc64x128x32_w2x2_p2
#    is the one tiled tensor-core shape that fits its 48 KiB) and its f16 speed against cmma
#    and CUDA's automatic choice.
#  - Attention against PyTorch SDPA in the same call.
# Pack: scripts/gpu-pack.sh, then add the SPIR-V binaries: `cargo build --release --features
# wgpu-spirv --test main --bench matmul` and copy them (stripped) into .gpu/bin as main-spirv
# and bench-matmul-spirv before compressing (see s18-b).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=540 bash docs/bench-h200/s19-a/commands.sh
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
