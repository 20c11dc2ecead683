#!/usr/bin/env bash
# Offline CUDA codegen for machines without an NVIDIA GPU: downloads NVRTC, headers, ptxas and
# cuobjdump (CUDA 13.0, as on the H200 image) from PyPI into $CUDA_OFFLINE (default
# /tmp/cuda-offline) and builds the stub libcuda.so.1 (stub_cuda.c) next to them.
#   scripts/cuda-offline/setup.sh && scripts/cuda-offline/report.sh   # PTX + SASS of every matmul kernel
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${CUDA_OFFLINE:-/tmp/cuda-offline}
mkdir -p "$root/wheels" "$root/x"
cd "$root/wheels"
for p in "nvidia-cuda-nvrtc==13.0.88" "nvidia-cuda-runtime==13.0.96" "nvidia-cuda-cccl==13.0.85" \
         "nvidia-cuda-crt==13.0.88" "nvidia-cuda-nvcc==13.0.88" "nvidia-cuda-cuobjdump" "nvidia-cuda-nvdisasm"; do
  ls ./*.whl 2>/dev/null | grep -qi "$(echo "${p%%=*}" | tr - _)" || python3 -m pip download -q --no-deps "$p" -d .
done
for w in ./*.whl; do unzip -q -o "$w" -d "$root/x"; done
cu="$root/x/nvidia/cu13"
mkdir -p "$root/cuda/lib64" "$root/cuda/bin"
cp -r "$cu/include" "$root/cuda/"
cp "$cu"/lib/libnvrtc* "$root/cuda/lib64/"
ln -sf libnvrtc.so.13 "$root/cuda/lib64/libnvrtc.so"
cp "$cu/bin/ptxas" "$cu/bin/cuobjdump" "$cu/bin/nvdisasm" "$root/cuda/bin/"
gcc -shared -fPIC -O1 -o "$root/cuda/lib64/libcuda.so.1" "$here/stub_cuda.c"
ln -sf libcuda.so.1 "$root/cuda/lib64/libcuda.so"
echo "offline CUDA toolchain in $root/cuda"
