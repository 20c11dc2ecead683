#!/usr/bin/env bash
# The pack of s24-b: scripts/gpu-pack.sh, keeping only the binaries s24-b runs.
#   bash docs/bench-h200/s24-b/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main example-attention_variants bench-matmul bench-reduce bench-activation
