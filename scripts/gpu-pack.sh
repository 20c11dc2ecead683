#!/usr/bin/env bash
# Builds everything the GPU machine runs into .gpu/ (see ../shared/gpu/README.md): release
# bins, benches, examples and the integration-test binary (plus the Burn interop example), the
# Vulkan loader and the glvnd libraries NVIDIA's Vulkan ICD (libGLX_nvidia) links against, so
# wgpu finds the H200. The binaries travel xz-compressed (.gpu/bin.tar.xz) to stay under the
# device tool's 64 MiB; `source .gpu/prelude.sh && bash scripts/gpu-unpack.sh` restores .gpu/bin.
#   scripts/gpu-pack.sh [--features peer-cubek]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
../shared/gpu/pack.sh --tests "$@" || true   # its 64 MiB check fails before compression
[ -x .gpu/bin/main ] || { echo "pack.sh built nothing" >&2; exit 1; }
cargo build --release -p burn-interop
strip -o .gpu/bin/burn-interop target/release/burn-interop
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cubeport-gl-debs
if [ ! -s "$cache/.done" ]; then
  mkdir -p "$cache" /tmp/amd64-lists/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists'
  apt-get $o update >/dev/null 2>&1 || true
  (cd "$cache" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null) && touch "$cache/.done"
fi
cp "$cache"/*.deb .gpu/gl/
# -9: its 64 MiB dictionary spans whole binaries, so near-identical builds (WGSL and SPIR-V)
# compress together: s33's pack was 31.8 MB at -9 against 63.8 MB at -6.
tar -C .gpu -cf - bin | xz -T0 -9 > .gpu/bin.tar.xz
rm -rf .gpu/bin
du -sh .gpu
