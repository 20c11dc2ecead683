//! What limits tensor cores through Vulkan's cooperative matrices (issue 23): f16 matmul on
//! `wgpu-spirv` runs at about a tenth of CUDA whether the kernel is the untiled `cmma` or a tiled
//! shape, so the cost is per fragment operation, not in the tiling. Three probes, each a grid of
//! cubes of 4 planes that multiply 16 × 16 × 16 f16 fragments into f32 accumulators `iters`
//! times, timed by the host clock around a sync (median of 5 launches) and reported in TFLOP/s:
//! - `mma_only`: two A and two B fragments loaded once from global memory, then four
//!   `cmma::execute` per iteration (the tensor cores' own rate, nothing loaded);
//! - `shared_scalar`: per iteration, the four fragments loaded from a shared tile of scalars
//!   (as `cmma` stages them), then the four products;
//! - `shared_vec4` / `shared_vec8`: the same from a shared tile of 4- or 8-element vectors with
//!   rows padded by 16 bytes (as the tiled `tc…` shapes stage them);
//! - `staged_vec4` / `staged_vec8`: as `shared_vec`, with each iteration first staging the
//!   plane's next 16-deep slices of A and B from (cached) global memory into the shared tiles
//!   with 4- or 8-wide loads between two cube barriers, as the tiled kernels' main loop does;
//! - `streamed_l2_vec4/8` / `streamed_dram_vec4/8`: the same staging, each plane walking its
//!   own strips of operands too large for L1 (4 MiB) or, for A, for L2 (256 MiB), as a
//!   matmul's cube does: the global loads' own cost on each backend.
//!
//! `mma_only` near the device's dense f16 rate and the shared probes far below point at the
//! fragment loads; all three far below point at the product itself (emulation, or fragments
//! not held in registers). Every probe's accumulators are checked against the exact value.
//!
//! ```text
//! CUBEPORT_BACKEND=cuda cargo run --release --example cmma_probe --features testing
//! cargo run --release --example cmma_probe --features testing,wgpu-spirv   # wgpu (SPIR-V)
//! ```
//! `CMMA_ITERS` (default 4096) and `CMMA_CUBES` (default 8 per SM, or 1056) set the work.
//! To read the first probe's SPIR-V without such a device: build with `--features
//! testing,wgpu-spirv,cubecl/spirv-dump` and run with `CMMA_FORCE=1 CUBECL_DEBUG_SPIRV=DIR`.

use cubeport::cubecl;
use cubeport::cubecl::prelude::*;
use cubeport::testing::sync;
use std::time::Instant;

/// Planes per cube.
const PLANES: usize = 4;
/// Rows of a plane's A strip and columns of its B strip: two fragments each.
const STRIP: usize = 32;
/// Depth of the shared tiles: four fragment depths, so successive iterations read new columns.
const DEPTH: usize = 64;
/// Row padding of the vector tiles, in halves (16 bytes).
const PAD: usize = 8;

/// One 16 × 16 × 16 fragment of `ident` from `from`, rows `stride` scalars apart.
#[cube]
fn frag<S: CubePrimitive>(
    #[comptime] ident: cmma::MatrixIdent,
    from: &Slice<S>,
    stride: u32,
) -> cmma::Matrix<half::f16> {
    // SAFETY: loaded in full on the next line before any use.
    let f = unsafe {
        cmma::Matrix::<half::f16>::uninitialized(
            ident,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::RowMajor,
        )
    };
    cmma::load(&f, from, stride);
    f
}

/// Four zeroed f32 accumulators.
#[cube]
fn zeros() -> Sequence<cmma::Matrix<f32>> {
    let mut acc = Sequence::<cmma::Matrix<f32>>::new();
    #[unroll]
    for _ in 0..4usize {
        acc.push(cmma::Matrix::<f32>::from_value(
            cmma::MatrixIdent::Accumulator,
            16usize,
            16usize,
            16usize,
            cmma::MatrixLayout::Undefined,
            0.0,
        ));
    }
    acc
}

/// `acc[2i + j] += fa[i] · fb[j]`.
#[cube]
fn products(
    fa: &Sequence<cmma::Matrix<half::f16>>,
    fb: &Sequence<cmma::Matrix<half::f16>>,
    acc: &Sequence<cmma::Matrix<f32>>,
) {
    #[unroll]
    for i in 0..2usize {
        #[unroll]
        for j in 0..2usize {
            let c = &acc[2 * i + j];
            cmma::execute::<half::f16, half::f16, f32, f32>(&fa[i], &fb[j], c, c);
        }
    }
}

