#!/usr/bin/env bash
# s21-a: binaries of 4141eda (HEAD 591290b + `--family` leaving out transfers, so `cubeport bench
# --family ops` times the small ops alone), plus bench-reduce-new and example-norm_variants built
# from the working tree with s21's lean norm kernel (f16 sums unscaled, FMA forms, plain sums
# where the arithmetic keeps NaN). Pack: scripts/gpu-pack.sh --tests with the cubeport binary,
# plus the wgpu-spirv `main` test and `matmul` bench as main-spirv / bench-matmul-spirv.
#  1. Small ops back to back (issue 20, item 1): PyTorch, then `cubeport bench --family ops` on
#     CUDA and on wgpu-Vulkan, the same GPU.
#  2. Norms: the new kernel against f64 (norm_variants), then copy and norm old vs new, every
#     dtype, 16384 x 4096 and 4096 x 16384.
#  3. ncu, full set, with per-SASS-instruction stall samples: the new norm kernels in f16 and
#     bf16, and the automatic attention kernel at f16 D128 (0.64x flash).
#  4. With what is left: strict CUDA attention tests; SPIR-V f16 tc64x128x32_w2x2_p2 speed.
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
{
stamp
echo "##### new norm kernel against f64 (64 x 4096 and 3 x 65536, every dtype)"
CUBEPORT_BACKEND=cuda timeout 40 $B/example-norm_variants 2>&1 | tail -12
CUBEPORT_BACKEND=cuda CUBEPORT_NORM_SHAPE=3x65536 timeout 30 $B/example-norm_variants 2>&1 | tail -12
echo "##### copy"
CUBEPORT_BACKEND=cuda run 25 $B/bench-activation --bench 'copy/vec/.*/(f32|f16|bf16)/'
for v in old new; do
  bin=$B/bench-reduce; [ $v = new ] && bin=$B/bench-reduce-new
  echo "##### norm, $v kernel"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096,4096x16384 \
    run 75 $bin --bench 'norm/[a-z_]*_auto'
done
stamp
} > "$OUT/norm.txt" 2>&1
# Per-instruction stall samples of an ncu report ($1), compressed (kernel names, SASS, samples).
sass_page() { ncu -i "$1.ncu-rep" --page source --csv --print-source sass 2>&1 | python3 -c "import sys,lzma; sys.stdout.buffer.write(lzma.compress(sys.stdin.buffer.read()))" > "$1-sass.csv.xz"; }
{
stamp
ncu --version | tail -1
for d in f16 bf16; do
  l=$(left); [ "$l" -gt 150 ] || break
  echo "##### norm $d (new kernel): rms, layer, add+rms in build order"
  CUBEPORT_BACKEND=cuda CUBEPORT_BENCH_FAMILIES=norm CUBEPORT_NORM_SHAPES=16384x4096 CUBEPORT_BENCH_DTYPES=$d \
    timeout 80 ncu --clock-control none --set full -k regex:norm --launch-count 3 -f -o "$OUT/norm-$d" $B/bench-reduce-new --bench 'nothing-timed' > /dev/null 2>&1
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
mkdir -p "$OUT/t"
{
stamp
l=$(( $(left) - 100 ))
echo "attention tests get $l s"
[ "$l" -gt 30 ] && CUBEPORT_STRICT=1 timeout $l $M --test-threads 12 "cuda::attention" > "$OUT/t/attention.txt" 2>&1
for f in "$OUT"/t/*.txt; do echo "## $(basename "$f" .txt): $(grep -cE '^test .* ok$' "$f") ok"; grep -E '^test result|FAILED|panicked|SKIP|failed' "$f" | head -12; done
stamp
} > "$OUT/tests.txt" 2>&1
rm -rf "$OUT/t"
{
stamp
echo "##### f16 matmul through SPIR-V: automatic (cmma), tc64x128x32_w2x2_p2; CUDA automatic"
CUBEPORT_BACKEND=wgpu CUBEPORT_MATMUL_ONLY=1 CUBEPORT_MATMUL_VARIANTS=tc64x128x32_w2x2_p2 \
  CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096 CUBEPORT_PEER_SIZES=4096x4096x4096 \
  run 70 $B/bench-matmul-spirv --bench 'matmul/(auto|tc)[^/]*/wgpu/'
CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f16 CUBEPORT_MATMUL_SIZES=4096x4096x4096 \
  CUBEPORT_PEER_SIZES=4096x4096x4096 run 25 $B/bench-matmul --bench 'matmul/auto[^/]*/cuda/'
stamp
} > "$OUT/bench.txt" 2>&1
kill $dog 2>/dev/null
echo "end at $(( $(date +%s) - start )) s" >> "$OUT/bench.txt"
cat "$OUT/norm.txt"; grep -E 'Duration|Throughput|Occupancy|Issued Ipc|No Eligible|Warp Cycles|#####' "$OUT/ncu.txt" | head -60; cat "$OUT/tests.txt" "$OUT/bench.txt"
