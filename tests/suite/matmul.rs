//! Generic bodies for matmul: every variant the device runs, against the f64 reference, on
//! ragged, batched (broadcast) and transposed operands, with and without the fused epilogue;
//! and every validation error; the plan reported is the plan that runs.

use crate::with_dtype;
use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare_each, poisoned, seeded, to_f64};
use cubeport::{
    Activation, DType, DeviceTensor, Element, Error, GeluApprox, MatmulVariant, ShapeError,
    SimtShape, TcShape, TensorMut, TensorRef,
};

/// One problem: `[batch_a, m, k] · [batch_b, k, n]` (`batch = 0` means rank 2), `a` and/or
/// `b` stored transposed (then passed as a strided view).
#[derive(Debug, Clone, Copy)]
pub struct Problem {
    pub batch_a: usize,
    pub batch_b: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub trans_a: bool,
    pub trans_b: bool,
}

/// A product whose B is one matrix (`batch_b = 0`): broadcast over A's batch, if any.
fn problem(batch_a: usize, m: usize, n: usize, k: usize, trans_a: bool, trans_b: bool) -> Problem {
    Problem {
        batch_a,
        batch_b: 0,
        m,
        n,
        k,
        trans_a,
        trans_b,
    }
}

/// Asserts that the device refuses `v` for `dtype` with [`Error::Unsupported`] (the refusal
/// comes from the variant and the device, before any shape is considered).
fn assert_refused<R: Runtime>(client: &ComputeClient<R>, dtype: DType, v: MatmulVariant) {
    with_dtype!(dtype, E => {
        let a = DeviceTensor::<E>::empty(client, &[16, 64]).unwrap();
        let b = DeviceTensor::<E>::empty(client, &[64, 64]).unwrap();
        let mut c = DeviceTensor::<E>::empty(client, &[16, 64]).unwrap();
        let act = Activation::Identity;
        let r = cubeport::matmul_with(client, a.as_ref(), b.as_ref(), None, act, c.as_mut(), v);
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{v} {dtype}: {r:?}");
    });
}

/// Host data of a logical `[batch, rows, cols]` operand, stored row-major or transposed per
/// batch (`[batch, cols, rows]`); returns the stored buffer and the view's shape and strides.
fn store<E: Element>(
    logical: &[E],
    batch: usize,
    rows: usize,
    cols: usize,
    transposed: bool,
) -> (Vec<E>, Vec<usize>, Vec<usize>) {
    let b = batch.max(1);
    let mut shape = vec![rows, cols];
    let mut strides = if transposed {
        vec![1, rows]
    } else {
        vec![cols, 1]
    };
    if batch > 0 {
        shape.insert(0, batch);
        strides.insert(0, rows * cols);
    }
    if !transposed {
        return (logical.to_vec(), shape, strides);
    }
    let mut data = logical.to_vec();
    for z in 0..b {
        for r in 0..rows {
            for c in 0..cols {
                data[z * rows * cols + c * rows + r] = logical[z * rows * cols + r * cols + c];
            }
        }
    }
    (data, shape, strides)
}

/// The automatic choice and every variant the device runs match the reference on `p`.
pub fn matmul_matches<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    p: Problem,
    fused: bool,
) {
    variants_match(client, dtype, p, fused, &runnable(client, dtype));
}

/// The automatic choice (`None`) and every preset variant the device runs for `dtype`.
fn runnable<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Vec<Option<MatmulVariant>> {
    let caps = cubeport::caps_of(client);
    let mut variants: Vec<Option<MatmulVariant>> = vec![None];
    variants.extend(
        MatmulVariant::ALL
            .iter()
            .filter(|v| v.runs_on(&caps, dtype))
            .map(|&v| Some(v)),
    );
    variants
}

/// Each of `variants` (`None`: the automatic choice) matches the f64 reference on `p`, with
/// the variant's tolerance, into a poisoned output.
pub(crate) fn variants_match<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    p: Problem,
    fused: bool,
    variants: &[Option<MatmulVariant>],
) {
    let (ba, bb) = (p.batch_a.max(1), p.batch_b.max(1));
    let batch = ba.max(bb);
    let rank3 = p.batch_a > 0 || p.batch_b > 0;
    let out_shape: Vec<usize> = if rank3 {
        vec![batch, p.m, p.n]
    } else {
        vec![p.m, p.n]
    };
    let act = if fused {
        Activation::Gelu(GeluApprox::Tanh)
    } else {
        Activation::Identity
    };
    with_dtype!(dtype, E => {
        let seed = (p.m * 131 + p.n * 7 + p.k) as u64;
        let a: Vec<E> = seeded(seed, ba * p.m * p.k, -1.0, 1.0);
        let b: Vec<E> = seeded(seed + 1, bb * p.k * p.n, -1.0, 1.0);
        let bias: Vec<E> = seeded(seed + 2, p.n, -0.5, 0.5);
        let (af, bf) = (to_f64(&a), to_f64(&b));
        let prod = reference::matmul(&af, &bf, ba, bb, p.m, p.n, p.k);
        let want: Vec<f64> = if fused {
            reference::bias_activation(&prod, &to_f64(&bias), act)
        } else {
            prod
        }
        .into_iter()
        .map(|v| E::from_f64(v).to_f64())
        .collect();
        let abs_a: Vec<f64> = af.iter().map(|v| v.abs()).collect();
        let abs_b: Vec<f64> = bf.iter().map(|v| v.abs()).collect();
        let sum_abs = reference::matmul(&abs_a, &abs_b, ba, bb, p.m, p.n, p.k);
        let (sa, shape_a, strides_a) = store(&a, p.batch_a, p.m, p.k, p.trans_a);
        let (sb, shape_b, strides_b) = store(&b, p.batch_b, p.k, p.n, p.trans_b);
        let da = DeviceTensor::from_slice(client, &sa, &[sa.len()]).unwrap();
        let db = DeviceTensor::from_slice(client, &sb, &[sb.len()]).unwrap();
        let dbias = DeviceTensor::from_slice(client, &bias, &[p.n]).unwrap();
        let va = TensorRef::new(da.handle(), &shape_a, &strides_a, dtype);
        let vb = TensorRef::new(db.handle(), &shape_b, &strides_b, dtype);
        for &v in variants {
            let mut dc = poisoned::<R, E>(client, &out_shape).unwrap();
            let bias_ref = fused.then(|| dbias.as_ref());
            let r = match v {
                None => cubeport::matmul_fused_into(client, va.clone(), vb.clone(), bias_ref, act, dc.as_mut()),
                Some(v) => cubeport::matmul_with(client, va.clone(), vb.clone(), bias_ref, act, dc.as_mut(), v),
            };
            r.unwrap_or_else(|e| panic!("{v:?} {p:?}: {e}"));
            let got = to_f64(&dc.to_vec(client).unwrap());
            let tol = |i: usize| match v {
                Some(v) => v.tolerance(dtype, p.k, sum_abs[i]),
                None => Tolerance::matmul(dtype, p.k, sum_abs[i]),
            };
            let c = compare_each(&got, &want, tol);
            assert!(c.ok(), "matmul {v:?} {dtype} {p:?} fused={fused} on {}: {c}", R::name(client));
        }
    })
}

