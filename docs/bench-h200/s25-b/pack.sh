#!/usr/bin/env bash
# The pack of s25-b: scripts/gpu-pack.sh, keeping only the binaries s25-b runs.
#   bash docs/bench-h200/s25-b/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main bench-matmul bench-activation bench-reduce
