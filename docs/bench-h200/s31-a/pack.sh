#!/usr/bin/env bash
# The pack of s31-a: scripts/gpu-pack.sh plus WGSL and SPIR-V builds of the matmul bench, the
# matmul_variants example, the suite and the CLI (`-spirv` names: SPIR-V on Vulkan), and (since
# s32, for `attsan`) the attention and norm examples, keeping only what s31-a runs (s29-a's
# host call runs from it too: `cubeport`, WGSL).
#   bash docs/bench-h200/s31-a/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
exe() { python3 -c "import json,sys; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('reason') == 'compiler-artifact' and m.get('executable') and m['target']['name'] == '$1']"; }
# Since s33 the workspace's default build (what scripts/gpu-pack.sh packs) compiles Vulkan
# kernels through SPIR-V: those binaries become the `-spirv` names, and the plain names get
# WGSL builds (the library alone, the CLI without its default `wgpu-spirv`), as the plan expects.
bench=$(cargo build --release -p cubeport --bench matmul --example matmul_variants --example user_loop --features testing --message-format=json-render-diagnostics | exe matmul)
suite=$(cargo test --release -p cubeport --test main --no-run --message-format=json-render-diagnostics | exe main)
cli=$(cargo build --release -p cubeport-cli --no-default-features --features cuda,wgpu,cublas --message-format=json-render-diagnostics | exe cubeport)
PACK_BUILT=1 scripts/gpu-pack-keep.sh bench-reduce bench-attention example-attention_variants example-norm_variants \
  bench-matmul-spirv=.gpu/bin/bench-matmul example-matmul_variants-spirv=.gpu/bin/example-matmul_variants \
  cubeport-spirv=.gpu/bin/cubeport main-spirv=.gpu/bin/main example-user_loop-spirv=.gpu/bin/example-user_loop \
  "example-user_loop=target/release/examples/user_loop" "bench-matmul=$bench" "example-matmul_variants=target/release/examples/matmul_variants" "cubeport=$cli" "main=$suite"
