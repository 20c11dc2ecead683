use super::*;

/// [`cublas_case`] for a runtime `dtype` (f32, f16, bf16).
///
/// # Errors
/// As [`cublas_case`]; [`Error::Launch`] (op `cublas`) for any other dtype.
pub fn cublas_case_of(dtype: DType, m: usize, n: usize, k: usize) -> Result<Case<'static>, Error> {
    cublas_batched_case_of(dtype, 1, m, n, k)
}

/// [`cublas_batched_case`] for a runtime `dtype` (f32, f16, bf16).
///
/// # Errors
/// As [`cublas_batched_case`]; [`Error::Launch`] (op `cublas`) for any other dtype.
pub fn cublas_batched_case_of(
    dtype: DType,
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
) -> Result<Case<'static>, Error> {
    match dtype {
        DType::F32 => cublas_batched_case::<f32>(batch, m, n, k),
        DType::F16 => cublas_batched_case::<half::f16>(batch, m, n, k),
        DType::BF16 => cublas_batched_case::<half::bf16>(batch, m, n, k),
        other => Err(Error::Launch {
            op: "cublas",
            message: format!("no cuBLAS GEMM case for {other}"),
        }),
    }
}

/// cuBLAS (through cudarc) on `m × n × k` row-major products of the same seeded inputs as
/// [`matmul_cases`]: `sgemm` for f32 (cuBLAS's default math mode: no TF32), `gemmEx` with f32
/// compute for f16/bf16. The vendor anchor of the matmul family, on cudarc's own stream (so the
/// case syncs that stream itself, see [`Case::wait`]). Checked on 32 sampled entries against
/// f64 dot products before it is returned; variant id `cublas`.
///
/// # Errors
/// [`Error::Launch`] (op `cublas`) when there is no CUDA driver or cuBLAS, or the sampled
/// check fails.
pub fn cublas_case<E>(m: usize, n: usize, k: usize) -> Result<Case<'static>, Error>
where
    E: cubeport::Element + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
    cudarc::cublas::CudaBlas: cudarc::cublas::Gemm<E>,
{
    cublas_batched_case::<E>(1, m, n, k)
}

/// [`cublas_case`] for `batch` dense products `[batch, m, k] · [batch, k, n]`: one `gemm`
/// for a batch of 1 (size `m x n x k`), else one strided-batched call (`gemmStridedBatched`
/// / `gemmStridedBatchedEx`, size `batch x m x n x k`), the anchor of the batched cases
/// ([`matmul_batched_cases_for`]). Checked on the first and last product's sampled entries.
///
/// # Errors
/// As [`cublas_case`].
pub fn cublas_batched_case<E>(
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
) -> Result<Case<'static>, Error>
where
    E: cubeport::Element + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
    cudarc::cublas::CudaBlas: cudarc::cublas::Gemm<E>,
{
    use cudarc::cublas::{
        CudaBlas, Gemm, GemmConfig, StridedBatchedConfig, sys::cublasOperation_t,
    };
    use cudarc::driver::{CudaContext, CudaSlice};
    let fail = |what: &str, e: &dyn std::fmt::Display| Error::Launch {
        op: "cublas",
        message: format!("{what}: {e}"),
    };
    // cudarc panics where no driver library exists; probe first (discovery does the same).
    let ctx = std::panic::catch_unwind(|| CudaContext::new(0))
        .map_err(|_| fail("CUDA driver", &"libcuda could not be loaded"))?
        .map_err(|e| fail("CUDA context", &e))?;
    let stream = ctx.default_stream();
    let blas = std::panic::catch_unwind(|| CudaBlas::new(stream.clone()))
        .map_err(|_| fail("cuBLAS", &"libcublas could not be loaded"))?
        .map_err(|e| fail("cuBLAS", &e))?;
    let a: Vec<E> = seeded(80, batch * m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(81, batch * k * n, -1.0, 1.0);
    let da = stream.clone_htod(&a).map_err(|e| fail("upload", &e))?;
    let db = stream.clone_htod(&b).map_err(|e| fail("upload", &e))?;
    let mut dc = stream
        .alloc_zeros::<E>(batch * m * n)
        .map_err(|e| fail("alloc", &e))?;
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: E::from_f64(1.0),
        lda: n as i32,
        ldb: k as i32,
        beta: E::from_f64(0.0),
        ldc: n as i32,
    };
    let batched = StridedBatchedConfig {
        gemm: cfg,
        batch_size: batch as i32,
        stride_a: (k * n) as i64,
        stride_b: (m * k) as i64,
        stride_c: (m * n) as i64,
    };
    // SAFETY: the buffers hold batch·k·n, batch·m·k and batch·m·n elements, as `cfg` and
    // `batched` describe.
    let go = move |blas: &CudaBlas, da: &CudaSlice<E>, db: &CudaSlice<E>, dc: &mut CudaSlice<E>| unsafe {
        if batch == 1 {
            blas.gemm(cfg, db, da, dc)
        } else {
            blas.gemm_strided_batched(batched, db, da, dc)
        }
    };
    go(&blas, &da, &db, &mut dc).map_err(|e| fail("gemm", &e))?;
    let got = stream.clone_dtoh(&dc).map_err(|e| fail("download", &e))?;
    for z in [0, batch - 1] {
        let (pa, pb, pc) = (z * m * k, z * k * n, z * m * n);
        verify_matmul_sample(
            &got[pc..pc + m * n],
            &a[pa..pa + m * k],
            &b[pb..pb + k * n],
            (m, n, k),
            32,
            "cuBLAS",
        )?;
    }
    let sync_stream = stream.clone();
    Ok(Case {
        dtype: E::DTYPE,
        family: "matmul",
        variant: "cublas".into(),
        size: batched_size_name(batch, m, n, k),
        bytes: (batch * (m * k + k * n + m * n) * E::DTYPE.size()) as u64,
        flops: cubeport::ops::matmul::matmul_flops(batch, m, n, k),
        run: Box::new(move || go(&blas, &da, &db, &mut dc).map_err(|e| fail("gemm", &e))),
        own_sync: Some(Box::new(move || {
            sync_stream
                .synchronize()
                .map_err(|e| fail("stream sync", &e))
        })),
    })
}
