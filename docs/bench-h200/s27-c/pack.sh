#!/usr/bin/env bash
# The pack of s27-a/b/c/d (since s29): scripts/gpu-pack.sh plus the wgpu-spirv build of
# `cmma_probe` (example-cmma_probe-spirv, for s27-c's probe section), keeping only the binaries
# the four plans run. `git revert 5c11b45` first (the causal-tile skip they check).
#   bash docs/bench-h200/s27-c/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
# The same target directory: cargo keeps both feature sets' artifacts, so only the crates the
# feature touches build again (this overwrites target/release/examples/cmma_probe).
cargo build --release --example cmma_probe --features testing,wgpu-spirv
xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
strip -o .gpu/bin/example-cmma_probe-spirv target/release/examples/cmma_probe
keep=" main cubeport bench-activation bench-attention bench-matmul bench-reduce example-attention_variants example-matmul_variants example-cmma_probe example-cmma_probe-spirv "
for f in .gpu/bin/*; do
  case "$keep" in *" $(basename "$f") "*) ;; *) rm -f "$f" ;; esac
done
tar -C .gpu -cf - bin | xz -T0 -6 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
