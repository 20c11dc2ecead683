//! The phases of one backend's `cubeport bench` run, in the order they run: JIT, ceilings,
//! vendor GEMM, kernels, sweeps, launch overhead, transfers (the op-overhead and overlap
//! phases are in `host.rs`).

use super::report::*;
use super::{BenchArgs, Phases, progress, report_matmul_cases, rotation_copies};
use crate::timing::{Clock, time_case, time_launch};
use cubeport::cubecl::prelude::*;
use cubeport::testing::{seeded, sync};
use cubeport::{Activation, BackendKind, DeviceTensor, Error, PinnedBuffer};
use cubeport_cli::cases::{self, Case, Scale};
use std::collections::BTreeMap;
use std::time::Instant;

/// What every phase of one backend's run needs.
pub(super) struct Ctx<'c, R: Runtime> {
    pub client: &'c ComputeClient<R>,
    pub kind: BackendKind,
    pub caps: cubeport::Caps,
    pub quick: bool,
    pub scale: Scale,
    /// The kernels' clock: the device timers until [`Ctx::ceilings`] finds them wrong.
    pub clock: Clock,
    families: Vec<String>,
}

/// The measured ceilings of a backend.
pub(super) struct Roof {
    pub copy_gbps: f64,
    pub fma_gflops: BTreeMap<String, f64>,
    /// Why the device timers were rejected, if they were (appended to the report's `timing`).
    pub timing_note: String,
}

impl<'c, R: Runtime> Ctx<'c, R> {
    pub fn new(client: &'c ComputeClient<R>, kind: BackendKind, args: &BenchArgs) -> Self {
        let caps = cubeport::caps_of(client);
        let clock = if caps.device_timing && !args.host_timing {
            Clock::Device
        } else {
            Clock::Host
        };
        Ctx {
            client,
            kind,
            caps,
            quick: args.quick,
            scale: if args.quick {
                Scale::Quick
            } else {
                Scale::Full
            },
            clock,
            families: args.family.clone(),
        }
    }

    /// `--family` filter: empty means every family.
    /// `reduce` also selects the other row families (softmax, gemv), which share its matrix.
    pub fn wants(&self, family: &str) -> bool {
        let row_family = matches!(family, "softmax" | "gemv");
        self.families.is_empty()
            || self
                .families
                .iter()
                .any(|x| x == family || (row_family && x == "reduce"))
    }

    /// The first launch of an op in this process (its JIT) against warm launches.
    pub fn jit(&self) -> Result<Jit, Error> {
        let client = self.client;
        // JIT first: the first launch of softmax in this process vs warm launches.
        Ok({
            let x =
                DeviceTensor::from_slice(client, &seeded::<f32>(5, 4096, -1.0, 1.0), &[4, 1024])?;
            let mut y = DeviceTensor::<f32>::empty(client, &[4, 1024])?;
            sync(client)?;
            let t = Instant::now();
            cubeport::log_softmax_into(client, x.as_ref(), y.as_mut(), 1)?;
            sync(client)?;
            let first = t.elapsed();
            let warm = time_launch(
                client,
                true,
                Clock::Host,
                &mut || cubeport::log_softmax_into(client, x.as_ref(), y.as_mut(), 1),
                &mut || sync(client),
            )?;
            Jit {
                op: "log_softmax 4x1024 f32".into(),
                first_ms: first.as_secs_f64() * 1e3,
                warm_us: warm * 1e6,
            }
        })
    }

