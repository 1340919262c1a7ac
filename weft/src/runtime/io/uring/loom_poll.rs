//! Loom models of an `AsyncFd`'s poll requests on the rings (poll.rs): a
//! completion racing the wait that arms the next request, a wait after
//! readiness was cleared, and the descriptor going away while a request
//! completes. The ring is a model: the real op table under a mutex, and a
//! "kernel" thread that completes requests as they are started.

use super::ops::{Abandoned, Completed, Leave, OpKey, OpTable};
use super::poll::{PollRings, UringPoll};
use crate::loom::{lock, thread, AtomicBool, Mutex, Ordering};
use crate::runtime::io::ready::Interest;
use crate::runtime::io::scheduled_io::{Direction, ScheduledIo};
use std::future::poll_fn;
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::task::{Poll, Waker};

#[derive(Default)]
struct Model {
    table: Mutex<OpTable>,
    /// Requests started and not yet completed by the "kernel", with the
    /// events each asked for.
    started: Mutex<Vec<(OpKey, u32)>>,
    /// What the last change of the epoll registration asked for.
    epoll: Mutex<Option<Interest>>,
    /// The `AsyncFd` is gone (its abandon returned): the descriptor's
    /// number may name another file, whose epoll entry nothing may change.
    gone: AtomicBool,
}

#[derive(Clone, Default)]
struct FakeRings(Arc<Model>);

impl PollRings for FakeRings {
    fn here(&self) -> (usize, bool) {
        (0, true)
    }

    fn start_poll(
        &self,
        _ring: usize,
        _fd: RawFd,
        events: u32,
        waker: &Waker,
        _submit_now: bool,
    ) -> io::Result<OpKey> {
        let key = lock(&self.0.table).insert(Vec::new(), Some(waker.clone()));
        lock(&self.0.started).push((key, events));
        Ok(key)
    }

    fn take(&self, _ring: usize, key: OpKey) -> Option<i32> {
        lock(&self.0.table).try_take(key).map(|(result, _)| result)
    }

    /// The kernel completes a cancelled poll with `ECANCELED` (a real
    /// ring's completion would come a little later; the table frees the
    /// slot either way).
    fn abandon(&self, _ring: usize, key: OpKey) {
        let mut table = lock(&self.0.table);
        if let (Abandoned::CancelInKernel, _) = table.abandon(key, Leave::Cancel) {
            let _ = table.complete(key.user_data(), -libc::ECANCELED);
        }
    }

    fn to_epoll(&self, _fd: RawFd, interest: Interest) {
        assert!(
            !self.0.gone.load(Ordering::SeqCst),
            "epoll changed after the abandon"
        );
        *lock(&self.0.epoll) = Some(interest);
    }
}

impl FakeRings {
    /// The kernel's side: wait for a request, complete it with `result`
    /// and call its waker outside the table's lock (as `Ring::reap`).
    fn complete_next(&self, result: i32) {
        self.complete_where(0, result);
    }

    /// [`complete_next`](Self::complete_next) for a request that asked for
    /// any of `events` (0: any request).
    fn complete_where(&self, events: u32, result: i32) {
        let key = loop {
            let mut started = lock(&self.0.started);
            let found = started
                .iter()
                .rposition(|&(_, asked)| events == 0 || asked & events != 0);
            if let Some(at) = found {
                break started.remove(at).0;
            }
            drop(started);
            thread::yield_now();
        };
        let completed = lock(&self.0.table).complete(key.user_data(), result);
        if let Completed::Wake(Some(waker)) = completed {
            waker.wake();
        }
    }
}

/// A wait as `Registration::poll_ready` makes it on the rings.
fn wait_readable(io: &ScheduledIo, polls: &Arc<UringPoll<FakeRings>>) {
    let ev = loom::future::block_on(poll_fn(|cx| {
        match io.poll_direction(cx, Direction::Read, false) {
            Poll::Ready(ev) => Poll::Ready(ev),
            Poll::Pending => {
                polls.arm(Interest::READABLE).unwrap();
                Poll::Pending
            }
        }
    }));
    assert!(ev.ready.is_readable(), "woken without readiness");
}

fn setup() -> (FakeRings, Arc<ScheduledIo>, Arc<UringPoll<FakeRings>>) {
    let rings = FakeRings::default();
    let io = Arc::new(ScheduledIo::new());
    let polls = UringPoll::new(rings.clone(), 0, Interest::READABLE, io.clone());
    (rings, io, polls)
}

