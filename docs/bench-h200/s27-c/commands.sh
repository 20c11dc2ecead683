#!/usr/bin/env bash
# s27-c: s27-a cut to one call (device time for one start was left after failed starts).
# Strict CUDA attention tests (the plane skipping causal tiles above its rows, 3f89b2d, on
# main since 8f11a39; run in s29 on an H100, logs/) with compute-sanitizer on two
# staged-epilogue matmul shapes (`_st`, also checked against f64 by the example) beside them;
# attention f16 and bf16 against SDPA; norms in every dtype (f32 added in s29) against the
# copy; f16 depth 128 with the `_st` shapes against cuBLAS; wgpu transfers (uploads of 8 MiB and more in 1 MiB pieces since
# 9b9fe98); histograms with batched loads (c62ceed) against the kernel before on wgpu and CUDA,
# and the cooperative-matrix probe streaming from L2 and DRAM on CUDA and SPIR-V (both s29).
# Pack: docs/bench-h200/s27-c/pack.sh.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=580 bash docs/bench-h200/s27-c/commands.sh
# (order: tests, attention, norms, wgpu transfers, depth 128, histograms, probe, or ORDER="…";
# each part cut to what is left)
set -u
LIMIT=${LIMIT:-480}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
ST=tc128x128x64_w2x2_a3_mma_st,tc128x128x32_w2x2_a2_mma_st
S=4096x4096x128,8192x8192x128
mkdir -p "$OUT/t"
tests() {
{
stamp
CUBEPORT_STRICT=1 timeout ${TEST_S:-130} $M --test-threads 16 cuda::attention > "$OUT/tests-full.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$ST CUBEPORT_MATMUL_ONLY=1 timeout $(( ${TEST_S:-130} - 2 )) compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## strict CUDA attention tests: $(grep -cE '^test .* ok$' "$OUT/tests-full.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP|failures' "$OUT/tests-full.txt" | head -20
for tool in memcheck racecheck; do echo "## $tool"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid' "$OUT/t/san-$tool.txt" | head -6; grep -E '_st' "$OUT/t/san-$tool.txt" | head -12; tail -2 "$OUT/t/san-$tool.txt"; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
}
attention() {
{
stamp
echo "##### attention f16 and bf16, D128 and D64, automatic, causal and not"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=${ATT_DTYPES:-f16,bf16} CUBEPORT_ATTENTION_SHAPES=4x32x4096x128,4x32x4096x64 \
  run 90 $B/bench-attention --bench 'attention/(causal_)?auto'
echo "##### PyTorch SDPA (same call)"
l=$(left); [ "$l" -gt 15 ] && timeout $(( l < 40 ? l - 2 : 38 )) python3 .gpu/anchors_beyond.py 2>&1 | grep -E 'sdpa_(flash|efficient|cudnn) B4 H32 S4096 D(128|64) b?float16'
stamp
} > "$OUT/attention.txt" 2>&1
}
norms() {
{
stamp
echo "##### norms f32 / f16 / bf16, automatic; copy of the same size (every dtype in one H200 call, s29)"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f32,f16,bf16 CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
  run 95 $B/bench-reduce --bench '(norm/[a-z_]*_auto|copy/)'
stamp
} > "$OUT/norm.txt" 2>&1
}
host() {
{
stamp
echo "=== cubeport bench wgpu --family transfers (and ops)"
l=$(left); [ "$l" -gt 20 ] && timeout $(( l < 75 ? l - 5 : 70 )) $B/cubeport bench --backend wgpu --family transfers 2>&1 | grep -E '^(op |launch|transfer|overlap|wall)|rror'
stamp
} > "$OUT/host.txt" 2>&1
}
depth128() {
{
stamp
echo "##### f16 depth 128: automatic, staged manual-MMA shapes, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$ST \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 70 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|auto[^/]*[^u]|cublas)/'
stamp
} > "$OUT/bench.txt" 2>&1
}
hist() {
{
stamp
# Issue 23 (added s29): histograms with 4 loads per unit before the atomics (c62ceed) against
# the kernel before (bench-memory-old), on wgpu-Vulkan, with CUDA and the copies in the call.
F='(histogram/auto|copy/)'
for v in "wgpu bench-memory" "wgpu bench-memory-old" "cuda bench-memory"; do
  set -- $v; echo "##### $1 $2"
  [ -x "$B/$2" ] && CUBEPORT_BACKEND=$1 CUBEPORT_BENCH_FAMILIES=histogram run 45 "$B/$2" --bench "$F"
done
stamp
} > "$OUT/hist.txt" 2>&1
}
probe() {
{
stamp
# Issue 23 (added s29): the staged probe reading operands from L2 and DRAM instead of a 1 KiB
# source, on CUDA (WMMA) and on Vulkan (SPIR-V cooperative matrices), same process order.
echo "##### cooperative-matrix probe: CUDA, then wgpu-spirv"
for p in "cuda example-cmma_probe" "wgpu example-cmma_probe-spirv"; do
  set -- $p; l=$(left)
  [ "$l" -gt 25 ] && [ -x "$B/$2" ] && CUBEPORT_BACKEND=$1 timeout $(( l < 50 ? l - 3 : 47 )) "$B/$2" 2>&1 | grep -E '^(mma_only|shared|staged|streamed)|FAIL|rror|SKIP'
done
stamp
} > "$OUT/probe.txt" 2>&1
}
# Priority order for a short call: ORDER="tests attention hist probe norms depth128 host".
for part in ${ORDER:-tests attention norms host depth128 hist probe}; do "$part"; done
kill $dog 2>/dev/null
cat "$OUT/tests.txt" 2>/dev/null; tail -c 2500 "$OUT/attention.txt" 2>/dev/null
grep -hE '^(matmul|copy|norm|histogram)/|time:|^#####' "$OUT/norm.txt" "$OUT/bench.txt" "$OUT/hist.txt" 2>/dev/null | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ \2/' | paste -s -d' ' | sed 's/ matmul/\nmatmul/g; s/ copy/\ncopy/g; s/ norm/\nnorm/g; s/ histogram/\nhistogram/g; s/ #####/\n#####/g'
cat "$OUT/host.txt" "$OUT/probe.txt" 2>/dev/null
