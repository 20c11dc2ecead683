#!/usr/bin/env bash
# scripts/gpu-pack.sh, keeping only the named binaries of .gpu/bin (the full set compresses
# past the device tool's 64 MiB; a run that needs a few binaries carries only those).
#   scripts/gpu-pack-keep.sh main bench-matmul example-attention_variants
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
[ $# -gt 0 ] || { echo "usage: $0 BINARY…" >&2; exit 2; }
scripts/gpu-pack.sh
mkdir -p .gpu && xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
keep=" $* "
for f in .gpu/bin/*; do
  case "$keep" in *" $(basename "$f") "*) ;; *) rm -f "$f" ;; esac
done
tar -C .gpu -cf - bin | xz -T0 -6 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
