#!/usr/bin/env bash
# The pack of s24-a: scripts/gpu-pack.sh, keeping only the binaries s24-a runs.
#   bash docs/bench-h200/s24-a/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main example-attention_variants bench-activation bench-matmul bench-attention
