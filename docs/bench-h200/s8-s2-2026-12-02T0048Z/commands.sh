#!/usr/bin/env bash
# Session 8, call 2: pipelined s2 vs old ping-pong (one process each, same binary), cuBLAS same call; TC headline at 8192.
set -u
bash scripts/gpu-unpack.sh >/dev/null
export CUBEPORT_MATMUL_ONLY=1
V=simt128x256x8_8x16_s1_g8,simt128x256x16_8x16_s2_g8,simt128x128x8_8x8_s2,simt64x64x16_4x4_s2
run() { # name exp sizes peer filter variants timeout dtypes
  echo "##### $1 CUBEPORT_SIMT_EXP=$2 SIZES=$3 FILTER=$5 VARIANTS=$6"
  CUBEPORT_BENCH_DTYPES=$8 CUBEPORT_SIMT_EXP=$2 CUBEPORT_MATMUL_SIZES=$3 PEER_SIZES=$4 MATMUL_FILTER="$5" MATMUL_VARIANTS=$6 OUT=$OUT/$1 timeout $7 bash scripts/gpu-run.sh matmul
  cat $OUT/$1/date.txt; rm -rf $OUT/$1
}
{
S=1024x1024x1024,4096x4096x4096,8192x8192x8192
run p1 new $S $S 'matmul/((auto|simt|cublas)[^/]*/cuda/f32/)' $V 200 f32
run p2 oldpp $S $S 'matmul/((auto|simt)[^/]*/cuda/f32/)' $V 170 f32
run p3 new 8192x8192x8192 8192x8192x8192 'matmul/((auto|cublas)[^/]*/cuda/(f16|bf16)/8192|cubek_[^/]*/cuda/(f16|bf16)/8192)' "" 200 f16,bf16
} > $OUT/bench.txt 2>&1
grep -E '^#####|^matmul/|^ *time:' $OUT/bench.txt | awk '/^matmul/{n=$1} /time:/{print n, $0} /^#####/{print}' | grep -E '#####|\[[0-9.]+ (ms|s|µs) '