/// The request completes while the waiting task is still arming it (its
/// slot not yet `Armed`, so the wake finds nothing to take): the arming
/// side's collect takes it, and the wait ends.
#[test]
fn loom_a_completion_during_arming_is_not_lost() {
    loom::model(|| {
        let (rings, io, polls) = setup();
        let kernel = {
            let rings = rings.clone();
            thread::spawn(move || rings.complete_next(libc::POLLIN as i32))
        };
        wait_readable(&io, &polls);
        kernel.join().unwrap();
        assert_eq!(polls.armed(), 0, "a request was left in the kernel");
        assert_eq!(lock(&rings.0.table).in_flight(), 0);
    });
}

/// Readiness found, used up (the read would block, so it is cleared), and
/// waited for again while the first completion's wake may still be
/// running: the second wait arms a second request, which completes.
#[test]
fn loom_a_wait_after_clearing_arms_the_next_request() {
    loom::model(|| {
        let (rings, io, polls) = setup();
        let kernel = {
            let rings = rings.clone();
            thread::spawn(move || {
                rings.complete_next(libc::POLLIN as i32);
                rings.complete_next(libc::POLLIN as i32);
            })
        };
        wait_readable(&io, &polls);
        io.clear_readiness(io.ready_now(Interest::READABLE));
        wait_readable(&io, &polls);
        kernel.join().unwrap();
        assert_eq!(polls.armed(), 0, "a request was left in the kernel");
        assert_eq!(lock(&rings.0.table).in_flight(), 0);
    });
}

/// An armed read request completes with `result` while the `AsyncFd`
/// goes away: afterwards nothing is armed and nothing is in the kernel.
fn abandon_racing_a_completion(result: i32) {
    loom::model(move || {
        let (rings, _io, polls) = setup();
        polls.arm(Interest::READABLE).unwrap();
        let kernel = {
            let rings = rings.clone();
            thread::spawn(move || rings.complete_next(result))
        };
        polls.abandon();
        kernel.join().unwrap();
        assert_eq!(polls.armed(), 0, "a request was left armed");
        assert_eq!(
            lock(&rings.0.table).in_flight(),
            0,
            "a request was left in the kernel"
        );
    });
}

/// The `AsyncFd` goes away while its request completes: whichever comes
/// first, the request ends (cancelled or taken) and nothing stays armed.
#[test]
fn loom_abandon_racing_a_completion_leaves_nothing_in_flight() {
    abandon_racing_a_completion(libc::POLLIN as i32);
}

/// The kernel interrupts the request (its submitting thread exited:
/// `ECANCELED` nobody asked for) while the `AsyncFd` goes away: the
/// completion's wake arms a new request unless the abandon came first,
/// and an arm that raced the abandon cancels what it started. Nothing is
/// left in the kernel.
#[test]
fn loom_an_interrupted_request_is_not_armed_again_after_abandon() {
    abandon_racing_a_completion(-libc::ECANCELED);
}

/// A write request completes "half-closed" (from then on epoll reports
/// the descriptor's write readiness: an `EPOLL_CTL_MOD` by number) while
/// the `AsyncFd` goes away, perhaps because its number names another file
/// now (`AsyncFd::into_inner_stale`): the change is made before the
/// abandon returns, or not at all.
#[test]
fn loom_no_epoll_change_after_abandon() {
    loom::model(|| {
        let rings = FakeRings::default();
        let io = Arc::new(ScheduledIo::new());
        let polls = UringPoll::new(rings.clone(), 0, Interest::WRITABLE, io);
        polls.arm(Interest::WRITABLE).unwrap();
        let kernel = {
            let rings = rings.clone();
            thread::spawn(move || rings.complete_next(libc::POLLRDHUP as i32))
        };
        polls.abandon();
        rings.0.gone.store(true, Ordering::SeqCst);
        kernel.join().unwrap();
    });
}

/// A read request completes with an error alone and a write request
/// "half-closed" at once, each reaped on its own thread (they may sit on
/// different rings): both directions move to epoll, and the registration
/// ends up asking for both, whichever change is made last.
#[test]
fn loom_both_directions_moving_to_epoll_at_once_keep_both() {
    loom::model(|| {
        let rings = FakeRings::default();
        let io = Arc::new(ScheduledIo::new());
        let both = Interest::READABLE | Interest::WRITABLE;
        let polls = UringPoll::new(rings.clone(), 0, both, io);
        polls.arm(both).unwrap();
        let reads = {
            let rings = rings.clone();
            thread::spawn(move || rings.complete_where(libc::POLLIN as u32, libc::POLLERR as i32))
        };
        rings.complete_where(libc::POLLOUT as u32, libc::POLLRDHUP as i32);
        reads.join().unwrap();
        assert_eq!(*lock(&rings.0.epoll), Some(both));
    });
}
