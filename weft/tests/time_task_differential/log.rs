//! What a run records: one [`Entry`] per observation, in the order the
//! runtime produced them, shared by every task of the run.
//!
//! An entry carries the virtual time (whole microseconds since the
//! runtime's start; `None` for a task dropped when the runtime itself is
//! dropped, after `block_on` returned), the script's task id, the step
//! index (`None` for a task's start, end and drop), and what was seen.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, PartialEq, Eq)]
pub struct Entry {
    pub t: Option<u64>,
    pub task: usize,
    pub step: Option<usize>,
    pub ev: Ev,
}

/// How a joined task ended, as its joiner saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum JoinOut {
    Ok(usize),
    Cancelled(usize),
    Panicked(usize),
    /// A result the script cannot place (a value or id of no known task).
    Unknown,
}

impl JoinOut {
    pub fn task(self) -> Option<usize> {
        match self {
            JoinOut::Ok(t) | JoinOut::Cancelled(t) | JoinOut::Panicked(t) => Some(t),
            JoinOut::Unknown => None,
        }
    }
}

/// `task::try_id()` at a task's first poll, against the id of the handle
/// its spawner got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdCheck {
    /// `None`: not inside a task (the `block_on` future).
    NoTask,
    /// The handle's id.
    Same,
    /// Another id.
    Other,
}

impl IdCheck {
    pub fn of<I: PartialEq + Copy>(current: Option<I>, handle: Option<I>) -> IdCheck {
        match current {
            None => IdCheck::NoTask,
            Some(c) if handle == Some(c) => IdCheck::Same,
            Some(_) => IdCheck::Other,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The task's future was first polled; what `task::try_id()` said.
    Start(IdCheck),
    /// The step completed (sleeps, yields, advances, spawns, ...).
    Done,
    /// A reset sleep completed; whether its poll before the reset (if any)
    /// was ready, and its `deadline()` after the reset.
    Reset { early_ready: bool, deadline: u64 },
    /// `timeout`: `true` if it elapsed.
    Timeout { elapsed: bool },
    /// `select!`: the branch taken.
    Select(u8),
    /// An interval tick, with the instant it returned.
    Tick(u64),
    /// About to `advance` the clock (the step's next entry comes after the
    /// `advance` future returned).
    Advancing,
    /// `Instant::now()` (after creating an `advance` future).
    Now(u64),
    /// `Sleep::is_elapsed()`.
    Elapsed(bool),
    /// An error's `Display` and `Debug` (digits shown as `#`).
    Text(String),
    /// A joined task (`None`: the set was empty), and the set's length
    /// after the join (0 for a `JoinHandle`).
    Join(Option<JoinOut>, usize),
    /// `try_join_next`.
    TryJoin(Option<JoinOut>, usize),
    /// `is_finished()` on the handle of this task.
    Finished(usize, bool),
    /// Abort requested for these tasks (shutdown: after they finished).
    Aborted(Vec<usize>),
    /// The step needed a handle and the task held none.
    NoHandle,
    /// About to panic.
    Panicking,
    /// The task's future returned.
    End,
    /// The task's future was dropped before returning (abort, panic, or
    /// the runtime's drop).
    Dropped,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.t {
            Some(t) => write!(f, "{:>6}.{:03} ms", t / 1000, t % 1000)?,
            None => write!(f, "{:>13}", "at rt drop")?,
        }
        write!(f, "  task {}", self.task)?;
        match self.step {
            Some(s) => write!(f, " step {s:>2}")?,
            None => write!(f, "        ")?,
        }
        write!(f, "  {:?}", self.ev)
    }
}

/// The shared recorder of one run.
#[derive(Clone, Default)]
pub struct Log {
    entries: Arc<Mutex<Vec<Entry>>>,
    /// `block_on` has returned: later drops have no virtual time.
    ended: Arc<AtomicBool>,
}

impl Log {
    pub fn push(&self, t: Option<u64>, task: usize, step: Option<usize>, ev: Ev) {
        let e = Entry { t, task, step, ev };
        self.entries.lock().unwrap().push(e);
    }

    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    pub fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
    }

    pub fn take(&self) -> Vec<Entry> {
        std::mem::take(&mut *self.entries.lock().unwrap())
    }
}
