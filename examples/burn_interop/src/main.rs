//! cubeport kernels on Burn 0.21 tensors, in place: no copy in or out.
//!
//! Burn's CubeCL backend (`burn_cubecl::CubeBackend<R, …>`, the backend under `burn::backend::Wgpu`
//! and `burn::backend::Cuda`) stores every float tensor as a `CubeTensor<R>`: a cubecl `Handle`,
//! shape and strides, and the `ComputeClient` it lives on — the same cubecl 0.10 types cubeport
//! takes. So a Burn tensor is handed to cubeport as a `TensorRef` over its handle, cubeport
//! writes into a Burn-allocated output through a `TensorMut`, and the result goes back into a
//! `burn::Tensor` without leaving the device. Work is queued on Burn's own client, so it is
//! ordered with Burn's ops without any sync.
//!
//! For each backend with a device (wgpu: Vulkan or lavapipe; CUDA), this runs cubeport's fused
//! bias + GELU, softmax, RMSNorm, LayerNorm, matmul-with-epilogue and causal grouped-query
//! attention on Burn tensors and checks each against Burn's own ops (`gelu(x + b)`,
//! `softmax(x, 1)`, the norms composed of `mean_dim`, `sqrt` and broadcasts,
//! `gelu(a.matmul(b) + bias)`, `softmax(q·kᵀ·scale + mask)·v`); the matmul and attention also against
//! an f64 host reference, because Burn's CUDA matmul runs f32 on TF32 tensor cores (cubek's
//! automatic choice) while cubeport's is true f32: the two agree to TF32 precision, cubeport
//! matches f64 to f32 precision. Exit status 1 on any mismatch. Backends without a device print `SKIP` (a failure under `CUBEPORT_STRICT=1`).
//!
//! ```text
//! cargo run --release -p burn-interop
//! ```

use burn::tensor::activation::{gelu, softmax};
use burn::tensor::{Distribution, Tensor, TensorPrimitive};
use burn_cubecl::{CubeBackend, CubeRuntime, tensor::CubeTensor};
use cubeport::{Activation, BackendKind, DType, GeluApprox, TensorMut, TensorRef};
use std::process::ExitCode;

type Backend<R> = CubeBackend<R, f32, i32, u32>;

/// The cubeport view of a Burn float tensor: its handle, shape, strides and dtype.
fn view<R: CubeRuntime>(t: &CubeTensor<R>) -> TensorRef<'_> {
    TensorRef::new(&t.handle, t.meta.shape(), t.meta.strides(), dtype_of(t))
}

/// The writable cubeport view of a Burn tensor cubeport is to fill.
fn view_mut<R: CubeRuntime>(t: &CubeTensor<R>) -> TensorMut<'_> {
    TensorMut::new(&t.handle, t.meta.shape(), t.meta.strides(), dtype_of(t))
}

fn dtype_of<R: CubeRuntime>(t: &CubeTensor<R>) -> DType {
    // Burn's dtype converts into cubecl's storage type, which cubeport maps; f32 here.
    DType::from_cubecl(t.dtype.into()).unwrap_or(DType::F32)
}

/// The `CubeTensor` behind a Burn float tensor (cloning a Burn tensor clones a handle, not data).
fn primitive<R: CubeRuntime, const D: usize>(t: &Tensor<Backend<R>, D>) -> CubeTensor<R> {
    t.clone().into_primitive().tensor()
}

fn from_primitive<R: CubeRuntime, const D: usize>(t: CubeTensor<R>) -> Tensor<Backend<R>, D> {
    Tensor::from_primitive(TensorPrimitive::Float(t))
}