/// Writes the plane's four accumulators to `out` (256 f32 each, plane after plane).
#[cube]
fn store_all(acc: &Sequence<cmma::Matrix<f32>>, out: &mut Array<f32>) {
    let plane = CUBE_POS * PLANES + UNIT_POS_Y as usize;
    #[unroll]
    for f in 0..4usize {
        let at = (plane * 4 + f) * 256;
        cmma::store(
            &mut out.slice_mut(at, at + 256),
            &acc[f],
            16,
            cmma::MatrixLayout::RowMajor,
        );
    }
}

#[cube(launch_unchecked)]
fn mma_only(a: &Array<half::f16>, b: &Array<half::f16>, out: &mut Array<f32>, iters: u32) {
    let mut fa = Sequence::<cmma::Matrix<half::f16>>::new();
    let mut fb = Sequence::<cmma::Matrix<half::f16>>::new();
    #[unroll]
    for i in 0..2usize {
        fa.push(frag::<half::f16>(
            cmma::MatrixIdent::A,
            &a.slice(i * 256, i * 256 + 256),
            16,
        ));
        fb.push(frag::<half::f16>(
            cmma::MatrixIdent::B,
            &b.slice(i * 256, i * 256 + 256),
            16,
        ));
    }
    let acc = zeros();
    for _ in 0..iters {
        products(&fa, &fb, &acc);
    }
    store_all(&acc, out);
}

#[cube(launch_unchecked)]
fn shared_scalar(a: &Array<half::f16>, b: &Array<half::f16>, out: &mut Array<f32>, iters: u32) {
    // Each plane's A strip (32 rows × DEPTH) and B strip (DEPTH × 32), row-major, unpadded.
    let strip = comptime!(STRIP * DEPTH);
    let mut a_s = SharedMemory::<half::f16>::new(comptime!(PLANES * STRIP * DEPTH));
    let mut b_s = SharedMemory::<half::f16>::new(comptime!(PLANES * STRIP * DEPTH));
    let units = comptime!(PLANES * 32);
    let mut i = UNIT_POS as usize;
    while i < comptime!(PLANES * STRIP * DEPTH) {
        a_s[i] = a[i % 512];
        b_s[i] = b[i % 512];
        i += units;
    }
    sync_cube();
    let base = UNIT_POS_Y as usize * strip;
    let acc = zeros();
    for it in 0..iters {
        // A new fragment column of the tiles each iteration, so no load is loop-invariant.
        let ks = (it as usize % comptime!(DEPTH / 16)) * 16;
        let mut fa = Sequence::<cmma::Matrix<half::f16>>::new();
        let mut fb = Sequence::<cmma::Matrix<half::f16>>::new();
        #[unroll]
        for i in 0..2usize {
            let at = base + i * comptime!(16 * DEPTH) + ks;
            fa.push(frag::<half::f16>(
                cmma::MatrixIdent::A,
                &a_s.slice(at, at + comptime!(15 * DEPTH + 16)),
                DEPTH as u32,
            ));
            let bt = base + ks * STRIP + i * 16;
            fb.push(frag::<half::f16>(
                cmma::MatrixIdent::B,
                &b_s.slice(bt, bt + comptime!(15 * STRIP + 16)),
                STRIP as u32,
            ));
        }
        products(&fa, &fb, &acc);
    }
    store_all(&acc, out);
}

#[cube(launch_unchecked)]
fn shared_vec<NV: Size>(
    a: &Array<half::f16>,
    b: &Array<half::f16>,
    out: &mut Array<f32>,
    iters: u32,
) {
    // As `shared_scalar`, each row padded by one vector (the tiled shapes' layout).
    let nv = NV::value();
    // Rows padded by 8 halves (16 bytes): fragment rows must start 16-byte aligned.
    let a_row = comptime!((DEPTH + PAD) / nv);
    let b_row = comptime!((STRIP + PAD) / nv);
    let a_strip = comptime!(STRIP * a_row);
    let b_strip = comptime!(DEPTH * b_row);
    let mut a_s = SharedMemory::<Vector<half::f16, NV>>::new(comptime!(PLANES * STRIP * a_row));
    let mut b_s = SharedMemory::<Vector<half::f16, NV>>::new(comptime!(PLANES * DEPTH * b_row));
    fill_vec(&mut a_s, a, comptime!(PLANES * STRIP * a_row));
    fill_vec(&mut b_s, b, comptime!(PLANES * DEPTH * b_row));
    sync_cube();
    let plane = UNIT_POS_Y as usize;
    let acc = zeros();
    for it in 0..iters {
        let ks = (it as usize % comptime!(DEPTH / 16)) * 16;
        let mut fa = Sequence::<cmma::Matrix<half::f16>>::new();
        let mut fb = Sequence::<cmma::Matrix<half::f16>>::new();
        #[unroll]
        for i in 0..2usize {
            let at = plane * a_strip + i * 16 * a_row + ks / nv;
            fa.push(frag::<Vector<half::f16, NV>>(
                cmma::MatrixIdent::A,
                &a_s.slice(at, at + comptime!((15 * (DEPTH + PAD) + 16) / nv)),
                comptime!((DEPTH + PAD) as u32),
            ));
            let bt = plane * b_strip + ks * b_row + i * comptime!(16 / nv);
            fb.push(frag::<Vector<half::f16, NV>>(
                cmma::MatrixIdent::B,
                &b_s.slice(bt, bt + comptime!((15 * (STRIP + PAD) + 16) / nv)),
                comptime!((STRIP + PAD) as u32),
            ));
        }
        products(&fa, &fb, &acc);
    }
    store_all(&acc, out);
}

