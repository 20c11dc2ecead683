#!/usr/bin/env bash
# Runs a cubeport program on the stub driver (CUDA backend, no GPU: results are garbage) so
# cubecl JIT-compiles its kernels through the real NVRTC, then prints per kernel: registers,
# spills and the SASS instruction mix of interest. Default program: the matmul_variants example.
#   scripts/cuda-offline/report.sh [program args…]      (after setup.sh; cargo build first)
#   SASS_DIR=/tmp/sass keeps the PTX, cubins and SASS listings there.
set -euo pipefail
root=${CUDA_OFFLINE:-/tmp/cuda-offline}/cuda
out=${SASS_DIR:-$(mktemp -d)}
mkdir -p "$out" && rm -f "$out"/*.ptx "$out"/*.cubin "$out"/*.sass
prog=("$@")
[ ${#prog[@]} -gt 0 ] || prog=(target/release/examples/matmul_variants)
CUBEPORT_BACKEND=cuda LD_LIBRARY_PATH="$root/lib64" CUDA_PATH="$root" STUB_PTX_DIR="$out" \
  XDG_RUNTIME_DIR=/tmp "${prog[@]}" 2>&1 | grep -E "failed|panicked" | cut -c1-240 || true
for f in "$out"/*.ptx; do
  base=${f%.ptx}
  info=$("$root/bin/ptxas" -arch=sm_90a -v "$f" -o "$base.cubin" 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | tr '\n' ' ')
  PATH="$root/bin:$PATH" "$root/bin/cuobjdump" -sass "$base.cubin" > "$base.sass"
  mix=$(grep -oE '\b(LDS|LDSM|LDG|LDGSTS|STS|STG|FFMA|HMMA|BAR)[.A-Z0-9]*' "$base.sass" | sort | uniq -c | awk '{printf "%s×%s ", $2, $1}')
  printf '%-60s %s| %s\n' "$(basename "$f")" "$info" "$mix"
done
echo "PTX, cubins and SASS in $out"
