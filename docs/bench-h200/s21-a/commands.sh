#!/usr/bin/env bash
# s21-a: binaries of s21's first commit (HEAD 591290b + `--family` leaving out transfers, so
# `cubeport bench --family ops` times the small ops alone). Pack: /tmp recipe of s20-c's header
# (scripts/gpu-pack.sh --tests with the cubeport binary, plus the wgpu-spirv `main` test and
# `matmul` bench as main-spirv / bench-matmul-spirv).
#  1. Small ops back to back (issue 20, item 1): PyTorch, then `cubeport bench --family ops` on
#     CUDA and on wgpu-Vulkan, the same GPU.
#  2. ncu, full set, with per-SASS-instruction stall samples: rms / layer / add_rms norm in f16
#     and bf16 at 16384 x 4096 (why LayerNorm in halves trails the copy), and the automatic
#     attention kernel at f16 D128 (0.64x flash).
#  3. SPIR-V: f16 tc64x128x32_w2x2_p2 against the automatic (cmma) choice, CUDA's automatic.
#  4. With what is left, in parallel: strict CUDA attention and norm tests, strict wgpu-spirv
#     matmul tests.
#   source .gpu/prelude.sh && bash scripts/gpu-unpack.sh > /dev/null && LIMIT=560 bash docs/bench-h200/s21-a/commands.sh
set -u
LIMIT=${LIMIT:-560}
source docs/bench-h200/lib.sh
B=.gpu/bin; M=$B/main
export CUBEPORT_KERNEL_CACHE=off
{
stamp
echo "=== torch"; timeout 25 python3 scripts/anchors_ops.py 2>&1 | grep ' op '
for be in cuda wgpu; do
  echo "=== cubeport bench $be --family ops"
  l=$(left); [ "$l" -gt 15 ] && timeout 50 $B/cubeport bench --backend $be --family ops > "/tmp/host-$be.txt" 2>&1
  echo "exit $?"; grep -E '^(op |launch)|rror' "/tmp/host-$be.txt"
done
stamp
} > "$OUT/host.txt" 2>&1
cat "$OUT/host.txt"
# Per-instruction stall samples of an ncu report ($1), compressed (kernel names, SASS, samples).
sass_page() { ncu -i "$1.ncu-rep" --page source --csv --print-source sass 2>&1 | python3 -c "import sys,lzma; sys.stdout.buffer.write(lzma.compress(sys.stdin.buffer.read()))" > "$1-sass.csv.xz"; }
{
stamp
ncu --version | tail -1
for d in f16 bf16; do
  l=$(left); [ "$l" -gt 150 ] || break
  echo "##### norm $d: rms, layer, add+rms in build order"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096 CUBEPORT_BENCH_DTYPES=$d \
    timeout 80 ncu --clock-control none --set full -k regex:norm --launch-count 3 -f -o "$OUT/norm-$d" $B/bench-reduce --bench 'nothing-timed' > /dev/null 2>&1
  ncu -i "$OUT/norm-$d.ncu-rep" --page details 2>&1 | grep -E '^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Issued Ipc|No Eligible|Warp Cycles Per Issued|Executed Ipc'
  sass_page "$OUT/norm-$d"; rm -f "$OUT/norm-$d.ncu-rep"
done
l=$(left)
if [ "$l" -gt 150 ]; then
  echo "##### attention f16 D128 automatic"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_ATTENTION_SHAPES=4x32x4096x128 \
    timeout 100 ncu --clock-control none --set full -k regex:attention --launch-count 1 -f -o "$OUT/att" $B/bench-attention --bench 'nothing-timed' > /dev/null 2>&1
  ncu -i "$OUT/att.ncu-rep" --page details 2>&1 | grep -vE '^ *-+ *$' | head -220
  sass_page "$OUT/att"; rm -f "$OUT/att.ncu-rep"
fi
stamp
} > "$OUT/ncu.txt" 2>&1
{
stamp
echo "##### f16 matmul through SPIR-V: automatic (cmma), tc64x128x32_w2x2_p2; CUDA automatic"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2_p2 \
  CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 CUBEPORT_PEER_SIZES=4096x4096x4096 \
  run 80 $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 \
  CUBEPORT_PEER_SIZES=4096x4096x4096 run 30 $B/bench-matmul --bench 'matmul/auto[^/]*/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
mkdir -p "$OUT/t"
{
stamp
l=$(( $(left) - 10 ))
echo "tests get $l s"
pids=""
CUBEPORT_STRICT=1 timeout $l $M --test-threads 6 "cuda::attention" > "$OUT/t/attention.txt" 2>&1 & pids="$pids $!"
CUBEPORT_STRICT=1 timeout $l $M --test-threads 4 "cuda::norm" > "$OUT/t/norm.txt" 2>&1 & pids="$pids $!"
CUBEPORT_STRICT=1 CUBEPORT_BACKEND=wgpu timeout $l $B/main-spirv --test-threads 4 "wgpu::matmul" > "$OUT/t/spirv-matmul.txt" 2>&1 & pids="$pids $!"
wait $pids
for f in "$OUT"/t/*.txt; do echo "## $(basename "$f" .txt): $(grep -cE '^test .* ok$' "$f") ok"; grep -E '^test result|FAILED|panicked|SKIP|failed' "$f" | head -12; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/tests.txt"
cat "$OUT/ncu.txt" | head -120; cat "$OUT/bench.txt" "$OUT/tests.txt"
