#!/usr/bin/env bash
# The pack of s26-c: scripts/gpu-pack.sh, keeping only the binaries s26-c runs.
#   bash docs/bench-h200/s26-c/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main bench-matmul bench-activation bench-reduce bench-attention example-matmul_variants
