//! The `cubeport` binary from the outside: errors it must report (typed, never a panic) and the
//! main job's exit status.

/// The `cubeport` binary: the path cargo compiled in, or (binaries copied elsewhere, as on the
/// GPU machine) a `cubeport` next to this test binary; `None` after reporting the skip.
fn cli_exe(test: &str) -> Option<std::path::PathBuf> {
    let exe = env!("CARGO_BIN_EXE_cubeport");
    if std::path::Path::new(exe).exists() {
        return Some(std::path::PathBuf::from(exe));
    }
    match std::env::current_exe().map(|p| p.with_file_name("cubeport")) {
        Ok(p) if p.exists() => Some(p),
        _ => {
            cubeport::testing::skip(
                test,
                "cli",
                &format!("the cubeport binary is neither at {exe} nor next to this test"),
            );
            None
        }
    }
}

/// With no Vulkan driver the CLI reports a typed error naming what to install, and never panics.
#[test]
fn no_adapter_is_a_typed_error_not_a_panic() {
    let Some(exe) = cli_exe("no_adapter_is_a_typed_error_not_a_panic") else {
        return;
    };
    let out = std::process::Command::new(exe)
        .arg("devices")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("wgpu: unavailable: no wgpu device"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stdout.contains("mesa-vulkan-drivers"),
        "the error must say what to install: {stdout}"
    );
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
}

/// The main job fails when it checked nothing: a forced backend that cannot run is an error
/// naming it, not `0 passed, 0 failed`.
#[test]
fn main_job_with_an_absent_forced_backend_fails() {
    let Some(exe) = cli_exe("main_job_with_an_absent_forced_backend_fails") else {
        return;
    };
    // No Vulkan driver, wgpu forced: through the environment and through the flag.
    for args in [vec![], vec!["check", "--backend", "wgpu"]] {
        let out = std::process::Command::new(&exe)
            .args(&args)
            .env("CUBEPORT_BACKEND", "wgpu")
            .env("VK_ICD_FILENAMES", "/nonexistent.json")
            .env("VK_DRIVER_FILES", "/nonexistent.json")
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} exited 0; stderr: {stderr}");
        assert!(
            stderr.contains("error: backend wgpu was asked for and cannot run"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // An unknown backend name is refused the same way.
    let out = std::process::Command::new(&exe)
        .env("CUBEPORT_BACKEND", "metal9")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown backend"));
}
