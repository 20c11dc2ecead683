#!/usr/bin/env bash
# Session 12, call A (host path, issue 20): devices, PyTorch anchors, `cubeport bench` on CUDA and
# wgpu-Vulkan (ops, transfers, overlap, launch knee), the new tests strict on both backends, and
# the main job cold then warm with the persistent kernel cache.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh && bash docs/bench-h200/s12-a/commands.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/xdg-cache; rm -rf "$XDG_CACHE_HOME"
log="$OUT/log.txt"
{
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== devices"; .gpu/bin/cubeport devices 2>&1
echo "=== torch"; timeout 120 python3 scripts/anchors_ops.py 2>&1
echo "=== new tests, strict"
CUBEPORT_STRICT=1 timeout 200 .gpu/bin/main --test-threads 4 transfers_round_trip ops_from_many_threads missing_device main_job no_adapter backend_discovery 2>&1 | grep -vE '^test .* ok$'
CUBEPORT_STRICT=1 timeout 60 .gpu/bin/swallowed_panic 2>&1 | tail -4
} > "$log" 2>&1
for be in cuda wgpu; do
  echo "=== bench $be" >> "$log"
  timeout 170 .gpu/bin/cubeport bench --backend $be --family activation --json "$OUT/bench-$be.json" --plots "$OUT/plots" > "$OUT/bench-$be.txt" 2>&1
  echo "exit $?" >> "$log"
done
{
echo "=== main job on CUDA, cold (empty kernel cache) then warm"
for run in cold warm; do
  s=$(date +%s.%N)
  timeout 150 .gpu/bin/cubeport check --backend cuda > "$OUT/check-$run.txt" 2>&1; rc=$?
  e=$(date +%s.%N)
  echo "$run: exit $rc, $(python3 -c "print(f'{$e-$s:.1f}')") s, $(tail -1 "$OUT/check-$run.txt")"
done
du -sh "$XDG_CACHE_HOME"/cubeport/*/* 2>&1
} >> "$log" 2>&1
tar -C "$OUT" -czf "$OUT/plots.tgz" plots 2>/dev/null && rm -rf "$OUT/plots"
cat "$log"
