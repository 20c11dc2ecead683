//! cubeport's integration suite: one binary, one module per backend, generic bodies in
//! `suite/`. Tests of a backend with no device print `SKIP <test> <backend>: <reason>`;
//! `CUBEPORT_STRICT=1` turns every skip into a failure.

mod suite;

/// Instantiates every generic test body for one backend and its dtype list.
macro_rules! backend_suite {
    ($backend:ident, $R:ty, $client:path, dtypes = [$($dt:ident),*], unsupported = [$($ud:ident),*]) => {
        mod $backend {
            #[allow(unused_imports)]
            use cubeport::{Activation, DType, GeluApprox};
            use rstest::rstest;
            use crate::suite::{self, activation, attention, gemv, norm, reduce, softmax, transpose};

            type R = $R;

            fn client(test: &str) -> Option<cubeport::cubecl::prelude::ComputeClient<R>> {
                suite::client_or_skip(test, stringify!($backend), $client)
            }

            const ACTS: [Activation; 4] = [
                Activation::Identity,
                Activation::ReluScale { scale: 0.75 },
                Activation::Gelu(GeluApprox::Tanh),
                Activation::Gelu(GeluApprox::Erf),
            ];

            /// Flat tensors with a full-length bias: lengths around every vector width,
            /// the 256-byte tail granule and a ragged million.
            #[rstest]
            fn activation_flat_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values(1, 3, 4, 7, 33, 257, 4097, 1 << 20 | 5)] len: usize,
            ) {
                let Some(c) = client("activation_flat_matches_reference") else { return };
                for act in ACTS {
                    activation::matches_reference(&c, act, dtype, &[len], &[len]);
                }
            }

            /// Rows with one bias row broadcast: odd rows force the scalar kernel, rows
            /// divisible by 8 allow every width, rows shorter than a plane too.
            #[rstest]
            fn activation_rows_match_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((1, 1), (3, 5), (5, 6), (7, 8), (33, 1000), (2, 4097), (65, 4096))] rows_cols: (usize, usize),
            ) {
                let Some(c) = client("activation_rows_match_reference") else { return };
                let (rows, cols) = rows_cols;
                for act in ACTS {
                    activation::matches_reference(&c, act, dtype, &[rows, cols], &[cols]);
                }
            }

            #[rstest]
            fn activation_every_vector_width(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("activation_every_vector_width") else { return };
                activation::every_vector_width(&c, dtype);
            }

            #[rstest]
            fn activation_edge_values(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("activation_edge_values") else { return };
                activation::edge_values(&c, dtype);
            }

            #[test]
            fn activation_fused_matches_unfused() {
                let Some(c) = client("activation_fused_matches_unfused") else { return };
                activation::fused_matches_unfused(&c);
            }

            #[test]
            fn activation_owned_api_and_copy() {
                let Some(c) = client("activation_owned_api_and_copy") else { return };
                activation::owned_api_and_copy(&c);
            }

            #[test]
            fn activation_poison_detects_unwritten_output() {
                let Some(c) = client("activation_poison_detects_unwritten_output") else { return };
                activation::poison_detects_unwritten_output(&c);
            }

            #[test]
            fn activation_rejects_bad_shapes() {
                let Some(c) = client("activation_rejects_bad_shapes") else { return };
                activation::rejects_bad_shapes(&c);
            }

            #[test]
            fn activation_rejects_unsupported_dtypes() {
                let Some(c) = client("activation_rejects_unsupported_dtypes") else { return };
                activation::rejects_unsupported_dtypes(&c, &[$(DType::$ud),*]);
            }

            #[rstest]
            fn reduce_rows_match_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((1, 1), (3, 7), (64, 32), (17, 1000), (2, 4097), (3, 8192), (2, 65536))] rows_len: (usize, usize),
            ) {
                let Some(c) = client("reduce_rows_match_reference") else { return };
                reduce::reduce_matches(&c, dtype, &[rows_len.0, rows_len.1], Some(1));
            }

            #[rstest]
            fn reduce_strided_axis_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((vec![4, 5, 6], 1), (vec![4, 5, 6], 0), (vec![3, 1000, 8], 1), (vec![7, 33], 0), (vec![2, 3, 5, 7], 2))] case: (Vec<usize>, usize),
            ) {
                let Some(c) = client("reduce_strided_axis_matches_reference") else { return };
                reduce::reduce_matches(&c, dtype, &case.0, Some(case.1));
            }

            #[rstest]
            fn reduce_all_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("reduce_all_matches_reference") else { return };
                reduce::reduce_all_lengths(&c, dtype);
            }

            #[test]
            fn reduce_all_huge() {
                let Some(c) = client("reduce_all_huge") else { return };
                reduce::reduce_all_huge(&c);
            }

            #[test]
            fn reduce_edge_values() {
                let Some(c) = client("reduce_edge_values") else { return };
                reduce::reduce_edge_values(&c);
            }

            #[test]
            fn reduce_rejects_bad_input() {
                let Some(c) = client("reduce_rejects_bad_input") else { return };
                reduce::reduce_rejects_bad_input(&c);
            }

            #[test]
            fn reduce_rejects_mismatched_variant() {
                let Some(c) = client("reduce_rejects_mismatched_variant") else { return };
                reduce::reduce_rejects_mismatched_variant(&c);
            }

            #[rstest]
            fn softmax_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((1, 1), (3, 7), (100, 3), (64, 32), (17, 1000), (2, 4097), (3, 65536))] rows_len: (usize, usize),
            ) {
                let Some(c) = client("softmax_matches_reference") else { return };
                softmax::softmax_matches(&c, dtype, rows_len.0, rows_len.1);
            }

            #[test]
            fn softmax_edge_rows() {
                let Some(c) = client("softmax_edge_rows") else { return };
                softmax::softmax_edge_rows(&c);
            }

            #[rstest]
            fn softmax_owned_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("softmax_owned_matches_reference") else { return };
                softmax::softmax_owned_matches(&c, dtype);
            }

            #[test]
            fn softmax_rejects_bad_input() {
                let Some(c) = client("softmax_rejects_bad_input") else { return };
                softmax::softmax_rejects_bad_input(&c);
            }

            #[test]
            fn softmax_rejects_unsupported_variant() {
                let Some(c) = client("softmax_rejects_unsupported_variant") else { return };
                softmax::softmax_rejects_unsupported_variant(&c);
            }

            /// Rows from 1 to 65536 elements: cached in registers up to 16 vectors per unit,
            /// streamed beyond (65536 f32 rows stream with every group); 20011 short rows: a
            /// grid of thousands of cubes with a ragged last one.
            #[rstest]
            fn norm_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((1, 1), (3, 7), (100, 3), (64, 32), (17, 1000), (2, 4097), (4, 16384), (3, 65536), (20011, 5))] rows_len: (usize, usize),
            ) {
                let Some(c) = client("norm_matches_reference") else { return };
                norm::norm_matches(&c, dtype, rows_len.0, rows_len.1, rows_len.1);
            }

            /// Padded rows (a row pitch), as frameworks allocate: the vector width drops to
            /// what divides the pitch, and the padding is never written.
            #[rstest]
            fn norm_padded_rows(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((5, 1003, 1024), (3, 64, 66), (2, 20000, 20001))] shape: (usize, usize, usize),
            ) {
                let Some(c) = client("norm_padded_rows") else { return };
                norm::norm_matches(&c, dtype, shape.0, shape.1, shape.2);
            }

            #[rstest]
            fn norm_add_rms_norm_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((3, 7), (17, 1000), (2, 65536), (20011, 5))] rows_len: (usize, usize),
            ) {
                let Some(c) = client("norm_add_rms_norm_matches_reference") else { return };
                norm::add_rms_norm_matches(&c, dtype, rows_len.0, rows_len.1);
            }

            #[test]
            fn norm_in_place() {
                let Some(c) = client("norm_in_place") else { return };
                norm::norm_in_place(&c);
            }

            #[test]
            fn norm_edge_rows() {
                let Some(c) = client("norm_edge_rows") else { return };
                norm::norm_edge_rows(&c);
            }

            #[rstest]
            fn norm_owned_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("norm_owned_matches_reference") else { return };
                norm::norm_owned_matches(&c, dtype);
            }

            #[test]
            fn norm_rejects_bad_input() {
                let Some(c) = client("norm_rejects_bad_input") else { return };
                norm::norm_rejects_bad_input(&c);
            }

            #[test]
            fn norm_rejects_unsupported_variant() {
                let Some(c) = client("norm_rejects_unsupported_variant") else { return };
                norm::norm_rejects_unsupported_variant(&c);
            }

            /// (batch, heads, kv heads, Sq, Sk, D, causal): ragged lengths against the 32-key
            /// tiles and 8-row cubes, grouped- and multi-query heads, causal with Sq > Sk (blind
            /// rows) and Sq < Sk, head dims 1 to 128.
            #[rstest]
            fn attention_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values(
                    (1, 1, 1, 1, 1, 64, false),
                    (2, 4, 4, 33, 47, 64, false),
                    (1, 4, 2, 47, 33, 128, true),
                    (1, 2, 1, 17, 100, 80, true),
                    (1, 1, 1, 130, 130, 32, true),
                    (2, 2, 2, 5, 300, 128, false),
                    (1, 3, 3, 9, 9, 1, false)
                )] p: attention::Problem,
            ) {
                let Some(c) = client("attention_matches_reference") else { return };
                attention::attention_matches(&c, dtype, p);
            }

            #[rstest]
            fn attention_strided_views(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("attention_strided_views") else { return };
                attention::attention_strided_views(&c, dtype);
            }

            #[rstest]
            fn attention_any_scale(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("attention_any_scale") else { return };
                attention::attention_any_scale(&c, dtype);
            }

            #[rstest]
            fn attention_edge_rows(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("attention_edge_rows") else { return };
                attention::attention_edge_rows(&c, dtype);
            }

            #[test]
            fn attention_matches_unfused() {
                let Some(c) = client("attention_matches_unfused") else { return };
                attention::attention_matches_unfused(&c);
            }

            #[rstest]
            fn attention_owned_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("attention_owned_matches_reference") else { return };
                attention::attention_owned_matches(&c, dtype);
            }

            #[test]
            fn attention_rejects_bad_input() {
                let Some(c) = client("attention_rejects_bad_input") else { return };
                attention::attention_rejects_bad_input(&c);
            }

            #[rstest]
            fn gemv_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values((1, 1), (3, 7), (64, 32), (33, 64), (17, 1000), (5, 4097), (1, 8192), (300, 33))] rows_cols: (usize, usize),
            ) {
                let Some(c) = client("gemv_matches_reference") else { return };
                gemv::gemv_matches(&c, dtype, rows_cols.0, rows_cols.1);
            }

            #[test]
            fn gemv_rejects_bad_input() {
                let Some(c) = client("gemv_rejects_bad_input") else { return };
                gemv::gemv_rejects_bad_input(&c);
            }

            #[rstest]
            fn gemv_owned_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("gemv_owned_matches_reference") else { return };
                gemv::gemv_owned_matches(&c, dtype);
            }

            #[test]
            fn gemv_rejects_unsupported_variant() {
                let Some(c) = client("gemv_rejects_unsupported_variant") else { return };
                gemv::gemv_rejects_unsupported_variant(&c);
            }

            #[rstest]
            fn transpose_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values(vec![1, 1], vec![3, 5], vec![33, 65], vec![257, 31], vec![1024, 7], vec![2, 3, 37, 41], vec![96, 64])] shape: Vec<usize>,
            ) {
                let Some(c) = client("transpose_matches_reference") else { return };
                transpose::transpose_matches(&c, dtype, &shape);
            }

            #[test]
            fn transpose_integers_bit_exact() {
                let Some(c) = client("transpose_integers_bit_exact") else { return };
                transpose::transpose_integers(&c);
            }

            #[test]
            fn transpose_rejects_bad_input() {
                let Some(c) = client("transpose_rejects_bad_input") else { return };
                transpose::transpose_rejects_bad_input(&c);
            }

            #[rstest]
            fn transpose_owned_matches_reference(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("transpose_owned_matches_reference") else { return };
                transpose::transpose_owned_matches(&c, dtype);
            }

            #[rstest]
            fn histc_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values(1, 31, 33, 1000, 4099, 100_003)] len: usize,
                #[values(1, 7, 256, 5000)] bins: usize,
            ) {
                let Some(c) = client("histc_matches_reference") else { return };
                crate::suite::histogram::histc_matches(&c, dtype, len, bins);
            }

            #[rstest]
            fn bincount_matches_reference(
                #[values(false, true)] signed: bool,
                #[values(1, 33, 4099, 100_003)] len: usize,
                #[values(1, 256, 5000)] bins: usize,
            ) {
                let Some(c) = client("bincount_matches_reference") else { return };
                crate::suite::histogram::bincount_matches(&c, signed, len, bins);
            }

            /// Long enough that every unit takes several grid-stride steps of several vectors
            /// each, the last one partial, on any device (30 M elements, under lavapipe's 128 MiB
            /// buffers: two steps where 2048 cubes of 256 units take 8 vectors of 4 each, as on
            /// wgpu).
            #[test]
            fn bincount_grid_steps() {
                let Some(c) = client("bincount_grid_steps") else { return };
                crate::suite::histogram::bincount_matches(&c, false, 30_000_011, 256);
            }

            #[test]
            fn histogram_skewed() {
                let Some(c) = client("histogram_skewed") else { return };
                crate::suite::histogram::histogram_skewed(&c);
            }

            #[test]
            fn histogram_rejects_bad_input() {
                let Some(c) = client("histogram_rejects_bad_input") else { return };
                crate::suite::histogram::histogram_rejects_bad_input(&c);
            }

            #[rstest]
            fn matmul_matches_reference(
                #[values($(DType::$dt),*)] dtype: DType,
                #[values(
                    (0, 0, 1, 1, 1), (0, 0, 3, 7, 5), (0, 0, 17, 65, 33), (0, 0, 64, 64, 64),
                    (0, 0, 130, 129, 31), (0, 0, 257, 100, 300), (3, 3, 33, 20, 17), (4, 0, 20, 33, 9),
                    (0, 2, 9, 40, 70), (0, 0, 200, 136, 72), (2, 2, 40, 48, 24), (0, 0, 72, 80, 520)
                )] shape: (usize, usize, usize, usize, usize),
                #[values((false, false), (true, false), (false, true))] trans: (bool, bool),
                #[values(false, true)] fused: bool,
            ) {
                let Some(c) = client("matmul_matches_reference") else { return };
                let (batch_a, batch_b, m, n, k) = shape;
                crate::suite::matmul::matmul_matches(&c, dtype, crate::suite::matmul::Problem {
                    batch_a, batch_b, m, n, k, trans_a: trans.0, trans_b: trans.1,
                }, fused);
            }

            #[test]
            fn matmul_stream_k() {
                let Some(c) = client("matmul_stream_k") else { return };
                crate::suite::matmul::matmul_stream_k(&c);
            }

            #[rstest]
            fn matmul_skinny(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_skinny") else { return };
                crate::suite::matmul::matmul_skinny(&c, dtype);
            }

            #[rstest]
            fn matmul_narrow(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_narrow") else { return };
                crate::suite::matmul::matmul_narrow(&c, dtype);
            }

            #[rstest]
            fn matmul_narrow_mma(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_narrow_mma") else { return };
                crate::suite::matmul::matmul_narrow_mma(&c, dtype);
            }

            #[rstest]
            fn matmul_tc_split(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_tc_split") else { return };
                crate::suite::matmul::matmul_tc_split(&c, dtype);
            }

            #[rstest]
            fn matmul_pads_ragged(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_pads_ragged") else { return };
                crate::suite::matmul::matmul_pads_ragged(&c, dtype);
            }

            #[rstest]
            fn matmul_plan_is_what_runs(#[values($(DType::$dt),*)] dtype: DType) {
                let Some(c) = client("matmul_plan_is_what_runs") else { return };
                crate::suite::matmul::matmul_plan_is_what_runs(&c, dtype);
            }

            #[test]
            fn matmul_grouped_order() {
                let Some(c) = client("matmul_grouped_order") else { return };
                crate::suite::matmul::grouped_order(&c);
            }

            #[test]
            fn matmul_rejects_bad_input() {
                let Some(c) = client("matmul_rejects_bad_input") else { return };
                crate::suite::matmul::matmul_rejects_bad_input(&c);
            }

            #[test]
            fn padded_rows_in_place() {
                let Some(c) = client("padded_rows_in_place") else { return };
                crate::suite::pitched::padded_rows(&c);
            }

            #[test]
            fn activation_properties() {
                let Some(c) = client("activation_properties") else { return };
                crate::suite::props::activation_props(&c);
            }

            #[test]
            fn reduce_properties() {
                let Some(c) = client("reduce_properties") else { return };
                crate::suite::props::reduce_props(&c);
            }

            #[test]
            fn softmax_transpose_properties() {
                let Some(c) = client("softmax_transpose_properties") else { return };
                crate::suite::props::softmax_transpose_props(&c);
            }

            #[test]
            fn norm_properties() {
                let Some(c) = client("norm_properties") else { return };
                crate::suite::props::norm_props(&c);
            }

            #[test]
            fn matmul_properties() {
                let Some(c) = client("matmul_properties") else { return };
                crate::suite::props::matmul_props(&c);
            }

            #[test]
            fn attention_properties() {
                let Some(c) = client("attention_properties") else { return };
                crate::suite::props::attention_props(&c);
            }

            #[test]
            fn vector_wider_than_device_is_refused() {
                let Some(c) = client("vector_wider_than_device_is_refused") else { return };
                crate::suite::hardening::vector_wider_than_device(&c);
            }

            #[test]
            fn allocation_beyond_limit_is_an_error() {
                let Some(c) = client("allocation_beyond_limit_is_an_error") else { return };
                crate::suite::hardening::allocation_beyond_limit(&c);
            }

            #[test]
            fn transfers_round_trip() {
                let Some(c) = client("transfers_round_trip") else { return };
                crate::suite::hardening::transfers_round_trip(&c);
            }

            #[test]
            fn transfers_from_many_threads() {
                let Some(c) = client("transfers_from_many_threads") else { return };
                crate::suite::hardening::transfers_from_many_threads(&c);
            }

            #[test]
            fn ops_from_many_threads() {
                let Some(c) = client("ops_from_many_threads") else { return };
                crate::suite::hardening::ops_from_many_threads(&c);
            }

            #[test]
            fn activation_launch_failure_is_an_error() {
                let Some(c) = client("activation_launch_failure_is_an_error") else { return };
                activation::launch_failure_is_an_error(&c);
            }
        }
    };
}

