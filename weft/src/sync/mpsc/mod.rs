//! A multi-producer, single-consumer queue for sending values between
//! asynchronous tasks.
//!
//! [`channel`] creates a bounded channel: a [`Sender`] waits when the buffer
//! holds `buffer` messages, which gives back-pressure. [`unbounded_channel`]
//! creates an unbounded one: [`UnboundedSender::send`] never waits (and the
//! buffer can grow without limit). Senders can be cloned to send from many
//! tasks; there is one receiver ([`Receiver`] / [`UnboundedReceiver`]).
//!
//! The channel closes when every sender is dropped: the receiver then gets the
//! buffered messages and after them `None`. It also closes when the receiver
//! calls `close` (sends fail, buffered messages can still be received) or is
//! dropped (sends fail, buffered messages are dropped).
//!
//! Blocking code can use [`Sender::blocking_send`] and
//! [`Receiver::blocking_recv`] (and the unbounded equivalents), from threads
//! outside the runtime.
//!
//! Every `send`, `reserve` and `recv` spends one unit of the task's
//! cooperative budget when it completes, so a task that always finds the
//! channel ready still yields to the other tasks on its worker.
//!
//! `Sender::send_timeout` (Tokio's) is not provided yet: it arrives with
//! `weft::time`.
//!
//! # Examples
//!
//! ```
//! use weft::sync::mpsc;
//!
//! weft::runtime::Runtime::new().unwrap().block_on(async {
//!     let (tx, mut rx) = mpsc::channel(100);
//!
//!     weft::spawn(async move {
//!         for i in 0..10 {
//!             if tx.send(i).await.is_err() {
//!                 println!("receiver dropped");
//!                 return;
//!             }
//!         }
//!     });
//!
//!     let mut got = Vec::new();
//!     while let Some(i) = rx.recv().await {
//!         got.push(i);
//!     }
//!     assert_eq!(got, (0..10).collect::<Vec<_>>());
//! });
//! ```
//!
//! # What this folder owns
//!
//! - `chan.rs`: the shared state (`Chan`) and every operation on it, with
//!   the parked senders and `closed()` waiters kept in the crate-level
//!   `WaitList` (`sync/wait_list.rs`);
//! - `bounded.rs`: `channel` and its sending handles (`Sender`, `Permit`,
//!   `OwnedPermit`, `WeakSender`);
//! - `receiver.rs`: `RxCore`, the receiving logic shared by both channels'
//!   receivers, and `channel`'s `Receiver`, which wraps it;
//! - `unbounded.rs`: `unbounded_channel`'s handles (its `UnboundedReceiver`
//!   wraps `RxCore` too);
//! - `error.rs`: the error types.
//!
//! # Invariants
//!
//! There is no `unsafe` code here: the design is one mutex around the whole
//! state, held for a few instructions per operation.
//!
//! 1. **One lock.** Everything mutable (the message queue, the receiver's
//!    waker, the capacity counters, the waiter lists, the closed flags) lives
//!    in `Chan::state` behind one `Mutex`. The only atomics are the strong
//!    sender count and a mirror of `rx_closed`, read without the lock by
//!    `is_closed`.
//! 2. **Capacity accounting** (bounded). While the receiver lives,
//!    `permits + reserved + queue.len() == cap`: each slot is free, held by a
//!    permit (or granted to a waiting sender), or holds a message. A message
//!    is received → its slot is released; a permit is used → its slot holds a
//!    message; a permit is dropped → its slot is released.
//! 3. **FIFO hand-off.** A released slot goes to the oldest waiting sender
//!    (marked granted, counted in `reserved`) before it becomes a free
//!    permit, so `permits > 0` implies no sender is waiting, and a `try_send`
//!    cannot overtake a waiting `send`.
//! 4. **Terminal flags.** `rx_closed` (set by `close` or the receiver's drop)
//!    and `tx_closed` (set by the last strong sender's drop, after the count
//!    reached zero, which is final: `upgrade` only increments a non-zero
//!    count) are never cleared. Closing fails every waiting sender and
//!    admits no new one; senders already granted a slot keep it unless the
//!    receiver is dropped.
//! 5. **Nothing runs under the lock.** No waker is woken or dropped and no
//!    message is dropped while the lock is held: they are moved out and
//!    handled after unlocking, since either can run arbitrary code (a
//!    message's destructor may drop a `Sender` of this very channel).
//! 6. **Receiver drop.** Dropping the receiver empties the queue (dropping
//!    the messages) and from then on a message sent into an already-granted
//!    slot is dropped at once instead of being queued.
//! 7. **No lost wakeup.** The receiver registers its waker under the lock
//!    after finding the queue empty and the channel not finished; every
//!    change that could make it ready (a push, the last sender's drop, the
//!    last permit's drop after `close`) happens under the lock and takes
//!    that waker. Likewise for senders and their slots in the wait list.

mod bounded;
mod chan;
pub mod error;
mod receiver;
mod send_timeout;
mod unbounded;

pub use self::bounded::{channel, OwnedPermit, Permit, Sender, WeakSender};
pub use self::receiver::Receiver;
pub use self::unbounded::{
    unbounded_channel, UnboundedReceiver, UnboundedSender, WeakUnboundedSender,
};

/// Wakers, drop counters and a budget helper shared by the unit tests of
/// `weft::sync` (this folder's, and `oneshot`'s, `Notify`'s and
/// `Semaphore`'s).
#[cfg(all(test, not(loom)))]
pub(in crate::sync) mod test_support {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    /// Counts wakes.
    #[derive(Default)]
    pub(in crate::sync) struct CountWaker(AtomicUsize);

    impl Wake for CountWaker {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl CountWaker {
        pub(in crate::sync) fn new() -> (Arc<CountWaker>, Waker) {
            let c = Arc::new(CountWaker::default());
            (c.clone(), Waker::from(c))
        }

        pub(in crate::sync) fn count(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// Counts its own drops.
    pub(in crate::sync) struct DropCount(pub(in crate::sync) Arc<AtomicUsize>);

    impl Drop for DropCount {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    pub(in crate::sync) fn drop_counter() -> Arc<AtomicUsize> {
        Arc::new(AtomicUsize::new(0))
    }

    /// Spends the whole cooperative budget of the current
    /// `crate::coop::budget` scope, so the next budgeted poll yields.
    pub(in crate::sync) fn exhaust_budget(cx: &mut Context<'_>) {
        for _ in 0..crate::coop::INITIAL_BUDGET {
            match crate::coop::poll_proceed(cx) {
                Poll::Ready(guard) => guard.made_progress(),
                Poll::Pending => panic!("budget ran out early"),
            }
        }
    }
}
