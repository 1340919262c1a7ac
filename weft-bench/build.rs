//! Records which weft sources the benchmark binary was built from.
//!
//! Asking git at run time is not enough: the binary can be older than HEAD
//! (someone committed after the build), and uncommitted edits in `weft/` are
//! part of what was measured. So the commit, and a fingerprint of any
//! uncommitted changes under `weft/`, are captured here and compiled in as
//! `WEFT_BENCH_BUILT_FROM`. Building from an export without `.git`, set
//! `WEFT_BENCH_SOURCE` to say what it is.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// FNV-1a, 64 bit: a stable fingerprint without a hashing dependency.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn main() {
    // A source export without .git (a tarball, `git archive`) can say what
    // it was exported from.
    println!("cargo:rerun-if-env-changed=WEFT_BENCH_SOURCE");
    if let Ok(source) = std::env::var("WEFT_BENCH_SOURCE") {
        println!("cargo:rustc-env=WEFT_BENCH_BUILT_FROM={source}");
        return;
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest
        .parent()
        .expect("weft-bench sits in the workspace")
        .to_path_buf();

    // Rebuild the stamp when weft's sources or the checked-out commit change.
    println!("cargo:rerun-if-changed={}", root.join("weft").display());
    if let Some(dir) = git(&root, &["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir.trim());
        for p in [dir.join("HEAD"), dir.join("refs").join("heads")] {
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }

    let commit = git(&root, &["rev-parse", "--short", "HEAD"])
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    // Uncommitted state of weft/: the diff of tracked files plus the names
    // and contents of untracked ones.
    let diff = git(&root, &["diff", "HEAD", "--", "weft"]).unwrap_or_default();
    let untracked = git(
        &root,
        &["ls-files", "--others", "--exclude-standard", "--", "weft"],
    )
    .unwrap_or_default();
    let stamp = if diff.is_empty() && untracked.trim().is_empty() {
        commit
    } else {
        let mut h = fnv1a(diff.as_bytes(), 0xcbf2_9ce4_8422_2325);
        for name in untracked.lines() {
            h = fnv1a(name.as_bytes(), h);
            h = fnv1a(&std::fs::read(root.join(name)).unwrap_or_default(), h);
        }
        format!(
            "{commit} + uncommitted weft/ changes (fingerprint {:08x})",
            h >> 32
        )
    };
    println!("cargo:rustc-env=WEFT_BENCH_BUILT_FROM={stamp}");
}
