#!/usr/bin/env bash
# The pack of s27-a/b/c/d (since s29): scripts/gpu-pack.sh plus the wgpu-spirv build of
# `cmma_probe` (example-cmma_probe-spirv, for s27-c's probe section) and the histogram bench of
# before c62ceed (bench-memory-old), keeping only the binaries the four plans (and s29-a) run.
#   bash docs/bench-h200/s27-c/pack.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
scripts/gpu-pack.sh
# The same target directory: cargo keeps both feature sets' artifacts, so only the crates the
# feature touches build again (this overwrites target/release/examples/cmma_probe).
cargo build --release --example cmma_probe --features testing,wgpu-spirv
extra=("example-cmma_probe-spirv=target/release/examples/cmma_probe")
# The histogram bench of the commit before c62ceed (batched loads), built from a worktree into
# a target directory of its own (a shared one mixes the two trees' workspace crates: cargo
# hashes them by their path within the workspace). SKIP_OLD=1 leaves it out.
if [ "${SKIP_OLD:-0}" != 1 ]; then
  old=/tmp/old-hist
  # A worktree left at another commit would pack the wrong kernel: made anew unless it is
  # exactly c62ceed~1.
  if [ "$(git -C "$old" rev-parse HEAD 2>/dev/null)" != "$(git rev-parse c62ceed~1)" ]; then
    git worktree remove --force "$old" 2>/dev/null || rm -rf "$old"
    git worktree prune
    git worktree add -f --detach "$old" c62ceed~1 > /dev/null
  fi
  exe=$(cd "$old" && cargo build --release --bench memory --target-dir "$root/target-old" --message-format=json-render-diagnostics \
    | python3 -c "import json,sys; [print(m['executable']) for m in map(json.loads, sys.stdin) if m.get('reason') == 'compiler-artifact' and m.get('executable') and 'bench' in m['target']['kind']]")
  extra+=("bench-memory-old=$exe")
fi
PACK_BUILT=1 scripts/gpu-pack-keep.sh main cubeport bench-activation bench-attention bench-matmul bench-reduce bench-memory \
  example-attention_variants example-matmul_variants example-cmma_probe "${extra[@]}"
