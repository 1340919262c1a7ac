//! The task state word and every transition on it.
//!
//! Owns: the single `AtomicUsize` that says where a task is in its life and
//! how many references to its cell exist. No other module reads the bits;
//! everything goes through a transition below that returns a `#[must_use]`
//! outcome telling the caller what it must do next.
//!
//! Layout: flag bits in the low six bits, the reference count above them.
//!
//! - `RUNNING`: someone is polling or cancelling the future. It is a lock on
//!   the task's `Core` (the future or its output).
//! - `COMPLETE`: the future is gone; its output (or error) is stored, or
//!   already taken or dropped. Set once, never cleared.
//! - `NOTIFIED`: the task has been woken and an entry for it exists in some
//!   run queue, or will be pushed by whoever set the bit (the waker, or the
//!   poller seeing it at the end of a poll). At most one entry exists.
//! - `JOIN_INTEREST`: a `JoinHandle` exists and owns the right to the output.
//! - `JOIN_WAKER`: the trailer's join waker is published to the runtime.
//!   While it is clear (and the task is not complete), the `JoinHandle` has
//!   exclusive access to the waker slot; while it is set, only the runtime
//!   may read it, and the runtime clears it after waking.
//! - `CANCELLED`: `abort` or runtime shutdown asked the task to stop; the
//!   next thread holding `RUNNING` drops the future instead of polling it.
//!
//! Reference counting: references are held by the scheduler's owned-task list
//! (one, until the task completes and is released), the `JoinHandle`, each
//! `AbortHandle`, each `Waker` clone, and a runner re-queueing a task that
//! was woken during its poll, for the push only (`transition_to_idle`: the
//! task is idle by then, so shutdown may claim it meanwhile, and the runner
//! may be a `block_in_place` thread that no longer holds a worker core),
//! and the long-poll monitor's rescue thread for the run of an entry it
//! took (`ReferencedNotified`: it is no core, so shutdown does not wait
//! for it to stop polling; multi_thread/rescue.rs).
//! **Run-queue entries hold none**: an entry borrows the owned list's
//! reference, which is valid because a task is released from the list only
//! by the thread that completes it (holding `RUNNING`, so no entry for it
//! can be pending) or by shutdown after every core stopped polling (and
//! after the rescue thread's step under way, rescue.rs).
//! This is why a wake never touches the count.

use crate::loom::{AtomicUsize, Ordering};
use std::fmt;

const RUNNING: usize = 0b0000_0001;
const COMPLETE: usize = 0b0000_0010;
const NOTIFIED: usize = 0b0000_0100;
const JOIN_INTEREST: usize = 0b0000_1000;
const JOIN_WAKER: usize = 0b0001_0000;
const CANCELLED: usize = 0b0010_0000;

const REF_SHIFT: u32 = 6;
const REF_ONE: usize = 1 << REF_SHIFT;
#[cfg(all(test, not(loom)))]
const FLAGS: usize = REF_ONE - 1;

/// A new task: owned by the list and the `JoinHandle`, notified so that the
/// spawn's first queue entry is accounted for.
const INITIAL: usize = (2 * REF_ONE) | JOIN_INTEREST | NOTIFIED;

pub(crate) struct State {
    val: AtomicUsize,
}

/// A copy of the state word at one instant.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot(usize);

impl Snapshot {
    pub(crate) fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    pub(crate) fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    pub(crate) fn is_notified(self) -> bool {
        self.0 & NOTIFIED != 0
    }
    pub(crate) fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    pub(crate) fn is_join_waker_set(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    pub(crate) fn is_cancelled(self) -> bool {
        self.0 & CANCELLED != 0
    }
    pub(crate) fn ref_count(self) -> usize {
        self.0 >> REF_SHIFT
    }
    fn is_idle(self) -> bool {
        self.0 & (RUNNING | COMPLETE) == 0
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("running", &self.is_running())
            .field("complete", &self.is_complete())
            .field("notified", &self.is_notified())
            .field("join_interest", &self.is_join_interested())
            .field("join_waker", &self.is_join_waker_set())
            .field("cancelled", &self.is_cancelled())
            .field("refs", &self.ref_count())
            .finish()
    }
}

#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToRunning {
    /// The caller holds `RUNNING` and must poll the future.
    Poll,
    /// The caller holds `RUNNING` and must drop the future (it was aborted).
    Cancel,
    /// The task is already running or complete: nothing to do.
    Skip,
}