/// The stream-K SIMT kernel (`_sk<cubes>`) on problems whose blocks split into whole ones and
/// a shared tail in several ways — a tail block in 2 to 8 pieces, tails that cross batches or
/// `_g8`'s column strips, 4-wide and scalar B and C paths, transposed operands, and a cube
/// count that divides the blocks (no tail: the plain kernel runs) — and with the device's SM
/// count where it reports one; then the decode shapes of 32 and 64 rows, all blocks in the tail.
pub fn matmul_stream_k<R: Runtime>(client: &ComputeClient<R>) {
    let caps = cubeport::caps_of(client);
    let sk = |p: u16| Some(MatmulVariant::Simt(SimtShape::S128X256_G8.with_stream_k(p)));
    let device = MatmulVariant::Simt(SimtShape::S128X256_G8_SK);
    for (p, fused, cubes) in [
        // 5 × 5 blocks of 38 depth tiles: tails of 1 (2 cubes) and 4 blocks (7 cubes); 5 divides.
        (
            problem(0, 600, 1101, 300, false, false),
            false,
            vec![2, 5, 7],
        ),
        (problem(0, 600, 1100, 300, false, false), true, vec![7]),
        // 3 batches × 2 × 2 blocks of 10 depth tiles; B broadcast; tails cross batches.
        (problem(3, 130, 300, 77, false, false), true, vec![5, 8]),
        // 3 × 3 blocks of 13 depth tiles, both operands transposed.
        (problem(0, 257, 520, 100, true, true), false, vec![3, 4]),
        // 9 × 2 blocks (two column strips of `_g8`: 8 rows, then 1) of 3 depth tiles: whole
        // blocks that fill the first strip (4 cubes) or stop one short of it (5).
        (problem(0, 1100, 300, 40, false, false), false, vec![4, 5]),
        // One block of 65 depth tiles in 8 pieces.
        (problem(0, 72, 80, 520, false, false), true, vec![8]),
    ] {
        let mut variants: Vec<Option<MatmulVariant>> = cubes.into_iter().map(sk).collect();
        if device.runs_on(&caps, DType::F32) {
            variants.push(Some(device));
        }
        variants_match(client, DType::F32, p, fused, &variants);
    }
    // The decode shapes (17–64 rows): fewer blocks than cubes, so every block is tail, cut
    // into up to 8 pieces; rows that do not fill the block, odd `n` (scalar B), a batch.
    for (shape, p, fused, cubes) in [
        (
            SimtShape::S32X128,
            problem(0, 29, 700, 1500, false, false),
            false,
            vec![5, 16],
        ),
        (
            SimtShape::S32X128,
            problem(2, 20, 257, 333, false, true),
            true,
            vec![7],
        ),
        (
            SimtShape::S64X128,
            problem(0, 50, 300, 900, true, false),
            true,
            vec![3, 9],
        ),
        (
            SimtShape::S64X128,
            problem(0, 64, 129, 2000, false, false),
            false,
            vec![24],
        ),
    ] {
        let variants: Vec<Option<MatmulVariant>> = cubes
            .into_iter()
            .map(|c| Some(MatmulVariant::Simt(shape.with_stream_k(c))))
            .collect();
        variants_match(client, DType::F32, p, fused, &variants);
    }
}

/// The plan `variant` gets for `p`, its operands laid out as `variants_match` lays them
/// (`store`: batched or not, transposed or not), as printed.
fn plan_text<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    p: Problem,
    variant: MatmulVariant,
) -> String {
    plan_text_of(client, dtype, p, Some(variant))
}

/// The automatic plan of `p` as [`plan_text`] prints it.
fn auto_plan_text<R: Runtime>(client: &ComputeClient<R>, dtype: DType, p: Problem) -> String {
    plan_text_of(client, dtype, p, None)
}

fn plan_text_of<R: Runtime>(
    client: &ComputeClient<R>,
    dtype: DType,
    p: Problem,
    variant: Option<MatmulVariant>,
) -> String {
    with_dtype!(dtype, E => {
        let (ba, bb) = (p.batch_a.max(1), p.batch_b.max(1));
        let zeros = |n: usize| vec![E::from_f64(0.0); n];
        let (sa, shape_a, strides_a) = store(&zeros(ba * p.m * p.k), p.batch_a, p.m, p.k, p.trans_a);
        let (sb, shape_b, strides_b) = store(&zeros(bb * p.k * p.n), p.batch_b, p.k, p.n, p.trans_b);
        let da = DeviceTensor::from_slice(client, &sa, &[sa.len()]).unwrap();
        let db = DeviceTensor::from_slice(client, &sb, &[sb.len()]).unwrap();
        let va = TensorRef::new(da.handle(), &shape_a, &strides_a, dtype);
        let vb = TensorRef::new(db.handle(), &shape_b, &strides_b, dtype);
        let out = if p.batch_a + p.batch_b > 0 { vec![ba.max(bb), p.m, p.n] } else { vec![p.m, p.n] };
        let mut dc = DeviceTensor::<E>::empty(client, &out).unwrap();
        cubeport::matmul_plan(client, &va, &vb, None, &dc.as_mut(), variant)
            .unwrap_or_else(|e| panic!("{variant:?} {p:?}: {e}"))
            .to_string()
    })
}

