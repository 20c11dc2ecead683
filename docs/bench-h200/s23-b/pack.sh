#!/usr/bin/env bash
# The pack of s23-b: scripts/gpu-pack.sh plus the wgpu-spirv build of `cmma_probe`, keeping only
# the binaries s23-b runs (the full set compresses past the device tool's 64 MiB).
#   bash docs/bench-h200/s23-b/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
cargo build --release --example cmma_probe --features testing,wgpu-spirv --target-dir target-spirv
mkdir -p .gpu && xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
strip -o .gpu/bin/example-cmma_probe-spirv target-spirv/release/examples/cmma_probe
keep=" main example-matmul_variants example-cmma_probe example-cmma_probe-spirv bench-activation bench-matmul bench-attention bench-reduce "
for f in .gpu/bin/*; do
  case "$keep" in *" $(basename "$f") "*) ;; *) rm -f "$f" ;; esac
done
tar -C .gpu -cf - bin | xz -T0 -6 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
