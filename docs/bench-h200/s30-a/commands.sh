#!/usr/bin/env bash
# s30-a (issue 23): the register-staged tensor-core kernel with branch-free fetches and loads as
# wide as the device's vectors (4 on Vulkan: 8-byte loads of halves instead of 16-byte ones
# split in two), through SPIR-V and on CUDA; the histogram's batch of loads per unit (1, 4, 8)
# on wgpu-Vulkan and CUDA. Pack: docs/bench-h200/s30-a/pack.sh.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=480 bash docs/bench-h200/s30-a/commands.sh
# Parts in ORDER (default: check spirv cuda hist), each cut to what is left.
set -u
LIMIT=${LIMIT:-480}
source docs/bench-h200/lib.sh
B=.gpu/bin
# `_p2`: the Vulkan-sized shape at its automatic width (4 on Vulkan, 8 on CUDA); `_v4`/`_v8`
# force one. `cmma` (the automatic choice on SPIR-V, unchanged) is the anchor across calls.
P2=tc64x128x32_w2x2_p2
V=$P2,${P2}_v4,${P2}_v8
S=4096x4096x4096,8192x8192x8192
check() {
{
stamp
echo "##### the p2 shapes against f64: SPIR-V (wgpu), CUDA"
for p in "wgpu example-matmul_variants-spirv" "cuda example-matmul_variants"; do
  set -- $p; l=$(left); [ "$l" -gt 20 ] || continue
  echo "## $1"
  CUBEPORT_BACKEND=$1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_MATMUL_ONLY=1 timeout $(( l < 45 ? l - 3 : 42 )) $B/$2 2>&1 \
    | grep -E '_p2|FAIL|panick|rror|SKIP' | head -40
done
stamp
} > "$OUT/check.txt" 2>&1
}
spirv() {
{
stamp
echo "##### f16 matmul through SPIR-V: automatic (cmma), p2 (4-wide), p2_v8"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$P2,${P2}_v8 CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 120 $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
stamp
} > "$OUT/spirv.txt" 2>&1
}
cuda() {
{
stamp
echo "##### f16 on CUDA: p2 (8-wide), p2_v4, tc128x128x32_w4x2, automatic, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$P2,${P2}_v4,tc128x128x32_w4x2 CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 80 $B/bench-matmul --bench 'matmul/(auto|tc|cublas)[^/]*/cuda/'
stamp
} > "$OUT/cuda.txt" 2>&1
}
hist() {
{
stamp
echo "##### histogram, loads per unit and step (CUBEPORT_HIST_BATCH), with the copy"
for v in "wgpu 1" "wgpu 4" "wgpu 8" "cuda 4" "cuda 8"; do
  set -- $v; echo "## $1 batch $2"
  CUBEPORT_BACKEND=$1 CUBEPORT_HIST_BATCH=$2 CUBEPORT_BENCH_FAMILIES=histogram run 40 $B/bench-memory --bench '(histogram/auto|copy/)'
done
stamp
} > "$OUT/hist.txt" 2>&1
}
for part in ${ORDER:-check spirv cuda hist}; do "$part"; done
kill $dog 2>/dev/null
cat "$OUT/check.txt" 2>/dev/null
grep -hE '^(matmul|copy|histogram)/|time:|^#####|^## |SKIP|rror|panick' "$OUT/spirv.txt" "$OUT/cuda.txt" "$OUT/hist.txt" 2>/dev/null \
  | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | paste -s -d' ' \
  | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g; s/ histogram/\nhistogram/g; s/ #####/\n#####/g; s/ ## /\n## /g'
