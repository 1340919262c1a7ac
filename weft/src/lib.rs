//! # weft
//!
//! An async runtime for Rust: a work-stealing scheduler with a LIFO slot and
//! throttled stealing, a per-task cooperative budget, a blocking pool, and
//! Tokio's API names, so a Tokio program that sticks to the common subset
//! ports by renaming the crate.
//!
//! ```
//! #[weft::main]
//! async fn main() {
//!     let handle = weft::spawn(async { "hello from a task" });
//!     println!("{}", handle.await.unwrap());
//! }
//! ```
//!
//! Layout (see `DESIGN.md`): `task` (the task cell, state machine, handles),
//! `scheduler` (current_thread and multi_thread), `runtime` (Builder,
//! Runtime, Handle, context, metrics), `coop` (the budget), `blocking` (the
//! blocking pool), `sync` (channels, locks), `io` (the futures-io traits
//! re-exported, Tokio's I/O utilities, readiness and `AsyncFd`), `net`
//! (TCP, UDP, Unix sockets on the mio reactor), `time` (timer wheel,
//! sleep, timeout, interval, paused clock), `signal` (ctrl_c).

#![warn(missing_docs, missing_debug_implementations, unsafe_op_in_unsafe_fn)]

mod blocking;
mod coop;
mod loom;
mod macros;
mod scheduler;

pub mod compat;
pub mod fs;
#[cfg(feature = "hyper")]
pub mod hyper;
pub mod io;
pub mod net;
pub mod process;
pub mod runtime;
pub mod signal;
pub mod sync;
pub mod task;
pub mod time;

pub use task::spawn;

/// Support items for the exported macros (`join!`, `try_join!`, `select!`): not an
/// API.
#[doc(hidden)]
pub mod macros_support {
    pub use crate::macros::join::{
        join_len, maybe_done, poll_all, take_all, take_oks, try_poll_all, InOrder, Join, JoinOrder,
        MaybeDone, Rotating, TryJoin,
    };
    pub use crate::macros::select::{
        into_future, poll_budget as select_poll_budget, random_start, SelectOut,
    };
}

#[cfg(feature = "macros")]
pub use weft_macros::{main, test};
