#!/usr/bin/env bash
# s31-a: issue 23's next steps and what s30 left. (1) `sc`: the register-staged kernel with its
# epilogue through per-plane scratch tiles (`_sc`, larger blocks under Vulkan's 48 KiB) against
# f64 through SPIR-V and on CUDA (under compute-sanitizer), then timed through SPIR-V against the
# automatic `tc128x128x16_w2x4_p4` and on CUDA. (2) `compiler`: WGSL against SPIR-V on the same
# Vulkan device, every memory-bound family (`cubeport bench`, the README's compiler decision).
# (3) `att`: the strict CUDA attention tests in f16/bf16 with time to compile (cut at 90 s in
# s27-c and s27-d). (4) `norms`: norms in halves against the copy (s27-c's part, never run).
# Pack: docs/bench-h200/s31-a/pack.sh.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s31-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin
SC=tc128x128x32_w2x4_sc,tc128x256x16_w2x4_sc,tc128x128x16_w2x4_sc
S=4096x4096x4096,8192x8192x8192
mkdir -p "$OUT/t"
sc() {
{
stamp
echo "##### _sc shapes against f64: SPIR-V; CUDA under memcheck / racecheck"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_MATMUL_ONLY=1 timeout 60 $B/example-matmul_variants-spirv > "$OUT/t/spirv.txt" 2>&1 & pids="$!"
for tool in memcheck racecheck; do
  CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_MATMUL_ONLY=1 timeout 90 compute-sanitizer --tool $tool $B/example-matmul_variants > "$OUT/t/san-$tool.txt" 2>&1 & pids="$pids $!"
done
wait $pids
echo "## SPIR-V: $(grep -c '_sc' "$OUT/t/spirv.txt") rows"; grep -E 'FAIL|panick|rror' "$OUT/t/spirv.txt" | head -5; grep '_sc' "$OUT/t/spirv.txt" | sort -t= -k2 -g | tail -2
for tool in memcheck racecheck; do echo "## $tool: $(grep -c '_sc' "$OUT/t/san-$tool.txt") rows"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAIL|panick' "$OUT/t/san-$tool.txt" | head -4; done
echo "##### f16 through SPIR-V: automatic, _sc shapes"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 100 $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
echo "##### f16 on CUDA: automatic, _sc shapes"
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=$SC CUBEPORT_BENCH_DTYPES=f16 \
  CUBEPORT_MATMUL_SIZES=$S CUBEPORT_PEER_SIZES=$S run 50 $B/bench-matmul --bench 'matmul/(auto|tc)[^/]*/cuda/'
stamp
} > "$OUT/sc.txt" 2>&1
}
compiler() {
{
stamp
F=activation,reduce,transpose,histogram
for v in cubeport cubeport-spirv; do
  echo "##### $v bench --backend wgpu --family $F"
  l=$(left); [ "$l" -gt 40 ] && timeout $(( l < 100 ? l - 5 : 95 )) $B/$v bench --backend wgpu --family $F --json "$OUT/compiler-$v.json" 2>&1 | grep -vE '^\s*$' | tail -40
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
norms() {
{
stamp
CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_BENCH_DTYPES=f16,bf16 CUBEPORT_NORM_SHAPES=4096x16384,16384x4096 \
  run 80 $B/bench-reduce --bench '(norm/[a-z_]*_auto|copy/)'
stamp
} > "$OUT/norm.txt" 2>&1
}
for part in ${ORDER:-sc compiler att norms}; do "$part"; done
rm -rf "$OUT/t"
kill $dog 2>/dev/null
for f in sc compiler att norm; do [ -f "$OUT/$f.txt" ] && grep -vE '^\s+(change|thrpt|Found|[0-9]+ \()' "$OUT/$f.txt" | sed -E 's/ +time: +\[([^ ]+ [^ ]+) ([^ ]+ [^ ]+) .*/ time \2/' | head -120; done
