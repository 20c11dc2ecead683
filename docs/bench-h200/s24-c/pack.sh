#!/usr/bin/env bash
# The pack of s24-c: scripts/gpu-pack.sh, keeping only the binaries s24-c runs.
#   bash docs/bench-h200/s24-c/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
mkdir -p .gpu && xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
keep=" main "
for f in .gpu/bin/*; do
  case "$keep" in *" $(basename "$f") "*) ;; *) rm -f "$f" ;; esac
done
tar -C .gpu -cf - bin | xz -T0 -6 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
