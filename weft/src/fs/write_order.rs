//! The order between a `File`'s background writes and the filesystem
//! calls made after them.
//!
//! A `File::write` returns once its bytes are in the file's buffer; the
//! write itself runs later, in the background. Tokio's starts at once on a
//! blocking thread, so a call made after it (`fs::read` of the same path, a
//! new `File::open`, a `rename`) practically always sees it, and programs
//! rely on that without a `flush`. weft's ring takes the write at the
//! worker's next batch point, and the kernel may pass a buffered write to
//! its own workers while a later read completes at once, so such a call
//! saw the old contents almost every time (98 times in 100 on this
//! machine; Tokio's blocking pool 1 to 5). Here every path call and every
//! open first waits for the background writes begun before it on its
//! runtime: the write a program made is always seen.
//!
//! Only a regular file's writes take part (`fs::File` asks on its first
//! write): a pipe's, a FIFO's or a terminal's may wait for a reader for
//! ever, and the reader's own path calls would then wait for it (Tokio's
//! do not).
//!
//! There is one order per runtime (its driver holds it): a path call waits
//! for the writes begun on its own runtime. A process-wide order made a
//! write on a runtime nobody drives (a current_thread runtime outside its
//! `block_on`, whose ring's completions wait for it) hold up every
//! runtime's file calls for ever (found in review). A write through one
//! runtime and a read through another are not ordered (on Tokio they race
//! too).
//!
//! Owns: the set of background writes in flight ([`WriteOrder`]), their
//! tickets ([`WriteTicket`]), and the wait ([`WriteOrder::poll_after`]).
//!
//! Invariants:
//! - A write is in the set from [`WriteOrder::begin`] (before the
//!   `File::write` that accepted it returns) until its ticket is released:
//!   when the write ends (its blocking job returns; the ring's first
//!   completion wakes the ticket, which is the waker the ring holds: a
//!   short write continued after it is not waited for) or, at the
//!   latest, when the last reference to the ticket goes (a runtime shut
//!   down before the job ran, a ring op left detached). So a wait never
//!   outlives the writes it waits for; at worst it ends early.
//! - `in_flight` mirrors the set's size; it is raised and lowered under
//!   the lock. A wait that reads 0 has no earlier write to wait for: the
//!   `begin` of a write the waiting task made (or learned of) happens
//!   before the wait.
//! - A waiter's bound is the sequence number the next write would get when
//!   it first looked: it waits for every write below it and none above, so
//!   writes begun later cannot hold it up for ever. It is woken (after the
//!   lock is let go) once the oldest write in flight is at or past it.