#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToIdle {
    /// Released `RUNNING`; nothing pending.
    Idle,
    /// Released `RUNNING`, but the task was woken during the poll: the caller
    /// must push it to a run queue (it counts as a yield), and was given one
    /// reference, which it must release after the push.
    Notified,
    /// Aborted during the poll: the caller still holds `RUNNING` and must
    /// drop the future.
    Cancel,
}

#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Notify {
    /// The task moved from idle to notified: the caller must push it.
    Submit,
    /// Nothing to push (already queued, running, or complete).
    Nothing,
}

#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotifyByVal {
    /// Push the task, then drop the caller's reference.
    SubmitThenRelease,
    /// The caller's reference is already released; nothing else to do.
    Done,
    /// The caller's reference was the last: deallocate.
    Dealloc,
}

#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToShutdown {
    /// The caller now holds `RUNNING` and must cancel the task.
    Cancel,
    /// Running elsewhere (the runner will see `CANCELLED`) or complete.
    Busy,
}

/// What the `JoinHandle` must clean up when it is dropped.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct JoinDropped {
    /// The task completed: the handle owns the output and must drop it.
    pub(crate) drop_output: bool,
    /// The handle has exclusive access to the waker slot and must clear it.
    pub(crate) drop_waker: bool,
}

impl State {
    pub(crate) fn new() -> State {
        State {
            val: AtomicUsize::new(INITIAL),
        }
    }

    pub(crate) fn load(&self) -> Snapshot {
        Snapshot(self.val.load(Ordering::Acquire))
    }

