#!/usr/bin/env bash
# s17-a: the host path after the staged pageable transfers (issue 20: strict transfer tests,
# PyTorch's ops and transfers, `cubeport bench` on CUDA and wgpu-Vulkan for ops, transfers,
# overlap and the launch knee), then decode-shaped matmul sweeps against cuBLAS at each shape
# (f32 stream-K SIMT tiles at 32/64 rows, f16 split tensor-core shapes), and norms in f16/bf16
# with the copy ceiling in the same call.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=540 bash docs/bench-h200/s17-a/commands.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-540}
start=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f anchors_ops ) > /dev/null 2>&1 & dog=$!
export XDG_CACHE_HOME=/tmp/xdg-cache
M=.gpu/bin/main
{
stamp
echo "=== strict transfer and thread tests (CUDA, wgpu)"
CUBEPORT_STRICT=1 timeout 120 $M --test-threads 4 transfers_round_trip transfers_from_many_threads ops_from_many_threads 2>&1 | grep -vE '^test .* ok$' | grep -v '^$'
echo "=== torch ($(( $(date +%s) - start )) s)"; timeout 120 python3 scripts/anchors_ops.py 2>&1
for be in cuda wgpu; do
  echo "=== bench $be ($(( $(date +%s) - start )) s)"
  timeout 100 .gpu/bin/cubeport bench --backend $be --family activation --json "$OUT/bench-$be.json" --plots "$OUT/plots" > "$OUT/bench-$be.txt" 2>&1
  echo "exit $?"; grep -E '^(transfer|overlap|op |launch|knee|wall)' "$OUT/bench-$be.txt"
done
} > "$OUT/host.txt" 2>&1
tar -C "$OUT" -czf "$OUT/plots.tgz" plots 2>/dev/null && rm -rf "$OUT/plots"
pick() { grep -E '^(norm|copy|matmul)/|time:|thrpt|SKIP|panick|error|wrong|unavailable' | grep -v '%'; }
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
{
stamp
echo "##### copy ceiling, 64M f32"
CUBEPORT_BACKEND=cuda run 25 .gpu/bin/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### decode shapes f32: stream-K SIMT tiles, skinny (automatic), cuBLAS at each shape"
V=simt64x64x16_4x4_s2_sk,simt64x64x16_4x4_s2_sk264,simt32x64x16_4x4_s2_sk264,simt64x128x16_4x8_s2_sk264,simt32x128x16_4x8_s2_sk264
D=1x4096x4096,32x4096x4096,64x4096x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 90 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|simt[^/]*[^u]|cublas)/cuda/'
echo "##### decode shapes f16: split shapes swept, automatic, cuBLAS at each shape"
V=tc16x128x64_w1x4_a3_mma_split4,tc16x256x64_w1x4_a3_mma_split2,tc32x128x64_w1x4_a3_mma_split2,tc64x128x64_w2x2_a3_mma_split2,tc64x64x64_w2x2_a3_mma_split4,tc64x64x64_w2x2_a4_mma_split2,tc64x64x64_w2x2_a3_mma_split1
D=1x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,4x14336x4096
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=$D \
  CUBEPORT_PEER_SIZES=$D run 150 .gpu/bin/bench-matmul --bench 'matmul/(auto_[^/]*[^u]|tc[^/]*[^u]|cublas)/cuda/'
echo "##### norm f16/bf16 16384x4096: automatic, plane32, plane256, shared256"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=16384x4096 \
  CUBEPORT_NORM_VARIANTS=plane32,plane256,shared256 run 70 .gpu/bin/bench-reduce --bench
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/host.txt"; grep -cE 'time:' "$OUT/bench.txt"
