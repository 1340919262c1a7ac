//! The readiness state of one registered I/O resource.
//!
//! Owns: one packed readiness word and the wakers of the tasks waiting on
//! the resource.
//!
//! Invariants:
//! - The readiness word is `[shutdown:1][tick:15][ready bits:16]`. The
//!   driver ORs in the ready bits of each event and bumps the tick in the
//!   same atomic update.
//! - A task clears readiness only with the tick it observed
//!   ([`ScheduledIo::clear_readiness`]). If an event arrived in between
//!   (the tick moved on), the clear does nothing. So readiness that arrives
//!   *during* a read that then hits `WouldBlock` is never cleared by that
//!   read: a socket that becomes readable again mid-read is not missed
//!   (edge-triggered polling reports each edge once).
//! - A waiter registers its waker under the waiters lock and then re-reads
//!   the readiness word; the driver sets readiness before taking the same
//!   lock to wake. One of the two always sees the other.

use super::ready::{Interest, Ready};
use crate::loom::{lock, AtomicUsize, Mutex, Ordering};
use std::task::{Context, Poll, Waker};

const READY_MASK: usize = 0xFFFF;
const TICK_SHIFT: u32 = 16;
const TICK_MASK: usize = 0x7FFF;
const SHUTDOWN: usize = 1 << 31;

/// Readiness observed by a task, with the tick needed to clear it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadyEvent {
    pub(crate) ready: Ready,
    pub(crate) tick: u16,
    pub(crate) is_shutdown: bool,
}

/// The two directions a task can wait in with a plain `poll_*_ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The readiness a `poll_*_ready` in this direction reports and is
    /// woken by. Not `ERROR`, as in Tokio: an error alone (a refused
    /// datagram's, on a socket with nothing to read) leaves a
    /// `poll_read_ready` pending, and only a wait for `Interest::ERROR`
    /// or a `ScheduledIo::poll_direction` with `on_error` (weft-ruby's) sees it.
    fn mask(self) -> Ready {
        match self {
            Direction::Read => Ready::READABLE | Ready::READ_CLOSED,
            Direction::Write => Ready::WRITABLE | Ready::WRITE_CLOSED,
        }
    }
}

#[derive(Default)]
struct Waiters {
    reader: Option<Waker>,
    writer: Option<Waker>,
    /// The reader (writer) waits for an error too
    /// (`ScheduledIo::poll_direction` with `on_error`).
    reader_on_error: bool,
    writer_on_error: bool,
    /// `readiness(interest)` futures: any number of tasks may wait at once.
    /// A slot is `None` when its future is gone (freed for reuse).
    others: Vec<Option<Other>>,
}

/// One `readiness(interest)` future's slot.
struct Other {
    interest: Interest,
    waker: Waker,
    /// An event it waits for woke it: its next poll ends the wait with
    /// whatever readiness is left then, perhaps none (another task may
    /// have cleared it meanwhile), as Tokio's does.
    woken: bool,
}

pub(crate) struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