    /// Device copy bandwidth and FMA peaks; checks the device timers against the host clock
    /// on the copy and falls back to the host clock when they disagree.
    pub fn ceilings(&mut self) -> Result<Roof, Error> {
        let (client, quick, mut clock, scale, kind) =
            (self.client, self.quick, self.clock, self.scale, self.kind);
        let caps = &self.caps;
        let mut timing_note = String::new();
        let copy_elems = if quick {
            4 << 20
        } else {
            (256usize << 20).min(caps.max_alloc_bytes as usize / 4)
        };
        let mut copy = cases::copy_case(client, copy_elems)?;
        let mut copy_s = time_case(client, quick, clock, &mut copy)?;
        if clock == Clock::Device {
            // The device timers must see the whole kernel: a copy this large amortizes launch
            // overhead, so host time around batched launches bounds the device time from above
            // and may exceed it only by that overhead. Timers that report far less than the host
            // waited are not bracketing the work; the whole backend falls back to the host clock.
            let host_s = time_case(client, quick, Clock::Host, &mut copy)?;
            if copy_s < 0.7 * host_s {
                timing_note = format!(
                    "; device timers rejected: a {copy_elems}-element copy took {} by the device \
                     timers but {} by the host clock, so every kernel is host-timed",
                    fmt_time(copy_s),
                    fmt_time(host_s)
                );
                eprintln!("{kind}: {}", timing_note.trim_start_matches("; "));
                clock = Clock::Host;
                copy_s = host_s;
            }
        }
        let copy_gbps = copy.bytes as f64 / copy_s / 1e9;
        drop(copy);
        let mut fma_gflops = BTreeMap::new();
        {
            let mut c32 = cases::fma_case::<R, f32>(client, scale)?;
            let s = time_case(client, quick, clock, &mut c32)?;
            fma_gflops.insert("f32".to_string(), c32.flops as f64 / s / 1e9);
        }
        if caps.f16 {
            let mut c16 = cases::fma_case::<R, half::f16>(client, scale)?;
            let s = time_case(client, quick, clock, &mut c16)?;
            fma_gflops.insert("f16".to_string(), c16.flops as f64 / s / 1e9);
        }
        self.clock = clock;
        Ok(Roof {
            copy_gbps,
            fma_gflops,
            timing_note,
        })
    }

    /// The vendor GEMM (CUDA only): cuBLAS on the same seeded inputs as the matmul cases.
    pub fn vendor_gemm(&self, phases: &mut Phases) -> Result<Option<VendorGemm>, Error> {
        let (client, quick, clock, kind) = (self.client, self.quick, self.clock, self.kind);
        let wants = |f: &str| self.wants(f);
        if kind != BackendKind::Cuda || !wants("matmul") {
            return Ok(None);
        }
        phases.next("vendor gemm");
        let side = if quick { 512 } else { 4096 };
        let mut sizes = vec![(side, side, side)];
        for s in super::matmul_report_sizes(self.scale) {
            if !sizes.contains(&s) {
                sizes.push(s);
            }
        }
        let mut by_size: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        for dtype in [
            cubeport::DType::F32,
            cubeport::DType::F16,
            cubeport::DType::BF16,
        ] {
            for &(m, n, k) in &sizes {
                match cases::cublas_case_of(dtype, m, n, k) {
                    Ok(mut case) => {
                        let s = time_case(client, quick, clock, &mut case)?;
                        by_size
                            .entry(dtype.to_string())
                            .or_default()
                            .insert(format!("{m}x{n}x{k}"), case.flops as f64 / s / 1e9);
                    }
                    Err(e) => {
                        eprintln!("SKIP vendor gemm {dtype} {m}x{n}x{k}: {e}");
                        break;
                    }
                }
            }
        }
        let square = format!("{side}x{side}x{side}");
        let gflops: BTreeMap<String, f64> = by_size
            .iter()
            .filter_map(|(d, sizes)| sizes.get(&square).map(|g| (d.clone(), *g)))
            .collect();
        Ok((!gflops.is_empty()).then(|| VendorGemm {
            library: "cuBLAS (cudarc)".into(),
            size: square,
            gflops,
            by_size,
        }))
    }

