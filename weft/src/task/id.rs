//! Task identifiers and the "current task" thread-local.
//!
//! Ids are unique for the life of the process. Each thread takes a block of
//! ids from a global counter and hands them out locally, so spawning does
//! not contend on one shared atomic.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// An opaque, process-unique identifier of a task.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let handle = weft::spawn(async { weft::task::id() });
/// let inside = handle.id();
/// assert_eq!(handle.await.unwrap(), inside);
/// # });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

const BLOCK: u64 = 1024;
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static LOCAL_IDS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    static CURRENT: Cell<Option<Id>> = const { Cell::new(None) };
}

impl Id {
    pub(crate) fn next() -> Id {
        let take = |(next, end): (u64, u64)| {
            if next < end {
                (next, (next + 1, end))
            } else {
                let start = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
                (start, (start + 1, start + BLOCK))
            }
        };
        let raw = LOCAL_IDS
            .try_with(|c| {
                let (id, rest) = take(c.get());
                c.set(rest);
                id
            })
            // Thread-local gone (thread exiting): take a whole block for one id.
            .unwrap_or_else(|_| NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed));
        Id(NonZeroU64::new(raw).expect("task id counter starts at 1"))
    }

    pub(crate) fn as_u64(self) -> u64 {
        self.0.get()
    }

    pub(crate) fn from_u64(raw: NonZeroU64) -> Id {
        Id(raw)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}

/// The id of the task being polled on this thread.
///
/// # Panics
/// Outside a task. Use [`try_id`] where that can happen.
#[track_caller]
pub fn id() -> Id {
    try_id().expect(
        "weft::task::id() called outside a task: call it from inside a spawned task or \
         block_on, or use weft::task::try_id() which returns None outside tasks",
    )
}

/// The id of the task being polled on this thread, or `None` outside tasks.
pub fn try_id() -> Option<Id> {
    CURRENT.try_with(|c| c.get()).ok().flatten()
}

/// Sets the current task id for the duration of a poll (or of a task's
/// drop), restoring the previous one after.
pub(crate) struct TaskIdGuard(Option<Id>);

impl TaskIdGuard {
    pub(crate) fn enter(id: Id) -> TaskIdGuard {
        TaskIdGuard(CURRENT.try_with(|c| c.replace(Some(id))).ok().flatten())
    }
}

impl Drop for TaskIdGuard {
    fn drop(&mut self) {
        let prev = self.0;
        let _ = CURRENT.try_with(|c| c.set(prev));
    }
}