fn max_abs_diff<R: CubeRuntime, const D: usize>(
    a: Tensor<Backend<R>, D>,
    b: Tensor<Backend<R>, D>,
) -> f32 {
    let a = a.into_data().to_vec::<f32>().unwrap_or_default();
    let b = b.into_data().to_vec::<f32>().unwrap_or_default();
    if a.len() != b.len() || a.is_empty() {
        return f32::INFINITY;
    }
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Runs the ops on `device`; returns the failures.
fn check<R: CubeRuntime>(device: R::Device, name: &str) -> Result<Vec<String>, cubeport::Error> {
    let mut failures = Vec::new();
    let mut report = |what: &str, diff: f32, tol: f32| {
        let ok = diff <= tol;
        println!(
            "{name:5} {what:44} max |Δ| = {diff:.2e} (tolerance {tol:.0e}) {}",
            if ok { "ok" } else { "FAILED" }
        );
        if !ok {
            failures.push(format!("{name} {what}"));
        }
    };
    <Backend<R> as burn::tensor::backend::Backend>::seed(&device, 7);
    // Ragged sizes: nothing is a multiple of a tile or a vector width.
    let (rows, cols, k) = (67, 1003, 129);
    let x =
        Tensor::<Backend<R>, 2>::random([rows, cols], Distribution::Uniform(-3.0, 3.0), &device);
    let bias = Tensor::<Backend<R>, 1>::random([cols], Distribution::Uniform(-1.0, 1.0), &device);
    let (px, pbias) = (primitive(&x), primitive(&bias));
    let client = px.client.clone();

    // 1. bias + GELU (erf, Burn's gelu), fused in one pass, into a Burn-allocated tensor.
    let out = primitive(&Tensor::<Backend<R>, 2>::empty([rows, cols], &device));
    cubeport::bias_activation_into(
        &client,
        view(&px),
        view(&pbias),
        view_mut(&out),
        Activation::Gelu(GeluApprox::Erf),
    )?;
    let want = gelu(x.clone() + bias.clone().unsqueeze::<2>());
    report("bias + gelu", max_abs_diff(from_primitive(out), want), 1e-5);

    // 2. softmax along the last axis.
    let out = primitive(&Tensor::<Backend<R>, 2>::empty([rows, cols], &device));
    cubeport::softmax_into(&client, view(&px), view_mut(&out), 1)?;
    report(
        "softmax",
        max_abs_diff(from_primitive(out), softmax(x.clone(), 1)),
        1e-6,
    );

    // 3. RMSNorm and LayerNorm along the last axis (weight, and bias for LayerNorm), against
    //    Burn's composition of its own ops.
    let eps = 1e-5;
    let w = Tensor::<Backend<R>, 1>::random([cols], Distribution::Uniform(0.5, 1.5), &device);
    let pw = primitive(&w);
    let out = primitive(&Tensor::<Backend<R>, 2>::empty([rows, cols], &device));
    cubeport::rms_norm_into(&client, view(&px), Some(view(&pw)), view_mut(&out), eps)?;
    let ms = x.clone().powf_scalar(2.0).mean_dim(1);
    let want = x.clone() / ms.add_scalar(eps).sqrt() * w.clone().unsqueeze::<2>();
    report("rms_norm", max_abs_diff(from_primitive(out), want), 1e-5);
    let out = primitive(&Tensor::<Backend<R>, 2>::empty([rows, cols], &device));
    cubeport::layer_norm_into(
        &client,
        view(&px),
        Some(view(&pw)),
        Some(view(&pbias)),
        view_mut(&out),
        eps,
    )?;
    let centred = x.clone() - x.clone().mean_dim(1);
    let var = centred.clone().powf_scalar(2.0).mean_dim(1);
    let want =
        centred / var.add_scalar(eps).sqrt() * w.unsqueeze::<2>() + bias.clone().unsqueeze::<2>();
    report("layer_norm", max_abs_diff(from_primitive(out), want), 1e-5);

    // 4. matmul with the fused epilogue gelu(a·b + bias); `b` is a transposed Burn view
    //    (strides, no copy), which cubeport reads as is.
    let a = Tensor::<Backend<R>, 2>::random([rows, k], Distribution::Uniform(-1.0, 1.0), &device);
    let bt = Tensor::<Backend<R>, 2>::random([cols, k], Distribution::Uniform(-1.0, 1.0), &device);
    let b = bt.transpose(); // [k, cols], strides [1, k]
    let (pa, pb) = (primitive(&a), primitive(&b));
    let out = primitive(&Tensor::<Backend<R>, 2>::empty([rows, cols], &device));
    let out_handle = out.clone();
    cubeport::matmul_fused_into(
        &client,
        view(&pa),
        view(&pb),
        Some(view(&pbias)),
        Activation::Gelu(GeluApprox::Erf),
        view_mut(&out),
    )?;
    // Against an f64 reference on the host (cubeport's matmul is true f32: tight tolerance)…
    let host =
        |t: &Tensor<Backend<R>, 2>| t.clone().into_data().to_vec::<f32>().unwrap_or_default();
    let (ha, hb) = (host(&a), host(&b));
    let hbias = bias.clone().into_data().to_vec::<f32>().unwrap_or_default();
    let mut exact = vec![0.0f64; rows * cols];
    let mut scale = vec![0.0f64; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            let (mut dot, mut abs) = (0.0f64, 0.0f64);
            for p in 0..k {
                let t = ha[i * k + p] as f64 * hb[p * cols + j] as f64;
                dot += t;
                abs += t.abs();
            }
            exact[i * cols + j] = cubeport::reference::gelu_erf(dot + hbias[j] as f64);
            scale[i * cols + j] = abs;
        }
    }
    let ours = from_primitive::<R, 2>(out_handle)
        .into_data()
        .to_vec::<f32>()
        .unwrap_or_default();
    let burn = gelu(a.matmul(b) + bias.unsqueeze::<2>())
        .into_data()
        .to_vec::<f32>()
        .unwrap_or_default();
    let worst = |v: &[f32]| {
        v.iter()
            .zip(&exact)
            .zip(&scale)
            .map(|((g, w), s)| (*g as f64 - w).abs() / s.max(1.0))
            .fold(0.0f64, f64::max) as f32
    };
    // …and against Burn's own matmul, which on CUDA runs f32 through TF32 tensor cores (10-bit
    // mantissa): agreement to TF32 precision, 2^-10 of Σ|a·b|.
    report(
        "matmul + bias + gelu vs f64 (rel. to Σ|ab|)",
        worst(&ours),
        1e-6,
    );
    let burn_vs_f64 = worst(&burn);
    println!("{name:5} (Burn's own matmul vs f64: {burn_vs_f64:.1e} of Σ|ab|)");
    let diff = ours
        .iter()
        .zip(&burn)
        .zip(&scale)
        .map(|((x, y), s)| (x - y).abs() / s.max(1.0) as f32)
        .fold(0.0, f32::max);
    report(
        "matmul + bias + gelu vs burn (rel. to Σ|ab|)",
        diff,
        2.0 / 1024.0,
    );

    // 5. attention, causal (bottom-right, Sq < Sk), grouped-query keys (4 query heads on 2 key
    //    heads), the queries a `[B, S, H, D]` Burn tensor seen as `[B, H, S, D]` (swap_dims:
    //    strides, no copy); against Burn's composition (keys repeated per group, matmul, an
    //    additive −∞ mask, softmax, matmul), and against the f64 reference on the host.
    let (bsz, heads, kv_heads, sq, sk, d) = (2, 4, 2, 37, 53, 64);
    let uniform = Distribution::Uniform(-1.0, 1.0);
    let q = Tensor::<Backend<R>, 4>::random([bsz, sq, heads, d], uniform, &device).swap_dims(1, 2);
    let kk = Tensor::<Backend<R>, 4>::random([bsz, kv_heads, sk, d], uniform, &device);
    let vv = Tensor::<Backend<R>, 4>::random([bsz, kv_heads, sk, d], uniform, &device);
    let (pq, pk, pv) = (primitive(&q), primitive(&kk), primitive(&vv));
    let out = primitive(&Tensor::<Backend<R>, 4>::empty(
        [bsz, heads, sq, d],
        &device,
    ));
    let out_handle = out.clone();
    cubeport::attention_into(
        &client,
        view(&pq),
        view(&pk),
        view(&pv),
        view_mut(&out),
        None,
        cubeport::AttentionOptions::default().causal(),
    )?;
    let scale = 1.0 / (d as f64).sqrt();
    let group = heads / kv_heads;
    let per_head = |t: Tensor<Backend<R>, 4>| {
        t.unsqueeze_dim::<5>(2)
            .repeat_dim(2, group)
            .reshape([bsz, heads, sk, d])
    };
    // Key j is visible from query i when j + sq ≤ i + sk.
    let mask: Vec<f32> = (0..sq * sk)
        .map(|ij| {
            let (i, j) = (ij / sk, ij % sk);
            if j + sq <= i + sk {
                0.0
            } else {
                f32::NEG_INFINITY
            }
        })
        .collect();
    let mask = Tensor::<Backend<R>, 4>::from_data(
        burn::tensor::TensorData::new(mask, [1, 1, sq, sk]),
        &device,
    );
    let scores = q.clone().matmul(per_head(kk.clone()).swap_dims(2, 3)) * scale + mask;
    let burn = softmax(scores, 3).matmul(per_head(vv.clone()));
    let ours = from_primitive::<R, 4>(out_handle);
    // Burn's CUDA matmul runs on TF32 (see 4): agreement to that precision.
    report(
        "attention vs burn",
        max_abs_diff(ours.clone(), burn),
        2.0 / 1024.0,
    );
    let host4 =
        |t: &Tensor<Backend<R>, 4>| t.clone().into_data().to_vec::<f32>().unwrap_or_default();
    let f64s = |v: Vec<f32>| v.into_iter().map(f64::from).collect::<Vec<_>>();
    let shape = cubeport::reference::AttentionShape {
        batch: bsz,
        heads,
        kv_heads,
        sq,
        sk,
        head_dim: d,
    };
    let (want, _) = cubeport::reference::attention(
        &f64s(host4(&q)),
        &f64s(host4(&kk)),
        &f64s(host4(&vv)),
        shape,
        true,
        scale,
    );
    let got = host4(&ours);
    let worst = if got.len() == want.len() {
        got.iter()
            .zip(&want)
            .map(|(g, w)| (*g as f64 - w).abs())
            .fold(0.0f64, f64::max) as f32
    } else {
        f32::INFINITY
    };
    report("attention vs f64", worst, 1e-5);
    Ok(failures)
}

fn main() -> ExitCode {
    let mut failures = Vec::new();
    let mut ran = 0;
    for status in cubeport::backends::available() {
        if let Err(e) = &status.device {
            cubeport::testing::skip("burn_interop", &status.kind.to_string(), &e.to_string());
            continue;
        }
        let result = match status.kind {
            BackendKind::Wgpu => check::<cubecl::wgpu::WgpuRuntime>(Default::default(), "wgpu"),
            BackendKind::Cuda => check::<cubecl::cuda::CudaRuntime>(Default::default(), "cuda"),
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        ran += 1;
        match result {
            Ok(f) => failures.extend(f),
            Err(e) => failures.push(format!("{}: {e}", status.kind)),
        }
    }
    if failures.is_empty() && ran > 0 {
        println!("burn interop: all checks passed on {ran} backend(s)");
        ExitCode::SUCCESS
    } else {
        eprintln!("burn interop: {ran} backend(s) run, failures: {failures:?}");
        ExitCode::FAILURE
    }
}