    /// Every family's cases, timed and placed on the roofline.
    pub fn kernels(
        &self,
        phases: &mut Phases,
        roof: &Roof,
        vendor_gemm: Option<&VendorGemm>,
    ) -> Result<Vec<KernelPoint>, Error> {
        let (client, quick, clock, scale, kind) =
            (self.client, self.quick, self.clock, self.scale, self.kind);
        let caps = &self.caps;
        let wants = |f: &str| self.wants(f);
        let mut kernels = Vec::new();
        type MakeCases<'c> = Box<dyn Fn() -> Result<Vec<Case<'c>>, Error> + 'c>;
        let mut families: Vec<(&str, &str, MakeCases<'c>)> = vec![
            (
                "activation",
                "",
                Box::new(move || cases::activation_cases(client, scale)),
            ),
            (
                "reduce",
                "",
                Box::new(move || cases::reduce_cases(client, scale)),
            ),
            (
                "softmax",
                "",
                Box::new(move || cases::softmax_cases(client, scale)),
            ),
            (
                "norm",
                "",
                Box::new(move || cases::norm_cases(client, scale)),
            ),
            (
                "attention",
                "",
                Box::new(move || cases::attention_cases(client, scale)),
            ),
            (
                "gemv",
                "",
                Box::new(move || cases::gemv_cases(client, scale)),
            ),
            (
                "transpose",
                "",
                Box::new(move || cases::transpose_cases(client, scale)),
            ),
            (
                "histogram",
                "",
                Box::new(move || cases::histogram_cases(client, scale)),
            ),
            (
                "matmul",
                " f32",
                Box::new(move || report_matmul_cases::<R, f32>(client, scale)),
            ),
        ];
        if caps.f16 {
            families.push((
                "matmul",
                " f16",
                Box::new(move || report_matmul_cases::<R, half::f16>(client, scale)),
            ));
        }
        if caps.bf16 {
            families.push((
                "matmul",
                " bf16",
                Box::new(move || report_matmul_cases::<R, half::bf16>(client, scale)),
            ));
        }
        for (family, dtype, make) in families {
            if !wants(family) {
                continue;
            }
            phases.next(format!("{family}{dtype} setup"));
            let mut built = make()?;
            phases.next(format!("{family}{dtype} timing"));
            let bar = progress(built.len() as u64, &format!("{kind} {family}"));
            for case in built.iter_mut() {
                bar.set_message(format!("{} {}", case.variant, case.size));
                if quick && case.variant == "naive" && case.family == "matmul" {
                    bar.inc(1);
                    continue;
                }
                let s = time_case(client, quick, clock, case)?;
                // Every kernel computes in f32 (f16/bf16 are storage types), so the f32 FMA peak
                // is the compute roof; tensor-core kernels are measured against it too.
                let peak = roof.fma_gflops.get("f32").copied().unwrap_or(0.0);
                let dtype = case.dtype.to_string();
                let mut p = point(case, &dtype, s, roof.copy_gbps, peak);
                if case.family == "matmul" {
                    p.pct_of_vendor = vendor_gemm
                        .and_then(|v| v.by_size.get(&dtype)?.get(&case.size))
                        .map(|v| 100.0 * p.gflops / v);
                }
                kernels.push(p);
                bar.inc(1);
            }
            bar.finish_and_clear();
        }
        Ok(kernels)
    }

