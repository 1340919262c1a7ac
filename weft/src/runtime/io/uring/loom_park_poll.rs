//! Loom model of an owner's park in its ring against another thread
//! reaping that ring (park_poll.rs): the kernel posts the completion of
//! the poll on the epoll descriptor at any moment, and whichever thread
//! reaps it, the owner's wait ends and its park reports the poll fired.
//!
//! The ring's lock guards the [`ParkPoll`] and the reading of the
//! completion queue, as in `Ring`; the queue itself is the kernel's, and
//! the owner's wait (an `io_uring_enter` for one completion) is a wait on
//! it without the ring's lock.

use super::park_poll::ParkPoll;
use crate::loom::{lock, thread, Arc, Condvar, Mutex};

/// What the model's completions are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cqe {
    EpollPoll,
    NoOp,
}

/// The kernel's completion queue, and a wait for it to hold something.
#[derive(Default)]
struct CompletionQueue {
    entries: Mutex<Vec<Cqe>>,
    posted: Condvar,
}

impl CompletionQueue {
    fn post(&self, cqe: Cqe) {
        lock(&self.entries).push(cqe);
        self.posted.notify_all();
    }

    /// `io_uring_enter` waiting for one completion.
    fn wait_for_one(&self) {
        let mut entries = lock(&self.entries);
        while entries.is_empty() {
            entries = self.posted.wait(entries).unwrap();
        }
    }

    fn take_all(&self) -> Vec<Cqe> {
        std::mem::take(&mut *lock(&self.entries))
    }
}

/// `RingState::reap`, for the model's completions (the ring's lock held:
/// `poll` is its guard's contents).
fn reap(poll: &mut ParkPoll, queue: &CompletionQueue) {
    for cqe in queue.take_all() {
        match cqe {
            Cqe::EpollPoll => poll.completed(),
            Cqe::NoOp => poll.wake_reaped(),
        }
    }
}

/// The release of the ring's lock (`Locked`'s drop): the owed wake-up.
fn release(poll: &mut ParkPoll, queue: &CompletionQueue) {
    if poll.take_owed_wake() {
        queue.post(Cqe::NoOp);
    }
}

/// `Ring::park` without a timeout: whether it reports the poll fired.
fn park(ring: &Mutex<ParkPoll>, queue: &CompletionQueue) -> bool {
    {
        let mut poll = lock(ring);
        reap(&mut poll, queue);
        if poll.take_fired() {
            release(&mut poll, queue);
            return true;
        }
        poll.start_wait();
        release(&mut poll, queue);
    }
    queue.wait_for_one();
    let mut poll = lock(ring);
    poll.end_wait();
    reap(&mut poll, queue);
    let fired = poll.take_fired();
    release(&mut poll, queue);
    fired
}

/// The poll fires once; the owner parks; another thread takes the ring's
/// lock once per entry of `holds`, reaping that many times in each hold.
/// The owner's park always returns (loom reports a thread left waiting
/// for ever as a deadlock), and says the poll fired.
fn owner_parks_beside_a_reaper(holds: &'static [usize]) {
    loom::model(move || {
        let ring = Arc::new(Mutex::new(ParkPoll::default()));
        lock(&ring).armed();
        let queue = Arc::new(CompletionQueue::default());
        let kernel = {
            let queue = queue.clone();
            thread::spawn(move || queue.post(Cqe::EpollPoll))
        };
        let reaper = {
            let (ring, queue) = (ring.clone(), queue.clone());
            thread::spawn(move || {
                for &reaps in holds {
                    let mut poll = lock(&ring);
                    for _ in 0..reaps {
                        reap(&mut poll, &queue);
                    }
                    release(&mut poll, &queue);
                }
            })
        };
        assert!(park(&ring, &queue), "the park missed the poll's completion");
        kernel.join().unwrap();
        reaper.join().unwrap();
    });
}

#[test]
fn loom_a_poll_completion_reaped_by_another_thread_still_ends_the_owners_wait() {
    owner_parks_beside_a_reaper(&[1]);
}

/// The reaper also takes the no-op it posted for the owner, before the
/// owner's wait began (another hold of the lock, reaping again).
#[test]
fn loom_the_owners_wake_up_reaped_by_another_thread_is_posted_again() {
    owner_parks_beside_a_reaper(&[1, 1]);
}

/// A cancel's wait loop reaps several times in one hold of the lock: the
/// wake-up is posted once, on release, and still reaches the owner.
#[test]
fn loom_a_wake_up_owed_in_a_long_hold_is_posted_on_release() {
    owner_parks_beside_a_reaper(&[2]);
}
