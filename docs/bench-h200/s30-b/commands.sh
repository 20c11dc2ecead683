#!/usr/bin/env bash
# s30-b (issue 23): after s30-a showed branch-free fetches taking the SPIR-V register-staged
# kernel from 4.28 to 2.04 ms at 4096³ (8-wide), a sweep of the register-staged shapes that fit
# Vulkan's 48 KiB, 8-wide, through SPIR-V at 4096³ and 8192³ (cmma, the automatic choice, as the
# anchor), then the wgpu histogram at 16 loads per unit. Pack: docs/bench-h200/s30-a/pack.sh.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=300 bash docs/bench-h200/s30-b/commands.sh
set -u
LIMIT=${LIMIT:-300}
source docs/bench-h200/lib.sh
B=.gpu/bin
V=tc64x128x32_w2x2_p2_v8,tc128x64x32_w2x2_p2_v8,tc64x64x32_w2x2_v8,tc64x128x32_w2x4_p2_v8,tc128x128x16_w2x2_p4_v8,tc128x128x16_w2x4_p4_v8,tc128x64x16_w2x2_p2_v8
{
stamp
echo "##### f16 through SPIR-V, register-staged shapes under 48 KiB, 8-wide"
for S in 4096x4096x4096 8192x8192x8192; do
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 110 $B/bench-matmul-spirv --bench 'matmul/(auto_cmma|tc)[^/]*/wgpu/'
done
echo "## wgpu histogram batch 16"
CUBEPORT_BACKEND=wgpu CUBEPORT_HIST_BATCH=16 CUBEPORT_BENCH_FAMILIES=histogram run 40 $B/bench-memory --bench '(histogram/auto|copy/)'
stamp
} > "$OUT/sweep.txt" 2>&1
kill $dog 2>/dev/null
grep -hE '^(matmul|copy|histogram)/|time:|^#####|^## |SKIP|rror|panick|not timed' "$OUT/sweep.txt" \
  | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | paste -s -d' ' \
  | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g; s/ histogram/\nhistogram/g; s/ #####/\n#####/g; s/ ## /\n## /g'