    /// Throughput versus size: one op per family over a geometric sweep of sizes.
    pub fn sweeps(&self, phases: &mut Phases) -> Result<Vec<Sweep>, Error> {
        let (client, quick, clock, kind) = (self.client, self.quick, self.clock, self.kind);
        let caps = &self.caps;
        let wants = |f: &str| self.wants(f);
        let mut sweeps = Vec::new();
        // 64 Mi elements: 256 MiB per operand, several times the largest L2 cache of current
        // GPUs, so every memory-bound sweep ends on its DRAM plateau; matmul sweeps go to 8192³
        // regardless.
        let max_elems = if quick {
            1 << 20
        } else {
            (64usize << 20).min(caps.max_alloc_bytes as usize / 4)
        };
        let mut ops = vec![
            cases::SweepOp::BiasGelu,
            cases::SweepOp::SumAll,
            cases::SweepOp::Softmax1024,
            cases::SweepOp::Transpose,
            cases::SweepOp::Histogram256,
            cases::SweepOp::Matmul(cubeport::DType::F32),
        ];
        if caps.tensor_cores && caps.f16 {
            ops.push(cases::SweepOp::Matmul(cubeport::DType::F16));
        }
        for op in ops {
            if !wants(op.family()) {
                continue;
            }
            let sizes = op.sizes(match op {
                cases::SweepOp::Matmul(_) if quick => 512 * 512 * 4,
                cases::SweepOp::Matmul(_) => 16384 * 16384,
                _ => max_elems,
            });
            phases.next(format!("sweep {}", op.name()));
            let bar = progress(sizes.len() as u64, &format!("{kind} sweep {}", op.family()));
            let mut points = Vec::new();
            for n in sizes {
                let first = cases::sweep_case(client, op, n)?;
                // Memory-bound points rotate over copies totalling ≥ 512 MiB (as the launch sweep),
                // so sizes under the L2 cache are not served from it; matmul reuses its operands
                // from cache by design and is not rotated.
                let copies = if matches!(op, cases::SweepOp::Matmul(_)) {
                    1
                } else {
                    rotation_copies(first.bytes)
                };
                let mut set = vec![first];
                for _ in 1..copies {
                    set.push(cases::sweep_case(client, op, n)?);
                }
                let Some(mut case) = Case::rotating(set) else {
                    continue;
                };
                let s = time_case(client, quick, clock, &mut case)?;
                points.push(SizePoint {
                    size: case.size.clone(),
                    variant: case.variant.clone(),
                    bytes: case.bytes,
                    flops: case.flops,
                    seconds: s,
                    gbps: case.bytes as f64 / s / 1e9,
                    gflops: case.flops as f64 / s / 1e9,
                });
                bar.inc(1);
            }
            bar.finish_and_clear();
            let dtype = match op {
                cases::SweepOp::Matmul(d) => d.to_string(),
                _ => "f32".into(),
            };
            sweeps.push(Sweep {
                family: op.family().into(),
                op: op.name(),
                dtype,
                points,
            });
        }
        Ok(sweeps)
    }

    /// Launch overhead and the size sweep of the vector add (host clock: what a caller waits).
    pub fn launch(&self) -> Result<Launch, Error> {
        let (client, quick, kind) = (self.client, self.quick, self.kind);
        let caps = &self.caps;
        let mut one = cases::copy_case(client, 1)?;
        // Launch overhead is what a caller waits: host clock, whatever the backend's timers.
        let trivial_batched = time_case(client, quick, Clock::Host, &mut one)?;
        let mut lat = Vec::new();
        for _ in 0..if quick { 20 } else { 200 } {
            let t = Instant::now();
            one.run()?;
            sync(client)?;
            lat.push(t.elapsed().as_secs_f64());
        }
        lat.sort_by(f64::total_cmp);
        let trivial_sync = lat[lat.len() / 2];
        let max_elems = if quick {
            4 << 20
        } else {
            (256usize << 20).min(caps.max_alloc_bytes as usize / 4)
        };
        let mut sweep = Vec::new();
        let mut elems = 1usize;
        let steps = (max_elems as f64).log(4.0).ceil() as u64 + 1;
        let bar = progress(steps, &format!("{kind} launch"));
        while elems <= max_elems {
            let bytes = 3 * elems * 4;
            // Rotate across copies so the whole working set exceeds the L2 cache.
            let copies = rotation_copies(bytes as u64);
            // One upload; the other copies are device copies of it (distinct buffers are all the
            // rotation needs, and uploads are the slow part of the set-up).
            let x =
                DeviceTensor::from_slice(client, &seeded::<f32>(98, elems, -1.0, 1.0), &[elems])?;
            let b =
                DeviceTensor::from_slice(client, &seeded::<f32>(99, elems, -1.0, 1.0), &[elems])?;
            let mut sets = Vec::new();
            for _ in 1..copies {
                let mut xc = DeviceTensor::<f32>::empty(client, &[elems])?;
                let mut bc = DeviceTensor::<f32>::empty(client, &[elems])?;
                cubeport::copy_into(client, x.as_ref(), xc.as_mut())?;
                cubeport::copy_into(client, b.as_ref(), bc.as_mut())?;
                sets.push((xc, bc, DeviceTensor::<f32>::empty(client, &[elems])?));
            }
            sets.push((x, b, DeviceTensor::<f32>::empty(client, &[elems])?));
            let mut i = 0;
            let s = time_launch(
                client,
                quick,
                Clock::Host,
                &mut || {
                    let (x, b, y) = &mut sets[i % copies];
                    i += 1;
                    cubeport::bias_activation_into(
                        client,
                        x.as_ref(),
                        b.as_ref(),
                        y.as_mut(),
                        Activation::Identity,
                    )
                },
                &mut || sync(client),
            )?;
            sweep.push(SweepPoint {
                elems: elems as u64,
                bytes: bytes as u64,
                seconds: s,
                gbps: bytes as f64 / s / 1e9,
            });
            bar.inc(1);
            elems = if elems == max_elems {
                max_elems + 1
            } else {
                (elems * 4).min(max_elems)
            };
        }
        bar.finish_and_clear();
        let floor = sweep
            .iter()
            .map(|p| p.seconds)
            .fold(f64::INFINITY, f64::min);
        let knee = sweep
            .iter()
            .find(|p| p.seconds >= 2.0 * floor)
            .map(|p| p.bytes);
        Ok(Launch {
            trivial_batched_us: trivial_batched * 1e6,
            trivial_sync_us: trivial_sync * 1e6,
            floor_us: floor * 1e6,
            knee_bytes: knee,
            sweep,
            graphs: None,
            graphs_note: "cubecl 0.10 exposes no graph capture or launch batching API".into(),
        })
    }