/// The skinny kernel (decode-like rows): problems whose depth splits over the grid (the
/// fixup pass sums the chunks) and ones it does not, B rows of 16-byte vectors, of 4-wide
/// vectors only, or scalars (odd `n`, a transposed B), batches with B broadcast, a transposed
/// A, and 17 rows (two row groups, forced); with and without the fused epilogue. The automatic
/// choice takes it for up to 16 rows (64 on CUDA cores when 64 × 64 tiles under-fill the
/// device), and the plan names the split.
pub fn matmul_skinny<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let both = [None, Some(MatmulVariant::Skinny)];
    for (p, fused, split) in [
        (problem(0, 1, 300, 2000, false, false), false, Some(true)),
        (problem(0, 1, 512, 1024, false, false), true, Some(true)),
        (problem(0, 5, 257, 1500, false, false), true, Some(true)),
        (problem(0, 16, 96, 2100, false, true), false, Some(true)),
        (problem(3, 2, 64, 900, true, false), true, Some(true)),
        (problem(0, 3, 8, 4, false, false), true, Some(false)),
        (problem(0, 17, 40, 600, false, false), false, None),
    ] {
        variants_match(client, dtype, p, fused, &both);
        let variant = cubeport::matmul_variant(client, dtype, p.batch_a.max(1), (p.m, p.n, p.k));
        let auto = variant.unwrap_or_else(|e| panic!("{p:?}: {e}"));
        // Up to 16 rows always; up to 64 on CUDA cores where 64 × 64 tiles under-fill the
        // device (these problems' few columns always do); except where the split tensor-core
        // shapes take them (manual MMA, B rows of 16-byte vectors).
        let caps = cubeport::caps_of(client);
        let simt = !MatmulVariant::Cmma.runs_on(&caps, dtype);
        let tc_split = TcShape::split_for(p.m)
            .is_some_and(|s| MatmulVariant::Tc(s).runs_on(&caps, dtype))
            && p.n % (16 / dtype.size()) == 0;
        // Past 16 rows on CUDA cores (depth 512 or more), a device that reports its SM count
        // takes SIMT blocks of the rows' height with a stream-K tail of two cubes per SM instead.
        let simt_sk = simt && p.m > 16 && p.m <= 64 && p.k >= 512 && caps.num_sms.is_some();
        let skinny = !tc_split && !simt_sk && (p.m <= 16 || (simt && p.m <= 64));
        assert_eq!(
            auto == MatmulVariant::Skinny,
            skinny,
            "{dtype} {p:?}: {auto}"
        );
        if simt_sk && !tc_split {
            let sms = caps.num_sms.unwrap_or(0) as u16;
            let shape = if p.m <= 32 {
                SimtShape::S32X128
            } else {
                SimtShape::S64X128
            };
            assert_eq!(
                auto,
                MatmulVariant::Simt(shape.with_stream_k(2 * sms)),
                "{p:?}"
            );
        }
        let plan = plan_text(client, dtype, p, MatmulVariant::Skinny);
        if let Some(split) = split {
            assert_eq!(
                plan.contains("chunks + fixup"),
                split,
                "{dtype} {p:?}: {plan}"
            );
        }
    }
}

/// The narrow kernel (few columns, forced), A loaded per unit and staged: one column and 3, 5, 8, 16, 17 and 24 (two column
/// groups, the second one column wide, or half full of B vectors), depths that split over the grid (the fixup pass sums
/// the chunks; the plan names them) and one that does not, A rows of 16-byte vectors or
/// scalars (a transposed A), a transposed B, batches with A or B broadcast and both batched,
/// ragged rows; with and without the fused epilogue, each against f64 into a poisoned output.
pub fn matmul_narrow<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let batched_b = |batch_a, m, n, k| Problem {
        batch_b: 3,
        ..problem(batch_a, m, n, k, false, false)
    };
    let both = [
        Some(MatmulVariant::Narrow),
        Some(MatmulVariant::NarrowStaged),
        Some(MatmulVariant::NarrowPlane),
    ];
    // (problem, fused, whether the depth splits)
    for (p, fused, split) in [
        (problem(0, 300, 1, 2000, false, false), false, Some(true)),
        (problem(0, 513, 8, 1024, false, false), true, Some(true)),
        (problem(0, 257, 3, 1500, true, false), true, Some(true)),
        (problem(0, 130, 16, 64, false, true), false, Some(false)),
        (problem(3, 96, 5, 904, false, false), true, None),
        (problem(0, 70, 17, 600, false, false), false, None),
        (problem(0, 90, 24, 300, false, false), true, None),
        (batched_b(0, 100, 6, 1200), false, Some(true)),
        (batched_b(3, 40, 12, 800), true, None),
    ] {
        variants_match(client, dtype, p, fused, &both);
        for (v, name) in [
            (MatmulVariant::Narrow, "narrow a"),
            (MatmulVariant::NarrowStaged, "narrow staged"),
            (MatmulVariant::NarrowPlane, "narrow_plane a"),
        ] {
            let plan = plan_text(client, dtype, p, v);
            assert!(plan.contains(name), "{dtype} {p:?}: {plan}");
            if let Some(split) = split
                && v != MatmulVariant::NarrowPlane
            {
                assert_eq!(
                    plan.contains("chunks + fixup"),
                    split,
                    "{dtype} {p:?}: {plan}"
                );
            }
        }
    }
    // The plane form sums across the lanes of a plane where the device has plane ops, else
    // through shared memory: both paths, wherever plane ops exist, with the depth split (deep
    // enough for four steps of 32 lanes per chunk, as on CUDA; 2000 did not split there).
    let caps = cubeport::caps_of(client);
    let p = problem(0, 300, 8, 8192, false, false);
    let plan = plan_text(client, dtype, p, MatmulVariant::NarrowPlane);
    let plane = caps.plane.ops && caps.plane.fixed_width().is_some();
    assert!(
        plan.contains(if plane { " plane" } else { " shared" }),
        "{plan}"
    );
    assert!(plan.contains("chunks + fixup"), "{dtype} {p:?}: {plan}");
    variants_match(client, dtype, p, true, &[Some(MatmulVariant::NarrowPlane)]);
    // The automatic choice past the few-row sizes, up to 8 columns, with plane sums and a
    // row-major A: `narrow_plane` for one column, for f32 where A's rows are not 16-byte
    // vectors, for halves where 64 × 128 blocks under-fill the device (not at 20000 rows);
    // else f32 (and one column of halves) `narrow` where A's rows are 16-byte vectors (not
    // where A is transposed or its rows are ragged); the tile kernels otherwise.
    // Halves on manual MMA take `narrow_mma` instead up to 16 columns where A's rows are
    // 16-byte vectors (`matmul_narrow_mma`).
    let f32 = dtype == DType::F32;
    let np = plane.then_some("narrow_plane ");
    let mma = MatmulVariant::NARROW_MMA.runs_on(&caps, dtype);
    let tc = |other: Option<&'static str>| if mma { Some("narrow_mma ") } else { other };
    for (m, n, k, trans_a, want) in [
        (1000, 1, 320, false, tc(np.or(Some("narrow ")))),
        (1000, 1, 301, false, np),
        (
            1000,
            8,
            320,
            false,
            tc(if f32 { Some("narrow ") } else { np }),
        ),
        (20000, 8, 320, false, tc(f32.then_some("narrow "))),
        (1000, 8, 301, false, np),
        (1000, 8, 320, true, None),
        (1000, 1, 320, true, None),
        (1000, 16, 320, false, tc(None)),
        (1000, 17, 320, false, None),
        (64, 8, 320, false, None),
    ] {
        let plan = auto_plan_text(client, dtype, problem(0, m, n, k, trans_a, false));
        let got = ["narrow_plane ", "narrow_mma ", "narrow "]
            .into_iter()
            .find(|name| plan.starts_with(name));
        assert_eq!(got, want, "{dtype} {m}x{n}x{k} trans_a {trans_a}: {plan}");
    }
}

