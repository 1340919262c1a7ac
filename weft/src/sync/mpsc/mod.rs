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
//!   the `closed()` waiters kept in the crate-level `WaitList`
//!   (`sync/wait_list.rs`) and a bounded channel's free slots counted by a
//!   crate [`Semaphore`](crate::sync::Semaphore);
//! - `bounded.rs`: `channel` and its sending handles (`Sender`, `Permit`,
//!   `OwnedPermit`, `WeakSender`), with its unit tests and loom models in
//!   `bounded_tests.rs` and `bounded_loom_tests.rs`;
//! - `permit_iter.rs`: `Sender::reserve_many` / `try_reserve_many` and the
//!   `PermitIterator` they return;
//! - `receiver.rs`: `RxCore`, the receiving logic shared by both channels'
//!   receivers (with the receiver's private batch), and `channel`'s
//!   `Receiver`, which wraps it;
//! - `unbounded.rs`: `unbounded_channel`'s handles (its `UnboundedReceiver`
//!   wraps `RxCore` too), with its unit tests in `unbounded_tests.rs`;
//! - `error.rs`: the error types.
//!
//! # Invariants
//!
//! The queue is behind one mutex, held for a few instructions per operation,
//! and a bounded channel's capacity is a semaphore (as in Tokio, whose
//! bounded channel is its semaphore plus a lock-free list). The one `unsafe`
//! item is `Batch`'s `Sync` impl in `receiver.rs` (argued there: a shared
//! `&Batch` reaches only the batch's length, never a message).
//!
//! 1. **One lock for the queue.** The message queue, the receiver's waker,
//!    the `closed()` waiters and the closed flags live in `Chan::state`
//!    behind one `Mutex`. The atomics outside it are the strong sender
//!    count, the weak sender count (only reported, never acted on), a
//!    mirror of `rx_closed` read without the lock by `is_closed`,
//!    and the slot semaphore.
//! 2. **Capacity accounting** (bounded). While the receiver lives, the
//!    semaphore's permits plus the permits held (by `Permit`s and
//!    `PermitIterator`s, by senders between acquiring and pushing, or
//!    granted to waiting senders) plus the messages in the queue and in the
//!    receiver's batch equal `cap`. A slot
//!    is freed when its message is *received* (leaves the batch), not when
//!    it moves into the batch, so the bound holds for everything the
//!    channel buffers. Waiting senders are served in FIFO order and a free
//!    permit exists only while nobody waits (the semaphore's invariants),
//!    so a `try_send` cannot overtake a waiting `send`.
//! 3. **The receiver's batch.** When its batch is empty, the receiver moves
//!    the whole queue into it in one lock (a swap of two `VecDeque`s, which
//!    keeps both allocations), then receives from the batch without
//!    locking. Senders therefore contend with the receiver once per batch,
//!    not once per message; this is what makes a full channel with several
//!    producers fast (`sync_mpsc_bounded_full` in BENCHMARKS.md). The batch
//!    is older than the queue, so order is kept.
//! 4. **Terminal flags.** `rx_closed` (set by `close` or the receiver's drop)
//!    and `tx_closed` (set by the last strong sender's drop, after the count
//!    reached zero, which is final: `upgrade` only increments a non-zero
//!    count) are never cleared. Closing closes the semaphore, which fails
//!    every waiting sender and admits no new one; senders already granted a
//!    slot keep it.
//! 5. **Nothing runs under the lock.** No waker is woken or dropped and no
//!    message is dropped while the lock is held: they are moved out and
//!    handled after unlocking, since either can run arbitrary code (a
//!    message's destructor may drop a `Sender` of this very channel; a
//!    waker's `Drop` may send on it). This is the crate-wide rule of
//!    `sync/mod.rs` ("Wakers and locks"); the slot semaphore keeps it too.
//! 6. **Receiver drop.** Dropping the receiver drops its batch and the queue.
//!    A message sent after that into a slot granted before it is queued
//!    all the same, as Tokio does: it stays (its slot counted as taken by
//!    `capacity`) until the channel itself is freed with its last handle.
//!    At most the slots granted before the drop can be filled so.
//! 7. **No lost wakeup.** The receiver registers its waker under the lock
//!    after finding the queue empty and the channel not finished; every
//!    change that could make it ready (a push, the last sender's drop, an
//!    unused permit's drop or a cancelled `send`/`reserve` giving back its
//!    granted slot after `close`) takes that waker under the lock after
//!    making the change. The semaphore gives the same guarantee to
//!    waiting senders.

mod bounded;
mod chan;
pub mod error;
mod permit_iter;
mod receiver;
mod send_timeout;
mod unbounded;

pub use self::bounded::{channel, OwnedPermit, Permit, Sender, WeakSender};
pub use self::permit_iter::PermitIterator;
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
