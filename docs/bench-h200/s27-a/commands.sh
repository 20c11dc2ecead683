#!/usr/bin/env bash
# s27-a (the plan of s26-c, which had no machine; the first H200 call since s25-a). Checks the
# changes made from s26-a/b: the attention plane skipping causal tiles wholly above its rows
# (3f89b2d, on main since 8f11a39, s29), the automatic 64-key tiles for causal D64, `narrow_mma`'s
# power-of-two planes, bf16 LayerNorm back at 512 units; issue 22's manual-MMA epilogue through
# shared memory (`_st`) at depth 128, where s26-b (H100) found every manual-MMA shape 1.5-1.9x
# slower than the WMMA tile. Strict tests (attention, norm, narrow_mma, every matmul variant
# against f64) with compute-sanitizer on the staged shapes beside them; then the H200 figures of
# issue 24's targets: attention f16 and bf16 against SDPA, every norm in every dtype.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=580 bash docs/bench-h200/s27-a/commands.sh
set -u
LIMIT=${LIMIT:-580}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
ST=tc128x128x32_w2x2_a2_mma_st,tc128x128x64_w2x2_a2_mma_st,tc128x128x64_w2x2_a3_mma_st,tc128x128x32_w4x2_a3_mma_st,tc64x128x32_w2x2_a4_mma_st
mkdir -p "$OUT/t"
{
stamp
CUBEPORT_STRICT=1 timeout 150 $M --test-threads 16 cuda::attention cuda::norm cuda::matmul_narrow_mma cuda::matmul_matches_reference cuda::matmul_plan_is_what_runs > "$OUT/tests-full.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$ST CUBEPORT_MATMUL_ONLY=1 timeout 140 compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; grep -c '_st' "$OUT/t/san-$tool.txt"; tail -3 "$OUT/t/san-$tool.txt"; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
{
stamp
echo "##### attention f16 and bf16, D128 and D64, automatic, causal and not"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 105 $B/bench-attention --bench 'attention/(causal_)?auto'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 40 ? l - 2 : 38 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) b?float16'
stamp
} > "$OUT/attention.txt" 2>&1
S=4096x4096x128,8192x8192x128
N=16384x8x4096,16384x16x4096,8192x8x8192
{
stamp
echo "##### copy (the roof's rate)"
CUBEPORT_BACKEND=cuda run 20 $B/bench-activation --bench 'copy/vec/.*/f32/'
echo "##### f16 depth 128: automatic, staged manual-MMA shapes, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$ST \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 80 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|auto[^/]*[^u]|cublas)/'
echo "##### f16 few columns: automatic (narrow_mma), cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=$N CUBEPORT_PEER_SIZES=$N \
  run 45 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*[0-9a-z]|cublas)/'
stamp
} > "$OUT/matmul.txt" 2>&1
{
stamp
echo "##### norms, every dtype, automatic; copy of the same size"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f32,f16,bf16 CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
  run 120 $B/bench-reduce --bench '(norm/[a-z_]*_auto|copy/)'
stamp
} > "$OUT/norm.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT/tests.txt"; tail -c 2500 "$OUT/attention.txt"
grep -E '^(matmul|copy|norm)/|time:' "$OUT/matmul.txt" "$OUT/norm.txt" | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | sed 's/^[a-z/]*.txt://' | paste -s -d' ' | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g; s/ norm/\nnorm/g'
