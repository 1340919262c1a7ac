//! Synchronisation primitives for tasks: channels and (later) locks.
//!
//! Every operation that can complete spends one unit of the task's
//! cooperative budget first (see `weft::task::coop`).
//!
//! # Wakers and locks
//!
//! **No waker is dropped or woken while a lock of a primitive is held**
//! (the timer wheel follows the same rule, `time/driver.rs`). A waker is
//! foreign code: its `wake` or its `Drop` may call straight back into the
//! same primitive (send, notify, release, lock), which would then block on
//! the lock its caller holds. So under a lock a waker is only cloned, moved
//! or compared: one being replaced (`*slot = Some(new)` would drop the old
//! one in place) or unqueued by a cancelled waiter is moved into a local
//! that is dropped after the guard, and wakers to wake are collected (a
//! `Vec` or a `WakeList`) and woken after unlocking. Each module's
//! invariants say how it applies there; `tests/sync_parity.rs` checks it
//! with wakers that call back in.

/// The impls of a channel's `SendError<T>(pub T)` (mpsc, broadcast and
/// watch each have their own type, as in Tokio): `Debug` that does not
/// require `T: Debug`, `Display` ("channel closed") and `Error`.
macro_rules! send_error_impls {
    ($t:ident) => {
        impl<T> ::std::fmt::Debug for $t<T> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($t)).finish_non_exhaustive()
            }
        }

        impl<T> ::std::fmt::Display for $t<T> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str("channel closed")
            }
        }

        impl<T> ::std::error::Error for $t<T> {}
    };
}

pub mod broadcast;
pub mod mpsc;
pub mod oneshot;
pub mod watch;

mod barrier;
mod blocking_wait;
mod intrusive;
mod mutex;
mod notify;
mod once_cell;
mod rwlock;
mod semaphore;
mod set_once;
mod wait_list;
mod waker_set;

pub use barrier::{Barrier, BarrierWaitResult};
pub use mutex::{
    MappedMutexGuard, Mutex, MutexGuard, OwnedMappedMutexGuard, OwnedMutexGuard, TryLockError,
};
pub use notify::{Notified, Notify};

/// The named futures of `weft::sync` (Tokio's `sync::futures` path).
pub mod futures {
    pub use super::notify::{Notified, OwnedNotified};
}
pub use once_cell::{OnceCell, SetError};
pub use rwlock::{
    OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock,
    RwLockMappedWriteGuard, RwLockReadGuard, RwLockWriteGuard,
};
pub use semaphore::{
    AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
};
pub use set_once::{SetOnce, SetOnceError};
