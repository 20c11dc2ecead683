#!/usr/bin/env bash
# The pack of s24-c: scripts/gpu-pack.sh, keeping only the binaries s24-c runs.
#   bash docs/bench-h200/s24-c/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
scripts/gpu-pack-keep.sh main