/// Rows of a staged A strip: 16 depths padded by 16 bytes, in halves.
const STAGED_A_ROW: usize = 16 + PAD;
/// The streamed probes' depth: A rows and B rows hold this many halves' depth (A is
/// `rows × BIG_K`, B `BIG_K × BIG_N`).
const BIG_K: usize = 1024;
/// The streamed probes' B width in halves (a power of two).
const BIG_N: usize = 2048;

#[cube(launch_unchecked)]
fn staged_vec<NV: Size>(
    a: &Array<Vector<half::f16, NV>>,
    b: &Array<Vector<half::f16, NV>>,
    out: &mut Array<f32>,
    iters: u32,
    rows: usize,
    #[comptime] streamed: bool,
) {
    // As `shared_vec`, but every iteration first stages the plane's next 16-deep slices of A
    // (32 rows) and B (32 columns) from global memory with `NV`-wide loads, between two cube
    // barriers, as the tiled kernels' main loop does. Not `streamed`: from a 1 KiB source, so
    // cached (the staging's instructions and barriers, not the memory system). `streamed`: A
    // is `rows × BIG_K` and B `BIG_K × BIG_N` (row-major, `rows` a power of two), each plane
    // reads its own 32-row strip of A and 32-column strip of B, one 16-deep slice further on
    // every iteration (wrapping), as a matmul's cube walks its operands: 2 KiB per 4 products
    // from L2 or DRAM, depending on `rows`.
    let nv = NV::value();
    let a_row = comptime!(STAGED_A_ROW / nv);
    let b_row = comptime!((STRIP + PAD) / nv);
    let a_strip = comptime!(STRIP * a_row);
    let b_strip = comptime!(16 * b_row);
    let src = comptime!(512 / nv);
    let mut a_s = SharedMemory::<Vector<half::f16, NV>>::new(comptime!(PLANES * STRIP * a_row));
    let mut b_s = SharedMemory::<Vector<half::f16, NV>>::new(comptime!(PLANES * 16 * b_row));
    let plane = UNIT_POS_Y as usize;
    let lane = UNIT_POS_X as usize;
    let acc = zeros();
    for it in 0..iters {
        let base = it as usize * 7;
        #[unroll]
        for l in 0..comptime!(STRIP * 16 / nv / 32) {
            let v = lane + l * 32;
            let (r, c) = (v / comptime!(16 / nv), v % comptime!(16 / nv));
            a_s[plane * a_strip + r * a_row + c] = if comptime!(streamed) {
                // This plane's 32-row strip of A at this iteration's depth.
                let strip0 = ((CUBE_POS * PLANES + plane) * STRIP) & (rows - 1);
                let depth0 = (it as usize * 16) % BIG_K;
                a[(strip0 + r) * comptime!(BIG_K / nv) + depth0 / nv + c]
            } else {
                a[(base + v) % src]
            };
            let (r, c) = (v / comptime!(STRIP / nv), v % comptime!(STRIP / nv));
            b_s[plane * b_strip + r * b_row + c] = if comptime!(streamed) {
                // This plane's 32-column strip of B at this iteration's depth.
                let strip0 = ((CUBE_POS * PLANES + plane) * STRIP) % BIG_N;
                let depth0 = (it as usize * 16) % BIG_K;
                b[(depth0 + r) * comptime!(BIG_N / nv) + strip0 / nv + c]
            } else {
                b[(base + v) % src]
            };
        }
        sync_cube();
        let mut fa = Sequence::<cmma::Matrix<half::f16>>::new();
        let mut fb = Sequence::<cmma::Matrix<half::f16>>::new();
        #[unroll]
        for i in 0..2usize {
            let at = plane * a_strip + i * 16 * a_row;
            fa.push(frag::<Vector<half::f16, NV>>(
                cmma::MatrixIdent::A,
                &a_s.slice(at, at + comptime!((15 * STAGED_A_ROW + 16) / nv)),
                comptime!(STAGED_A_ROW as u32),
            ));
            let bt = plane * b_strip + i * comptime!(16 / nv);
            fb.push(frag::<Vector<half::f16, NV>>(
                cmma::MatrixIdent::B,
                &b_s.slice(bt, bt + comptime!((15 * (STRIP + PAD) + 16) / nv)),
                comptime!((STRIP + PAD) as u32),
            ));
        }
        products(&fa, &fb, &acc);
        sync_cube();
    }
    store_all(&acc, out);
}

