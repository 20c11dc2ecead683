//! The SVG charts of `cubeport bench --plots`.

use super::report::BackendReport;
use plotters::prelude::*;
use std::path::Path;

type Res = Result<(), Box<dyn std::error::Error>>;

/// `1.2k`, `3.4M`, `5G`: readable log-axis labels.
fn si(v: &f64) -> String {
    let v = *v;
    let (scaled, unit) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(s, _)| v.abs() >= *s)
        .map_or((v, ""), |(s, u)| (v / s, u));
    let text = if scaled >= 100.0 || scaled == scaled.trunc() {
        format!("{scaled:.0}")
    } else if scaled >= 1.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    format!("{text}{unit}")
}

/// µs per op of the small ops, one bar per op and checking mode.
fn ops(path: &Path, r: &BackendReport) -> Res {
    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = r.ops.len();
    let ymax = r.ops.iter().map(|o| o.us_per_op).fold(1.0, f64::max) * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Host cost per op, calls back to back — {}", r.backend),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(120)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)?;
    let labels: Vec<String> = r
        .ops
        .iter()
        .map(|o| {
            let shape: Vec<String> = o.shape.iter().map(|d| d.to_string()).collect();
            format!("{} {} {}", o.op, shape.join("x"), o.checking)
        })
        .collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            labels.get(i).cloned().unwrap_or_default()
        })
        .x_label_style(
            ("sans-serif", 11)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc("µs per op")
        .draw()?;
    for (i, o) in r.ops.iter().enumerate() {
        let c = if o.checking == "first_launch" {
            PALETTE[0]
        } else {
            PALETTE[1]
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, o.us_per_op)],
            c.filled(),
        )))?;
    }
    root.present()?;
    Ok(())
}

pub fn write_all(dir: &Path, r: &BackendReport) -> Res {
    std::fs::create_dir_all(dir)?;
    roofline(&dir.join(format!("roofline-{}.svg", r.backend)), r)?;
    launch(&dir.join(format!("launch-{}.svg", r.backend)), r)?;
    if !r.transfers.is_empty() {
        transfers(&dir.join(format!("transfers-{}.svg", r.backend)), r)?;
    }
    if !r.ops.is_empty() {
        ops(&dir.join(format!("ops-{}.svg", r.backend)), r)?;
    }
    if !r.sweeps.is_empty() {
        throughput(&dir.join(format!("throughput-{}.svg", r.backend)), r)?;
    }
    if r.kernels.iter().any(|k| k.pct_of_vendor.is_some()) {
        shapes(&dir.join(format!("matmul-shapes-{}.svg", r.backend)), r)?;
    }
    Ok(())
}

