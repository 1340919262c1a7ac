//! Differential test of `weft::io::unix::AsyncFd` against crates.io
//! Tokio's `tokio::io::unix::AsyncFd`.
//!
//! Two families, compared with the network test's harness
//! (`net_differential/harness.rs`: interpreters written once and expanded
//! for both crates by `for_both!`, logs compared step by step, a
//! mismatching script shrunk and reported with its seed):
//! - random scripts (`scripts.rs`, `interp.rs`) over one or two
//!   descriptors wrapped in an `AsyncFd` (a Unix socketpair end, a TCP
//!   end, a connected UDP socket, a pipe's read end) whose peers the script
//!   drives by plain syscalls: the peer writes, reads, shuts down, closes
//!   or resets; the `AsyncFd` side reads and writes through every wait
//!   (`readable`, `ready`, the `_mut` ones, `poll_*_ready`, `async_io`)
//!   and `try_io`, polls waits once with a counting waker, clears and
//!   keeps readiness, has several tasks wait at once, and is unwrapped and
//!   registered again; on current_thread and multi_thread runtimes;
//! - single cases (`cases.rs`): construction (every constructor, every
//!   `Interest`, a descriptor epoll refuses, one registered twice, outside
//!   a runtime, without the I/O driver), errors and hang-ups (`ERROR`,
//!   `WRITE_CLOSED`, `PRIORITY`), eventfd, timerfd and listener, dropping
//!   an `AsyncFd` a task waits on, a runtime dropped under a wait, waits
//!   from another runtime, what clears and keeps readiness, the budget,
//!   the `Debug`/`Display` shapes;
//! - `fixed_differences.rs`: the differences found (fixed in weft), each
//!   as the one case that shows it.
//!
//! Real descriptors are timing-dependent; `scripts.rs` says how the
//! scripts keep every logged value deterministic. `AFD_DIFF_SELF=1` runs
//! Tokio against itself, to check that no timing noise is left.
//!
//! Run it on both weft I/O drivers: the default (io_uring where the kernel
//! allows; an `AsyncFd` is registered with epoll there too) and
//! `WEFT_IO_DRIVER=epoll`.
//!
//! `AFD_DIFF_SEEDS=N` runs N seeds per family (defaults below: a few
//! seconds in all, debug); `AFD_DIFF_SEED=S` replays seed S;
//! `AFD_DIFF_OPS=N` cuts each script to its first N ops;
//! `AFD_DIFF_TRACE=1` prints each seed's script and slow seeds (with
//! `--nocapture`), `AFD_DIFF_TRACE=log` both crates' logs too.
#![cfg(all(not(loom), target_os = "linux"))]

#[path = "io_async_fd_differential/cases.rs"]
mod cases;
#[path = "io_async_fd_differential/cases_readiness.rs"]
mod cases_readiness;
#[path = "io_async_fd_differential/fixed_differences.rs"]
mod fixed_differences;
#[path = "net_differential/harness.rs"]
#[allow(dead_code)] // the network test uses more of it
mod harness;
#[path = "io_async_fd_differential/interp.rs"]
mod interp;
#[path = "io_async_fd_differential/peers.rs"]
mod peers;
#[path = "io_async_fd_differential/readiness_ops.rs"]
mod readiness_ops;
#[path = "io_async_fd_differential/scripts.rs"]
mod scripts;
#[path = "support/seeded_rng.rs"]
mod seeded_rng;
#[path = "io_async_fd_differential/waits.rs"]
mod waits;

use harness::{fuzz, Family};

const SCRIPTS: Family<scripts::FdScript> = Family {
    name: "AsyncFd scripts (Unix, TCP, UDP, pipe)",
    gen: scripts::gen,
    tokio: interp::on_tokio::run,
    weft: interp::on_weft::run,
    seeds: 500,
    env: "AFD_DIFF",
};

#[test]
fn scripts_match_tokio() {
    fuzz(&SCRIPTS);
}

const CASES: Family<cases::CaseScript> = Family {
    name: "AsyncFd single cases",
    gen: cases::gen,
    tokio: cases::on_tokio::run,
    weft: cases::on_weft::run,
    seeds: 2,
    env: "AFD_DIFF",
};

#[test]
fn cases_match_tokio() {
    fuzz(&CASES);
}
