//! Differential test of weft's runtime and task API against crates.io
//! Tokio's: the things a program sees around its futures rather than in
//! them. Each scenario is written once and run on both crates (see
//! `rt_differential/harness.rs`), logging values, error kinds and whether
//! a call panicked; the test fails on the first line that differs, with
//! both records and the panic messages side by side. A misuse panic weft
//! raises must also point at the caller's line.
//!
//! The parts, in `rt_differential/`:
//! - `harness.rs`: the recorder, the quiet panic catcher, the comparison
//!   and the `scenarios!` macro;
//! - `misuse.rs`: calls outside a runtime, nested runtimes, blocking in
//!   async code, builder settings out of range, drivers not enabled,
//!   enter guards, task ids;
//! - `tasks.rs`: `JoinHandle`, `JoinError`, `AbortHandle`, `JoinSet`,
//!   `spawn_blocking`;
//! - `local.rs`: `LocalSet` and `task_local!`;
//! - `shutdown.rs`: what runs, what is dropped and what handles report
//!   when a runtime shuts down; `block_on`'s polling; metrics.
#![cfg(not(loom))]

#[macro_use]
#[path = "rt_differential/harness.rs"]
mod harness;
#[path = "rt_differential/local.rs"]
mod local;
#[path = "rt_differential/misuse.rs"]
mod misuse;
#[path = "rt_differential/shutdown.rs"]
mod shutdown;
#[path = "rt_differential/signals.rs"]
mod signals;
#[path = "rt_differential/tasks.rs"]
mod tasks;
