#!/usr/bin/env bash
# Builds everything the GPU machine runs into .gpu/ (see ../shared/gpu/README.md): release
# bins, benches and the integration-test binary, plus the Vulkan loader and the glvnd
# libraries NVIDIA's Vulkan ICD (libGLX_nvidia) links against, so wgpu finds the H200.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
../shared/gpu/pack.sh --tests "$@"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cubeport-gl-debs
if [ ! -s "$cache/.done" ]; then
  mkdir -p "$cache" /tmp/amd64-lists/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists'
  apt-get $o update >/dev/null 2>&1 || true
  (cd "$cache" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null) && touch "$cache/.done"
fi
cp "$cache"/*.deb .gpu/gl/
du -sh .gpu
