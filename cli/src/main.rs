//! `cubeport`: check every kernel on every backend found and print one table.
//!
//! ```text
//! cubeport                 # = cubeport check: every kernel × backend × dtype, vs the f64 reference
//! cubeport devices         # backends compiled in, devices found, capabilities
//! cubeport check --backend wgpu --elems 1048581
//! cubeport bench --quick --json bench.json --plots plots/   # roofline report (see bench.rs)
//! ```
//! The exit status is 0 only when every row is within tolerance and the backends agree.

use clap::{Parser, Subcommand};
use cubeport::backends::{self, BackendKind, BackendStatus};
use cubeport::{Error, caps_of};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cubeport",
    version,
    about = "Check cubeport's GPU kernels on every backend against an f64 CPU reference"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run every kernel on every backend, compare with the reference and across backends (default).
    Check(CheckArgs),
    /// List backends, devices and capabilities.
    Devices,
    /// Roofline report: every kernel family against ceilings measured in the same run, launch
    /// overhead, transfers and JIT cost; table, JSON and SVG charts.
    Bench(bench::BenchArgs),
}

mod bench;
mod check;
mod timing;

use check::{CheckArgs, check};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Check(CheckArgs::default())) {
        Command::Devices => devices(),
        Command::Check(args) => check(args),
        Command::Bench(args) => bench::run(args),
    }
}

fn devices() -> ExitCode {
    let mut any = false;
    for BackendStatus { kind, device } in backends::available() {
        match device {
            Ok(desc) => {
                any = true;
                println!("{kind}: {desc}");
                for d in backends::devices(kind) {
                    println!("  {kind} {}: {}", d.ordinal, d.name);
                }
                #[cfg(feature = "cuda")]
                if kind == BackendKind::Cuda {
                    let ordinal = backends::device_from_env().unwrap_or(0);
                    match cubeport::kernel_cache_dir(ordinal) {
                        Some(dir) => println!("  kernel cache: {}", dir.display()),
                        None => println!("  kernel cache: off"),
                    }
                }
                // Only cubecl's SPIR-V compiler keeps its output; WGSL is compiled every run.
                #[cfg(feature = "wgpu-spirv")]
                if kind == BackendKind::Wgpu {
                    match cubeport::wgpu_kernel_cache_dir() {
                        Some(dir) => println!("  kernel cache (SPIR-V): {}", dir.display()),
                        None => println!("  kernel cache: off"),
                    }
                }
                match caps_for(kind) {
                    Ok(caps) => println!("  {caps}"),
                    Err(e) => println!("  client failed: {e}"),
                }
            }
            Err(e) => println!("{kind}: unavailable: {e}"),
        }
    }
    if any {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn caps_for(kind: BackendKind) -> Result<cubeport::Caps, Error> {
    match kind {
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => Ok(caps_of(&cubeport::cuda_client()?)),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => Ok(caps_of(&cubeport::wgpu_client()?)),
        other => Err(backends::BackendError::NotCompiled(other).into()),
    }
}