#[cfg(feature = "cuda")]
backend_suite!(
    cuda,
    cubeport::cubecl::cuda::CudaRuntime,
    cubeport::cuda_client,
    dtypes = [F32, F16, BF16],
    unsupported = []
);
#[cfg(feature = "wgpu")]
backend_suite!(
    wgpu,
    cubeport::cubecl::wgpu::WgpuRuntime,
    cubeport::wgpu_client,
    dtypes = [F32, F16],
    unsupported = [BF16]
);

#[cfg(all(feature = "cuda", feature = "wgpu"))]
mod cross_backend {
    use crate::suite;

    /// The same seeded inputs on CUDA and wgpu give results within twice the tolerance.
    #[test]
    fn activation_backends_agree() {
        let Some(cuda) =
            suite::client_or_skip("activation_backends_agree", "cuda", cubeport::cuda_client)
        else {
            return;
        };
        let Some(wgpu) =
            suite::client_or_skip("activation_backends_agree", "wgpu", cubeport::wgpu_client)
        else {
            return;
        };
        suite::activation::backends_agree(&cuda, &wgpu);
    }
}

/// A device ordinal past the last device is a typed error that says how many exist, on every
/// backend that has a device.
#[test]
fn missing_device_ordinal_is_a_typed_error() {
    use cubeport::{BackendError, BackendKind, Error};
    for status in cubeport::backends::available() {
        if let Err(e) = &status.device {
            cubeport::testing::skip(
                "missing_device_ordinal_is_a_typed_error",
                status.kind.name(),
                &e.to_string(),
            );
            continue;
        }
        let count = cubeport::backends::devices(status.kind).len();
        assert!(count >= 1, "{:?} has a device but lists none", status.kind);
        let err = match status.kind {
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => cubeport::cuda_client_on(count + 3).map(drop).unwrap_err(),
            #[cfg(feature = "wgpu")]
            BackendKind::Wgpu => cubeport::wgpu_client_on(count + 3).map(drop).unwrap_err(),
            _ => continue,
        };
        assert!(
            matches!(
                &err,
                Error::Backend(BackendError::NoSuchDevice { kind, ordinal, count: c })
                    if *kind == status.kind && *ordinal == count + 3 && *c == count
            ),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains(&format!("{count} device(s) exist")),
            "{err}"
        );
        // Every listed ordinal opens.
        for d in cubeport::backends::devices(status.kind) {
            let ok = match status.kind {
                #[cfg(feature = "cuda")]
                BackendKind::Cuda => cubeport::cuda_client_on(d.ordinal).is_ok(),
                #[cfg(feature = "wgpu")]
                BackendKind::Wgpu => cubeport::wgpu_client_on(d.ordinal).is_ok(),
                _ => true,
            };
            assert!(
                ok,
                "{:?} ordinal {} ({}) does not open",
                status.kind, d.ordinal, d.name
            );
        }
    }
}

#[test]
fn backend_discovery_never_panics() {
    // Whatever the machine has, discovery answers with a kind or a typed error.
    let statuses = cubeport::backends::available();
    assert_eq!(statuses.len(), cubeport::BackendKind::ALL.len());
    match cubeport::backends::discover() {
        Ok(kind) => assert!(statuses.iter().any(|s| s.kind == kind && s.device.is_ok())),
        Err(e) => assert!(statuses.iter().all(|s| s.device.is_err()), "{e}"),
    }
}

#[test]
fn matmul_variant_ids_round_trip() {
    suite::matmul::matmul_variant_ids_round_trip();
}
