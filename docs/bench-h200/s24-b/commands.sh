#!/usr/bin/env bash
# s24-b. s24-a's strict tests and sanitizers ran out of their 110 s side by side; here the
# strict CUDA tests of the changed attention kernel and of the few-column choice run alone
# (kernel cache on), then compute-sanitizer on every attention variant, then the halves
# few-column automatic choice as changed after s24-a (`narrow_plane` where 64 × 128 blocks
# under-fill the device) against cuBLAS.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=480 bash docs/bench-h200/s24-b/commands.sh
set -u
LIMIT=${LIMIT:-480}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
{
stamp
CUBEPORT_STRICT=1 timeout 250 $M --test-threads 16 cuda::attention cuda::matmul_narrow > "$OUT/tests-full.txt" 2>&1
echo "## strict CUDA tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
stamp
mkdir -p "$OUT/t"
l=$(left); t=$(( l > 170 ? 150 : l - 20 ))
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda timeout $t compute-sanitizer --tool $tool $B/example-attention_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="${pids:-} $!"
done
wait $pids
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; echo "variant lines: $(grep -c ' ok$' "$OUT/t/san-$tool.txt"), not ok: $(grep -E 'tolerance' "$OUT/t/san-$tool.txt" | grep -vc ' ok$')"; tail -2 "$OUT/t/san-$tool.txt"; done
rm -rf "$OUT/t"
stamp
} > "$OUT/tests.txt" 2>&1
S=4096x1x4096,4096x8x4096,16384x8x4096,4095x7x4093,4095x1x4093
{
echo "##### f16 few columns: automatic, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=narrow_plane \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 45 $B/bench-matmul --bench 'matmul/(auto_[a-z0-9_]*[0-9a-z]|cublas)/'
stamp
} > "$OUT/matmul.txt" 2>&1
kill $dog 2>/dev/null
tail -c 6000 "$OUT/tests.txt" "$OUT/matmul.txt"; tail -c 3000 "$OUT/tests-full.txt"
