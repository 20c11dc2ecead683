#!/usr/bin/env bash
# The pack of s30-a to s30-d (and s27-d, s29-a): scripts/gpu-pack.sh plus the wgpu-spirv builds of the
# matmul bench and the matmul_variants example (bench-matmul-spirv,
# example-matmul_variants-spirv), keeping only the binaries the three plans run.
#   bash docs/bench-h200/s30-a/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
# The same target directory: cargo keeps both feature sets' artifacts, so only the crates the
# feature touches build again (this overwrites target/release/examples/matmul_variants, which
# gpu-pack.sh has already packed).
bench=$(cargo build --release --bench matmul --example matmul_variants --features testing,wgpu-spirv --message-format=json-render-diagnostics \
  | python3 -c "import json,sys; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('reason') == 'compiler-artifact' and m.get('executable') and 'bench' in m['target']['kind']]")
# The integration tests through SPIR-V (main-spirv, for s30-d's strict wgpu suite).
tests=$(cargo test --release --no-run --test main --features testing,wgpu-spirv --message-format=json-render-diagnostics \
  | python3 -c "import json,sys; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('reason') == 'compiler-artifact' and m.get('executable') and m['target']['name'] == 'main']")
PACK_BUILT=1 scripts/gpu-pack-keep.sh main cubeport bench-matmul bench-memory \
  example-attention_variants example-matmul_variants \
  "bench-matmul-spirv=$bench" "example-matmul_variants-spirv=target/release/examples/matmul_variants" "main-spirv=$tests"
