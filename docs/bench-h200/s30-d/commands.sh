#!/usr/bin/env bash
# s30-d (issue 23): the automatic choices of 24ae100 in one call. Through SPIR-V: the new
# register-staged shape (tc128x128x16_w2x4_p4) against f64, the automatic f16/bf16 matmul
# (that shape or tc64x128x32_w2x2_p2 by size; cmma forced as the anchor of before), the strict
# wgpu suite; on CUDA: the new shape against f64 under memcheck and racecheck, and the
# automatic f16 choice as the same-call anchor; the histogram with its per-backend batch (8 on
# wgpu, 4 on CUDA) and the copies. Pack: docs/bench-h200/s30-a/pack.sh.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=420 bash docs/bench-h200/s30-d/commands.sh
# (short slot: LIMIT=220 CHECK_S=80 S=1024x1024x1024,4096x4096x4096)
set -u
LIMIT=${LIMIT:-420}
source docs/bench-h200/lib.sh
B=.gpu/bin
# CHECK_S: seconds for the checks (run side by side); S: the matmul sizes timed.
CHECK_S=${CHECK_S:-110}
NEW=tc128x128x16_w2x4_p4
mkdir -p "$OUT/t"
{
stamp
echo "##### against f64: SPIR-V (new shape and the automatic choice), CUDA under memcheck and racecheck, strict wgpu suite (SPIR-V)"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_VARIANTS=$NEW CUBEPORT_MATMUL_ONLY=1 timeout $(( CHECK_S - 10 )) $B/example-matmul_variants-spirv > "$OUT/t/spirv-variants.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$NEW,tc64x128x32_w2x2_p2_v4 CUBEPORT_MATMUL_ONLY=1 timeout $CHECK_S compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
CUBEPORT_STRICT=1 timeout $CHECK_S $B/main-spirv --test-threads 8 wgpu:: > "$OUT/tests-spirv.txt" 2>&1 & pids="$pids $!"
wait $pids
echo "## SPIR-V $NEW: $(grep -c "$NEW" "$OUT/t/spirv-variants.txt") rows"; grep -E "FAIL|panick|rror" "$OUT/t/spirv-variants.txt" | head -5; grep "$NEW" "$OUT/t/spirv-variants.txt" | sort -t= -k2 -g | tail -3
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -4; echo "$(grep -cE "$NEW|_v4" "$OUT/t/san-$tool.txt") rows"; grep -E "FAIL|panick" "$OUT/t/san-$tool.txt" | head -3; done
echo "## strict SPIR-V suite: $(grep -cE '^test .* ok$' "$OUT/tests-spirv.txt") ok"; grep -E '^test result|FAILED|panicked|SKIP' "$OUT/tests-spirv.txt" | head -12
stamp
} > "$OUT/checks.txt" 2>&1
rm -rf "$OUT/t"
{
stamp
S=${S:-1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,3000x2500x2000}
echo "##### f16/bf16 through SPIR-V: automatic, cmma forced"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=cmma CUBEPORT_BENCH_DTYPES=f16,bf16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=4096x4096x4096 run 150 $B/bench-matmul-spirv --bench 'matmul/(auto|cmma)[^/]*/wgpu/'
echo "##### f16 on CUDA: automatic, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=$S \
  CUBEPORT_PEER_SIZES=$S run 60 $B/bench-matmul --bench 'matmul/(auto|cublas)[^/]*/cuda/'
for be in wgpu cuda; do
  echo "##### histogram $be (its own batch), copy"
  CUBEPORT_BACKEND=$be CUBEPORT_BENCH_FAMILIES=histogram run 40 $B/bench-memory --bench '(histogram/auto|copy/)'
done
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
cat "$OUT/checks.txt"
grep -hE '^(matmul|copy|histogram)/|time:|^#####|SKIP|rror|panick|not timed' "$OUT/bench.txt" \
  | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | paste -s -d' ' \
  | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g; s/ histogram/\nhistogram/g; s/ #####/\n#####/g'