/// The few-column tensor-core kernel (`narrow_mma`, forced): 1, 3, 5, 6, 8, 13 and 16 columns
/// (one or two n tiles, column groups of partial width) and 24 (two column groups), cubes of 16
/// and 32 rows (the plan names them), depths that split over the grid and ones that do not (the
/// plan names the chunks), planes whose depth slices end inside a 32-deep step, a ragged depth
/// and a transposed A (both padded into 16-byte rows), a transposed B, B broadcast and batched,
/// ragged rows, the fused epilogue; each against f64 into a poisoned output. The automatic
/// choice (see `matmul_narrow`) takes it for halves on manual MMA. A device without manual MMA
/// refuses it.
pub fn matmul_narrow_mma<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let caps = cubeport::caps_of(client);
    // A shape outside the kernel's range is refused on every device.
    assert_refused(client, dtype, "narrow_mma_r24_w4_s2".parse().unwrap());
    let v = MatmulVariant::NARROW_MMA;
    if !v.runs_on(&caps, dtype) {
        assert_refused(client, dtype, v);
        return;
    }
    let batched_b = |batch_a, m, n, k| Problem {
        batch_b: 3,
        ..problem(batch_a, m, n, k, false, false)
    };
    // (problem, fused, plan fragments it must name, whether the depth splits)
    for (p, fused, names, split) in [
        (
            problem(0, 4096, 8, 4096, false, false),
            true,
            &["a8 b8 rows 16 cols 8 planes 8"][..],
            Some(false),
        ),
        (
            problem(0, 8192, 16, 256, false, false),
            false,
            &["rows 32 cols 16"][..],
            Some(false),
        ),
        (
            problem(0, 100, 1, 3000, false, false),
            false,
            &["a8 b1 rows 16 cols 8"][..],
            Some(true),
        ),
        (
            problem(0, 513, 16, 1000, false, false),
            true,
            &["cols 16"][..],
            None,
        ),
        (
            problem(0, 257, 13, 904, true, false),
            true,
            &["pad a", "cols 16"][..],
            None,
        ),
        (
            problem(0, 200, 3, 1001, false, true),
            false,
            &["pad a"][..],
            None,
        ),
        (problem(3, 96, 5, 904, false, false), true, &[][..], None),
        (batched_b(0, 100, 6, 1200), false, &[][..], None),
        (batched_b(3, 40, 8, 800), true, &[][..], None),
        (
            problem(0, 70, 24, 600, false, false),
            false,
            &["cols 16"][..],
            None,
        ),
    ] {
        variants_match(client, dtype, p, fused, &[Some(v)]);
        let plan = plan_text(client, dtype, p, v);
        assert!(
            plan.starts_with("narrow_mma (narrow_mma "),
            "{dtype} {p:?}: {plan}"
        );
        for name in names {
            assert!(plan.contains(name), "{dtype} {p:?}: {name} in {plan}");
        }
        if let Some(split) = split {
            assert_eq!(
                plan.contains("chunks + fixup"),
                split,
                "{dtype} {p:?}: {plan}"
            );
        }
    }
    // Forced shapes: 32-row cubes of 3 planes loading one step ahead; 16-row cubes of 16
    // planes loading four.
    for (id, p, name) in [
        (
            "narrow_mma_r32_w3_s1",
            problem(0, 300, 8, 2000, false, false),
            "rows 32 cols 8 planes 3 steps 1",
        ),
        (
            "narrow_mma_r16_w16_s4",
            problem(0, 130, 11, 3000, false, false),
            "rows 16 cols 16 planes 16 steps 4",
        ),
    ] {
        let v: MatmulVariant = id.parse().unwrap();
        variants_match(client, dtype, p, true, &[Some(v)]);
        let plan = plan_text(client, dtype, p, v);
        assert!(
            plan.starts_with(&format!("{id} (narrow_mma ")) && plan.contains(name),
            "{plan}"
        );
    }
}

