//! Differential test of `weft::fs` and `weft::process` against crates.io
//! Tokio's.
//!
//! Each family has one interpreter, written once in a macro and expanded
//! twice by `for_both!` (`k` = `tokio`, `k` = `weft`). A seeded xorshift
//! generator makes a random script; each crate runs it on a fresh
//! current_thread runtime of its own (and, for fs, in a fresh temporary
//! directory with the same relative names), logging after every op what a
//! program can observe and rely on: values, `io::ErrorKind`s, the
//! deterministic metadata fields, sorted directory listings, exit
//! statuses, and for fs the final tree. The logs are compared strictly; a
//! mismatching script is shrunk (ops removed while the same kind of
//! mismatch remains) and reported with its seed and both logs.
//!
//! Timing is kept out of the logs by waiting before looking (see each
//! interpreter's module doc for what is waited for and why), so a
//! mismatch is a real difference.
//!
//! `FS_DIFF_SEEDS=N` / `PROC_DIFF_SEEDS=N` run N seeds (defaults below);
//! `FS_DIFF_SEED=S` / `PROC_DIFF_SEED=S` replay seed S.
//!
//! The parts, in `fs_process_differential/`:
//! - `harness.rs`: generator draws, `for_both!`, compare/shrink/report;
//! - `fs_ops.rs`: the fs ops and their generator;
//! - `fs_interp.rs`: the fs interpreter and its helpers;
//! - `proc_ops.rs`: the process ops, scenarios and generator;
//! - `proc_interp.rs`: the process interpreter;
//! - `fixed.rs`: the differences found (fixed in weft), as minimal scripts.
#![cfg(all(unix, not(loom)))]

#[path = "fs_process_differential/fixed.rs"]
mod fixed;
#[path = "fs_process_differential/fs_interp.rs"]
mod fs_interp;
#[path = "fs_process_differential/fs_ops.rs"]
mod fs_ops;
#[path = "fs_process_differential/harness.rs"]
mod harness;
#[path = "fs_process_differential/proc_interp.rs"]
mod proc_interp;
#[path = "fs_process_differential/proc_ops.rs"]
mod proc_ops;
#[path = "support/seeded_rng.rs"]
mod seeded_rng;

use harness::{fuzz, Family};

pub const FS: Family<fs_ops::FsOp> = Family {
    name: "fs",
    gen: fs_ops::gen,
    tokio: fs_interp::on_tokio::run,
    weft: fs_interp::on_weft::run,
    seeds: 300,
    env: "FS_DIFF",
};

pub const PROCESS: Family<proc_ops::ProcOp> = Family {
    name: "process",
    gen: proc_ops::gen,
    tokio: proc_interp::on_tokio::run,
    weft: proc_interp::on_weft::run,
    seeds: 60,
    env: "PROC_DIFF",
};

#[test]
fn fs_matches_tokio() {
    fuzz(&FS);
}

#[test]
fn process_matches_tokio() {
    fuzz(&PROCESS);
}

#[test]
fn process_scenarios_match_tokio() {
    for (name, script) in proc_ops::scenarios() {
        eprintln!("scenario {name}");
        harness::assert_same(&PROCESS, script);
    }
}