impl ScheduledIo {
    pub(crate) fn new() -> ScheduledIo {
        ScheduledIo {
            readiness: AtomicUsize::new(0),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    /// Driver side: record an event and collect the wakers it concerns
    /// into `wakers` (the caller wakes them after releasing its locks).
    pub(crate) fn set_readiness(&self, ready: Ready, wakers: &mut Vec<Waker>) {
        let mut current = self.readiness.load(Ordering::Acquire);
        loop {
            let tick = ((current >> TICK_SHIFT) + 1) & TICK_MASK;
            let next = (current & SHUTDOWN)
                | (tick << TICK_SHIFT)
                | ((current & READY_MASK) | ready.as_usize());
            match self.readiness.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        self.take_wakers(ready, wakers);
    }

    /// The runtime is shutting down: every wait ends with an error.
    pub(crate) fn shutdown(&self) {
        self.readiness.fetch_or(SHUTDOWN, Ordering::AcqRel);
        let mut wakers = Vec::new();
        self.take_wakers(Ready::ALL, &mut wakers);
        for waker in wakers {
            waker.wake();
        }
    }

    /// Move every waiter's waker into `out`, whatever it waits for (a
    /// woken waiter polls again and finds its own answer).
    pub(crate) fn take_all_wakers(&self, out: &mut Vec<Waker>) {
        self.take_wakers(Ready::ALL, out);
    }

    /// Whether a task waits for read readiness (a `poll_read_ready`-style
    /// reader, or a `readiness` future whose interest includes reads): an
    /// io_uring stream reads on readiness meanwhile, rather than start a
    /// receive that would take the bytes the waiter waits for
    /// (`uring/recv.rs`, "Readiness waiters").
    pub(crate) fn has_read_waiters(&self) -> bool {
        let waiters = lock(&self.waiters);
        waiters.reader.is_some()
            || waiters
                .others
                .iter()
                .flatten()
                .any(|other| other.interest.is_readable())
    }

    /// Move the wakers of the waiters interested in `ready` into `out`.
    fn take_wakers(&self, ready: Ready, out: &mut Vec<Waker>) {
        let mut waiters = lock(&self.waiters);
        if ready.intersects(Direction::Read.mask()) || (waiters.reader_on_error && ready.is_error())
        {
            out.extend(waiters.reader.take());
        }
        if ready.intersects(Direction::Write.mask())
            || (waiters.writer_on_error && ready.is_error())
        {
            out.extend(waiters.writer.take());
        }
        for other in waiters.others.iter_mut().flatten() {
            if !other.woken && ready.intersects(other.interest.mask()) {
                // Keep the slot (its future still owns it) but replace the
                // waker with a no-op: the next poll ends the wait.
                other.woken = true;
                out.push(std::mem::replace(&mut other.waker, Waker::noop().clone()));
            }
        }
    }

    fn event(&self, mask: Ready) -> ReadyEvent {
        let current = self.readiness.load(Ordering::Acquire);
        ReadyEvent {
            ready: Ready::from_usize(current & READY_MASK) & mask,
            tick: ((current >> TICK_SHIFT) & TICK_MASK) as u16,
            is_shutdown: current & SHUTDOWN != 0,
        }
    }

    /// Readiness for `interest` right now (possibly empty).
    pub(crate) fn ready_now(&self, interest: Interest) -> ReadyEvent {
        self.event(interest.mask())
    }

    /// Ready once the resource is ready in `direction`; otherwise stores the
    /// task's waker (replacing the previous one: one task per direction).
    /// With `on_error`, an error alone also ends the wait, as `poll(2)`
    /// counts `POLLERR` as readable and writable: for waits that must learn
    /// of an error on a descriptor with nothing else to report (weft-ruby's
    /// selector: Ruby's own `IO#wait` returns on it).
    pub(crate) fn poll_direction(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        on_error: bool,
    ) -> Poll<ReadyEvent> {
        let mask = if on_error {
            direction.mask() | Ready::ERROR
        } else {
            direction.mask()
        };
        let ev = self.event(mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            return Poll::Ready(ev);
        }
        let mut guard = lock(&self.waiters);
        let waiters = &mut *guard;
        let (slot, slot_on_error) = match direction {
            Direction::Read => (&mut waiters.reader, &mut waiters.reader_on_error),
            Direction::Write => (&mut waiters.writer, &mut waiters.writer_on_error),
        };
        *slot_on_error = on_error;
        match slot {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *slot = Some(cx.waker().clone()),
        }
        // Re-check under the lock (see the module doc).
        let ev = self.event(mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            match direction {
                Direction::Read => waiters.reader = None,
                Direction::Write => waiters.writer = None,
            }
            return Poll::Ready(ev);
        }
        Poll::Pending
    }

    /// Like [`poll_direction`](Self::poll_direction) for any interest, for a waiter
    /// that owns slot `key` (allocated on first use, freed by
    /// [`drop_waiter`](Self::drop_waiter)). Once an event woke the waiter,
    /// this is ready with the readiness left, even none (as Tokio's
    /// `Readiness` future: a task that cleared it in between does not put
    /// the waiter back to sleep).
    pub(crate) fn poll_interest(
        &self,
        cx: &mut Context<'_>,
        interest: Interest,
        key: &mut Option<usize>,
    ) -> Poll<ReadyEvent> {
        let ev = self.event(interest.mask());
        if !ev.ready.is_empty() || ev.is_shutdown {
            self.drop_waiter(key);
            return Poll::Ready(ev);
        }
        let mut waiters = lock(&self.waiters);
        if let Some(k) = *key {
            if waiters.others[k].as_ref().is_some_and(|o| o.woken) {
                drop(waiters);
                self.drop_waiter(key);
                return Poll::Ready(self.event(interest.mask()));
            }
        }
        let entry = Some(Other {
            interest,
            waker: cx.waker().clone(),
            woken: false,
        });
        match *key {
            Some(k) => waiters.others[k] = entry,
            None => {
                let k = match waiters.others.iter().position(Option::is_none) {
                    Some(k) => {
                        waiters.others[k] = entry;
                        k
                    }
                    None => {
                        waiters.others.push(entry);
                        waiters.others.len() - 1
                    }
                };
                *key = Some(k);
            }
        }
        let ev = self.event(interest.mask());
        if !ev.ready.is_empty() || ev.is_shutdown {
            if let Some(k) = key.take() {
                waiters.others[k] = None;
            }
            return Poll::Ready(ev);
        }
        Poll::Pending
    }

    /// Free a `poll_interest` slot (the waiting future completed or was
    /// dropped), so no waker is left behind.
    pub(crate) fn drop_waiter(&self, key: &mut Option<usize>) {
        if let Some(k) = key.take() {
            let mut waiters = lock(&self.waiters);
            waiters.others[k] = None;
            while matches!(waiters.others.last(), Some(None)) {
                waiters.others.pop();
            }
        }
    }

    /// Forget readiness the task observed in `event`, unless a newer event
    /// arrived since (see the module doc). Closed bits are never cleared:
    /// once a peer hung up, it stays hung up.
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        let clear = event.ready - Ready::READ_CLOSED - Ready::WRITE_CLOSED;
        let mut current = self.readiness.load(Ordering::Acquire);
        loop {
            let tick = ((current >> TICK_SHIFT) & TICK_MASK) as u16;
            if tick != event.tick {
                return;
            }
            let next = current & !clear.as_usize();
            match self.readiness.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn clear_with_stale_tick_keeps_new_readiness() {
        let io = ScheduledIo::new();
        io.set_readiness(Ready::READABLE, &mut Vec::new());
        let seen = io.ready_now(Interest::READABLE);
        assert!(seen.ready.is_readable());
        // An edge arrives while the task is reading.
        io.set_readiness(Ready::READABLE, &mut Vec::new());
        io.clear_readiness(seen);
        assert!(io.ready_now(Interest::READABLE).ready.is_readable());
        // With the current tick the clear takes effect.
        io.clear_readiness(io.ready_now(Interest::READABLE));
        assert!(io.ready_now(Interest::READABLE).ready.is_empty());
    }

    #[test]
    fn closed_bits_survive_a_clear() {
        let io = ScheduledIo::new();
        io.set_readiness(Ready::READABLE | Ready::READ_CLOSED, &mut Vec::new());
        io.clear_readiness(io.ready_now(Interest::READABLE));
        let ev = io.ready_now(Interest::READABLE);
        assert!(ev.ready.is_read_closed());
        assert!((ev.ready & Ready::READABLE).is_empty());
    }

    #[test]
    fn tick_wraps_without_touching_shutdown_or_bits() {
        let io = ScheduledIo::new();
        for _ in 0..(TICK_MASK + 5) {
            io.set_readiness(Ready::WRITABLE, &mut Vec::new());
        }
        let ev = io.ready_now(Interest::WRITABLE);
        assert!(ev.ready.is_writable());
        assert!(!ev.is_shutdown);
        assert_eq!(ev.tick as usize, 4);
    }
}
