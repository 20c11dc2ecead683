#!/usr/bin/env bash
# One device call on the GPU machine: strict tests on CUDA and wgpu-Vulkan, the main job, the
# criterion benchmarks and the PyTorch anchors, all in the same call so every ratio has its
# anchor measured alongside. Logs land in $OUT (the device tool brings them back).
#
#   (here)  ../shared/gpu/pack.sh --tests
#   (device) source .gpu/prelude.sh && bash scripts/gpu-run.sh [steps…]
# steps: devices tests tests-matmul check bench torch sanitize sanitize-matmul variants matmul burn report
# (default: devices tests bench torch sanitize check)
#   tests-matmul: the strict matmul tests of backend $TEST_BACKEND (cuda) in 7 processes at once
#             (dtype × plain/fused, and the rest): cubecl compiles one kernel at a time per device
#             client, so one process is compile-bound (> 530 s for cuda::matmul on the H200)
#   variants: the matmul_variants example on CUDA (every variant's error vs f64, $MATMUL_VARIANTS extra)
#   matmul:   bench-matmul (cubeport cases + cuBLAS + cubek when built with peer-cubek), filtered by
#             $MATMUL_FILTER, sweeping $MATMUL_VARIANTS, peers at $PEER_SIZES
#   burn:     the Burn 0.21 interop example, strict
#   report:   cubeport bench (roofline table, JSON, SVG charts into $OUT/plots), $REPORT_ARGS extra
set -uo pipefail
OUT=${OUT:-/tmp/cubeport-out}
mkdir -p "$OUT"
steps=${*:-devices tests bench torch sanitize check}
# Appended, so a call that runs several invocations keeps every start time.
date -u +"%Y-%m-%dT%H:%M:%SZ $steps" | tee -a "$OUT/date.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$OUT/date.txt"
for step in $steps; do
  echo "=== $step"
  case $step in
    devices) .gpu/bin/cubeport devices 2>&1 | tee "$OUT/devices.txt"
      if grep -q '^wgpu: unavailable' "$OUT/devices.txt"; then  # diagnose the Vulkan ICD
        (echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; cat "${VK_DRIVER_FILES:-/dev/null}"; ldconfig -p | grep -E 'vulkan|GLdispatch|GLX|EGL';
         lib=$(grep -o '"library_path"[^,]*' "${VK_DRIVER_FILES:-/dev/null}" | cut -d'"' -f4); [ -n "$lib" ] && ldd "$(ldconfig -p | grep -m1 "$lib" | awk '{print $NF}')" ) 2>&1 | tee -a "$OUT/devices.txt"
      fi ;;
    tests) CUBEPORT_STRICT=1 .gpu/bin/main --test-threads ${TEST_THREADS:-4} ${TEST_FILTER:-} 2>&1 | grep -vE '^test .* ok$' | tee "$OUT/tests.txt" ;;
    tests-matmul)
      be=${TEST_BACKEND:-cuda}
      for d in 1 2 3; do
        for f in 1_false 2_true; do
          skip=$([ $f = 1_false ] && echo fused_2_true || echo fused_1_false)
          CUBEPORT_STRICT=1 ${MAIN_BIN:-.gpu/bin/main} --test-threads 2 "$be::matmul_matches_reference::dtype_$d" \
            --skip "$skip" > "$OUT/shard-$d-$f.txt" 2>&1 &
        done
      done
      CUBEPORT_STRICT=1 ${MAIN_BIN:-.gpu/bin/main} --test-threads 2 "$be::matmul" --skip "$be::matmul_matches_reference" \
        > "$OUT/shard-rest.txt" 2>&1 &
      wait
      for f in "$OUT"/shard-*.txt; do echo "## $(basename "$f" .txt)"; grep -vE '^test .* ok$' "$f"; done > "$OUT/tests-matmul.txt"
      rm -f "$OUT"/shard-*.txt
      grep -E '^## |test result|FAILED|panicked' "$OUT/tests-matmul.txt" ;;
    check) .gpu/bin/cubeport check ${CHECK_ARGS:-} 2>&1 | tee "$OUT/check.txt" ;;
    bench) for b in .gpu/bin/bench-*; do
             case $b in
               *activation) $b --bench \
                   "${ACT_FILTER:-(copy/vec|activation/(bias_relu_scale|bias_gelu_tanh)_full)/.*/f32/}" ;;
               *) $b --bench ${BENCH_FILTER:-} ;;
             esac 2>&1 | grep -E '^(activation|reduce|memory|matmul)/|thrpt|time:|SKIP|panick|error'
           done | tee "$OUT/bench.txt" ;;
    variants) CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=${MATMUL_VARIANTS:-} .gpu/bin/example-matmul_variants 2>&1 | tee "$OUT/variants.txt" ;;
    matmul) CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_VARIANTS=${MATMUL_VARIANTS:-} CUBEPORT_PEER_SIZES=${PEER_SIZES:-4096x4096x4096,8192x8192x8192} \
              .gpu/bin/bench-matmul --bench ${MATMUL_FILTER:-} 2>&1 | grep -E '^matmul/|thrpt|time:|SKIP|unavailable|wrong|not timed|panick|error' | tee "$OUT/matmul.txt" ;;
    # The charts travel as one tar (the device tool brings back a handful of files per call).
    report) .gpu/bin/cubeport bench ${REPORT_ARGS:-} --json "$OUT/bench.json" --plots "$OUT/plots" 2>&1 | tee "$OUT/report.txt"
            tar -C "$OUT" -cf "$OUT/plots.tar" plots && rm -rf "$OUT/plots" ;;
    burn) CUBEPORT_STRICT=1 .gpu/bin/burn-interop 2>&1 | tee "$OUT/burn.txt" ;;
    torch) python3 .gpu/anchors_torch.py ${TORCH_CASES:-copy_and_reduce fused_elementwise softmax gemv histogram transpose} 2>&1 | tee "$OUT/torch.txt" ;;
    # memcheck + racecheck over the matmul_variants example limited to $SANITIZE_VARIANTS
    # (default: the cp.async and manual-MMA tensor-core shapes), three shapes, f16 and bf16.
    sanitize-matmul)
      for tool in memcheck racecheck; do
        CUBEPORT_BACKEND=cuda CUBEPORT_MATMUL_ONLY=1 \
          CUBEPORT_MATMUL_VARIANTS=${SANITIZE_VARIANTS:-tc128x128x32_w4x2_a3,tc128x256x32_w2x4_a3,tc128x256x32_w2x4_a3_mma} \
          compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/example-matmul_variants > "$OUT/sanitize-matmul-$tool.txt" 2>&1
        tail -1 "$OUT/sanitize-matmul-$tool.txt"
      done ;;
    sanitize)
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --print-limit 20 .gpu/bin/main --test-threads 1 ${SANITIZE_FILTER:-\
          cuda::activation_rows_match_reference cuda::activation_every_vector_width \
          cuda::reduce_rows_match_reference::dtype_1 cuda::reduce_strided_axis_matches_reference::dtype_1 \
          cuda::reduce_edge_values cuda::softmax_matches_reference::dtype_1 cuda::softmax_edge_rows \
          cuda::gemv_matches_reference::dtype_1 cuda::histogram_skewed \
          cuda::bincount_matches_reference::signed_2_true::len_3_4099 \
          cuda::histc_matches_reference::dtype_2::len_5_4099 cuda::transpose_matches_reference::dtype_1 \
          cuda::matmul_matches_reference::dtype_1_DType__F32::shape_05 cuda::matmul_matches_reference::dtype_2_DType__F16::shape_07 \
          cuda::matmul_matches_reference::dtype_3_DType__BF16::shape_09 \
          cuda::matmul_matches_reference::dtype_1_DType__F32::shape_10 cuda::matmul_matches_reference::dtype_2_DType__F16::shape_10 \
          cuda::matmul_matches_reference::dtype_3_DType__BF16::shape_11 cuda::padded_rows_in_place} 2>&1 \
          | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result|Error|error' | tee "$OUT/sanitize-$tool.txt"
      done ;;
  esac
done
