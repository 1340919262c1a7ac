//! weft for Ruby: a `Fiber::Scheduler` whose event loop runs on weft's
//! reactor (a Ruby native extension, loaded by `lib/weft.rb`).
//!
//! Modules: [`state`] (blocked and sleeping fibers, timers; plain Rust), [`poller`]
//! (weft's I/O driver and timer wheel in a current_thread runtime, driven
//! without the GVL when it blocks; cross-thread wake), [`scheduler`]
//! (`Weft::Scheduler` and its loop, built on the selector), [`selector`]
//! (`Weft::Selector`, io-event's interface, and its bookkeeping in
//! `waiters`), [`io_hooks`] (byte moves into `IO::Buffer`) and [`process`]
//! (pidfd and a non-blocking reap). Each states its own invariants
//! (`fd_map` holds only a hasher); the ones every `unsafe` block here
//! relies on are:
//! - the GVL is held whenever a Ruby object or API is touched, except in
//!   the wait run by `rb_thread_call_without_gvl`, which touches neither;
//! - every `VALUE` kept in Rust is marked by its owner's mark function
//!   (through `held::mark`),
//!   so it stays alive (and unmoved) while Rust holds it.

mod fd_map;
mod fd_query;
mod held;
pub mod io_hooks;
pub mod poller;
pub mod process;
pub mod scheduler;
pub mod selector;
pub mod state;
mod waiters;

/// The extension's entry point (`Init_weft`, run by `require "weft/weft"`).
#[magnus::init(name = "weft")]
fn init(ruby: &magnus::Ruby) -> Result<(), magnus::Error> {
    scheduler::define(ruby)?;
    selector::define(ruby)?;
    process::define(ruby)
}