/// The split-depth tensor-core shapes (`tc…_mma_split`, decode shapes on manual MMA): each
/// matches the reference into a poisoned output where the depth is cut into chunks (the plan
/// names them) and where it is not, with rows that do not fill the block, a padded transposed
/// A, a batch with B broadcast, and the fused epilogue; the automatic choice takes the shape of
/// the rows' height for up to 64 rows. A device without manual MMA refuses them.
pub fn matmul_tc_split<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let caps = cubeport::caps_of(client);
    let shapes = [
        TcShape::T16X128_SPLIT,
        TcShape::T32X128_SPLIT,
        TcShape::T64X64_SPLIT,
    ];
    let problem = |batch_a, m, n, k, trans_a| Problem {
        batch_a,
        batch_b: 0,
        m,
        n,
        k,
        trans_a,
        trans_b: false,
    };
    // (problem, fused, chunks > 1)
    let cases = [
        (problem(0, 1, 256, 3000, false), false, true),
        (problem(0, 29, 136, 2000, true), true, true),
        (problem(3, 50, 72, 1100, false), true, true),
        (problem(0, 7, 40, 4100, false), false, true),
        (problem(0, 64, 64, 64, false), true, false),
    ];
    for &shape in &shapes {
        let v = MatmulVariant::Tc(shape);
        if !v.runs_on(&caps, dtype) {
            assert_refused(client, dtype, v);
            continue;
        }
        for (p, fused, split) in cases {
            variants_match(client, dtype, p, fused, &[Some(v)]);
            let plan = plan_text(client, dtype, p, v);
            assert_eq!(
                plan.contains("chunks + fixup"),
                split,
                "{dtype} {p:?}: {plan}"
            );
        }
    }
    let tensor_split = shapes
        .iter()
        .all(|&s| MatmulVariant::Tc(s).runs_on(&caps, dtype));
    if tensor_split {
        for (m, want) in [
            (1, shapes[0]),
            (16, shapes[0]),
            (17, shapes[1]),
            (64, shapes[2]),
        ] {
            let auto = cubeport::matmul_variant(client, dtype, 1, (m, 4096, 4096)).unwrap();
            assert_eq!(auto, MatmulVariant::Tc(want), "{dtype} m = {m}");
        }
    }
}

/// Ragged layouts on the kernels that cannot read them as they lie. Every `cp.async` shape the
/// device runs, forced on odd `k` and `n`, transposed operands and a broadcast batch, copies
/// exactly the operands whose rows are not 16-byte vectors into padded buffers (the plan names
/// them) and matches the reference into a poisoned output, with and without the epilogue. The
/// register-loaded SIMT kernel pads a B of scalar rows from 1024 rows of A on, and not below.
pub fn matmul_pads_ragged<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let caps = cubeport::caps_of(client);
    let problem = |batch_a, batch_b, m, n, k, trans_a, trans_b| Problem {
        batch_a,
        batch_b,
        m,
        n,
        k,
        trans_a,
        trans_b,
    };
    let v = 16 / dtype.size();
    // The pads a plan should name: `[a, b]`, and whether the variant copies by `cp.async`.
    let plan_pads = |p: &Problem, variant: MatmulVariant| {
        with_dtype!(dtype, E => {
            let (ba, bb) = (p.batch_a.max(1), p.batch_b.max(1));
            let a: Vec<E> = seeded(3, ba * p.m * p.k, -1.0, 1.0);
            let b: Vec<E> = seeded(4, bb * p.k * p.n, -1.0, 1.0);
            let (sa, shape_a, strides_a) = store(&a, p.batch_a, p.m, p.k, p.trans_a);
            let (sb, shape_b, strides_b) = store(&b, p.batch_b, p.k, p.n, p.trans_b);
            let da = DeviceTensor::from_slice(client, &sa, &[sa.len()]).unwrap();
            let db = DeviceTensor::from_slice(client, &sb, &[sb.len()]).unwrap();
            let va = TensorRef::new(da.handle(), &shape_a, &strides_a, dtype);
            let vb = TensorRef::new(db.handle(), &shape_b, &strides_b, dtype);
            let out = if p.batch_a + p.batch_b > 0 { vec![ba.max(bb), p.m, p.n] } else { vec![p.m, p.n] };
            let mut dc = DeviceTensor::<E>::empty(client, &out).unwrap();
            let plan = cubeport::matmul_plan(client, &va, &vb, None, &dc.as_mut(), Some(variant))
                .unwrap_or_else(|e| panic!("{variant} {p:?}: {e}"));
            (plan.pads(), plan.to_string())
        })
    };
    let copies_async = |v: &MatmulVariant| match v {
        MatmulVariant::Tc(s) => s.stages > 0,
        MatmulVariant::Simt(s) => s.async_copy,
        _ => false,
    };
    let async_variants: Vec<MatmulVariant> = MatmulVariant::ALL
        .iter()
        .copied()
        .filter(|v| copies_async(v) && v.runs_on(&caps, dtype))
        .collect();
    for (p, fused) in [
        (problem(0, 0, 130, 133, 75, false, false), false),
        (problem(0, 0, 70, 72, 77, false, false), true),
        (problem(2, 1, 40, 37, 64, false, true), true),
        (problem(0, 0, 64, 64, 64, true, false), false),
        (problem(0, 0, 64, 64, 64, false, false), false),
    ] {
        let want = [p.trans_a || p.k % v != 0, p.trans_b || p.n % v != 0];
        for &variant in &async_variants {
            let (pads, plan) = plan_pads(&p, variant);
            assert_eq!(pads, want, "{dtype} {p:?}: {plan}");
            assert_eq!(plan.contains(", pad "), want != [false; 2], "{plan}");
        }
        let forced: Vec<_> = async_variants.iter().map(|&v| Some(v)).collect();
        variants_match(client, dtype, p, fused, &forced);
    }
    // The register-loaded SIMT kernel: B of scalar rows (odd `n`, or transposed) is padded on
    // tall products only; B of 4-wide rows never.
    let simt = MatmulVariant::Simt(SimtShape::S64);
    if simt.runs_on(&caps, dtype) {
        for (p, want_b) in [
            (problem(0, 0, 1030, 37, 19, false, false), true),
            (problem(2, 1, 1024, 20, 9, false, true), true),
            (problem(0, 0, 1000, 37, 19, false, false), false),
            (problem(0, 0, 1030, 36, 19, false, false), false),
        ] {
            let (pads, plan) = plan_pads(&p, simt);
            assert_eq!(pads, [false, want_b], "{dtype} {p:?}: {plan}");
            variants_match(client, dtype, p, want_b, &[Some(simt)]);
        }
    }
}