use crate::loom::{lock, Arc, AtomicBool, AtomicUsize, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::task::{Poll, Wake, Waker};

/// The background writes in flight, and the calls waiting for them.
pub(crate) struct WriteOrder {
    in_flight: AtomicUsize,
    state: Mutex<State>,
}

struct State {
    /// The sequence number of the next write.
    next: u64,
    /// The writes begun and not yet known to be over, oldest first (so in
    /// sequence order): `(seq, ended)`. Ended ones leave from the front,
    /// so the front is the oldest write in flight. A deque, not a set: it
    /// keeps its room, so a write costs no allocation here.
    writes: VecDeque<(u64, bool)>,
    /// Calls waiting, with their bounds.
    waiters: Vec<(u64, Waker)>,
}

impl State {
    /// The oldest write in flight.
    fn oldest(&self) -> Option<u64> {
        self.writes.front().map(|&(seq, _)| seq)
    }
}

/// The current runtime's order (`None` outside a runtime).
fn current() -> Option<Arc<WriteOrder>> {
    crate::runtime::context::with_current(|h| Arc::clone(h.driver().write_order()))
}

/// A background write begins, in the current runtime's order (`None`
/// outside a runtime, where nothing can wait for it).
pub(crate) fn begin_write() -> Option<WriteTicket> {
    current().map(|order| WriteOrder::begin(&order))
}

/// Wait until every background write begun on this runtime before this
/// call has ended.
pub(crate) async fn after_earlier_writes() {
    let Some(order) = current() else {
        return;
    };
    let mut bound = None;
    std::future::poll_fn(|cx| order.poll_after(&mut bound, cx.waker())).await;
}

impl WriteOrder {
    pub(crate) fn new() -> WriteOrder {
        WriteOrder {
            in_flight: AtomicUsize::new(0),
            state: Mutex::new(State {
                next: 0,
                writes: VecDeque::new(),
                waiters: Vec::new(),
            }),
        }
    }

    /// A write begins: it is in the set until its ticket is released.
    pub(crate) fn begin(order: &Arc<WriteOrder>) -> WriteTicket {
        let mut state = lock(&order.state);
        let seq = state.next;
        state.next += 1;
        state.writes.push_back((seq, false));
        order.in_flight.fetch_add(1, Ordering::SeqCst);
        drop(state);
        // A std `Arc` even under loom: it is a `Waker`'s.
        WriteTicket(std::sync::Arc::new(Ticket {
            order: Arc::clone(order),
            seq,
            released: AtomicBool::new(false),
            task: Mutex::new(None),
        }))
    }

    /// Ready once every write begun before the first poll (which sets
    /// `bound`) has ended; else `waker` is woken when they have.
    pub(crate) fn poll_after(&self, bound: &mut Option<u64>, waker: &Waker) -> Poll<()> {
        if bound.is_none() && self.in_flight.load(Ordering::SeqCst) == 0 {
            return Poll::Ready(());
        }
        let mut state = lock(&self.state);
        let bound = *bound.get_or_insert(state.next);
        if state.oldest().is_none_or(|oldest| oldest >= bound) {
            return Poll::Ready(());
        }
        match state
            .waiters
            .iter_mut()
            .find(|(b, w)| *b == bound && w.will_wake(waker))
        {
            Some(_) => {}
            None => state.waiters.push((bound, waker.clone())),
        }
        Poll::Pending
    }

    fn release(&self, seq: u64) {
        let mut state = lock(&self.state);
        let Ok(at) = state.writes.binary_search_by_key(&seq, |&(s, _)| s) else {
            return;
        };
        if std::mem::replace(&mut state.writes[at].1, true) {
            return;
        }
        while state.writes.front().is_some_and(|&(_, ended)| ended) {
            state.writes.pop_front();
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let oldest = state.oldest().unwrap_or(u64::MAX);
        let mut ready = Vec::new();
        state.waiters.retain(|(bound, waker)| {
            if *bound <= oldest {
                ready.push(waker.clone());
                false
            } else {
                true
            }
        });
        drop(state);
        for waker in ready {
            waker.wake();
        }
    }
}

/// One background write's place in the order. Released when the write
/// ends ([`WriteTicket::release`], or a wake of [`WriteTicket::waker`]) or
/// when the last clone of it goes, whichever is first.
#[derive(Clone)]
pub(crate) struct WriteTicket(std::sync::Arc<Ticket>);

struct Ticket {
    order: Arc<WriteOrder>,
    seq: u64,
    released: AtomicBool,
    /// The task that waits on the write itself, woken with the release.
    task: Mutex<Option<Waker>>,
}

impl WriteTicket {
    /// The write has ended.
    pub(crate) fn release(&self) {
        self.0.release();
    }

    /// A waker that releases the ticket and wakes the task last given to
    /// [`WriteTicket::set_task`]: what a ring holds for the write, so its
    /// completion releases the ticket whoever polls the write, if anyone.
    pub(crate) fn waker(&self) -> Waker {
        Waker::from(std::sync::Arc::clone(&self.0))
    }

    /// The task to wake when the write ends.
    pub(crate) fn set_task(&self, waker: &Waker) {
        let mut task = lock(&self.0.task);
        if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
            *task = Some(waker.clone());
        }
    }
}

impl Ticket {
    fn release(&self) {
        if !self.released.swap(true, Ordering::SeqCst) {
            self.order.release(self.seq);
        }
    }
}

impl Wake for Ticket {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.release();
        let task = lock(&self.task).take();
        if let Some(task) = task {
            task.wake();
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdAtomicUsize;

    /// Counts its wakes.
    struct Count(StdAtomicUsize);
    impl Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (std::sync::Arc<Count>, Waker) {
        let c = std::sync::Arc::new(Count(StdAtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    #[test]
    fn a_wait_ends_when_the_writes_before_it_end_and_not_for_later_ones() {
        let order = Arc::new(WriteOrder::new());
        let first = WriteOrder::begin(&order);
        let second = WriteOrder::begin(&order);
        let (count, waker) = counter();
        let mut bound = None;
        assert!(order.poll_after(&mut bound, &waker).is_pending());
        let third = WriteOrder::begin(&order);
        second.release();
        assert_eq!(count.0.load(Ordering::SeqCst), 0, "the first is still out");
        assert!(order.poll_after(&mut bound, &waker).is_pending());
        // Woken by the ring's completion: the ticket's waker.
        first.waker().wake();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(
            order.poll_after(&mut bound, &waker).is_ready(),
            "the third began after the wait"
        );
        drop(third);
        assert_eq!(order.in_flight.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_ticket_whose_last_clone_goes_is_released_and_its_task_woken_once() {
        let order = Arc::new(WriteOrder::new());
        let ticket = WriteOrder::begin(&order);
        let (task, task_waker) = counter();
        ticket.set_task(&task_waker);
        let ring_waker = ticket.waker();
        drop(ticket);
        assert_eq!(
            order.in_flight.load(Ordering::SeqCst),
            1,
            "the ring holds it"
        );
        ring_waker.wake_by_ref();
        assert_eq!(order.in_flight.load(Ordering::SeqCst), 0);
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        drop(ring_waker);
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "released once");
        let dropped = WriteOrder::begin(&order);
        drop(dropped);
        let mut bound = None;
        let (_, waker) = counter();
        assert!(order.poll_after(&mut bound, &waker).is_ready());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    /// A wait that starts after a write began on another thread ends only
    /// after that write's release, and is then woken (no lost wake-up).
    #[test]
    fn a_wait_ends_after_the_write_it_saw_and_is_woken() {
        loom::model(|| {
            let order = Arc::new(WriteOrder::new());
            let ticket = WriteOrder::begin(&order);
            let ended = Arc::new(AtomicBool::new(false));
            let writer = {
                let ended = ended.clone();
                loom::thread::spawn(move || {
                    ended.store(true, Ordering::SeqCst);
                    ticket.release();
                })
            };
            let woken = std::sync::Arc::new(Flag(AtomicBool::new(false)));
            let waker = Waker::from(woken.clone());
            let mut bound = None;
            loop {
                woken.0.store(false, Ordering::SeqCst);
                if order.poll_after(&mut bound, &waker).is_ready() {
                    break;
                }
                // Pending: a wake must come (or have come).
                while !woken.0.load(Ordering::SeqCst) {
                    loom::thread::yield_now();
                }
            }
            assert!(
                ended.load(Ordering::SeqCst),
                "the wait ended before the write"
            );
            writer.join().unwrap();
        });
    }

    struct Flag(AtomicBool);
    impl Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}