    /// CAS loop helper: `f` returns the new word and an outcome, or `None`
    /// to stop without writing.
    fn update<R>(&self, mut f: impl FnMut(Snapshot) -> (Option<usize>, R)) -> R {
        let mut cur = self.val.load(Ordering::Acquire);
        loop {
            let (next, out) = f(Snapshot(cur));
            let Some(next) = next else { return out };
            match self
                .val
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return out,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A run-queue entry is being polled.
    pub(crate) fn transition_to_running(&self) -> ToRunning {
        self.update(|s| {
            if !s.is_idle() {
                return (None, ToRunning::Skip);
            }
            let next = (s.0 | RUNNING) & !NOTIFIED;
            let out = if s.is_cancelled() {
                ToRunning::Cancel
            } else {
                ToRunning::Poll
            };
            (Some(next), out)
        })
    }

    /// The future returned `Pending`.
    ///
    /// A task woken during its poll gains a reference in the same CAS, held
    /// by the caller across its push: once `RUNNING` is released, runtime
    /// shutdown may claim the idle task, cancel it and drop the owner's
    /// reference, and the caller's entry borrows nothing that outlives that.
    pub(crate) fn transition_to_idle(&self) -> ToIdle {
        self.update(|s| {
            debug_assert!(s.is_running());
            if s.is_cancelled() {
                return (None, ToIdle::Cancel);
            }
            let mut next = s.0 & !RUNNING;
            let out = if s.is_notified() {
                next += REF_ONE;
                ToIdle::Notified
            } else {
                ToIdle::Idle
            };
            (Some(next), out)
        })
    }

    /// The future finished (or was dropped). Returns the state before, which
    /// tells whether anyone wants the output and whether a join waker waits.
    pub(crate) fn transition_to_complete(&self) -> Snapshot {
        let prev = Snapshot(self.val.fetch_xor(RUNNING | COMPLETE, Ordering::AcqRel));
        debug_assert!(prev.is_running() && !prev.is_complete());
        prev
    }

    /// After waking the join waker, hand the slot back to the `JoinHandle`.
    /// Returns the state before: without `JOIN_INTEREST` the handle is gone
    /// and the runtime must drop the waker itself.
    pub(crate) fn unset_join_waker_after_complete(&self) -> Snapshot {
        let prev = Snapshot(self.val.fetch_and(!JOIN_WAKER, Ordering::AcqRel));
        debug_assert!(prev.is_complete() && prev.is_join_waker_set());
        prev
    }

    /// `wake_by_ref`: set `NOTIFIED` without touching the reference count.
    /// A single `fetch_or`: setting the bit on a running or complete task is
    /// harmless (the runner re-checks it; a complete task is never run again).
    pub(crate) fn transition_to_notified_by_ref(&self) -> Notify {
        let prev = Snapshot(self.val.fetch_or(NOTIFIED, Ordering::AcqRel));
        if prev.is_idle() && !prev.is_notified() {
            Notify::Submit
        } else {
            Notify::Nothing
        }
    }

    /// `wake`: like `by_ref`, and also release the waker's reference in the
    /// same CAS when there is nothing to push.
    pub(crate) fn transition_to_notified_by_val(&self) -> NotifyByVal {
        self.update(|s| {
            debug_assert!(s.ref_count() > 0);
            if s.is_idle() && !s.is_notified() {
                // Keep the reference alive across the push: the scheduler
                // handle is read from the task while pushing.
                return (Some(s.0 | NOTIFIED), NotifyByVal::SubmitThenRelease);
            }
            let mut next = s.0 - REF_ONE;
            if !s.is_complete() {
                next |= NOTIFIED;
            }
            let out = if Snapshot(next).ref_count() == 0 {
                NotifyByVal::Dealloc
            } else {
                NotifyByVal::Done
            };
            (Some(next), out)
        })
    }

    /// `abort`: mark cancelled and make sure some thread will act on it.
    pub(crate) fn transition_to_notified_and_cancel(&self) -> Notify {
        self.update(|s| {
            if s.is_complete() || s.is_cancelled() {
                (None, Notify::Nothing)
            } else if s.is_running() || s.is_notified() {
                // The runner, or whoever pops the queued entry, sees CANCELLED.
                (Some(s.0 | CANCELLED | NOTIFIED), Notify::Nothing)
            } else {
                (Some(s.0 | CANCELLED | NOTIFIED), Notify::Submit)
            }
        })
    }

    /// Runtime shutdown: take the task if it is idle; otherwise flag it so
    /// its runner cancels it at the end of the current poll.
    pub(crate) fn transition_to_shutdown(&self) -> ToShutdown {
        self.update(|s| {
            if s.is_idle() {
                (Some(s.0 | RUNNING | CANCELLED), ToShutdown::Cancel)
            } else if s.is_complete() {
                (None, ToShutdown::Busy)
            } else {
                (Some(s.0 | CANCELLED), ToShutdown::Busy)
            }
        })
    }

    /// Publish the join waker (already written to the trailer). Fails with
    /// the current state if the task completed first.
    pub(crate) fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            debug_assert!(s.is_join_interested() && !s.is_join_waker_set());
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = s.0 | JOIN_WAKER;
                (Some(next), Ok(Snapshot(next)))
            }
        })
    }

    /// Take the join waker slot back to replace the waker. Fails if the task
    /// completed (then the runtime owns the slot until it clears the bit).
    pub(crate) fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            debug_assert!(s.is_join_interested());
            if s.is_complete() {
                // The completer may already have woken the waker and
                // cleared JOIN_WAKER: that is not an error here.
                (None, Err(s))
            } else {
                debug_assert!(s.is_join_waker_set());
                let next = s.0 & !JOIN_WAKER;
                (Some(next), Ok(Snapshot(next)))
            }
        })
    }

    /// The `JoinHandle` is dropped (its reference is released separately).
    pub(crate) fn transition_to_join_handle_dropped(&self) -> JoinDropped {
        self.update(|s| {
            debug_assert!(s.is_join_interested());
            let mut next = s.0 & !JOIN_INTEREST;
            let out = if s.is_complete() {
                JoinDropped {
                    drop_output: true,
                    drop_waker: !s.is_join_waker_set(),
                }
            } else {
                next &= !JOIN_WAKER;
                JoinDropped {
                    drop_output: false,
                    drop_waker: true,
                }
            };
            (Some(next), out)
        })
    }

    pub(crate) fn ref_inc(&self) {
        let prev = self.val.fetch_add(REF_ONE, Ordering::Relaxed);
        // Far more references than any program makes means a leak or a
        // counting bug; continuing could wrap the count into the flags.
        if prev > isize::MAX as usize {
            std::process::abort();
        }
    }

    /// Release one reference; true when it was the last.
    #[must_use = "the caller must deallocate when the last reference is released"]
    pub(crate) fn ref_dec(&self) -> bool {
        let prev = Snapshot(self.val.fetch_sub(REF_ONE, Ordering::AcqRel));
        debug_assert!(prev.ref_count() >= 1);
        prev.ref_count() == 1
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn flags(&self) -> usize {
        self.val.load(Ordering::Relaxed) & FLAGS
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.load().fmt(f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn new_task_is_notified_with_two_refs() {
        let s = State::new();
        let snap = s.load();
        assert!(snap.is_notified() && snap.is_join_interested());
        assert_eq!(snap.ref_count(), 2);
        assert_eq!(s.flags(), NOTIFIED | JOIN_INTEREST);
    }

    #[test]
    fn poll_cycle_and_wake_while_running() {
        let s = State::new();
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        assert_eq!(s.transition_to_notified_by_ref(), Notify::Nothing);
        assert_eq!(s.transition_to_idle(), ToIdle::Notified);
        // The yield re-queued it; a second wake must not queue it twice.
        assert_eq!(s.transition_to_notified_by_ref(), Notify::Nothing);
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        assert_eq!(s.transition_to_idle(), ToIdle::Idle);
        assert_eq!(s.transition_to_notified_by_ref(), Notify::Submit);
    }

    #[test]
    fn abort_idle_task_submits_and_cancels() {
        let s = State::new();
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        assert_eq!(s.transition_to_idle(), ToIdle::Idle);
        assert_eq!(s.transition_to_notified_and_cancel(), Notify::Submit);
        assert_eq!(s.transition_to_notified_and_cancel(), Notify::Nothing);
        assert_eq!(s.transition_to_running(), ToRunning::Cancel);
    }

    #[test]
    fn abort_while_running_cancels_at_idle() {
        let s = State::new();
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        assert_eq!(s.transition_to_notified_and_cancel(), Notify::Nothing);
        assert_eq!(s.transition_to_idle(), ToIdle::Cancel);
        let prev = s.transition_to_complete();
        assert!(prev.is_cancelled());
        assert!(s.load().is_complete());
    }

    #[test]
    fn wake_by_val_releases_reference_when_nothing_to_do() {
        let s = State::new();
        s.ref_inc(); // the waker's reference: 3 now
        assert_eq!(s.transition_to_notified_by_val(), NotifyByVal::Done);
        assert_eq!(s.load().ref_count(), 2);
    }

    #[test]
    fn join_handle_drop_before_and_after_complete() {
        let s = State::new();
        assert_eq!(
            s.transition_to_join_handle_dropped(),
            JoinDropped {
                drop_output: false,
                drop_waker: true
            }
        );
        let s = State::new();
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        let _ = s.transition_to_complete();
        assert_eq!(
            s.transition_to_join_handle_dropped(),
            JoinDropped {
                drop_output: true,
                drop_waker: true
            }
        );
    }

    #[test]
    fn join_waker_publish_fails_after_complete() {
        let s = State::new();
        assert!(s.set_join_waker().is_ok());
        assert!(s.unset_join_waker().is_ok());
        assert!(s.set_join_waker().is_ok());
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        let prev = s.transition_to_complete();
        assert!(prev.is_join_waker_set());
        assert!(s.unset_join_waker().is_err());
        assert!(s.unset_join_waker_after_complete().is_join_interested());
    }

    #[test]
    fn shutdown_takes_idle_and_flags_running() {
        let s = State::new();
        assert_eq!(s.transition_to_shutdown(), ToShutdown::Cancel);
        let s = State::new();
        assert_eq!(s.transition_to_running(), ToRunning::Poll);
        assert_eq!(s.transition_to_shutdown(), ToShutdown::Busy);
        assert_eq!(s.transition_to_idle(), ToIdle::Cancel);
    }

    #[test]
    fn last_reference_reports_dealloc() {
        let s = State::new();
        assert!(!s.ref_dec());
        assert!(s.ref_dec());
    }
}
