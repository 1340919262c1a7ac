//! The ring's poll on the driver's epoll descriptor, as the owner's park
//! in the ring sees it (`Ring::park`, ring/mod.rs): is one armed, did it fire,
//! and is the owner waiting. Guarded by the ring's lock, with the queues.
//!
//! Invariants:
//! - At most one such poll is in the ring (`armed`); whoever reaps its
//!   completion records it in `fired`, which the owner's park takes.
//! - **An owner waiting in the ring hears of the poll's completion.** It
//!   waits without the lock, for any completion on the ring. Another
//!   thread may reap the ring meanwhile (a cancel, a drop, the driver's
//!   holder reaping a watched ring, the monitor's rescue), and if it takes
//!   the poll's completion, it took what would have ended the wait: the
//!   owner would sleep on with epoll's events unread (a wake-up of the
//!   runtime among them), and with no poll armed to tell it. So that
//!   thread posts a completion of its own (a no-op) for the owner's wait
//!   to end on ([`ParkPoll::completed`] owes it). Loom model:
//!   `loom_park_poll.rs`.
//! - **That no-op reaches the owner too.** A thread that reaps again
//!   before the owner's wait began (a cancel's wait loop reaps at once)
//!   takes the no-op as well; while the owner still waits, it posts the
//!   no-op again ([`ParkPoll::wake_reaped`]). Only the owner, its wait
//!   over, lets it go.
//! - **Posted once per hold of the lock, on release**
//!   ([`ParkPoll::take_owed_wake`]): the owner cannot end its wait while
//!   another thread holds the lock, so a no-op posted earlier would only
//!   be reaped again by that thread's next wait, at once, and the
//!   thread would spin instead of sleeping between its looks.

#[derive(Default, Debug)]
pub(super) struct ParkPoll {
    armed: bool,
    fired: bool,
    /// The owner is between its last look under the lock and the end of
    /// its wait.
    parked: bool,
    /// A reap under the current hold of the lock took what would have
    /// ended the owner's wait: post a no-op on release.
    owed: bool,
}

impl ParkPoll {
    /// Whether a park must arm a new poll before it waits.
    pub(super) fn needs_arming(&self) -> bool {
        !self.armed
    }

    /// A poll was pushed into the ring.
    pub(super) fn armed(&mut self) {
        self.armed = true;
    }

    /// The poll's completion was reaped, by whichever thread: a wake-up
    /// is owed if the owner waits in the ring.
    pub(super) fn completed(&mut self) {
        self.armed = false;
        self.fired = true;
        self.owed |= self.parked;
    }

    /// The no-op posted for a waiting owner was reaped, by whichever
    /// thread: owed again while the owner still waits.
    pub(super) fn wake_reaped(&mut self) {
        self.owed |= self.parked;
    }

    /// On the lock's release: whether to post the owner's wake-up (and
    /// forget it). Only while the owner still waits.
    pub(super) fn take_owed_wake(&mut self) -> bool {
        std::mem::take(&mut self.owed) && self.parked
    }

    /// Whether the poll fired since the owner last took it (and forget it).
    pub(super) fn take_fired(&mut self) -> bool {
        std::mem::take(&mut self.fired)
    }

    /// The owner found nothing to do and is about to wait without the lock.
    pub(super) fn start_wait(&mut self) {
        self.parked = true;
    }

    /// The owner's wait ended (it holds the lock again, and reaps next).
    pub(super) fn end_wait(&mut self) {
        self.parked = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_reaped_while_the_owner_waits_asks_for_a_wake_up() {
        let mut poll = ParkPoll::default();
        assert!(poll.needs_arming());
        poll.armed();
        assert!(!poll.needs_arming());
        poll.completed();
        assert!(!poll.take_owed_wake(), "nobody waits yet");
        assert!(poll.take_fired());
        assert!(!poll.take_fired(), "taken once");

        poll.armed();
        poll.start_wait();
        poll.completed();
        assert!(poll.take_owed_wake(), "posted on release");
        assert!(!poll.take_owed_wake(), "once");
        assert!(poll.needs_arming(), "the poll is spent");
        // Its no-op, taken by another thread, goes back for the owner;
        // the owner itself, its wait over, lets it go.
        poll.wake_reaped();
        assert!(poll.take_owed_wake());
        poll.end_wait();
        poll.wake_reaped();
        assert!(!poll.take_owed_wake());
        assert!(poll.take_fired());
    }
}
