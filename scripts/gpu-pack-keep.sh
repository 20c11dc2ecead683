#!/usr/bin/env bash
# scripts/gpu-pack.sh, keeping only the named binaries of .gpu/bin (the full set compresses
# past the device tool's 64 MiB; a run that needs a few binaries carries only those). A
# `NAME=PATH` argument adds the executable PATH, stripped, as .gpu/bin/NAME (a build with
# other features, or of another commit). PACK_BUILT=1 reuses the .gpu that scripts/gpu-pack.sh
# left (the build already done).
#   scripts/gpu-pack-keep.sh main bench-matmul example-attention_variants
#   scripts/gpu-pack-keep.sh main example-cmma_probe example-cmma_probe-spirv=target/release/examples/cmma_probe
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
[ $# -gt 0 ] || { echo "usage: $0 BINARY|NAME=PATH…" >&2; exit 2; }
[ "${PACK_BUILT:-0}" = 1 ] || scripts/gpu-pack.sh
mkdir -p .gpu && xz -dc .gpu/bin.tar.xz | tar -C .gpu -xf -
keep=" "
for arg in "$@"; do
  case "$arg" in
    *=*) strip -o ".gpu/bin/${arg%%=*}" "${arg#*=}"; keep="$keep${arg%%=*} " ;;
    *) keep="$keep$arg " ;;
  esac
done
for f in .gpu/bin/*; do
  case "$keep" in *" $(basename "$f") "*) ;; *) rm -f "$f" ;; esac
done
# -9: its 64 MiB dictionary spans whole binaries, so near-identical builds (WGSL and SPIR-V)
# compress together: s33's pack was 31.8 MB at -9 against 63.8 MB at -6.
tar -C .gpu -cf - bin | xz -T0 -9 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
