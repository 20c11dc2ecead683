#!/usr/bin/env bash
# s29-a: issue 20's closing figures in one H200 call (its "done when"): the op-overhead phase
# on CUDA and wgpu-Vulkan with PyTorch timed the same way, the transfers (pageable, pinned, the
# wgpu pieces since 9b9fe98), the launch knee, and the main job on CUDA cold (empty kernel
# cache) then warm. Pack: docs/bench-h200/s27-c/pack.sh (uses only `cubeport`), or s31-a's
# (since s33 it also runs `cubeport-spirv`'s small ops on wgpu when the pack has it).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s29-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin
export XDG_CACHE_HOME=/tmp/xdg-cache; rm -rf "$XDG_CACHE_HOME"
{
stamp
echo "=== devices"; timeout 30 $B/cubeport devices 2>&1
echo "=== torch"; timeout 40 python3 scripts/anchors_ops.py 2>&1 | grep -E ' op |transfer'
for be in cuda wgpu; do
  echo "=== cubeport bench $be --family transfers (op overhead, launch knee, transfers)"
  l=$(left); [ "$l" -gt 30 ] && timeout $(( l < 100 ? l - 5 : 95 )) $B/cubeport bench --backend $be --family transfers \
    --json "$OUT/bench-$be.json" 2>&1 | grep -E '^(op |launch|knee|transfer|overlap|wall)|rror'
done
# Added in s33: the same small ops on wgpu through SPIR-V (the tool's Vulkan compiler since
# s33; issue 23 had its trivial kernel at 37 µs against WGSL's 58), where the pack has it.
if [ -x $B/cubeport-spirv ]; then
  echo "=== cubeport-spirv bench wgpu --family ops"
  l=$(left); [ "$l" -gt 30 ] && timeout $(( l < 80 ? l - 5 : 75 )) $B/cubeport-spirv bench --backend wgpu --family ops \
    --json "$OUT/bench-wgpu-spirv.json" 2>&1 | grep -E '^(op |launch|knee|wall)|rror'
fi
stamp
} > "$OUT/host.txt" 2>&1
{
echo "=== main job on CUDA, cold (empty kernel cache) then warm"
for run in cold warm; do
  l=$(left); [ "$l" -gt 30 ] || { echo "$run: skipped, $l s left"; continue; }
  s=$(date +%s.%N)
  timeout $(( l - 5 )) $B/cubeport check --backend cuda > "$OUT/check-$run.txt" 2>&1; rc=$?
  e=$(date +%s.%N)
  echo "$run: exit $rc, $(python3 -c "print(f'{$e-$s:.1f}')") s, $(tail -1 "$OUT/check-$run.txt")"
done
du -sh "$XDG_CACHE_HOME"/cubeport/*/* 2>&1
stamp
} > "$OUT/main-job.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT/host.txt" "$OUT/main-job.txt"
