#!/usr/bin/env bash
# s20-c: the parts of s19-a and s19-b (never run) that fit one call, on the binaries of 605bf81
# (s20's host-path commits; 9479be4's attention softmax, reverted since). Pack: scripts/gpu-pack.sh
# --tests (with the cubeport binary), the wgpu-spirv `main` test and `matmul` bench stripped into
# .gpu/bin as main-spirv and bench-matmul-spirv (s19-a's header), and fa567f6's bench-attention
# as .gpu/bin/bench-attention-old.
#  1. In parallel, before anything is timed: strict CUDA tests of attention (the new softmax,
#     attention_any_scale), norms, softmax and activations (launched through launch_shared!);
#     matmul_variants of the deeper cp.async pipelines against f64, every dtype.
#  2. Timed, one at a time: attention before / after 9479be4 and PyTorch SDPA; copy, norm and
#     softmax in every dtype; m = 32 / 64 f16 / bf16 matmuls, automatic vs deep pipelines vs
#     cuBLAS; small ops back to back against PyTorch (anchors_ops.py, `cubeport bench`).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=570 bash docs/bench-h200/s20-c/commands.sh
set -u
LIMIT=${LIMIT:-570}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_KERNEL_CACHE=off
DEEP=tc64x64x64_w2x2_a6_mma,tc64x64x64_w2x2_a8_mma,tc64x64x64_w2x2_a6_mma_split1,tc64x128x64_w2x2_a6_mma
mkdir -p "$OUT/t"
{
stamp
pids=""; i=0
for f in "cuda::attention" "cuda::norm" "cuda::softmax" "cuda::activation" "cuda::add"; do
  i=$((i+1)); CUBEPORT_STRICT=1 timeout 110 $M --test-threads 4 "$f" > "$OUT/t/$i.txt" 2>&1 & pids="$pids $!"
done
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$DEEP timeout 110 $B/example-matmul_variants > "$OUT/t/deep.txt" 2>&1 & pids="$pids $!"
wait $pids
for f in "$OUT"/t/[0-9]*.txt; do echo "## $(basename "$f" .txt): $(head -c 0 "$f")"; grep -E '^test result|FAILED|panicked|SKIP' "$f" | head -8; done
echo "## deep pipelines vs f64 (errors in units of tolerance; lines above 1e-4 shown)"
grep -vE ' = [0-9.]+e-(0[4-9]|[1-9][0-9])$' "$OUT/t/deep.txt" | head -30
echo "tests done at $(( $(date +%s) - start )) s"
} > "$OUT/tests.txt" 2>&1
for f in "$OUT"/t/*.txt; do echo "## $f"; grep -vE '^test .* ok$' "$f" | grep -v '^$' | head -30; done > "$OUT/tests-full.txt"
rm -rf "$OUT/t"
{
stamp
echo "##### attention before 9479be4 (fa567f6's kernel; automatic, f16)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 run 45 $B/bench-attention-old --bench 'attention/(causal_)?auto'
echo "##### attention now (tensor-core variants, f16 and bf16)"
CUBEPORT_BACKEND=cuda run 90 $B/bench-attention --bench 'attention/(causal_)?(auto|mma)'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 20 ] && timeout $(( l < 45 ? l : 45 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096|^[0-9]'
echo "##### copy, norm and softmax, every dtype (automatic)"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/(f32|f16|bf16)/'
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm,softmax CUBEPORT_NORM_SHAPES=16384x4096,4096x16384 \
  run 110 $B/bench-reduce --bench '(norm/[a-z_]*_auto|softmax/[a-z_]*auto)'
echo "##### m = 32 / 64 f16 / bf16: automatic, deep pipelines, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$DEEP CUBEPORT_BENCH_DTYPES=f16,bf16 \
  CUBEPORT_MATMUL_SIZES=32x4096x4096,64x4096x4096 CUBEPORT_PEER_SIZES=32x4096x4096,64x4096x4096 \
  run 70 $B/bench-matmul --bench 'matmul/(auto|tc|cublas)[^/]*/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
{
stamp
echo "=== torch"; l=$(left); [ "$l" -gt 20 ] && timeout 30 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
echo "=== cubeport bench cuda, activation family"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l - 5 )) $B/cubeport bench --backend cuda --family activation > "$OUT/host-bench.txt" 2>&1
echo "exit $?"; grep -E '^(op |launch)' "$OUT/host-bench.txt"
stamp
} > "$OUT/host.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
cat "$OUT/tests.txt" "$OUT/host.txt"; grep -cE 'time:' "$OUT/bench.txt"
