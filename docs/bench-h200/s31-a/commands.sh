#!/usr/bin/env bash
# s31-a: issue 23's next steps and what s30 left. (1) `sc`: the register-staged kernel with its
# epilogue through per-plane scratch tiles (`_sc`, larger blocks under Vulkan's 48 KiB) against
# f64 through SPIR-V and on CUDA (under compute-sanitizer), then timed through SPIR-V against the
# automatic `tc128x128x16_w2x4_p4` and on CUDA. (2) `compiler`: WGSL against SPIR-V on the same
# Vulkan device, every memory-bound family (`cubeport bench`, the README's compiler decision).
# (3) `attention` (added in s31): f16/bf16 against SDPA in the same call (H200 figures for
# issue 24). (3b) `att`: the strict CUDA attention tests in f16/bf16 with time to compile (cut at 90 s in
# s27-c and s27-d). (4) `norms`: norms in halves against the copy (s27-c's part, never run).
# (5) `depth128` (added in s31): s27-c's f16 depth-128 part. (6) `decode` (s31): m = 1-64 rows.
# (7) `f32mm` (s31): f32 matmul through WGSL, SPIR-V and CUDA. (8) `spirvsuite` (s31): the
# main job and the strict wgpu suite through SPIR-V. Added in s32 (the plan first ran then):
# (9) `attsan`: compute-sanitizer on the attention and norm examples (issue 24); (10) `i22`:
# issue 22's closing figures, every shape class against cuBLAS, then `cubeport bench --family
# matmul`. Added in s33: (11) `userloop`: issue 23's host-vs-device matmul anomaly
# (examples/user_loop through WGSL, SPIR-V and CUDA; needs a pack of s33 or later).
# Pack: docs/bench-h200/s31-a/pack.sh (ORDER picks parts, e.g. ORDER="attention norms att").
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s31-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin
SC=${SC:-tc128x128x32_w2x4_sc,tc128x256x16_w2x4_sc,tc128x128x16_w2x4_sc,tc128x128x32_w2x2_sc,tc256x128x16_w4x2_sc,tc128x128x32_w2x4_sc_r2,tc128x128x16_w2x4_p4_r2,tc128x256x16_w2x4_sc_r2}
# Under compute-sanitizer: the new options only (the whole list takes too long there).
SAN=tc128x128x32_w2x4_sc,tc128x128x32_w2x4_sc_r2,tc128x256x16_w2x4_sc_r2
S=${S:-4096x4096x4096,8192x8192x8192}
mkdir -p "$OUT/t"
sc() {
{
stamp
echo "##### _sc shapes against f64: SPIR-V; CUDA under memcheck / racecheck"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_MATMUL_ONLY=1 timeout 85 $B/example-matmul_variants-spirv > "$OUT/t/spirv.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$SAN CUBEPORT_MATMUL_ONLY=1 timeout 90 compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## SPIR-V: $(grep -cE '_sc|_r2' "$OUT/t/spirv.txt") rows"; grep -E 'FAIL|panick|rror' "$OUT/t/spirv.txt" | head -5; grep -E '_sc|_r2' "$OUT/t/spirv.txt" | sort -t= -k2 -g | tail -2
for tool in memcheck racecheck; do echo "## $tool: $(grep -cE '_sc|_r2' "$OUT/t/san-$tool.txt") rows"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAIL|panick' "$OUT/t/san-$tool.txt" | head -4; done
timing 150 70
stamp
} > "$OUT/sc.txt" 2>&1
}
# `timing SPIRV_S CUDA_S`: f16 through SPIR-V and on CUDA, the automatic choice and $SC.
timing() {
echo "##### f16 through SPIR-V: automatic, $SC"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run "$1" $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
echo "##### f16 on CUDA: automatic, $SC"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run "$2" $B/bench-matmul --bench 'matmul/(auto|tc)[^/]*/cuda/'
}
# `sc` without the example and the sanitizers, for a short slot (each bench case is checked
# against the reference before it is timed).
sclite() {
{
stamp
timing 130 60
stamp
} > "$OUT/sc.txt" 2>&1
}
compiler() {
{
stamp
F=activation,reduce,transpose,histogram
for v in cubeport cubeport-spirv; do
  echo "##### $v bench --backend wgpu --family $F"
  l=$(left); [ "$l" -gt 40 ] && timeout $(( l < 125 ? l - 5 : 120 )) $B/$v bench --backend wgpu --family $F --json "$OUT/compiler-$v.json" 2>&1 | grep -vE '^\s*$' | tail -40
done
stamp
} > "$OUT/compiler.txt" 2>&1
}
att() {
{
stamp
CUBEPORT_STRICT=1 timeout 200 $B/main --test-threads 16 cuda::attention > "$OUT/t/att.txt" 2>&1
echo "## strict CUDA attention tests: $(grep -cE '^test .* ok$' "$OUT/t/att.txt") ok"
grep -E '^test result|FAILED|panicked|SKIP' "$OUT/t/att.txt" | head -12
stamp
} > "$OUT/att.txt" 2>&1
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
# `attsan` (added in s32): compute-sanitizer memcheck and racecheck on every attention variant
# (the kernel changed since the last sanitizer run, s24-b, with 3f89b2d's causal skip) and on the
# norm kernels at 37 x 4099 (ragged), four processes side by side.
attsan() {
{
stamp
t=$(left); t=$(( t < 110 ? t - 5 : 105 )); pids=""
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda timeout $t compute-sanitizer --tool $tool $B/example-attention_variants > "$OUT/t/att-$tool.txt" 2>&1 & pids="$pids $!"
  CUBEPORT_BACKEND=cuda CUBEPORT_NORM_SHAPE=37x4099 timeout $t compute-sanitizer --tool $tool $B/example-norm_variants > "$OUT/t/norm-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
for f in att-memcheck att-racecheck norm-memcheck norm-racecheck; do
  echo "## $f: $(grep -cE ' ok$|tolerance = ' "$OUT/t/$f.txt") checked lines, $(grep -cE 'FAILED' "$OUT/t/$f.txt") failed"
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|panick' "$OUT/t/$f.txt" | sort | uniq -c | head -6; tail -1 "$OUT/t/$f.txt"
done
stamp
} > "$OUT/attsan.txt" 2>&1
}
# `i22` (added in s32): issue 22's closing figures in one call, every shape class against cuBLAS
# at that shape in the same process: decode rows, few columns, ragged and its aligned neighbour,
# mid sizes, depth 128, batched (strided-batched cuBLAS), the LLM projections in halves; then
# `cubeport bench --family matmul` (cuBLAS at every point, the shape sweep, its plot) with what
# is left.
i22() {
{
stamp
Z=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,4096x8x4096,16384x8x4096,4095x7x4093,4095x4097x4093,4096x4096x4096,512x512x512,1000x1000x1000,1024x1024x1024,2048x2048x2048,4096x4096x128
echo "##### every dtype: decode, few columns, ragged, mid, depth 128, batched; automatic and cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$Z CUBEPORT_PEER_SIZES=$Z \
  CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,64x128x2048x2048 run 230 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/'
echo "##### LLM projections, halves: automatic and cuBLAS"
L=8192x4096x14336,8192x14336x4096,8192x128256x4096
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_SIZES=$L CUBEPORT_PEER_SIZES=$L \
  run 110 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/'
echo "##### cubeport bench --backend cuda --family matmul"
l=$(left)
if [ "$l" -gt 40 ]; then
  timeout $(( l - 5 )) $B/cubeport bench --backend cuda --family matmul --json "$OUT/bench-matmul.json" --plots "$OUT/t/plots" > "$OUT/t/bench-matmul.txt" 2>&1
  echo "exit $?"; grep -vE '^\s*$' "$OUT/t/bench-matmul.txt" | tail -70
  cp "$OUT"/t/plots/matmul-shapes-*.svg "$OUT"/t/plots/throughput-*.svg "$OUT/" 2>/dev/null; ls "$OUT/t/plots" 2>/dev/null | head
else
  echo "(skipped: $l s left)"
fi
stamp
} > "$OUT/i22.txt" 2>&1
}
norms() {
{
stamp
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=${NORM_DTYPES:-f32,f16,bf16} CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
  run 95 $B/bench-reduce --bench '(norm/[a-z_]*_auto|copy/)'
stamp
} > "$OUT/norm.txt" 2>&1
}
depth128() {
{
stamp
# s27-c's part that never ran (no time left): f16 depth 128, the staged manual-MMA epilogue
# shapes (`_st`) against cuBLAS, and those shapes under compute-sanitizer.
ST=tc128x128x64_w2x2_a3_mma_st,tc128x128x32_w2x2_a2_mma_st
D=4096x4096x128,8192x8192x128
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$ST CUBEPORT_MATMUL_ONLY=1 timeout 60 compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/st-$tool.txt" 2>&1 & pids="$!"
  wait $pids
  echo "## $tool: $(grep -c '_st' "$OUT/t/st-$tool.txt") rows"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAIL|panick' "$OUT/t/st-$tool.txt" | head -4
done
echo "##### f16 depth 128: automatic, staged manual-MMA shapes, cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$ST \
  CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D CUBEPORT_MATMUL_BATCHED=32x2048x2048x128,32x128x2048x2048 \
  run 90 $B/bench-matmul --bench 'matmul/(tc[a-z0-9_]*|auto[^/]*[^u]|cublas)/'
stamp
} > "$OUT/depth.txt" 2>&1
}
spirvsuite() {
{
stamp
# Issue 23 item 3 (added in s31): the main job and the strict wgpu suite through SPIR-V on
# NVIDIA's Vulkan driver (the suite was cut at 90 s in s30-d: the driver's first compiles).
echo "##### main job through SPIR-V: cubeport-spirv check --backend wgpu"
l=$(left); [ "$l" -gt 40 ] && { timeout $(( l < 130 ? l - 5 : 125 )) $B/cubeport-spirv check --backend wgpu > "$OUT/t/check-spirv.txt" 2>&1; echo "exit $?"; }
grep -cE ' ok ' "$OUT/t/check-spirv.txt"; grep -E 'FAIL|rror|panick' "$OUT/t/check-spirv.txt" | head -5; tail -2 "$OUT/t/check-spirv.txt"
cp "$OUT/t/check-spirv.txt" "$OUT/check-spirv.txt"
echo "##### strict wgpu suite through SPIR-V"
l=$(left); [ "$l" -gt 40 ] && CUBEPORT_STRICT=1 timeout $(( l - 5 < ${SUITE_S:-300} ? l - 5 : ${SUITE_S:-300} )) $B/main-spirv --test-threads 16 wgpu:: > "$OUT/t/suite.txt" 2>&1
echo "## ok $(grep -cE '^test .* ok$' "$OUT/t/suite.txt"), failed $(grep -cE '^test .* FAILED$' "$OUT/t/suite.txt"), of $(grep -oE 'running [0-9]+ tests' "$OUT/t/suite.txt" | head -1)"
grep -E '^test result|FAILED|panicked' "$OUT/t/suite.txt" | head -12
stamp
} > "$OUT/spirvsuite.txt" 2>&1
}
f32mm() {
{
stamp
# Issue 23 item 2 (added in s31): f32 matmul, automatic, through WGSL, through SPIR-V and on
# CUDA in one call, aligned and ragged (the compiler decision needs it too).
F=1024x1024x1024,4096x4096x4096,8192x8192x8192,3000x2500x2000
for v in "wgpu bench-matmul" "wgpu bench-matmul-spirv" "cuda bench-matmul"; do
  set -- $v; echo "##### f32 $1 $2"
  CUBEPORT_BACKEND=$1 CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_ONLY=1 \
    CUBEPORT_MATMUL_SIZES=$F CUBEPORT_PEER_SIZES=$F run 60 "$B/$2" --bench "matmul/auto[^/]*/$1/"
done
stamp
} > "$OUT/f32mm.txt" 2>&1
}
decode() {
{
stamp
# Issue 22 (added in s31): decode shapes again since the host path lost its per-op flush (the
# 13-18 us floor of halves at 1-32 rows was put down to two launches' host cost in s17).
D=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096
echo "##### m x 4096 x 4096, automatic and cuBLAS"
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=${DEC_DTYPES:-f16,bf16,f32} CUBEPORT_MATMUL_ONLY=1 \
  CUBEPORT_MATMUL_SIZES=$D CUBEPORT_PEER_SIZES=$D run 110 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|cublas)/'
echo "##### f16 64 x 4096 x 4096: split manual-MMA shapes (automatic tc64x64x64_w2x2_a3_mma_split1)"
V=tc64x64x64_w2x2_a3_mma_split2,tc64x64x64_w2x2_a4_mma_split2,tc64x128x64_w2x2_a3_mma_split2,tc64x128x64_w2x2_a4_mma_split4,tc32x128x64_w1x4_a3_mma_split2,tc64x64x64_w2x2_a3_mma_split4
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$V \
  CUBEPORT_MATMUL_SIZES=64x4096x4096 run 60 $B/bench-matmul --bench 'matmul/(auto[^/]*[^u]|tc[a-z0-9_]*)/'
stamp
} > "$OUT/decode.txt" 2>&1
}
userloop() {
{
stamp
# Issue 23's first timing anomaly (added in s33): a WGSL f32 4096³ matmul took 19 ms per call
# host-timed against 4.7 ms by the device timers. examples/user_loop times the first call
# (compile), owned and preallocated loops and the device timer in one process per build; the
# kernel cache is off so each first call compiles.
for v in "wgpu example-user_loop" "wgpu example-user_loop-spirv" "cuda example-user_loop"; do
  set -- $v; echo "##### $1 $2"
  l=$(left); [ "$l" -gt 25 ] && CUBEPORT_BACKEND=$1 SHAPE=${UL_SHAPE:-4096x4096x4096} DTYPE=f32 CUBEPORT_KERNEL_CACHE=off \
    timeout $(( l < 65 ? l - 5 : 60 )) $B/$2 2>&1 | tail -7
done
stamp
} > "$OUT/userloop.txt" 2>&1
}
for part in ${ORDER:-sc compiler att norms}; do "$part"; done
rm -rf "$OUT/t"
kill $dog 2>/dev/null
for f in sc compiler f32mm userloop spirvsuite attention attsan att norm depth decode i22; do [ -f "$OUT/$f.txt" ] && grep -vE '^\s+(change|thrpt|Found|[0-9]+ \()' "$OUT/$f.txt" | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ time \2/' | head -200; done
