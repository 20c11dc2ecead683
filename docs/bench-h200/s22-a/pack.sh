#!/usr/bin/env bash
# The pack of s22-a and s22-b: scripts/gpu-pack.sh (every bin, bench and example, the test
# binary), plus binaries it does not build — the wgpu-spirv build of cmma_probe
# (example-cmma_probe-spirv) and 5b77a78's reduce and memory benches (bench-reduce-old,
# bench-memory-old: the norm kernel before 2e06a18, the grid-stride fill before s22) —
# stripped into the same compressed tarball.
#   bash docs/bench-h200/s22-a/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
cargo build --release --example cmma_probe --features testing,wgpu-spirv --target-dir target-spirv
old=/tmp/cubeport-5b77a78
rm -rf "$old"; git worktree prune
git worktree add -f "$old" 5b77a78
(cd "$old" && cargo build --release --bench reduce --bench memory --target-dir "$root/target-old")
mkdir -p .gpu && xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
strip -o .gpu/bin/example-cmma_probe-spirv target-spirv/release/examples/cmma_probe
for b in reduce memory; do
  bench=$(ls -t target-old/release/deps/$b-* | grep -vE '\.(d|rlib|rmeta)$' | head -1)
  strip -o .gpu/bin/bench-$b-old "$bench"
done
# What no s22 plan runs, so the pack stays under the device tool's 64 MiB (66 MB with them).
rm -f .gpu/bin/{burn-interop,bench-attention,example-attention_variants,example-host_overhead,swallowed_panic,bench_json,cli}
tar -C .gpu -cf - bin | xz -T0 -6 > .gpu/bin.tar.xz
rm -rf .gpu/bin
git worktree remove --force "$old"
du -sh .gpu
