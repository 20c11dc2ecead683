use super::*;
use cubeport::Binning;

/// One op per family, run at a sweep of sizes for the throughput-versus-size report of
/// `cubeport bench` (automatic variants, f32 unless the op says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepOp {
    /// `gelu(x + bias)` (tanh), full-length bias: 3 streams.
    BiasGelu,
    /// Sum of everything.
    SumAll,
    /// Softmax over rows of 1024.
    Softmax1024,
    /// Square transpose.
    Transpose,
    /// 256-bin histogram over `[0, 1)` of uniform data.
    Histogram256,
    /// Square matmul of this dtype (`n` is the side).
    Matmul(DType),
}

impl SweepOp {
    /// The report's family name.
    pub fn family(&self) -> &'static str {
        match self {
            SweepOp::BiasGelu => "activation",
            SweepOp::SumAll => "reduce",
            SweepOp::Softmax1024 => "softmax",
            SweepOp::Transpose => "transpose",
            SweepOp::Histogram256 => "histogram",
            SweepOp::Matmul(_) => "matmul",
        }
    }

    /// The element type the op runs in.
    pub fn dtype(&self) -> DType {
        match self {
            SweepOp::Matmul(d) => *d,
            _ => DType::F32,
        }
    }

    /// The op's name in the report.
    pub fn name(&self) -> String {
        match self {
            SweepOp::BiasGelu => "bias_gelu_tanh".into(),
            SweepOp::SumAll => "sum_all".into(),
            SweepOp::Softmax1024 => "softmax_rows1024".into(),
            SweepOp::Transpose => "transpose_square".into(),
            SweepOp::Histogram256 => "histc256".into(),
            SweepOp::Matmul(d) => format!("matmul_square_{d}"),
        }
    }

    /// Sizes (elements, or the side for square ops) from tiny to `max_elems` elements.
    pub fn sizes(&self, max_elems: usize) -> Vec<usize> {
        let geometric = |lo: usize, hi: usize, step: usize| {
            let mut v = Vec::new();
            let mut x = lo;
            while x <= hi {
                v.push(x);
                x *= step;
            }
            v
        };
        match self {
            SweepOp::Transpose => geometric(64, max_elems.isqrt(), 2),
            SweepOp::Matmul(_) => geometric(128, 8192.min(max_elems.isqrt() / 2), 2),
            SweepOp::Softmax1024 => geometric(1 << 12, max_elems, 4),
            _ => geometric(1 << 10, max_elems, 4),
        }
    }
}

