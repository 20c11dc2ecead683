#!/usr/bin/env bash
# s24-b. s24-a's strict tests and sanitizers ran out of their 110 s side by side; here the
# strict CUDA tests of the changed attention kernel and of the few-column choice run alone
# (kernel cache on), then compute-sanitizer on every attention variant, then the halves
# few-column automatic choice as changed after s24-a (`narrow_plane` where 64 × 128 blocks
# under-fill the device) against cuBLAS. Issue 24: bf16 RMSNorm on long rows with 1024 units per
# row (32 registers offline) against the automatic 512 (40).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=440 bash docs/bench-h200/s24-b/commands.sh
set -u
LIMIT=${LIMIT:-440}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
{
stamp
CUBEPORT_STRICT=1 timeout 200 $M --test-threads 16 cuda::attention cuda::matmul_narrow > "$OUT/tests-full.txt" 2>&1
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
stamp
} > "$OUT/tests.txt" 2>&1
{
stamp
echo "##### bf16 RMSNorm at 4096x16384: automatic (512 units per row, 4 vectors each: 40 registers offline, so 3 cubes per SM) against plane1024 (2 vectors each: 32 registers, full occupancy); f16 as control; copy of the same size"
for d in bf16 f16; do
  echo "##### $d"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=$d CUBEPORT_NORM_SHAPES=4096x16384 CUBEPORT_NORM_VARIANTS=plane1024 \
    run 35 $B/bench-reduce --bench '(norm/rms_norm|copy/)'
done
stamp
} > "$OUT/norm.txt" 2>&1
S=4096x1x4096,4096x8x4096,16384x8x4096,4095x7x4093,4095x1x4093
{
echo "##### f16 few columns: automatic, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow_plane \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 45 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*[0-9a-z]|cublas)/'
stamp
} > "$OUT/matmul.txt" 2>&1
{
stamp
mkdir -p "$OUT/t"
l=$(left); t=$(( l - 10 )); [ "$t" -gt 30 ] || t=30
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda timeout $t compute-sanitizer --tool $tool $B/example-attention_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="${pids:-} $!"
done
wait $pids
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; echo "variant lines: $(grep -c ' ok$' "$OUT/t/san-$tool.txt"), not ok: $(grep -E 'tolerance' "$OUT/t/san-$tool.txt" | grep -vc ' ok$')"; tail -2 "$OUT/t/san-$tool.txt"; done
rm -rf "$OUT/t"
stamp
} > "$OUT/sanitizer.txt" 2>&1
kill $dog 2>/dev/null
tail -c 6000 "$OUT/tests.txt" "$OUT/norm.txt" "$OUT/matmul.txt" "$OUT/sanitizer.txt"; tail -c 3000 "$OUT/tests-full.txt"
