//! `LongPollInfo`: what the long-poll hook is told.
//!
//! Owns: the public view of one long poll, as the monitor
//! (`scheduler/multi_thread/monitor.rs`) saw it.

use crate::task::Id;
use std::fmt;
use std::num::NonZeroU64;
use std::panic::Location;
use std::time::Duration;

/// The `Builder::on_long_poll` hook.
pub(crate) type LongPollHook = std::sync::Arc<dyn Fn(&LongPollInfo) + Send + Sync>;

/// A poll that ran past `Builder::long_poll_threshold`, passed to the
/// `Builder::on_long_poll` hook (once per such poll, while it still runs).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let rt = weft::runtime::Builder::new_multi_thread()
///     .worker_threads(2)
///     .long_poll_threshold(Duration::from_millis(5))
///     .on_long_poll(move |info| log.lock().unwrap().push(info.spawned_at().line()))
///     .build()
///     .unwrap();
/// rt.block_on(async {
///     // A poll that blocks its worker for 50 ms.
///     weft::spawn(async { std::thread::sleep(Duration::from_millis(50)) }).await.unwrap();
/// });
/// assert_eq!(seen.lock().unwrap().len(), 1);
/// ```
#[derive(Clone)]
pub struct LongPollInfo {
    worker: usize,
    task_id: u64,
    duration: Duration,
    spawned_at: &'static Location<'static>,
    on_rescue_thread: bool,
}

impl LongPollInfo {
    pub(crate) fn new(
        worker: usize,
        task_id: u64,
        duration: Duration,
        spawned_at: &'static Location<'static>,
        on_rescue_thread: bool,
    ) -> LongPollInfo {
        LongPollInfo {
            worker,
            task_id,
            duration,
            spawned_at,
            on_rescue_thread,
        }
    }

    /// The index of the worker the poll runs on; for a poll on a rescue
    /// thread ([`on_rescue_thread`](Self::on_rescue_thread)), the stuck
    /// worker whose place that thread took.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Whether the poll runs on a rescue thread: the thread that runs a
    /// stuck worker's queued work when no other worker can take it
    /// (`Builder::long_poll_threshold` says when). A task that blocks
    /// there blocks as the stuck one did; another rescue thread goes on
    /// with the work.
    pub fn on_rescue_thread(&self) -> bool {
        self.on_rescue_thread
    }

    /// The id of the task being polled.
    pub fn task_id(&self) -> Id {
        Id::from_u64(NonZeroU64::new(self.task_id).expect("task ids start at 1"))
    }

    /// How long the poll had run when the monitor reported it (low by less
    /// than the monitor's sampling period).
    pub fn poll_duration(&self) -> Duration {
        self.duration
    }

    /// Where the task was spawned (the caller of `spawn`).
    pub fn spawned_at(&self) -> &'static Location<'static> {
        self.spawned_at
    }
}

impl fmt::Debug for LongPollInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LongPollInfo")
            .field("worker", &self.worker)
            .field("task_id", &self.task_id)
            .field("poll_duration", &self.duration)
            .field("spawned_at", &self.spawned_at)
            .field("on_rescue_thread", &self.on_rescue_thread)
            .finish()
    }
}
