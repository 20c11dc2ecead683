#!/usr/bin/env bash
# The pack of s31-a: scripts/gpu-pack.sh plus wgpu-spirv builds of the matmul bench, the
# matmul_variants example and the CLI (bench-matmul-spirv, example-matmul_variants-spirv,
# cubeport-spirv), and (since s32, for `attsan`) the attention and norm examples, keeping only
# what s31-a runs (s29-a's host call runs from it too: `cubeport`).
#   bash docs/bench-h200/s31-a/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
exe() { python3 -c "import json,sys; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('reason') == 'compiler-artifact' and m.get('executable') and m['target']['name'] == '$1']"; }
bench=$(cargo build --release --bench matmul --example matmul_variants --features testing,wgpu-spirv --message-format=json-render-diagnostics | exe matmul)
suite=$(cargo test --release --features testing,wgpu-spirv --test main --no-run --message-format=json-render-diagnostics | exe main)
cli=$(cargo build --release -p cubeport-cli --features cubeport/wgpu-spirv --message-format=json-render-diagnostics | exe cubeport)
PACK_BUILT=1 scripts/gpu-pack-keep.sh main cubeport bench-matmul bench-reduce bench-attention example-matmul_variants \
  example-attention_variants example-norm_variants \
  "bench-matmul-spirv=$bench" "example-matmul_variants-spirv=target/release/examples/matmul_variants" "cubeport-spirv=$cli" "main-spirv=$suite"
