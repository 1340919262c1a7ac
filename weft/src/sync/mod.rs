//! Synchronisation primitives for tasks: channels and (later) locks.
//!
//! Every operation that can complete spends one unit of the task's
//! cooperative budget first (see `weft::task::coop`).

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
mod wait_list;
mod waker_set;

pub use barrier::{Barrier, BarrierWaitResult};
pub use mutex::{MappedMutexGuard, Mutex, MutexGuard, OwnedMutexGuard, TryLockError};
pub use notify::{Notified, Notify};
pub use once_cell::{OnceCell, SetError};
pub use rwlock::{
    OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
pub use semaphore::{
    AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
};
