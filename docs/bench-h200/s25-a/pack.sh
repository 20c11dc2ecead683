#!/usr/bin/env bash
# The pack of s25-a: scripts/gpu-pack.sh, keeping only the binaries s25-a runs.
#   bash docs/bench-h200/s25-a/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main bench-attention bench-reduce bench-matmul bench-activation example-matmul_variants
