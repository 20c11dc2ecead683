//! Hashes the kernel sources into `CUBEPORT_KERNELS_SOURCE_HASH`: cubecl's persistent kernel
//! cache keys a kernel by its name and compile-time arguments, not by its body, so the cache
//! directory must change whenever a kernel's source does.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    println!("cargo:rerun-if-changed=src");
    let mut paths = Vec::new();
    files(&src, &mut paths);
    paths.sort();
    // FNV-1a over (relative path, contents): stable across toolchains, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for path in &paths {
        let rel = path.strip_prefix(root).unwrap_or(path);
        eat(rel.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(path).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=CUBEPORT_KERNELS_SOURCE_HASH={hash:016x}");
}
