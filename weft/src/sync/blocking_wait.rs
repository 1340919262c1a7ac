//! Blocking a plain thread on a sync primitive's future, for every
//! `blocking_*` method of `weft::sync` (`oneshot::Receiver::blocking_recv`,
//! `mpsc::Sender::blocking_send`, the mpsc receivers' `blocking_recv`,
//! `Mutex::blocking_lock`, `RwLock::blocking_read`, ...).
//!
//! Owns the rule those methods share: blocking is refused, with a panic that
//! names the mistake and the fix, on a thread that is driving a runtime,
//! where it could deadlock the very tasks that would release the lock.

use std::future::Future;

/// Blocks the current thread on `fut`; `method` is the caller's name (for
/// example `"Mutex::blocking_lock"`) and `instead` its async counterpart
/// (for example `"mutex.lock().await"`).
///
/// # Panics
///
/// Panics if the current thread is driving a weft runtime.
#[track_caller]
pub(crate) fn block_on<F: Future>(method: &str, instead: &str, fut: F) -> F::Output {
    if crate::runtime::context::entered() != crate::runtime::context::Entered::No {
        panic!(
            "Cannot block the current thread from within a runtime: {method} was called on a \
             thread that drives a weft runtime's tasks, and blocking it can deadlock. Use \
             `{instead}` instead, or call it from weft::task::spawn_blocking or a thread outside \
             the runtime."
        );
    }
    drive(fut)
}

#[cfg(not(loom))]
fn drive<F: Future>(fut: F) -> F::Output {
    crate::runtime::park_thread::block_on(fut)
}

/// Under loom, threads are modelled, so blocking must go through loom.
#[cfg(loom)]
fn drive<F: Future>(fut: F) -> F::Output {
    loom::future::block_on(fut)
}