/// [`SweepOp`] `op` at size `n`, checked against the CPU reference (matmul: 32 sampled
/// entries against f64 dot products) before it is returned.
///
/// # Errors
/// As [`copy_case`]; [`Error::UnsupportedDType`] for a matmul dtype the device lacks.
pub fn sweep_case<'c, R: Runtime>(
    client: &'c ComputeClient<R>,
    op: SweepOp,
    n: usize,
) -> Result<Case<'c>, Error> {
    use cubeport::reference::{Reduction, Tolerance};
    use cubeport::{Activation, GeluApprox};
    use std::sync::Arc;
    let case = |variant: String, size: String, bytes: usize, flops: usize, run| Case {
        dtype: op.dtype(),
        family: op.family(),
        variant,
        size,
        bytes: bytes as u64,
        flops: flops as u64,
        run,
        own_sync: None,
    };
    match op {
        SweepOp::BiasGelu => {
            let x: Vec<f32> = seeded(93, n, -4.0, 4.0);
            let b: Vec<f32> = seeded(94, n, -1.0, 1.0);
            let act = Activation::Gelu(GeluApprox::Tanh);
            let (dx, db) = (
                Arc::new(DeviceTensor::from_slice(client, &x, &[n])?),
                Arc::new(DeviceTensor::from_slice(client, &b, &[n])?),
            );
            let mut dy = poisoned::<R, f32>(client, &[n])?;
            let go = move |y: &mut DeviceTensor<f32>| {
                cubeport::bias_activation_into(
                    client,
                    dx.as_ref().as_ref(),
                    db.as_ref().as_ref(),
                    y.as_mut(),
                    act,
                )
            };
            go(&mut dy)?;
            let want = reference::bias_activation(
                &cubeport::testing::to_f64(&x),
                &cubeport::testing::to_f64(&b),
                act,
            );
            let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
            verify(
                reference::compare(&got, &want, Tolerance::elementwise(DType::F32)).ok(),
                "sweep bias_gelu",
            )?;
            Ok(case(
                op.name(),
                size_name(n),
                3 * n * 4,
                12 * n,
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::SumAll | SweepOp::Softmax1024 => {
            let len = if op == SweepOp::SumAll { n } else { 1024 };
            let rows = n / len;
            let x: Vec<f32> = seeded(95, rows * len, -1.0, 1.0);
            let xf = cubeport::testing::to_f64(&x);
            let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[rows, len])?);
            let sum = op == SweepOp::SumAll;
            let out_shape = if sum { vec![1] } else { vec![rows, len] };
            let mut dy = poisoned::<R, f32>(client, &out_shape)?;
            let go = move |y: &mut DeviceTensor<f32>| {
                if sum {
                    cubeport::reduce_into(
                        client,
                        dx.as_ref().as_ref(),
                        y.as_mut(),
                        None,
                        Reduction::Sum,
                    )
                } else {
                    cubeport::softmax_into(client, dx.as_ref().as_ref(), y.as_mut(), 1)
                }
            };
            go(&mut dy)?;
            let got = cubeport::testing::to_f64(&dy.to_vec(client)?);
            let ok = if sum {
                let abs: f64 = xf.iter().map(|v| v.abs()).sum();
                let want = reference::reduce(&xf, &[rows * len], None, Reduction::Sum);
                reference::compare(&got, &want, Tolerance::reduction(DType::F32, n, abs)).ok()
            } else {
                let want = reference::softmax(&xf, len);
                reference::compare(&got, &want, Tolerance::softmax(DType::F32, len)).ok()
            };
            verify(ok, &format!("sweep {}", op.name()))?;
            let out = if sum { 1 } else { n };
            let size = if sum {
                size_name(n)
            } else {
                format!("{rows}x{len}")
            };
            Ok(case(
                op.name(),
                size,
                (n + out) * 4,
                if sum { n } else { 5 * n },
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::Transpose => {
            let side = n;
            let x: Vec<f32> = seeded(96, side * side, -1.0, 1.0);
            let dx = Arc::new(DeviceTensor::from_slice(client, &x, &[side, side])?);
            let mut dy = poisoned::<R, f32>(client, &[side, side])?;
            let go = move |y: &mut DeviceTensor<f32>| {
                cubeport::transpose_into(client, dx.as_ref().as_ref(), y.as_mut())
            };
            go(&mut dy)?;
            let want = reference::transpose(&cubeport::testing::to_f64(&x), 1, side, side);
            verify(
                cubeport::testing::to_f64(&dy.to_vec(client)?) == want,
                "sweep transpose",
            )?;
            Ok(case(
                op.name(),
                format!("{side}x{side}"),
                2 * side * side * 4,
                0,
                Box::new(move || go(&mut dy)),
            ))
        }
        SweepOp::Histogram256 => {
            let values = seeded_uniform(97, n, 0.0, 1.0);
            let want = reference::histogram_range(&values, 256, 0.0, 1.0);
            let dx = Arc::new(DeviceTensor::from_slice(client, &values, &[n])?);
            let mut counts = DeviceTensor::<u32>::from_slice(client, &vec![u32::MAX; 256], &[256])?;
            let binning = Binning::Range { lo: 0.0, hi: 1.0 };
            let go = move |c: &mut DeviceTensor<u32>| {
                cubeport::histogram_into(client, dx.as_ref().as_ref(), c.as_mut(), binning)
            };
            go(&mut counts)?;
            verify(counts.to_vec(client)? == want, "sweep histogram")?;
            Ok(case(
                op.name(),
                size_name(n),
                n * 4,
                0,
                Box::new(move || go(&mut counts)),
            ))
        }
        SweepOp::Matmul(dtype) => match dtype {
            DType::F32 => sweep_matmul::<R, f32>(client, n),
            DType::F16 => sweep_matmul::<R, half::f16>(client, n),
            DType::BF16 => sweep_matmul::<R, half::bf16>(client, n),
            other => Err(unsupported(client, other)),
        },
    }
}

/// A square `side³` product of `E` with the automatic variant, sampled against f64.
fn sweep_matmul<'c, R: Runtime, E: cubeport::Element>(
    client: &'c ComputeClient<R>,
    side: usize,
) -> Result<Case<'c>, Error> {
    let dtype = E::DTYPE;
    if !dtype.is_supported_by(&cubeport::caps_of(client)) {
        return Err(unsupported(client, dtype));
    }
    let (m, n, k) = (side, side, side);
    let a: Vec<E> = seeded(98, m * k, -1.0, 1.0);
    let b: Vec<E> = seeded(99, k * n, -1.0, 1.0);
    let da = std::sync::Arc::new(DeviceTensor::from_slice(client, &a, &[m, k])?);
    let db = std::sync::Arc::new(DeviceTensor::from_slice(client, &b, &[k, n])?);
    let mut dc = poisoned::<R, E>(client, &[m, n])?;
    let go = move |c: &mut DeviceTensor<E>| {
        cubeport::matmul_into(
            client,
            da.as_ref().as_ref(),
            db.as_ref().as_ref(),
            c.as_mut(),
        )
    };
    go(&mut dc)?;
    verify_matmul_sample(
        &dc.to_vec(client)?,
        &a,
        &b,
        (m, n, k),
        32,
        &format!("sweep matmul {side}"),
    )?;
    let variant = cubeport::ops::matmul::matmul_variant(client, dtype, 1, (m, n, k))?.to_string();
    Ok(Case {
        dtype,
        family: "matmul",
        variant,
        size: format!("{m}x{n}x{k}"),
        bytes: ((m * k + k * n + m * n) * dtype.size()) as u64,
        flops: cubeport::ops::matmul::matmul_flops(1, m, n, k),
        run: Box::new(move || go(&mut dc)),
        own_sync: None,
    })
}

/// The sweep's matmul runs on float dtypes the device has.
fn unsupported<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Error {
    let caps = cubeport::caps_of(client);
    Error::UnsupportedDType {
        op: "sweep matmul",
        dtype,
        backend: caps.backend,
        runtime: caps.runtime_name,
    }
}
