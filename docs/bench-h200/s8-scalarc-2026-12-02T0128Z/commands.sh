#!/usr/bin/env bash
# Session 8, call 4: one-stage SIMT loop, scalar C stores vs 4-wide, one process each; cuBLAS same call.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1 CUBEPORT_BENCH_DTYPES=f32
S=4096x4096x4096,8192x8192x8192
run() { echo "##### $1 CUBEPORT_SIMT_EXP=$2 FILTER=$3"
  CUBEPORT_SIMT_EXP=$2 CUBEPORT_MATMUL_SIZES=$S PEER_SIZES=$S MATMUL_FILTER="$3" MATMUL_VARIANTS=$4 OUT=$OUT/$1 timeout 150 bash scripts/gpu-run.sh matmul
  cat $OUT/$1/date.txt; rm -rf $OUT/$1; }
{
run p1 none 'matmul/((auto|simt|cublas)[^/]*/cuda/f32/)' ""
run p2 scalarc 'matmul/((auto|simt)[^/]*/cuda/f32/)' ""
run p3 scalarc 'matmul/((auto|cublas)[^/]*/cuda/f32/)' ""
} > $OUT/bench.txt 2>&1
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
