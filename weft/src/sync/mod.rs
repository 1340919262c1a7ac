//! Synchronisation primitives for tasks: channels and (later) locks.
//!
//! Every operation that can complete spends one unit of the task's
//! cooperative budget first (see `weft::task::coop`).

pub mod oneshot;