/// The plan reported is the plan that runs: for the automatic choice and every variant the
/// device runs, over aligned and unaligned layouts (k and n multiples of 8, of 4 only, or
/// odd; transposed operands; batches, one broadcast), [`cubeport::matmul_plan`] names the
/// kernel and vector widths [`cubeport::matmul_with`] then launches, and
/// [`cubeport::matmul_variant`] the variant [`cubeport::matmul_into`] runs on dense operands.
/// The widths follow the layout: the SIMT kernel loads B and stores C 4 wide only where their
/// rows allow it.
pub fn matmul_plan_is_what_runs<R: Runtime>(client: &ComputeClient<R>, dtype: DType) {
    let variants = runnable(client, dtype);
    let simt = MatmulVariant::Simt(SimtShape::S64);
    let problem = |batch_a, batch_b, m, n, k, trans_a, trans_b| Problem {
        batch_a,
        batch_b,
        m,
        n,
        k,
        trans_a,
        trans_b,
    };
    // Each problem with the widths of the SIMT kernel's B loads and C stores.
    for (p, nb, nc) in [
        (problem(0, 0, 64, 64, 64, false, false), 4, 4),
        (problem(0, 0, 40, 36, 20, false, false), 4, 4),
        (problem(0, 0, 40, 48, 33, false, false), 4, 4),
        (problem(0, 0, 33, 65, 32, false, false), 1, 1),
        (problem(0, 0, 64, 64, 64, true, false), 4, 4),
        (problem(0, 0, 64, 64, 64, false, true), 1, 4),
        (problem(3, 0, 24, 40, 16, false, false), 4, 4),
        (problem(2, 2, 17, 30, 12, true, false), 1, 1),
    ] {
        let (ba, bb) = (p.batch_a.max(1), p.batch_b.max(1));
        let rank3 = p.batch_a > 0 || p.batch_b > 0;
        let out: Vec<usize> = if rank3 {
            vec![ba.max(bb), p.m, p.n]
        } else {
            vec![p.m, p.n]
        };
        with_dtype!(dtype, E => {
            let a: Vec<E> = seeded(1, ba * p.m * p.k, -1.0, 1.0);
            let b: Vec<E> = seeded(2, bb * p.k * p.n, -1.0, 1.0);
            let (sa, shape_a, strides_a) = store(&a, p.batch_a, p.m, p.k, p.trans_a);
            let (sb, shape_b, strides_b) = store(&b, p.batch_b, p.k, p.n, p.trans_b);
            let da = DeviceTensor::from_slice(client, &sa, &[sa.len()]).unwrap();
            let db = DeviceTensor::from_slice(client, &sb, &[sb.len()]).unwrap();
            let va = TensorRef::new(da.handle(), &shape_a, &strides_a, dtype);
            let vb = TensorRef::new(db.handle(), &shape_b, &strides_b, dtype);
            let mut dc = poisoned::<R, E>(client, &out).unwrap();
            for &v in &variants {
                let plan = cubeport::matmul_plan(client, &va, &vb, None, &dc.as_mut(), v)
                    .unwrap_or_else(|e| panic!("{v:?} {p:?}: {e}"));
                let act = Activation::Identity;
                let (x, y) = (va.clone(), vb.clone());
                match v {
                    None => cubeport::matmul_into(client, x, y, dc.as_mut()),
                    Some(v) => cubeport::matmul_with(client, x, y, None, act, dc.as_mut(), v),
                }
                .unwrap_or_else(|e| panic!("{v:?} {p:?}: {e}"));
                assert_eq!(
                    cubeport::testing::last_matmul_plan(),
                    Some(plan.to_string()),
                    "{v:?} {dtype} {p:?} on {}",
                    R::name(client)
                );
                if let Some(v) = v {
                    assert_eq!(plan.variant(), v, "{p:?}");
                } else if !p.trans_a && !p.trans_b {
                    let batch = ba.max(bb);
                    let dense = cubeport::matmul_variant(client, dtype, batch, (p.m, p.n, p.k));
                    assert_eq!(dense.unwrap(), plan.variant(), "{dtype} {p:?}");
                }
                if v == Some(simt) {
                    assert_eq!(plan.to_string(), format!("{simt} (simt b{nb} c{nc})"), "{p:?}");
                }
            }
        });
    }
}

/// Every variant id parses back to its variant; malformed ids are errors.
pub fn matmul_variant_ids_round_trip() {
    let grouped = MatmulVariant::Tc(TcShape::T128X256_A3_MMA.with_group(8));
    assert_eq!(grouped.to_string(), "tc128x256x32_w2x4_a3_g8_mma");
    let simt_grouped = MatmulVariant::Simt(SimtShape::S128X256_A3.with_group(16));
    assert_eq!(simt_grouped.to_string(), "simt128x256x16_8x16_a3_g16");
    assert_eq!(
        MatmulVariant::Simt(SimtShape::S128X256_G8).to_string(),
        "simt128x256x8_8x16_s1_g8"
    );
    let sk7 = MatmulVariant::Simt(SimtShape::S128X256.with_stream_k(7));
    assert_eq!(sk7.to_string(), "simt128x256x8_8x16_s1_sk7");
    assert_eq!(
        MatmulVariant::Simt(SimtShape::S128X256_G8_SK).to_string(),
        "simt128x256x8_8x16_s1_g8_sk"
    );
    for v in MatmulVariant::ALL
        .into_iter()
        .chain([grouped, simt_grouped, sk7])
    {
        assert_eq!(v.to_string().parse::<MatmulVariant>(), Ok(v), "{v}");
    }
    for bad in [
        "",
        "simt",
        "simt128x128_8x8_s1",
        "simt128x128x8_8x8",
        "simt128x128x8_8x8_s1_x",
        "simt128x256x16_8x16_b3",
        "simt128x256x16_8x16_a",
        "simt128x256x8_8x16_s1_g1",
        "simt128x256x8_8x16_s1_g",
        "simt128x256x8_8x16_s1_gx",
        "simt128x256x8_8x16_s1_g8_x",
        "simt128x256x8_8x16_g8_s1",
        "simt128x256x8_8x16_s1_sk1",
        "simt128x256x8_8x16_s1_sk0",
        "simt128x256x8_8x16_s1_skx",
        "simt128x256x8_8x16_s1_sk_g8",
        "simt128x256x8_8x16_s1_g8_sk2_x",
        "simt128x256x8_8x16_s1_g8_k2",
        "tc128x128x32",
        "tc128x128x32_w0x2",
        "tc100x128x32_w2x4",
        "tc128x128x32_w4x2_a",
        "tc128x128x32_w4x2_ax",
        "tc128x128x32_w4x2_s3",
        "tc128x128x32_w4x2_mma_a3",
        "tc128x128x32_w4x2_a3mma",
        "tc128x128x32_w4x2_a3_g1_mma",
        "tc128x128x32_w4x2_a3_g_mma",
        "tc128x128x32_w4x2_a3_mma_g8",
        "tc128x128x32_w4x2_a3_tf32_mma",
        "tc128x128x32_w4x2_a3_tf32x",
        "blocked",
        "cmma2",
    ] {
        assert!(bad.parse::<MatmulVariant>().is_err(), "`{bad}` parsed");
    }
}

