//! The report of `cubeport bench`: its JSON form (schema `docs/bench.schema.json`) and the
//! table printed from it.

use cubeport_cli::cases::Case;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

pub const SCHEMA: &str = "cubeport-bench/7";
#[derive(Serialize, Deserialize)]
pub(crate) struct Report {
    pub(crate) schema: String,
    pub(crate) created_unix: u64,
    pub(crate) quick: bool,
    pub(crate) backends: Vec<BackendReport>,
    /// The same case on two backends of the run (e.g. CUDA and wgpu on one GPU).
    #[serde(default)]
    pub(crate) portability: Vec<PortPoint>,
}

/// One case timed on two backends: `ratio` = `base_s / other_s` (above 1: `other` faster).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct PortPoint {
    pub(crate) family: String,
    /// The variant, with an automatic choice's chosen kernel cut off (`…auto`): each backend
    /// makes its own choice for the same call.
    pub(crate) variant: String,
    pub(crate) dtype: String,
    pub(crate) size: String,
    pub(crate) base: String,
    pub(crate) other: String,
    pub(crate) base_s: f64,
    pub(crate) other_s: f64,
    pub(crate) ratio: f64,
}

/// A point's key across backends: the variant up to `auto` where it is an automatic choice.
fn port_key(p: &KernelPoint) -> (String, String, String, String) {
    let variant = match p.variant.find("auto") {
        Some(i) => p.variant[..i + 4].to_string(),
        None => p.variant.clone(),
    };
    (p.family.clone(), variant, p.dtype.clone(), p.size.clone())
}

/// Every case that the first backend of the run (`base`, CUDA where present: it is visited
/// first) and a later one both timed, in the base's order.
pub(crate) fn portability(backends: &[BackendReport]) -> Vec<PortPoint> {
    let Some((base, others)) = backends.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for other in others {
        let times: BTreeMap<_, f64> = other
            .kernels
            .iter()
            .map(|p| (port_key(p), p.seconds))
            .collect();
        for p in &base.kernels {
            let key = port_key(p);
            if let Some(&other_s) = times.get(&key) {
                let (family, variant, dtype, size) = key;
                out.push(PortPoint {
                    family,
                    variant,
                    dtype,
                    size,
                    base: base.backend.clone(),
                    other: other.backend.clone(),
                    base_s: p.seconds,
                    other_s,
                    ratio: p.seconds / other_s.max(1e-12),
                });
            }
        }
    }
    out
}