/// `tile[i]` = the `NV` values of `from` at `i · NV …` (wrapping at 512), for `i < len`.
#[cube]
fn fill_vec<NV: Size>(
    tile: &mut SharedMemory<Vector<half::f16, NV>>,
    from: &Array<half::f16>,
    #[comptime] len: usize,
) {
    let nv = NV::value();
    let mut i = UNIT_POS as usize;
    while i < len {
        let mut v = Vector::<half::f16, NV>::empty();
        #[unroll]
        for l in 0..nv {
            v[l] = from[(i * nv + l) % 512];
        }
        tile[i] = v;
        i += comptime!(PLANES * 32);
    }
}

/// A probe's A and B: handles and lengths in halves, every value 0.5 (A) and 0.25 (B).
struct Inputs {
    a: cubecl::server::Handle,
    b: cubecl::server::Handle,
    a_len: usize,
    b_len: usize,
}

impl Inputs {
    fn new<R: Runtime>(client: &ComputeClient<R>, a_len: usize, b_len: usize) -> Self {
        let a = vec![half::f16::from_f32(0.5); a_len];
        let b = vec![half::f16::from_f32(0.25); b_len];
        Inputs {
            a: client.create_from_slice(bytemuck::cast_slice(&a)),
            b: client.create_from_slice(bytemuck::cast_slice(&b)),
            a_len,
            b_len,
        }
    }
}

/// The launch shape every probe shares: `cubes` cubes of `PLANES` planes, each plane `iters`
/// iterations.
struct Setup<'a, R: Runtime> {
    client: &'a ComputeClient<R>,
    cubes: usize,
    iters: usize,
}

impl<R: Runtime> Setup<'_, R> {
    /// f32 outputs: one 16 × 16 block per accumulator of every plane.
    fn len(&self) -> usize {
        self.cubes * PLANES * 4 * 256
    }

    /// Times `launch` (median of 5 after one warm-up) into an output poisoned with NaN (so an
    /// output a probe leaves unwritten shows), then checks every element: each product term is
    /// 0.5 · 0.25 and each fragment product sums 16, so the exact value is `2 · iters`. The
    /// inputs are constant, so this catches failed or partial writes, not misaddressed
    /// fragments. Shared tiles of `smem` bytes beyond the device's limit are reported, not run.
    fn probe(
        &self,
        name: &str,
        smem: usize,
        inputs: &Inputs,
        launch: &dyn Fn(ArrayArg<R>, ArrayArg<R>, ArrayArg<R>),
    ) -> Result<(), cubeport::Error> {
        let client = self.client;
        let max = cubeport::caps_of(client).max_shared_bytes;
        if smem > max {
            println!("{name:18} SKIP: {smem} bytes of shared memory, the device has {max}");
            return Ok(());
        }
        let len = self.len();
        let out = client.create_from_slice(bytemuck::cast_slice(&vec![f32::NAN; len]));
        // SAFETY: the handles hold the lengths `Inputs` records (in halves; a launch that
        // reads them as vectors takes the lengths in scalars too), `out` `len` f32.
        let go = || unsafe {
            launch(
                ArrayArg::from_raw_parts(inputs.a.clone(), inputs.a_len),
                ArrayArg::from_raw_parts(inputs.b.clone(), inputs.b_len),
                ArrayArg::from_raw_parts(out.clone(), len),
            )
        };
        go();
        // A probe the device refuses is reported and the next one still runs (the client
        // stays usable once the error is consumed).
        if let Err(e) = sync(client) {
            println!("{name:18} FAILED: {e}");
            return Ok(());
        }
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            go();
            sync(client)?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let bytes = client.read_one(out).map_err(|e| cubeport::Error::Launch {
            op: "cmma_probe",
            message: format!("{e:?}"),
        })?;
        let got: &[f32] = bytemuck::cast_slice(&bytes);
        let want = 2.0 * self.iters as f32;
        let wrong = got[..len].iter().filter(|&&v| v != want).count();
        let flops = (self.cubes * PLANES * 4 * self.iters) as f64 * 2.0 * 16.0 * 16.0 * 16.0;
        println!(
            "{name:18} {:8.3} ms {:8.1} TFLOP/s  {}",
            times[2] * 1e3,
            flops / times[2] / 1e12,
            if wrong == 0 {
                "ok".to_string()
            } else {
                format!("WRONG: {wrong} of {len} differ from {want}")
            }
        );
        Ok(())
    }
}