pub fn matmul_rejects_bad_input<R: Runtime>(client: &ComputeClient<R>) {
    let caps = cubeport::caps_of(client);
    let a = DeviceTensor::from_slice(client, &seeded::<f32>(1, 15, -1.0, 1.0), &[3, 5]).unwrap();
    let b = DeviceTensor::from_slice(client, &seeded::<f32>(2, 35, -1.0, 1.0), &[5, 7]).unwrap();
    let c = poisoned::<R, f32>(client, &[2, 3, 8]).unwrap(); // room for every view below
    let shape_err = |r: Result<(), Error>| match r {
        Err(Error::Shape { source, .. }) => source,
        other => panic!("expected a shape error, got {other:?}"),
    };
    let ch = c.handle().clone();
    let cview = |shape: &[usize]| TensorMut::contiguous(&ch, shape, DType::F32);
    // Inner dimensions differ.
    let e = shape_err(cubeport::matmul_into(
        client,
        a.as_ref(),
        TensorRef::contiguous(b.handle(), &[7, 5], DType::F32),
        cview(&[3, 5]),
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "b", .. }),
        "{e:?}"
    );
    // Empty dimension.
    let e = shape_err(cubeport::matmul_into(
        client,
        TensorRef::contiguous(a.handle(), &[3, 0], DType::F32),
        TensorRef::contiguous(b.handle(), &[0, 7], DType::F32),
        cview(&[3, 7]),
    ));
    assert!(matches!(e, ShapeError::Empty { .. }), "{e:?}");
    // Wrong output shape.
    let e = shape_err(cubeport::matmul_into(
        client,
        a.as_ref(),
        b.as_ref(),
        cview(&[3, 8]),
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "c", .. }),
        "{e:?}"
    );
    // Rank 1.
    let e = shape_err(cubeport::matmul_into(
        client,
        TensorRef::contiguous(a.handle(), &[15], DType::F32),
        b.as_ref(),
        cview(&[3, 7]),
    ));
    assert!(matches!(e, ShapeError::Rank { .. }), "{e:?}");
    // Strides reaching past the buffer.
    let e = shape_err(cubeport::matmul_into(
        client,
        TensorRef::new(a.handle(), &[3, 5], &[6, 1], DType::F32),
        b.as_ref(),
        cview(&[3, 7]),
    ));
    assert!(matches!(e, ShapeError::BufferTooSmall { .. }), "{e:?}");
    // Batches that neither match nor broadcast.
    let e = shape_err(cubeport::matmul_into(
        client,
        TensorRef::contiguous(a.handle(), &[1, 3, 5], DType::F32),
        TensorRef::contiguous(b.handle(), &[1, 5, 7], DType::F32),
        cview(&[2, 3, 7]),
    ));
    assert!(
        matches!(e, ShapeError::ShapeMismatch { name: "c", .. }),
        "{e:?}"
    );
    // Bias of the wrong length, bias of another dtype.
    let bias = DeviceTensor::from_slice(client, &[0.5f32; 7], &[7]).unwrap();
    let e = shape_err(cubeport::matmul_fused_into(
        client,
        a.as_ref(),
        b.as_ref(),
        Some(TensorRef::contiguous(bias.handle(), &[6], DType::F32)),
        Activation::Identity,
        cview(&[3, 7]),
    ));
    assert!(matches!(e, ShapeError::BiasShape { .. }), "{e:?}");
    let e = shape_err(cubeport::matmul_fused_into(
        client,
        a.as_ref(),
        b.as_ref(),
        Some(TensorRef::contiguous(bias.handle(), &[7], DType::F16)),
        Activation::Identity,
        cview(&[3, 7]),
    ));
    assert!(matches!(e, ShapeError::DTypeMismatch { .. }), "{e:?}");
    // Tensor cores refuse f32 (never silent TF32), and devices without them refuse cmma.
    let r = cubeport::matmul_with(
        client,
        a.as_ref(),
        b.as_ref(),
        None,
        Activation::Identity,
        cview(&[3, 7]),
        MatmulVariant::Cmma,
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    // The tiled tensor-core kernel likewise refuses f32.
    let r = cubeport::matmul_with(
        client,
        a.as_ref(),
        b.as_ref(),
        None,
        Activation::Identity,
        cview(&[3, 7]),
        MatmulVariant::Tc(TcShape::T128_W4X2),
    );
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    // Forced tile shapes that break the kernels' preconditions are refused, never launched:
    // a unit tile not a multiple of 4, a tile the units cannot share evenly, a third stage,
    // more shared memory than the device has, five cp.async stages, a cp.async depth not a
    // multiple of 4 (and any cp.async shape without cp.async); a tensor-core depth not a
    // multiple of 16.
    for shape in [
        SimtShape::new(128, 128, 8, 6, 8, 1),
        SimtShape::new(128, 128, 4, 8, 8, 1),
        SimtShape::new(128, 128, 8, 8, 8, 3),
        SimtShape::new(2048, 2048, 64, 64, 64, 2),
        SimtShape::S128X256.with_async(5),
        SimtShape::new(128, 256, 6, 8, 16, 3).with_async(3),
    ] {
        let r = cubeport::matmul_with(
            client,
            a.as_ref(),
            b.as_ref(),
            None,
            Activation::Identity,
            cview(&[3, 7]),
            MatmulVariant::Simt(shape),
        );
        assert!(
            matches!(r, Err(Error::Unsupported { .. })),
            "{shape}: {r:?}"
        );
    }
    // Forced tensor-core and cp.async shapes refused before any launch (on 3×2 · 2×7 views of
    // the buffers above), with the reason where it does not depend on the device: a depth not
    // a multiple of 16; an async pipeline of 1 or 5 stages (and any without cp.async); manual
    // MMA fragments outside the async pipeline (and anywhere without manual MMA); a grouped
    // cube order outside the manual-MMA kernel; manual MMA with an odd number of 16-deep steps
    // per tile (its two fragment sets alternate); the cp.async SIMT kernel on halves; TF32
    // shapes on halves, and TF32 through manual MMA; stream-K through the cp.async SIMT
    // kernel, or shared by a single cube.
    let forced = |v: MatmulVariant, dtype: DType| {
        cubeport::matmul_with(
            client,
            TensorRef::contiguous(a.handle(), &[3, 2], dtype),
            TensorRef::contiguous(b.handle(), &[2, 7], dtype),
            None,
            Activation::Identity,
            TensorMut::contiguous(c.handle(), &[3, 7], dtype),
            v,
        )
    };
    let (f16, f32) = (DType::F16, DType::F32);
    for (v, dtype, why) in [
        (MatmulVariant::Tc(TcShape::new(2, 2, 2, 2, 24)), f16, ""),
        (MatmulVariant::Tc(TcShape::T128_W4X2.with_async(1)), f16, ""),
        (MatmulVariant::Tc(TcShape::T128_W4X2.with_async(5)), f16, ""),
        (MatmulVariant::Tc(TcShape::T128_W4X2.with_mma()), f16, ""),
        (
            MatmulVariant::Tc(TcShape::T128_W4X2_A3.with_group(8)),
            f16,
            "",
        ),
        (
            MatmulVariant::Tc(TcShape::new(2, 2, 2, 2, 16).with_async(3).with_mma()),
            f16,
            "multiple of 32",
        ),
        (
            MatmulVariant::Simt(SimtShape::S128X256_A3),
            f16,
            "takes f32",
        ),
        (
            MatmulVariant::Tc(TcShape::T128_W4X2_A3_TF32),
            f16,
            "TF32 shapes (_tf32) take f32",
        ),
        (
            MatmulVariant::Tc(TcShape::T128X256_A3_MMA.with_tf32()),
            f32,
            "manual MMA fragments are f16/bf16 only",
        ),
        (
            MatmulVariant::Simt(SimtShape::S128X256_A3.with_stream_k(4)),
            f32,
            "not the cp.async one",
        ),
        (
            MatmulVariant::Simt(SimtShape::S128X256.with_stream_k(1)),
            f32,
            "at least 2 cubes",
        ),
    ] {
        let r = forced(v, dtype);
        assert!(
            matches!(&r, Err(Error::Unsupported { reason, .. }) if reason.contains(why)),
            "{v} {dtype}: {r:?}"
        );
    }
    // Stream-K sized by the SM count needs a device that reports one (where one does,
    // `matmul_stream_k` runs it).
    if caps.num_sms.is_none() {
        let r = forced(MatmulVariant::Simt(SimtShape::S128X256_G8_SK), f32);
        assert!(
            matches!(&r, Err(Error::Unsupported { reason, .. }) if reason.contains("no SM count")),
            "{r:?}"
        );
    }
    if !caps.tf32 {
        let r = cubeport::matmul_with(
            client,
            a.as_ref(),
            b.as_ref(),
            None,
            Activation::Identity,
            cview(&[3, 7]),
            MatmulVariant::Tc(TcShape::T128_W4X2_A3_TF32),
        );
        assert!(
            matches!(&r, Err(Error::Unsupported { reason, .. }) if reason.contains("no TF32")),
            "{r:?}"
        );
    }
    // bf16 on a backend without it.
    if !caps.bf16 {
        let r = cubeport::matmul_into(
            client,
            TensorRef::contiguous(a.handle(), &[3, 2], DType::BF16),
            TensorRef::contiguous(b.handle(), &[2, 7], DType::BF16),
            TensorMut::contiguous(c.handle(), &[3, 7], DType::BF16),
        );
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
    }
    // A grid beyond the device's limits is refused, not launched.
    let huge_batch = caps.max_cube_count[2] as usize + 1;
    let big_a =
        DeviceTensor::from_slice(client, &vec![1.0f32; huge_batch], &[huge_batch, 1, 1]).unwrap();
    let big_b = DeviceTensor::from_slice(client, &[1.0f32], &[1, 1]).unwrap();
    let mut big_c = DeviceTensor::<f32>::empty(client, &[huge_batch, 1, 1]).unwrap();
    let r = cubeport::matmul_into(client, big_a.as_ref(), big_b.as_ref(), big_c.as_mut());
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    assert!(
        c.to_vec(client)
            .unwrap()
            .iter()
            .all(|&v| v == cubeport::testing::poison::<f32>()),
        "a rejected call wrote output"
    );
}