/// The cross-backend table: each case's time on both backends and their ratio.
pub(crate) fn print_portability(points: &[PortPoint]) {
    if points.is_empty() {
        return;
    }
    println!(
        "== portability: the same cases on two backends (ratio = base time / other time; 1.00 = parity)"
    );
    println!(
        "{:<11} {:<28} {:<5} {:>16} {:>7} {:>11} {:>7} {:>11} {:>6}",
        "family", "variant", "dtype", "size", "base", "time", "other", "time", "ratio"
    );
    for p in points {
        println!(
            "{:<11} {:<28} {:<5} {:>16} {:>7} {:>11} {:>7} {:>11} {:>6.2}",
            p.family,
            p.variant,
            p.dtype,
            p.size,
            p.base,
            fmt_time(p.base_s),
            p.other,
            fmt_time(p.other_s),
            p.ratio
        );
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct BackendReport {
    pub(crate) backend: String,
    pub(crate) runtime: String,
    pub(crate) device: String,
    pub(crate) timing: String,
    pub(crate) ceilings: Ceilings,
    pub(crate) kernels: Vec<KernelPoint>,
    pub(crate) launch: Launch,
    pub(crate) transfers: Vec<Transfer>,
    /// Per-op host cost of small ops.
    #[serde(default)]
    pub(crate) ops: Vec<OpOverhead>,
    /// An upload on one thread during kernels of another.
    #[serde(default)]
    pub(crate) overlap: Option<Overlap>,
    pub(crate) jit: Jit,
    /// Throughput versus size, one op per family.
    #[serde(default)]
    pub(crate) sweeps: Vec<Sweep>,
    /// Wall-clock seconds of each part of the run, setup (inputs, uploads, reference checks)
    /// apart from timing.
    #[serde(default)]
    pub(crate) phases: Vec<Phase>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Phase {
    pub(crate) name: String,
    pub(crate) seconds: f64,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Sweep {
    pub(crate) family: String,
    pub(crate) op: String,
    pub(crate) dtype: String,
    pub(crate) points: Vec<SizePoint>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct SizePoint {
    pub(crate) size: String,
    pub(crate) variant: String,
    pub(crate) bytes: u64,
    pub(crate) flops: u64,
    pub(crate) seconds: f64,
    pub(crate) gbps: f64,
    pub(crate) gflops: f64,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Ceilings {
    pub(crate) copy_gbps: f64,
    pub(crate) fma_gflops: BTreeMap<String, f64>,
    /// The vendor GEMM (cuBLAS through cudarc) where the backend is CUDA, measured in the run.
    #[serde(default)]
    pub(crate) vendor_gemm: Option<VendorGemm>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct VendorGemm {
    pub(crate) library: String,
    pub(crate) size: String,
    /// GFLOP/s per dtype at `size` (`f32`: sgemm without TF32; `f16`, `bf16`: gemmEx, f32
    /// compute).
    pub(crate) gflops: BTreeMap<String, f64>,
    /// GFLOP/s per dtype and `m x n x k`: every size the matmul cases time.
    #[serde(default)]
    pub(crate) by_size: BTreeMap<String, BTreeMap<String, f64>>,
}

#[derive(Serialize, Deserialize, Clone)]
pub(crate) struct KernelPoint {
    pub(crate) family: String,
    pub(crate) variant: String,
    pub(crate) dtype: String,
    pub(crate) size: String,
    pub(crate) seconds: f64,
    pub(crate) bytes: u64,
    pub(crate) flops: u64,
    pub(crate) gbps: f64,
    pub(crate) gflops: f64,
    pub(crate) intensity: f64,
    pub(crate) bound: String,
    pub(crate) pct_of_roof: f64,
    /// Matmul: GFLOP/s as % of the vendor GEMM of the same dtype at the same size, when one was
    /// measured.
    #[serde(default)]
    pub(crate) pct_of_vendor: Option<f64>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Launch {
    pub(crate) trivial_batched_us: f64,
    pub(crate) trivial_sync_us: f64,
    pub(crate) floor_us: f64,
    pub(crate) knee_bytes: Option<u64>,
    pub(crate) sweep: Vec<SweepPoint>,
    pub(crate) graphs: Option<f64>,
    pub(crate) graphs_note: String,
}

/// Host cost of one op as a framework calls it: `calls` calls back to back, then one sync.
#[derive(Serialize, Deserialize)]
pub(crate) struct OpOverhead {
    pub(crate) op: String,
    pub(crate) shape: Vec<usize>,
    /// `first_launch` (the default) or `every_op`.
    pub(crate) checking: String,
    pub(crate) us_per_op: f64,
}

/// Whether an upload from one thread overlaps kernels launched from another.
#[derive(Serialize, Deserialize)]
pub(crate) struct Overlap {
    pub(crate) bytes: u64,
    pub(crate) upload_s: f64,
    /// Device copies in the other thread's batch, sized to last about as long as the upload.
    #[serde(default)]
    pub(crate) copies: u64,
    pub(crate) kernels_s: f64,
    pub(crate) both_s: f64,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct SweepPoint {
    pub(crate) elems: u64,
    pub(crate) bytes: u64,
    pub(crate) seconds: f64,
    pub(crate) gbps: f64,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Transfer {
    pub(crate) bytes: u64,
    pub(crate) h2d_gbps: f64,
    pub(crate) d2h_gbps: f64,
    /// From / into a `PinnedBuffer` (page-locked on CUDA).
    #[serde(default)]
    pub(crate) h2d_pinned_gbps: Option<f64>,
    #[serde(default)]
    pub(crate) d2h_pinned_gbps: Option<f64>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Jit {
    pub(crate) op: String,
    pub(crate) first_ms: f64,
    pub(crate) warm_us: f64,
}

pub(crate) fn point(
    case: &Case<'_>,
    dtype: &str,
    s: f64,
    copy_gbps: f64,
    peak_gflops: f64,
) -> KernelPoint {
    let gbps = case.bytes as f64 / s / 1e9;
    let gflops = case.flops as f64 / s / 1e9;
    let intensity = case.flops as f64 / case.bytes.max(1) as f64;
    let mem_roof = copy_gbps * intensity; // GFLOP/s the bandwidth allows
    let (bound, pct) = if case.flops == 0 || mem_roof < peak_gflops {
        ("memory", 100.0 * gbps / copy_gbps)
    } else {
        ("compute", 100.0 * gflops / peak_gflops.max(1e-9))
    };
    KernelPoint {
        family: case.family.to_string(),
        variant: case.variant.clone(),
        dtype: dtype.to_string(),
        size: case.size.clone(),
        seconds: s,
        bytes: case.bytes,
        flops: case.flops,
        gbps,
        gflops,
        intensity,
        bound: bound.into(),
        pct_of_roof: pct,
        pct_of_vendor: None,
    }
}

pub(crate) fn print_report(r: &BackendReport) {
    println!("== {} ({}) — {}", r.backend, r.runtime, r.device);
    println!(
        "ceilings: copy {:.1} GB/s; FMA {}",
        r.ceilings.copy_gbps,
        r.ceilings
            .fma_gflops
            .iter()
            .map(|(k, v)| format!("{k} {v:.0} GFLOP/s"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(v) = &r.ceilings.vendor_gemm {
        println!(
            "vendor GEMM: {} at {}: {}",
            v.library,
            v.size,
            v.gflops
                .iter()
                .map(|(k, g)| format!("{k} {g:.0} GFLOP/s"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("timing: {}", r.timing);
    println!(
        "{:<11} {:<28} {:<5} {:>16} {:>11} {:>10} {:>10} {:>8} {:>8} {:>7} {:>8}",
        "family",
        "variant",
        "dtype",
        "size",
        "time",
        "GB/s",
        "GFLOP/s",
        "FLOP/B",
        "bound",
        "% roof",
        "% vendor"
    );
    for k in &r.kernels {
        println!(
            "{:<11} {:<28} {:<5} {:>16} {:>11} {:>10.1} {:>10.1} {:>8.2} {:>8} {:>6.1}% {:>8}",
            k.family,
            k.variant,
            k.dtype,
            k.size,
            fmt_time(k.seconds),
            k.gbps,
            k.gflops,
            k.intensity,
            k.bound,
            k.pct_of_roof,
            k.pct_of_vendor.map_or("-".into(), |v| format!("{v:.1}%"))
        );
    }
    println!(
        "launch: trivial kernel {:.2} µs back to back, {:.2} µs with a sync; vector-add floor {:.2} µs, knee at {}",
        r.launch.trivial_batched_us,
        r.launch.trivial_sync_us,
        r.launch.floor_us,
        r.launch
            .knee_bytes
            .map_or("none in the sweep".into(), |b| format!("{} bytes", b))
    );
    for p in &r.launch.sweep {
        println!(
            "  add {:>10} elems {:>12} B {:>11} {:>9.1} GB/s",
            p.elems,
            p.bytes,
            fmt_time(p.seconds),
            p.gbps
        );
    }
    let opt = |v: Option<f64>| v.map_or("—".to_string(), |g| format!("{g:.2}"));
    for t in &r.transfers {
        println!(
            "transfer {:>10} B: host→device {:>7.2} GB/s (pinned {:>6}), device→host {:>7.2} GB/s (pinned {:>6})",
            t.bytes,
            t.h2d_gbps,
            opt(t.h2d_pinned_gbps),
            t.d2h_gbps,
            opt(t.d2h_pinned_gbps)
        );
    }
    if let Some(o) = &r.overlap {
        println!(
            "overlap: upload of {} B {} alone, {} device copies {} alone on another thread, both {}              (sum {})",
            o.bytes,
            fmt_time(o.upload_s),
            o.copies,
            fmt_time(o.kernels_s),
            fmt_time(o.both_s),
            fmt_time(o.upload_s + o.kernels_s)
        );
    }
    for o in &r.ops {
        println!(
            "op {:<10} {:<14} {:<12} {:>8.2} µs/op",
            o.op,
            format!("{:?}", o.shape),
            o.checking,
            o.us_per_op
        );
    }
    println!(
        "JIT: first {} in the process {:.1} ms, warm {:.1} µs",
        r.jit.op, r.jit.first_ms, r.jit.warm_us
    );
    for sw in &r.sweeps {
        let rates: Vec<String> = sw
            .points
            .iter()
            .map(|p| {
                if sw.family == "matmul" {
                    format!("{} {:.0} GFLOP/s", p.size, p.gflops)
                } else {
                    format!("{} {:.0} GB/s", p.size, p.gbps)
                }
            })
            .collect();
        println!(
            "sweep {} {} {}: {}",
            sw.family,
            sw.op,
            sw.dtype,
            rates.join(", ")
        );
    }
    let total: f64 = r.phases.iter().map(|p| p.seconds).sum();
    let parts: Vec<String> = r
        .phases
        .iter()
        .map(|p| format!("{} {:.1}", p.name, p.seconds))
        .collect();
    println!("wall time {total:.1} s: {}", parts.join(", "));
}

pub(crate) fn fmt_time(s: f64) -> String {
    let d = Duration::from_secs_f64(s.max(0.0));
    if s < 1e-3 {
        format!("{:.2} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.3} ms", d.as_secs_f64() * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kp(variant: &str, size: &str, seconds: f64) -> KernelPoint {
        KernelPoint {
            family: "matmul".into(),
            variant: variant.into(),
            dtype: "f32".into(),
            size: size.into(),
            seconds,
            bytes: 1,
            flops: 1,
            gbps: 0.0,
            gflops: 0.0,
            intensity: 1.0,
            bound: "compute".into(),
            pct_of_roof: 0.0,
            pct_of_vendor: None,
        }
    }

    fn backend(name: &str, kernels: Vec<KernelPoint>) -> BackendReport {
        let json = serde_json::json!({
            "backend": name, "runtime": name, "device": "d", "timing": "device",
            "ceilings": {"copy_gbps": 1.0, "fma_gflops": {}},
            "kernels": [],
            "launch": {"trivial_batched_us": 1.0, "trivial_sync_us": 1.0, "floor_us": 1.0,
                       "knee_bytes": null, "sweep": [], "graphs": null, "graphs_note": ""},
            "transfers": [],
            "jit": {"op": "x", "first_ms": 1.0, "warm_us": 1.0}
        });
        let mut b: BackendReport = serde_json::from_value(json).expect("a valid backend report");
        b.kernels = kernels;
        b
    }

    /// Automatic choices pair up whatever kernel each backend chose; forced variants pair by
    /// name; a case timed on one backend only is left out; the ratio is base / other.
    #[test]
    fn portability_pairs_the_same_case() {
        let cuda = backend(
            "cuda",
            vec![
                kp("auto_simt128x256", "64x64x64", 2.0),
                kp("naive", "64x64x64", 8.0),
                kp("auto_tc128", "1x2x3", 1.0),
            ],
        );
        let wgpu = backend(
            "wgpu",
            vec![
                kp("naive", "64x64x64", 4.0),
                kp("auto_simt64x64", "64x64x64", 8.0),
            ],
        );
        let p = portability(&[cuda, wgpu]);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].variant.as_str(), p[0].ratio), ("auto", 0.25));
        assert_eq!((p[1].variant.as_str(), p[1].ratio), ("naive", 2.0));
        assert_eq!((p[0].base.as_str(), p[0].other.as_str()), ("cuda", "wgpu"));
        assert!(portability(&p_one()).is_empty());
    }

    fn p_one() -> Vec<BackendReport> {
        vec![backend("wgpu", vec![kp("naive", "64x64x64", 4.0)])]
    }
}
