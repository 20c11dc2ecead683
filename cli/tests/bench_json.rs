//! `cubeport bench --quick --json` produces a report that validates against the documented
//! schema (`docs/bench.schema.json`), and the schema is strict enough to reject a broken one.

use std::path::PathBuf;

fn schema() -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/bench.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn bench_quick_json_matches_the_schema() {
    let exe = env!("CARGO_BIN_EXE_cubeport");
    let backend = match cubeport::backends::available()
        .into_iter()
        .find(|s| s.device.is_ok())
    {
        Some(s) => s.kind.to_string(),
        None => {
            return cubeport::testing::skip(
                "bench_quick_json_matches_the_schema",
                "any",
                "no backend has a device",
            );
        }
    };
    let out = std::env::temp_dir().join(format!("cubeport-bench-{}.json", std::process::id()));
    let status = std::process::Command::new(exe)
        .args([
            "bench",
            "--quick",
            "--family",
            "reduce,transfers",
            "--backend",
            &backend,
            "--json",
        ])
        .arg(&out)
        .status()
        .expect("cubeport runs");
    assert!(
        status.success(),
        "cubeport bench --quick exited with {status}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("report written"))
            .expect("valid JSON");
    let _ = std::fs::remove_file(&out);
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "report violates docs/bench.schema.json: {errors:#?}"
    );
    // The families asked for are there, each placed on the roofline.
    let kernels = report["backends"][0]["kernels"]
        .as_array()
        .expect("kernels");
    assert!(
        kernels.iter().any(|k| k["family"] == "softmax"),
        "{kernels:?}"
    );

    // The schema is not vacuous: dropping a required field or adding an unknown one fails.
    let mut broken = report.clone();
    broken["backends"][0]["ceilings"]
        .as_object_mut()
        .expect("ceilings")
        .remove("copy_gbps");
    assert!(
        !validator.is_valid(&broken),
        "a report without copy_gbps passed"
    );
    let mut extra = report.clone();
    extra["backends"][0]["kernels"][0]["surprise"] = serde_json::json!(1);
    assert!(
        !validator.is_valid(&extra),
        "an unknown kernel field passed"
    );
    // A run with one backend has no cross-backend points; a two-backend entry (what a CUDA +
    // wgpu run writes) validates, and one without its ratio does not.
    let mut two = report;
    let point = serde_json::json!({
        "family": "matmul", "variant": "auto", "dtype": "f32", "size": "64x64x64",
        "base": "cuda", "other": "wgpu", "base_s": 2.0e-5, "other_s": 4.0e-5, "ratio": 0.5
    });
    two["portability"] = serde_json::json!([point.clone()]);
    assert!(validator.is_valid(&two), "a portability point was refused");
    let mut no_ratio = point;
    no_ratio.as_object_mut().expect("point").remove("ratio");
    two["portability"] = serde_json::json!([no_ratio]);
    assert!(
        !validator.is_valid(&two),
        "a portability point without its ratio passed"
    );
}