/// The grouped cube order (`_g<rows>`) of the manual-MMA and SIMT kernels, run through their
/// remap on this backend: a permutation of the grid in which consecutive cubes go down a strip
/// of `group` block-rows (the last strip shorter) before moving one block-column right.
pub fn grouped_order<R: Runtime>(client: &ComputeClient<R>) {
    for (gx, gy, group) in [
        (5usize, 7usize, 3usize),
        (32, 64, 8),
        (1, 9, 4),
        (6, 2, 16),
        (4, 4, 2),
    ] {
        let mut out =
            DeviceTensor::from_slice(client, &vec![u32::MAX; gx * gy], &[gx * gy]).unwrap();
        // SAFETY: one cube per entry of `out`, each writing its own launch position.
        unsafe {
            cubeport_kernels::matmul::grouped_order_kernel::launch_unchecked::<R>(
                client,
                CubeCount::Static(gx as u32, gy as u32, 1),
                CubeDim::new_1d(1),
                ArrayArg::from_raw_parts(out.as_mut().handle().clone(), gx * gy),
                group,
            )
        };
        let order = out.to_vec(client).unwrap();
        let mut seen = vec![false; gx * gy];
        let mut last: Option<(usize, usize, usize)> = None;
        for (lin, &blk) in order.iter().enumerate() {
            let blk = blk as usize;
            assert!(
                blk < gx * gy && !seen[blk],
                "{gx}x{gy} g{group}: cube {lin} got block {blk}"
            );
            seen[blk] = true;
            let (by, bx) = (blk / gx, blk % gx);
            let strip = lin / (group * gx);
            assert_eq!(
                by / group,
                strip,
                "{gx}x{gy} g{group}: cube {lin} left its strip"
            );
            if let Some((_, px, py)) = last.filter(|l| l.0 == strip) {
                assert!(
                    (bx, by) > (px, py),
                    "{gx}x{gy} g{group}: cube {lin} out of column order"
                );
            }
            last = Some((strip, bx, by));
        }
    }
}