    /// Host↔device bandwidth across sizes, pageable and pinned; returns the largest size too.
    pub fn transfers(&self) -> Result<(Vec<Transfer>, usize), Error> {
        let (client, quick) = (self.client, self.quick);
        let caps = &self.caps;
        let mut transfers = Vec::new();
        let mut bytes = 4usize << 10;
        let max_t = if quick {
            16 << 20
        } else {
            (256usize << 20).min(caps.max_alloc_bytes as usize)
        };
        while bytes <= max_t {
            let n = bytes / 4;
            let host: Vec<f32> = seeded(7, n, -1.0, 1.0);
            let reps = if bytes < (1 << 20) { 20 } else { 5 };
            let mut up = Vec::new();
            let mut down = Vec::new();
            for _ in 0..reps {
                sync(client)?;
                let t = Instant::now();
                let d = DeviceTensor::from_slice(client, &host, &[n])?;
                sync(client)?;
                up.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                let back = d.to_vec(client)?;
                down.push(t.elapsed().as_secs_f64());
                if back.len() != n {
                    return Err(Error::Read {
                        message: "short read".into(),
                    });
                }
            }
            up.sort_by(f64::total_cmp);
            down.sort_by(f64::total_cmp);
            let (mut pup, mut pdown) = (Vec::new(), Vec::new());
            let mut pinned = PinnedBuffer::<f32>::new(client, n)?;
            pinned.copy_from_slice(&host);
            for _ in 0..reps {
                sync(client)?;
                let t = Instant::now();
                let d = DeviceTensor::from_pinned(client, &pinned, &[n])?;
                sync(client)?;
                pup.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                d.read_into(client, &mut pinned)?;
                pdown.push(t.elapsed().as_secs_f64());
            }
            if pinned[..] != host[..] {
                return Err(Error::Read {
                    message: "pinned round trip changed the data".into(),
                });
            }
            pup.sort_by(f64::total_cmp);
            pdown.sort_by(f64::total_cmp);
            let pinned_rate =
                |v: &[f64]| pinned.is_pinned().then(|| bytes as f64 / v[reps / 2] / 1e9);
            transfers.push(Transfer {
                bytes: bytes as u64,
                h2d_gbps: bytes as f64 / up[reps / 2] / 1e9,
                d2h_gbps: bytes as f64 / down[reps / 2] / 1e9,
                h2d_pinned_gbps: pinned_rate(&pup),
                d2h_pinned_gbps: pinned_rate(&pdown),
            });
            bytes *= 4;
        }
        Ok((transfers, max_t))
    }
}
