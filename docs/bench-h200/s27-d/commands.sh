#!/usr/bin/env bash
# s27-d: correctness only, for the device time left after failed starts (about 100 s of
# command): every attention variant on CUDA against f64 (the plane skipping causal tiles above
# its rows, 3f89b2d, on main since 8f11a39, is in every causal MMA shape), the strict CUDA
# attention reference and edge-row tests (automatic choice, causal with Sq != Sk, ragged), and
# the two staged-epilogue matmul shapes (`_st`) against f64 in every dtype; three processes at
# once (each its own CUDA context and JIT).
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=100 bash docs/bench-h200/s27-d/commands.sh
set -u
LIMIT=${LIMIT:-100}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
T=$(( LIMIT - 10 ))
stamp > "$OUT/checks.txt"
CUBEPORT_BACKEND=cuda timeout $T $B/example-attention_variants > "$OUT/att-variants.txt" 2>&1 & pids="$!"
CUBEPORT_STRICT=1 timeout $T $M --test-threads 8 cuda::attention_matches_reference cuda::attention_edge_rows > "$OUT/tests-full.txt" 2>&1 & pids="$pids $!"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=tc128x128x64_w2x2_a3_mma_st,tc128x128x32_w2x2_a2_mma_st CUBEPORT_MATMUL_ONLY=1 \
  timeout $T $B/example-matmul_variants > "$OUT/mm-variants.txt" 2>&1 & pids="$pids $!"
wait $pids
{
echo "## attention variants: $(grep -c 'tolerance ok' "$OUT/att-variants.txt") ok, $(grep -c 'FAILED' "$OUT/att-variants.txt") FAILED"
grep -E 'FAILED|panicked|variant runs' "$OUT/att-variants.txt" | head -10; tail -2 "$OUT/att-variants.txt"
echo "## strict CUDA attention tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP' "$OUT/tests-full.txt" | head -10
echo "## _st matmul shapes against f64"
grep -E '_st|FAILED|panicked' "$OUT/mm-variants.txt" | head -12; tail -2 "$OUT/mm-variants.txt"
stamp
} >> "$OUT/checks.txt"
kill $dog 2>/dev/null
cat "$OUT/checks.txt"
