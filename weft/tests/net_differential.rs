//! Differential test of `weft::net` against crates.io Tokio's `net`.
//!
//! Each family of scripts has one interpreter, written once in a macro and
//! expanded twice by `for_both!`: in `on_tokio` (with `k` = `tokio`) and in
//! `on_weft` (with `k` = `weft`). A seeded xorshift generator makes a random
//! script; each crate runs it on a fresh runtime of its own (current_thread,
//! or multi_thread with two workers for some scripts) over real sockets,
//! and logs what each step showed. The logs are compared step by step; a
//! mismatching script is shrunk and reported with its seed and both logs.
//!
//! Real sockets are timing-dependent; the interpreters keep a model of the
//! bytes in flight and make every logged value deterministic (bytes as
//! wholes, not chunks; readiness only where it is certain; ports as
//! labels): `streams.rs` says how. `NET_DIFF_SELF=1` runs Tokio against
//! itself, to check that no timing noise is left.
//!
//! `NET_DIFF_SEEDS=N` runs N seeds per family (defaults below: about six
//! seconds in all, debug); `NET_DIFF_SEED=S` replays seed S;
//! `NET_DIFF_OPS=N` cuts each script to its first N ops;
//! `NET_DIFF_TRACE=1` prints each seed's script and slow seeds (with
//! `--nocapture`), `NET_DIFF_TRACE=log` both crates' logs too.
//!
//! The parts, in `net_differential/`:
//! - `harness.rs`: generator draws, logs, runtimes, compare/shrink/report;
//! - `streams.rs`: stream scripts (TCP v4/v6, Unix), generator and model;
//! - `stream_interp.rs`, `stream_setup.rs`: their interpreter;
//! - `datagrams.rs`, `datagram_interp.rs`: UDP and Unix datagram scripts
//!   and their interpreter;
//! - `cases.rs`: single cases (bind and connect errors, listeners,
//!   options, pipes) compared the same way;
//! - `fixed_differences.rs`: the differences found (fixed in weft), as
//!   minimal scripts.
#![cfg(all(not(loom), target_os = "linux"))]

#[path = "net_differential/cases.rs"]
mod cases;
#[path = "net_differential/datagram_interp.rs"]
mod datagram_interp;
#[path = "net_differential/datagrams.rs"]
mod datagrams;
#[path = "net_differential/fixed_differences.rs"]
mod fixed_differences;
#[path = "net_differential/harness.rs"]
mod harness;
#[path = "support/seeded_rng.rs"]
mod seeded_rng;
#[path = "net_differential/stream_interp.rs"]
mod stream_interp;
#[path = "net_differential/stream_setup.rs"]
mod stream_setup;
#[path = "net_differential/streams.rs"]
mod streams;

use harness::{fuzz, Family};

const STREAMS: Family<streams::StreamScript> = Family {
    name: "streams (TCP, Unix)",
    gen: streams::gen,
    tokio: stream_setup::on_tokio::run,
    weft: stream_setup::on_weft::run,
    seeds: 600,
    env: "NET_DIFF",
};

#[test]
fn streams_match_tokio() {
    fuzz(&STREAMS);
}

const DATAGRAMS: Family<datagrams::DgramScript> = Family {
    name: "datagrams (UDP, Unix)",
    gen: datagrams::gen,
    tokio: datagram_interp::on_tokio::run,
    weft: datagram_interp::on_weft::run,
    seeds: 1000,
    env: "NET_DIFF",
};

#[test]
fn datagrams_match_tokio() {
    fuzz(&DATAGRAMS);
}

const CASES: Family<cases::CaseScript> = Family {
    name: "single cases (errors, listeners, Unix paths, pipes)",
    gen: cases::gen,
    tokio: cases::on_tokio::run,
    weft: cases::on_weft::run,
    seeds: 2,
    env: "NET_DIFF",
};

#[test]
fn cases_match_tokio() {
    fuzz(&CASES);
}
