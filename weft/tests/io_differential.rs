//! Differential test of `weft::io`'s utilities against crates.io Tokio's.
//!
//! Each family of scripts has one interpreter, written once in a macro and
//! expanded twice by `for_both!`: in `on_tokio` (with `k` = `tokio`) and in
//! `on_weft` (with `k` = `weft`). A seeded xorshift generator makes a random
//! script; both interpreters run it outside any runtime (so the cooperative
//! budget is unconstrained for both), polling by hand with counting wakers,
//! and log what each step showed. Readers and writers under test sit on
//! scripted mocks (`mock.rs`) that return data in random chunks, `Pending`
//! (waking at once or later), errors (`Interrupted`, `WouldBlock`,
//! `BrokenPipe`, other) and short or zero writes, at stream positions, so
//! both crates meet the same events at the same bytes.
//!
//! Each step logs what a program can observe and rely on (results, data,
//! error kinds, documented state), compared strictly, and implementation
//! detail (chunking, call and poll counts), only counted and summarised on
//! stderr. A mismatching script is shrunk and reported with its seed and
//! both logs up to the first difference.
//!
//! `IO_DIFF_SEEDS=N` runs N seeds per family (default 4,000 each, a few
//! seconds in all); `IO_DIFF_SEED=S` replays seed S; `IO_DIFF_KNOWN=1` puts
//! back the triggers of the known mismatches (and of two chunking-policy
//! differences whose effects cascade), which the fuzzers otherwise leave out.
//!
//! The parts, in `io_differential/`:
//! - `harness.rs`: generator, wakers, `drive`, logs, compare/shrink/report;
//! - `mock.rs`: the scripted mock reader and writer, for both crates;
//! - `readers.rs`: `AsyncReadExt` / `AsyncBufReadExt`, `Lines`, `Split`,
//!   over bare mocks, `take`, `chain`, `BufReader`, `BufStream`, `join`;
//! - `writers.rs`: `AsyncWriteExt` over mocks, `BufWriter`, split halves,
//!   `BufStream`, `join`;
//! - `pipes.rs`: `duplex`, `simplex`, `split`, with live futures and wakes;
//! - `copies.rs`: `copy`, `copy_buf`, `copy_bidirectional(_with_sizes)`;
//! - `std_types.rs`: `Cursor`, `Vec<u8>`, `&[u8]`, buffers over a cursor
//!   with seeking, `empty`, `repeat`, `sink`;
//! - `read_buf.rs`: `ReadBuf` itself;
//! - `known_mismatches.rs`: the differences found, as minimal failing tests;
//! - `split_halves.rs`: `split` / `unsplit` / `is_pair_of` bookkeeping.
#![cfg(not(loom))]

#[path = "io_differential/copies.rs"]
mod copies;
#[path = "io_differential/harness.rs"]
mod harness;
#[path = "io_differential/known_mismatches.rs"]
mod known_mismatches;
#[path = "io_differential/mock.rs"]
mod mock;
#[path = "io_differential/pipes.rs"]
mod pipes;
#[path = "io_differential/read_buf.rs"]
mod read_buf;
#[path = "io_differential/readers.rs"]
mod readers;
#[path = "io_differential/split_halves.rs"]
mod split_halves;
#[path = "io_differential/std_types.rs"]
mod std_types;
#[path = "io_differential/writers.rs"]
mod writers;

use harness::{fuzz, Family};

const READERS: Family<readers::ReadScript> = Family {
    name: "readers",
    gen: readers::gen,
    tokio: readers::on_tokio::run,
    weft: readers::on_weft::run,
    probe: None,
    seeds: 4000,
};

const WRITERS: Family<writers::WriteScript> = Family {
    name: "writers",
    gen: writers::gen,
    tokio: writers::on_tokio::run,
    weft: writers::on_weft::run,
    probe: None,
    seeds: 4000,
};

const PIPES: Family<pipes::PipeScript> = Family {
    name: "pipes",
    gen: pipes::gen,
    tokio: pipes::on_tokio::run,
    weft: pipes::on_weft::run,
    probe: Some(pipes::probe),
    seeds: 4000,
};

const COPIES: Family<copies::CopyScript> = Family {
    name: "copies",
    gen: copies::gen,
    tokio: copies::on_tokio::run,
    weft: copies::on_weft::run,
    probe: None,
    seeds: 4000,
};

const STD_TYPES: Family<std_types::StdScript> = Family {
    name: "std types, buffers over cursors, empty/repeat/sink",
    gen: std_types::gen,
    tokio: std_types::on_tokio::run,
    weft: std_types::on_weft::run,
    probe: None,
    seeds: 4000,
};

const READ_BUF: Family<read_buf::BufScript> = Family {
    name: "ReadBuf",
    gen: read_buf::gen,
    tokio: read_buf::on_tokio::run,
    weft: read_buf::on_weft::run,
    probe: None,
    seeds: 4000,
};

#[test]
fn readers_match_tokio() {
    fuzz(&READERS);
}

#[test]
fn writers_match_tokio() {
    fuzz(&WRITERS);
}

#[test]
fn pipes_match_tokio() {
    fuzz(&PIPES);
}

#[test]
fn copies_match_tokio() {
    fuzz(&COPIES);
}

#[test]
fn std_types_match_tokio() {
    fuzz(&STD_TYPES);
}

#[test]
fn read_buf_matches_tokio() {
    fuzz(&READ_BUF);
}
