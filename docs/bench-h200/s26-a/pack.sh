#!/usr/bin/env bash
# The pack of s26-a: scripts/gpu-pack.sh, keeping only the binaries s26-a runs.
#   bash docs/bench-h200/s26-a/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main bench-matmul bench-activation bench-reduce bench-attention