/// The matmul shape sweep: the automatic choice's GFLOP/s as % of cuBLAS at the same shape,
/// against the product's small side, one line per dtype for the few-row shapes (`n = k`, x is
/// `m`), one for their ragged neighbours and one for the few-column shapes (`m = k`, x is `n`).
fn shapes(path: &Path, r: &BackendReport) -> Res {
    let dims = |size: &str| -> Option<(f64, usize, usize)> {
        let v: Vec<usize> = size.split('x').filter_map(|x| x.parse().ok()).collect();
        (v.len() == 3).then(|| (v[0] as f64, v[1], v[2]))
    };
    // (label, points (m, %)) per dtype and alignment.
    let mut lines: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for k in &r.kernels {
        let (Some(pct), Some((m, n, kk))) = (k.pct_of_vendor, dims(&k.size)) else {
            continue;
        };
        if !k.variant.starts_with("auto_") || k.variant.ends_with("_bias_gelu") {
            continue;
        }
        let (label, x) = if n == kk {
            (format!("{} rows m (n = k = {n})", k.dtype), m)
        } else if m as usize == kk && n < kk {
            (format!("{} columns n (m = k = {kk})", k.dtype), n as f64)
        } else {
            (format!("{} ragged rows m (n = {n})", k.dtype), m)
        };
        lines.entry(label).or_default().push((x, pct));
    }
    lines.retain(|_, p| p.len() > 1);
    if lines.is_empty() {
        return Ok(());
    }
    let root = SVGBackend::new(path, (1000, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmax = lines.values().flatten().map(|p| p.0).fold(8.0, f64::max) * 1.5;
    let ymax = lines.values().flatten().map(|p| p.1).fold(100.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "matmul shapes — {}: automatic choice, % of cuBLAS at the same shape",
                r.backend
            ),
            ("sans-serif", 16),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((0.7f64..xmax).log_scale(), 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_label_formatter(&si)
        .x_desc("small side: m (rows of A and C), or n (columns of B and C)")
        .y_desc("% of cuBLAS")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            vec![(0.7, 100.0), (xmax, 100.0)],
            BLACK.stroke_width(1),
        ))?
        .label("cuBLAS")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    for (i, (label, mut p)) in lines.into_iter().enumerate() {
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = PALETTE[i % PALETTE.len()];
        series(&mut chart, &p, color, label)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present()?;
    Ok(())
}

/// Throughput versus size per family: memory-bound ops in GB/s against bytes moved (with
/// the copy ceiling), matmul in GFLOP/s against the square side (with the FMA peak and the
/// vendor GEMM where measured), side by side.
fn throughput(path: &Path, r: &BackendReport) -> Res {
    let root = SVGBackend::new(path, (1400, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(760);
    let mem: Vec<&super::report::Sweep> =
        r.sweeps.iter().filter(|s| s.family != "matmul").collect();
    let mm: Vec<&super::report::Sweep> = r.sweeps.iter().filter(|s| s.family == "matmul").collect();
    let bw = r.ceilings.copy_gbps.max(1e-3);
    let pts = |s: &super::report::Sweep,
               f: &dyn Fn(&super::report::SizePoint) -> (f64, f64)|
     -> Vec<(f64, f64)> {
        s.points
            .iter()
            .map(f)
            .filter(|p| p.0 > 0.0 && p.1 > 0.0)
            .collect()
    };
    {
        let all: Vec<(f64, f64)> = mem
            .iter()
            .flat_map(|s| pts(s, &|p| (p.bytes as f64, p.gbps)))
            .collect();
        let xmax = all.iter().map(|p| p.0).fold(1e3, f64::max) * 2.0;
        let xmin = all
            .iter()
            .map(|p| p.0)
            .fold(f64::INFINITY, f64::min)
            .min(xmax / 4.0)
            / 2.0;
        let ymin = all.iter().map(|p| p.1).fold(bw, f64::min).max(1e-4) / 2.0;
        let mut chart = ChartBuilder::on(&left)
            .caption(
                format!(
                    "Memory-bound families — {}: GB/s vs size (copy {:.0} GB/s)",
                    r.backend, bw
                ),
                ("sans-serif", 16),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(
                (xmin..xmax).log_scale(),
                (ymin..all.iter().map(|p| p.1).fold(bw, f64::max) * 1.5).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&si)
            .y_label_formatter(&si)
            .x_desc("bytes moved (inputs read once + outputs written once)")
            .y_desc("GB/s")
            .draw()?;
        chart
            .draw_series(LineSeries::new(
                vec![(xmin, bw), (xmax, bw)],
                BLACK.stroke_width(1),
            ))?
            .label("device copy")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        for (i, s) in mem.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let p = pts(s, &|p| (p.bytes as f64, p.gbps));
            series(&mut chart, &p, color, format!("{} ({})", s.family, s.op))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    if !mm.is_empty() {
        let peak = r.ceilings.fma_gflops.get("f32").copied().unwrap_or(1.0);
        let vendor: Vec<(String, f64)> = r
            .ceilings
            .vendor_gemm
            .as_ref()
            .map(|v| v.gflops.iter().map(|(k, g)| (k.clone(), *g)).collect())
            .unwrap_or_default();
        let side = |p: &super::report::SizePoint| {
            p.size
                .split('x')
                .next()
                .and_then(|x| x.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let all: Vec<(f64, f64)> = mm
            .iter()
            .flat_map(|s| pts(s, &|p| (side(p), p.gflops)))
            .collect();
        let top = all
            .iter()
            .map(|p| p.1)
            .chain(vendor.iter().map(|v| v.1))
            .fold(peak, f64::max)
            * 2.0;
        let ymin = all.iter().map(|p| p.1).fold(peak, f64::min).max(1e-3) / 2.0;
        let xmax = all.iter().map(|p| p.0).fold(256.0, f64::max) * 1.5;
        let mut chart = ChartBuilder::on(&right)
            .caption(
                format!("matmul — {}: GFLOP/s vs square side", r.backend),
                ("sans-serif", 16),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d((64f64..xmax).log_scale(), (ymin..top).log_scale())?;
        chart
            .configure_mesh()
            .x_label_formatter(&si)
            .y_label_formatter(&si)
            .x_desc("m = n = k")
            .y_desc("GFLOP/s")
            .draw()?;
        chart
            .draw_series(LineSeries::new(
                vec![(64.0, peak), (xmax, peak)],
                BLACK.stroke_width(1),
            ))?
            .label("f32 FMA peak (CUDA cores)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        for (i, (dt, g)) in vendor.iter().enumerate() {
            let color = PALETTE[(i + 5) % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    vec![(64.0, *g), (xmax, *g)],
                    color.stroke_width(1),
                ))?
                .label(format!("cuBLAS {dt}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        for (i, s) in mm.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let p = pts(s, &|p| (side(p), p.gflops));
            series(&mut chart, &p, color, format!("cubeport {}", s.dtype))?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    root.present()?;
    Ok(())
}

/// One series: a 2-pixel line through `p`, a dot at each point, `label` in the legend.
fn series<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    p: &[(f64, f64)],
    color: RGBColor,
    label: impl Into<String>,
) -> Res
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(p.to_vec(), color.stroke_width(2)))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))?;
    Ok(())
}

/// The legend box of every chart, at `position`.
fn legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> Res
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(position)
        .draw()?;
    Ok(())
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn roofline(path: &Path, r: &BackendReport) -> Res {
    let root = SVGBackend::new(path, (1100, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let peak = r.ceilings.fma_gflops.values().copied().fold(1.0, f64::max);
    let bw = r.ceilings.copy_gbps.max(1e-3);
    // Kernels with no FLOPs are drawn at a nominal intensity of 0.01, at the height their
    // bandwidth would reach there (their distance below the bandwidth line is their
    // fraction of the copy bandwidth).
    let place = |k: &super::report::KernelPoint| {
        let x = k.intensity.max(0.01);
        let y = if k.flops == 0 { k.gbps * x } else { k.gflops };
        (x, y)
    };
    let xmax = r.kernels.iter().map(|k| place(k).0).fold(1000.0, f64::max) * 2.0;
    let xmin = 0.005f64;
    let ymin = r
        .kernels
        .iter()
        .map(|k| place(k).1)
        .filter(|y| *y > 0.0)
        .fold(bw * xmin, f64::min)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Roofline — {} ({}): copy {:.0} GB/s, FMA peak {:.0} GFLOP/s",
                r.backend, r.device, bw, peak
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..peak * 3.0).log_scale())?;
    chart
        .configure_mesh()
        .x_label_formatter(&si)
        .y_label_formatter(&si)
        .x_desc("arithmetic intensity (FLOP/byte)")
        .y_desc("GFLOP/s (memory-bound kernels: GB/s × intensity)")
        .draw()?;
    let roof: Vec<(f64, f64)> = (0..=200)
        .map(|i| {
            let x = xmin * (xmax / xmin).powf(i as f64 / 200.0);
            (x, (bw * x).min(peak))
        })
        .collect();
    chart
        .draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?
        .label("roof: min(copy bandwidth × intensity, FMA peak)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (i, family) in families(r).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = r
            .kernels
            .iter()
            .filter(|k| &k.family == family)
            .map(|k| {
                let (x, y) = place(k);
                (x, y.max(ymin))
            })
            .collect();
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 5, color.filled())))?
            .label(family.as_str())
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present()?;
    Ok(())
}

fn families(r: &BackendReport) -> Vec<String> {
    let mut f: Vec<String> = Vec::new();
    for k in &r.kernels {
        if !f.contains(&k.family) {
            f.push(k.family.clone());
        }
    }
    f
}

fn launch(path: &Path, r: &BackendReport) -> Res {
    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let pts: Vec<(f64, f64)> = r
        .launch
        .sweep
        .iter()
        .map(|p| (p.bytes as f64, p.seconds * 1e6))
        .collect();
    let xmax = pts.iter().map(|p| p.0).fold(1.0, f64::max) * 2.0;
    let ymax = pts.iter().map(|p| p.1).fold(1.0, f64::max) * 2.0;
    let ymin = pts
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .min(r.launch.trivial_batched_us)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Launch overhead — {}: vector add time vs size (floor {:.1} µs)",
                r.backend, r.launch.floor_us
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (4.0f64..xmax).log_scale(),
            (ymin.max(0.01)..ymax).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&si)
        .y_label_formatter(&si)
        .x_desc("bytes moved (2 reads + 1 write)")
        .y_desc("µs per launch")
        .draw()?;
    chart
        .draw_series(LineSeries::new(pts.clone(), PALETTE[0].stroke_width(2)))?
        .label("vector add (inputs rotated past L2)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[0].stroke_width(2)));
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, PALETTE[0].filled())))?;
    let floor = r.launch.floor_us;
    chart
        .draw_series(LineSeries::new(
            vec![(4.0, floor), (xmax, floor)],
            PALETTE[3].stroke_width(1),
        ))?
        .label("latency floor")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[3]));
    if let Some(knee) = r.launch.knee_bytes {
        chart
            .draw_series(LineSeries::new(
                vec![(knee as f64, ymin.max(0.01)), (knee as f64, ymax)],
                PALETTE[2].stroke_width(1),
            ))?
            .label("knee (2 × floor)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[2]));
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}

fn transfers(path: &Path, r: &BackendReport) -> Res {
    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let up: Vec<(f64, f64)> = r
        .transfers
        .iter()
        .map(|t| (t.bytes as f64, t.h2d_gbps))
        .collect();
    let down: Vec<(f64, f64)> = r
        .transfers
        .iter()
        .map(|t| (t.bytes as f64, t.d2h_gbps))
        .collect();
    let xmax = up.iter().map(|p| p.0).fold(1.0, f64::max) * 2.0;
    let ymax = up.iter().chain(&down).map(|p| p.1).fold(0.01, f64::max) * 2.0;
    let ymin = up
        .iter()
        .chain(&down)
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .max(1e-4)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Host ↔ device transfers — {}", r.backend),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((2048.0f64..xmax).log_scale(), (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_label_formatter(&si)
        .y_label_formatter(&si)
        .x_desc("bytes")
        .y_desc("GB/s")
        .draw()?;
    for (pts, label, c) in [
        (up, "host → device (create_from_slice)", PALETTE[0]),
        (down, "device → host (read_one)", PALETTE[1]),
    ] {
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}
