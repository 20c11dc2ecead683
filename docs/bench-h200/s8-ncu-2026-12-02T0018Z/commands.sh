#!/usr/bin/env bash
# Session 8, call 1: f32 runtime-one A/B (same binary, one process each) + ncu of plain/fused/cuBLAS at 4096.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32 CUBEPORT_MATMUL_SIZES=4096x4096x4096,8192x8192x8192 PEER_SIZES=4096x4096x4096,8192x8192x8192
F='matmul/((auto|simt|cublas)[^/]*/cuda/f32/)'
for e in 0 1; do
  vars=
  [ $e = 0 ] && vars=simt128x256x8_8x16_s2_g8,simt128x256x16_8x16_s1_g8
  echo "##### CUBEPORT_SIMT_EXP=$e MATMUL_VARIANTS=$vars"
  CUBEPORT_SIMT_EXP=$e MATMUL_VARIANTS=$vars MATMUL_FILTER="$F" OUT=$OUT/e$e timeout 220 bash scripts/gpu-run.sh matmul
  cat $OUT/e$e/date.txt
done > $OUT/bench.txt 2>&1
rm -rf $OUT/e0 $OUT/e1
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}'
# ncu: our plain (runtime one, and off) and fused at 4096, cuBLAS sgemm via torch
N="ncu --clock-control none --set full -k regex:simt -c 1"
export CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_SIZES=4096x4096x4096 CUBEPORT_PEER_SIZES=4096x4096x4096
for c in "0 ^matmul/auto_[^/]*_g8/cuda/f32/4096 plain" "1 ^matmul/auto_[^/]*_g8/cuda/f32/4096 plain_noone" "0 ^matmul/auto_[^/]*_bias_gelu/cuda/f32/4096 fused"; do
  set -- $c
  CUBEPORT_SIMT_EXP=$1 timeout 120 $N -o $OUT/$3 .gpu/bin/bench-matmul --bench "$2" --warm-up-time 0.1 --measurement-time 0.1 --sample-size 10 > $OUT/ncu-$3.log 2>&1
done
timeout 120 ncu --clock-control none --set full -k regex:gemm -c 1 -o $OUT/cublas python3 -c "
import torch; torch.backends.cuda.matmul.allow_tf32=False
a=torch.randn(4096,4096,device='cuda'); b=torch.randn(4096,4096,device='cuda'); torch.cuda.synchronize(); c=a@b; torch.cuda.synchronize()" > $OUT/ncu-cublas.log 2>&1
for r in plain plain_noone fused cublas; do
  echo "######## $r"; ncu -i $OUT/$r.ncu-rep --page details 2>&1
done > $OUT/ncu-details.txt
ncu -i $OUT/plain.ncu-rep --page source --csv --print-source sass > $OUT/ncu-source-plain.csv 2>&1
ncu -i $OUT/fused.ncu-rep --page source --csv --print-source sass > $OUT/ncu-source-fused.csv 2>&1
tar -C $OUT -cJf $OUT/ncu-logs.tar.xz $(cd $OUT && ls ncu-*.log)  && rm -f $OUT/ncu-*.log $OUT/*.ncu-rep
ls -la $OUT
grep -E '########|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Stall|SM Frequency|Executed Ipc A' $OUT/ncu-details.txt | head -120