fn run<R: Runtime>(client: &ComputeClient<R>) -> Result<(), cubeport::Error> {
    let caps = cubeport::caps_of(client);
    println!("{}: {caps:?}", R::name(client));
    // The probes' cubes are planes of 32 (one fragment per plane, as on NVIDIA).
    // `CMMA_FORCE=1` launches anyway: with cubecl's `spirv-dump` feature and
    // `CUBECL_DEBUG_SPIRV=DIR`, the first probe's SPIR-V is written before a driver without
    // cooperative matrices refuses it (cubecl then panics on its device thread).
    let force = cubeport::testing::env_flag("CMMA_FORCE");
    let fragments = caps.tensor_cores && caps.f16 && caps.plane.fixed_width() == Some(32);
    if !(force || fragments) {
        println!("SKIP: no 16 × 16 × 16 f16 fragments on planes of 32 here");
        return Ok(());
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let small = Inputs::new(client, 512, 512);
    let s = Setup {
        client,
        cubes: env("CMMA_CUBES", caps.num_sms.map_or(1056, |s| 8 * s as usize)),
        iters: env("CMMA_ITERS", 4096),
    };
    let count = CubeCount::new_1d(s.cubes as u32);
    let dim = CubeDim::new_2d(32, PLANES as u32);
    let iters = s.iters as u32;
    // SAFETY (every launch): the arguments are as `Setup::probe` describes; the shared tiles
    // are indexed within their size.
    s.probe("mma_only", 0, &small, &|a, b, o| unsafe {
        mma_only::launch_unchecked::<R>(client, count.clone(), dim, a, b, o, iters)
    })?;
    let scalar_smem = 2 * PLANES * STRIP * DEPTH * 2;
    s.probe("shared_scalar", scalar_smem, &small, &|a, b, o| unsafe {
        shared_scalar::launch_unchecked::<R>(client, count.clone(), dim, a, b, o, iters)
    })?;
    let vec_smem = PLANES * (STRIP * (DEPTH + PAD) + DEPTH * (STRIP + PAD)) * 2;
    for nv in [4usize, 8] {
        s.probe(
            &format!("shared_vec{nv}"),
            vec_smem,
            &small,
            &|a, b, o| unsafe {
                shared_vec::launch_unchecked::<R>(client, count.clone(), dim, nv, a, b, o, iters)
            },
        )?;
    }
    let staged_smem = PLANES * (STRIP * STAGED_A_ROW + 16 * (STRIP + PAD)) * 2;
    // `staged`: from the 1 KiB source. `streamed`: from operands larger than L1 (4 MiB: L2)
    // and than L2 (256 MiB of A: DRAM), each plane walking its own strips: whether the global
    // loads, not the staging's instructions, separate a backend's matmul from this probe.
    let l2 = Inputs::new(client, 2048 * BIG_K, BIG_K * BIG_N);
    let dram = Inputs::new(client, 131072 * BIG_K, BIG_K * BIG_N);
    for (name, inputs, rows) in [
        ("staged_", &small, 0usize),
        ("streamed_l2_", &l2, 2048),
        ("streamed_dram_", &dram, 131072),
    ] {
        for nv in [4usize, 8] {
            s.probe(
                &format!("{name}vec{nv}"),
                staged_smem,
                inputs,
                &|a, b, o| unsafe {
                    staged_vec::launch_unchecked::<R>(
                        client,
                        count.clone(),
                        dim,
                        nv,
                        a,
                        b,
                        o,
                        iters,
                        rows,
                        rows > 0,
                    )
                },
            )?;
        }
    }
    Ok(())
}

fn main() -> Result<(), cubeport::Error> {
    match std::env::var("CUBEPORT_BACKEND").as_deref() {
        Ok("cuda") => run(&cubeport::cuda_client()?),
        _ => run(&cubeport::wgpu_client()?),
    }
}
