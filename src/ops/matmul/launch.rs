//! The matmul launcher (the only `unsafe` of the family). It runs a [`MatmulPlan`], which only
//! [`MatmulVariant::plan`](super::MatmulVariant) makes, exactly as planned: every kernel, vector
//! width and grid below comes from the plan.

use super::plan::{Kernel, MatmulPlan, Pad};
use super::spec::MatmulSpec;
use crate::dtype::float_dispatch;
use crate::ops::activation::launch::Act;
use crate::ops::not_float;
use crate::{Element, Error};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeport_kernels::activation::{Activation, GeluErf, GeluTanh, Identity, ReluScale};
use cubeport_kernels::matmul::{
    SimtConfig, matmul_blocked_kernel, matmul_cmma_kernel, matmul_naive_kernel,
    matmul_narrow_kernel, matmul_narrow_mma_kernel, matmul_narrow_plane_kernel, matmul_pad_kernel,
    matmul_simt_async_kernel, matmul_simt_fixup_kernel, matmul_simt_kernel, matmul_simt_sk_kernel,
    matmul_skinny_fixup_kernel, matmul_skinny_kernel, matmul_tc_async_kernel, matmul_tc_kernel,
    matmul_tc_mma_kernel,
};

/// The buffers of one product. `bias` is any valid buffer when the spec has no bias (the
/// kernels never read it then).
pub(crate) struct Operands<'a> {
    pub a: &'a Handle,
    pub b: &'a Handle,
    pub bias: &'a Handle,
    pub c: &'a Handle,
}

/// Launches `plan` for `spec` on `ops`, with the activation `act` in the epilogue.
pub(crate) fn matmul<R: Runtime>(
    client: &ComputeClient<R>,
    ops: &Operands<'_>,
    spec: &MatmulSpec,
    plan: &MatmulPlan,
    act: Act,
) -> Result<(), Error> {
    float_dispatch!(spec.dtype, E => match act {
        Act::Identity => typed::<R, E, Identity>(client, ops, spec, plan, 1.0),
        Act::ReluScale(scale) => typed::<R, E, ReluScale>(client, ops, spec, plan, scale),
        Act::GeluTanh => typed::<R, E, GeluTanh>(client, ops, spec, plan, 1.0),
        Act::GeluErf => typed::<R, E, GeluErf>(client, ops, spec, plan, 1.0),
    }, other => return Err(not_float(client, "matmul", other)));
    #[cfg(feature = "testing")]
    LAST_PLAN.with(|last| *last.borrow_mut() = Some(plan.to_string()));
    Ok(())
}

#[cfg(feature = "testing")]
thread_local! {
    static LAST_PLAN: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// The id ([`MatmulPlan`]'s `Display`) of the last plan this thread launched.
#[cfg(feature = "testing")]
pub(crate) fn last_plan() -> Option<String> {
    LAST_PLAN.with(|last| last.borrow().clone())
}

fn strides_arg<R: Runtime>(s: [usize; 3]) -> SequenceArg<R, usize> {
    let mut arg = SequenceArg::new();
    for v in s {
        arg.push(v);
    }
    arg
}

/// Copies `src` (an operand of `spec`, `strides` its `[batch, row, col]` element strides) into
/// a new dense buffer laid out as `pad` says, the row tails zero.
fn pad_operand<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    src: &Handle,
    strides: [usize; 3],
    pad: &Pad,
) -> Handle {
    let elem = E::DTYPE.size();
    let out = client.empty(pad.len() * elem);
    let nv = 16 / elem;
    let total = pad.len() / nv;
    // SAFETY: `MatmulSpec::new` proved every element `strides` address for `z < pad.batch`
    // (1 when broadcast), `r < pad.rows`, `c < pad.cols` lies inside `src`, and the kernel reads
    // nothing else; `out` holds the `pad.len()` elements it writes, `nv` of them per vector
    // (`pad.pitch` is a multiple of `nv`).
    unsafe {
        matmul_pad_kernel::launch_unchecked::<E, R>(
            client,
            CubeCount::new_1d(total.div_ceil(256).min(65_535) as u32),
            CubeDim::new_1d(256),
            nv,
            ArrayArg::from_raw_parts(src.clone(), src.size_in_used() as usize / elem),
            ArrayArg::from_raw_parts(out.clone(), pad.len()),
            pad.rows,
            pad.cols,
            pad.pitch,
            strides_arg::<R>(strides),
            total,
        );
    }
    out
}

