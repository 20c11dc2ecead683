#!/usr/bin/env bash
# s27-b (the s27-a pack, the same warm H200). Issue 22's shape classes on the H200 with the
# automatic choices of today (the last H200 figures of most are s17/s18): decode rows, ragged
# neighbours of 4096³, mid sizes, batched products (with two staged-epilogue shapes forced at
# depth 128, where s27-a times them on squares), each against cuBLAS in the same process.
# Issue 20: the op-overhead phase on CUDA and wgpu against PyTorch timed the same way, and
# the transfers (wgpu uploads of 8 MiB and more now go in 1 MiB pieces). Issue
# 24: ncu's view of one automatic bf16 D128 attention launch, where time is left. Issue 23 (added
# s29): the register-staged WMMA shapes Vulkan can run, timed on CUDA against cuBLAS.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s27-b/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin
MM='matmul/(auto[^/]*[^u]|cublas)/cuda/'
{
stamp
echo "=== torch"; timeout 25 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
echo "=== cubeport bench cuda --family transfers (and ops)"
timeout 70 $B/cubeport bench --backend cuda --family transfers 2>&1 | grep -E '^(op |launch|transfer|overlap)|rror'
echo "=== cubeport bench wgpu --family transfers (and ops)"
timeout 80 $B/cubeport bench --backend wgpu --family transfers 2>&1 | grep -E '^(op |launch|transfer|overlap)|rror'
stamp
} > "$OUT/host.txt" 2>&1
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 20 $B/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### f16 register-staged WMMA shapes on CUDA (issue 23: the Vulkan-sized p2 shape runs ~33 TFLOP/s through SPIR-V; is the design slow on CUDA too?)"
S=4096x4096x4096,8192x8192x8192
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2_p2,tc128x128x32_w4x2 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 40 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|cublas)/cuda/'
echo "##### batched f16 / bf16: automatic, two staged shapes, strided-batched cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=256x256x256 CUBEPORT_PEER_SIZES=256x256x256 \
  CUBEPORT_MATMUL_VARIANTS=tc128x128x64_w2x2_a3_mma_st,tc128x128x32_w2x2_a2_mma_st \
  CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 run 80 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|auto[^/]*[^u]|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
echo "##### batched f32: automatic, strided-batched cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=256x256x256 CUBEPORT_PEER_SIZES=256x256x256 \
  CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 run 45 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/cuda/[^/]*/[0-9]+x[0-9]+x[0-9]+x'
echo "##### mid sizes, every dtype: automatic, cuBLAS"
D=512x512x512,1000x1000x1000,1024x1024x1024,2048x2048x2048
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 90 $B/bench-matmul --bench "$MM"
echo "##### decode rows and ragged neighbours, every dtype: automatic, cuBLAS"
D=1x4096x4096,8x4096x4096,64x4096x4096,512x4096x4096,4096x4096x4096,4095x4097x4093
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 120 $B/bench-matmul --bench "$MM"
stamp
} > "$OUT/matmul.txt" 2>&1
{
stamp
# Issue 24: what holds the automatic D128 kernel under flash's rate (0.78-0.81x). One launch.
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
l=$(left); [ "$l" -gt 40 ] && CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=bf16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128 CUBEPORT_KERNEL_CACHE=off \
  timeout $(( l - 5 )) ncu --clock-control none $SEC -k regex:attention --launch-count 1 $B/bench-attention --bench 'nothing-timed' 2>&1 | grep -vE '^==PROF==|^ *-+ *$' | cut -c1-150
stamp
} > "$OUT/ncu-attention.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT/host.txt"
grep -E '^(matmul|copy)/|time:|panick|rror' "$OUT/matmul.txt" | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | paste -s -d' ' | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g'
