//! Differential test of weft's macros against crates.io Tokio's: `select!`,
//! `join!`, `try_join!`, `pin!`, and the `#[main]` / `#[test]` attributes.
//! Each scenario is written once and run on both crates with the
//! `scenarios!` macro of `rt_differential/harness.rs` (`k` is `tokio`, then
//! `weft`); it logs what a program can observe (which branch futures were
//! polled and in what order, when they were dropped relative to a handler,
//! the values, whether and at which line something panicked) and the test
//! fails on the first line that differs.
//!
//! The parts, in `macros_differential/`:
//! - `support.rs`: scripted futures that log their polls and drops;
//! - `select.rs`: `select!`'s order, preconditions, patterns, `else`,
//!   control flow in handlers, drops, loops, budget and randomness;
//! - `join.rs`: `join!` and `try_join!`: rotation, `biased;`, the first
//!   error, many branches, the empty forms and the budget; and `pin!`;
//! - `entry.rs`: the attributes' runtimes (flavor, workers, paused time,
//!   `crate`, `name`), return types and where the body runs.
//!
//! Compile errors of the attributes (a non-async fn, arguments on `main`,
//! unknown keys, a knob on the wrong flavor) were compared once by hand;
//! the attributes' own unit tests (`weft-macros/src/entry.rs`) pin weft's.
#![cfg(not(loom))]

#[macro_use]
#[path = "rt_differential/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "macros_differential/entry.rs"]
mod entry;
#[path = "macros_differential/join.rs"]
mod join;
#[path = "macros_differential/select.rs"]
mod select;
#[path = "macros_differential/support.rs"]
mod support;