fn typed<R: Runtime, E: Element, A: Activation>(
    client: &ComputeClient<R>,
    ops: &Operands<'_>,
    spec: &MatmulSpec,
    plan: &MatmulPlan,
    scale: f32,
) {
    // The pad copies first (same stream, so they land before the product reads them); the
    // product then reads the padded buffers through their own strides.
    let [pad_a, pad_b] = plan.pad;
    let a_pad = pad_a.map(|p| pad_operand::<R, E>(client, ops.a, spec.a_strides, &p));
    let b_pad = pad_b.map(|p| pad_operand::<R, E>(client, ops.b, spec.b_strides, &p));
    let mut padded_spec = spec.clone();
    if let Some(p) = pad_a {
        padded_spec.a_strides = p.strides();
    }
    if let Some(p) = pad_b {
        padded_spec.b_strides = p.strides();
    }
    let padded = Operands {
        a: a_pad.as_ref().unwrap_or(ops.a),
        b: b_pad.as_ref().unwrap_or(ops.b),
        ..*ops
    };
    product::<R, E, A>(client, &padded, &padded_spec, plan, scale);
}

/// The plan's product kernels on `ops` (the padded operands where the plan pads).
fn product<R: Runtime, E: Element, A: Activation>(
    client: &ComputeClient<R>,
    ops: &Operands<'_>,
    spec: &MatmulSpec,
    plan: &MatmulPlan,
    scale: f32,
) {
    let elem = E::DTYPE.size();
    let a_len = ops.a.size_in_used() as usize / elem;
    let b_len = ops.b.size_in_used() as usize / elem;
    let c_len = (spec.batch * spec.m - 1) * spec.c_pitch + spec.n;
    let bias_len = if spec.bias { spec.n } else { 1 };
    let [gx, gy, gz] = plan.grid;
    let count = CubeCount::new_3d(gx, gy, gz);
    let dim = CubeDim::new_2d(plan.cube_dim[0], plan.cube_dim[1]);
    let (m, n, k, pitch) = (spec.m, spec.n, spec.k, spec.c_pitch);
    let sa = || strides_arg::<R>(spec.a_strides);
    let sb = || strides_arg::<R>(spec.b_strides);
    // SAFETY: `MatmulSpec::new` proved every element the strides address for `z < batch,
    // row < m, col < n, kk < k` lies inside its buffer, `c`'s rows of `n` at `c_pitch` inside
    // its buffer (`c_len`) and `bias` (when used) `n` elements; the kernels mask rows, columns
    // and depths beyond the problem and index nothing else. `MatmulVariant::plan` checked the
    // grid against the device's limits and the variant against the device (`runs_on`: cmma,
    // TF32, manual MMA, `cp.async` where the kernel needs them), built each configuration from
    // a shape that passed its `check` (the kernels' divisibility preconditions), and set every
    // vector width from `Widths`, which allows a width only where the operand's strides, row
    // length and buffer offset make those vector accesses aligned and in bounds (for a padded
    // operand, its dense buffer of whole-vector rows, zero past the row); the
    // configurations' vector flags match the widths. The `cp.async` kernels are planned only
    // where A and B rows (padded or not) are 16-byte vectors. The skinny, narrow and split manual-MMA
    // kernels' workspace holds the `batch · chunks · m · n` partial sums they and the fixup
    // pass index (`tc_split` leaves every chunk at least one depth row).
    unsafe {
        let buffers = || {
            (
                ArrayArg::from_raw_parts(ops.a.clone(), a_len),
                ArrayArg::from_raw_parts(ops.b.clone(), b_len),
                ArrayArg::from_raw_parts(ops.bias.clone(), bias_len),
                ArrayArg::from_raw_parts(ops.c.clone(), c_len),
            )
        };
        // The split products' second pass: the `chunks` partial sums of each output (a
        // `batch · chunks · m · n` f32 workspace) added in order, then the epilogue (a
        // grid-stride loop, so its 1-D grid stays within every device's limit).
        let fixup = |ws: Handle, len: usize, chunks: usize| {
            let (_, _, bias, c) = buffers();
            let outputs = spec.batch * m * n;
            matmul_skinny_fixup_kernel::launch_unchecked::<E, A, R>(
                client,
                CubeCount::new_1d(outputs.div_ceil(256).min(65_535) as u32),
                CubeDim::new_1d(256),
                ArrayArg::from_raw_parts(ws, len),
                bias,
                c,
                m,
                n,
                pitch,
                chunks,
                scale,
                spec.bias,
            );
        };
        // The split products' workspace: `batch · chunks · m · n` f32 partial sums when the
        // depth is split; when direct the kernel never touches it, and a 4-byte stand-in keeps
        // the bindings distinct on wgpu.
        let workspace = |direct: bool, chunks: usize| {
            let len = if direct {
                1
            } else {
                spec.batch * m * n * chunks
            };
            (client.empty(len * 4), len)
        };
        // Every planned kernel but the stream-K tail's takes the same arguments after its
        // vector widths: the operands, the problem, the epilogue's scale, its configuration.
        macro_rules! launch {
            ($kernel:ident::<$($t:ty),+>($count:expr, [$($width:expr),*], $($cfg:expr),+)) => {{
                let (a, b, bias, c) = buffers();
                $kernel::launch_unchecked::<$($t),+>(
                    client, $count, dim, $($width,)* a, b, bias, c, m, n, k, sa(), sb(), pitch,
                    scale, $($cfg),+
                )
            }};
        }
        // The depth-split kernels (skinny, narrow): their partial sums in the workspace, an
        // argument of their own with the chunk depth, then the fixup pass when split.
        macro_rules! launch_split {
            ($kernel:ident, [$($width:expr),*], $cfg:expr, $chunks:expr, $chunk_k:expr) => {{
                let (ws, len) = workspace($cfg.direct, $chunks);
                let (a, b, bias, c) = buffers();
                $kernel::launch_unchecked::<E, A, R>(
                    client,
                    count,
                    dim,
                    $($width,)*
                    a,
                    b,
                    bias,
                    c,
                    ArrayArg::from_raw_parts(ws.clone(), len),
                    m,
                    n,
                    k,
                    sa(),
                    sb(),
                    pitch,
                    scale,
                    $chunk_k,
                    $cfg,
                );
                if !$cfg.direct {
                    fixup(ws, len, $chunks);
                }
            }};
        }
        match plan.kernel {
            Kernel::Naive => launch!(matmul_naive_kernel::<E, A, R>(count, [], spec.bias)),
            Kernel::Blocked(cfg) => launch!(matmul_blocked_kernel::<E, A, R>(count, [], cfg)),
            Kernel::Cmma(cfg) => launch!(matmul_cmma_kernel::<E, A, R>(count, [], cfg)),
            Kernel::Skinny {
                cfg,
                nb,
                chunks,
                chunk_k,
            } => launch_split!(matmul_skinny_kernel, [nb], cfg, chunks, chunk_k),
            Kernel::Narrow {
                cfg,
                na,
                nb,
                chunks,
                chunk_k,
            } => launch_split!(matmul_narrow_kernel, [na, nb], cfg, chunks, chunk_k),
            Kernel::NarrowPlane {
                cfg,
                na,
                nb,
                chunks,
                chunk_k,
            } => launch_split!(matmul_narrow_plane_kernel, [na, nb], cfg, chunks, chunk_k),
            Kernel::NarrowMma {
                cfg,
                na,
                nb,
                chunks,
                chunk_k,
            } => launch_split!(matmul_narrow_mma_kernel, [na, nb], cfg, chunks, chunk_k),
            Kernel::SimtAsync { cfg, nv, nc } => {
                launch!(matmul_simt_async_kernel::<E, A, R>(count, [nv, nc], cfg))
            }
            Kernel::Simt {
                cfg,
                nb,
                nc,
                stream_k: None,
            } => launch!(matmul_simt_kernel::<E, A, R>(count, [nb, nc], cfg)),
            Kernel::Simt {
                cfg,
                nb,
                nc,
                stream_k: Some(sk),
            } => {
                // Three kernels in order on one stream: the whole blocks `0..dp` (the plain
                // kernel, `linear`, on `dp` cubes: the plan has `dp` within the first grid
                // axis), the tail's pieces into the workspace (`slots() · bm · bn` f32), their
                // sums through the epilogue (`StreamKPlan::new` met the tail kernels'
                // precondition `chunk < iters`).
                let split = sk.split;
                if split.dp > 0 {
                    let whole = CubeCount::new_1d(split.dp as u32);
                    let linear = SimtConfig {
                        linear: true,
                        ..cfg
                    };
                    launch!(matmul_simt_kernel::<E, A, R>(whole, [nb, nc], linear));
                }
                let ws = client.empty(sk.workspace * 4);
                let workspace = || ArrayArg::from_raw_parts(ws.clone(), sk.workspace);
                let (a, b, bias, c) = buffers();
                matmul_simt_sk_kernel::launch_unchecked::<E, R>(
                    client,
                    CubeCount::new_2d(sk.tail_grid[0], sk.tail_grid[1]),
                    dim,
                    nb,
                    a,
                    b,
                    workspace(),
                    m,
                    n,
                    k,
                    sa(),
                    sb(),
                    split.dp,
                    split.chunk,
                    split.total,
                    sk.tail,
                );
                matmul_simt_fixup_kernel::launch_unchecked::<E, A, R>(
                    client,
                    CubeCount::new_1d(split.tail as u32),
                    dim,
                    nc,
                    workspace(),
                    bias,
                    c,
                    m,
                    n,
                    k,
                    pitch,
                    scale,
                    split.dp,
                    split.chunk,
                    sk.tail,
                )
            }
            Kernel::Tc {
                cfg,
                na,
                nb,
                nv,
                nc,
            } => launch!(matmul_tc_kernel::<E, E::Frag, A, R>(
                count,
                [na, nb, nv, nc],
                cfg
            )),
            Kernel::TcAsync {
                cfg,
                nv,
                nc,
                stages,
            } => launch!(matmul_tc_async_kernel::<E, E::Frag, A, R>(
                count,
                [nv, nv, nc],
                cfg,
                stages
            )),
            Kernel::TcMma {
                cfg,
                nv,
                nc,
                stages,
                chunks,
                chunk_k,
            } => {
                let (ws, len) = workspace(!cfg.split, chunks);
                let (a, b, bias, c) = buffers();
                matmul_tc_mma_kernel::launch_unchecked::<E, A, R>(
                    client,
                    count,
                    dim,
                    nv,
                    nv,
                    nc,
                    a,
                    b,
                    bias,
                    c,
                    ArrayArg::from_raw_parts(ws.clone(), len),
                    m,
                    n,
                    k,
                    sa(),
                    sb(),
                    pitch,
                    scale,
                    chunks,
                    chunk_k,
                    cfg,
                    stages,
                );
                if cfg.split {
                    fixup(ws, len, chunks);
                }
            }
        }
    }
}
