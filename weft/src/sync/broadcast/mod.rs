//! A multi-producer, multi-consumer channel where every receiver sees every
//! value.
//!
//! Create one with [`channel`]. Each value sent through a [`Sender`] is
//! delivered to every [`Receiver`] that existed when it was sent, in order.
//! The channel holds at most `capacity` values (rounded up to a power of
//! two); sending never waits. When a receiver falls behind by more than
//! that, the oldest values are overwritten: the receiver's next `recv`
//! returns [`RecvError::Lagged`] with the number of values it missed, and
//! after that it continues with the oldest value still held.
//!
//! # What this file owns
//!
//! The whole broadcast channel: the ring buffer of slots, the tail (write
//! position, receiver count, closed flag, waiting receivers), the lag
//! accounting, the sender handles and their error types. The waker storage
//! itself is `WakerSet` (`waker_set.rs`); `Receiver`'s methods are in
//! `receiver.rs`, and `WeakSender` with the handle counts in
//! `weak_sender.rs`.
//!
//! # Protocol
//!
//! Positions are `u64` message numbers; message `pos` lives in slot
//! `pos & mask`. The invariants below are what the code relies on; there is
//! no `unsafe` code in this file.
//!
//! 1. **Lock order.** `tail` is taken before any slot lock, never after one,
//!    and at most one slot lock is held at a time. Wakers are woken and
//!    dropped, and values dropped, after unlocking (`sync/mod.rs`, "Wakers
//!    and locks"): a waker replaced by a new `recv` poll or given back by a
//!    cancelled `recv` is moved out of `tail` and dropped after it, so its
//!    `Drop` may send on this channel.
//! 2. **Sending.** A send writes its slot (`pos`, `rem`, `val`) under the
//!    slot's lock while holding `tail`, then advances `tail.pos` and
//!    wakes the waiters, still under `tail`. So under `tail` every position
//!    below `tail.pos` has been written, and a slot holds either the newest
//!    message sent to it or (before the first lap) an initial `pos` that no
//!    receiver will ask for.
//! 3. **No lost wakeup.** A receiver that finds nothing new registers its
//!    waker under `tail`, after seeing `next == tail.pos` there; a send
//!    advances `tail.pos` and drains the waiters under the same lock.
//! 4. **Counting readers.** A receiver is counted (`tail.rx_cnt`) from the
//!    moment it takes `next = tail.pos` under `tail`, so every message at or
//!    after its `next` was sent with it included in the slot's `rem`. It
//!    decrements `rem` exactly once per such message: by reading it, or in
//!    its `Drop` if it never read it. Messages it skipped as `Lagged` were
//!    overwritten, and their `rem` went with them.
//! 5. **Dropping values.** A value is dropped exactly once: by the receiver
//!    whose decrement brought `rem` to zero (it re-checks under the slot
//!    lock that the slot still holds that message), by the send that
//!    overwrites it, or with the buffer when the channel is freed.
//! 6. **A panicking `Clone`.** A receiver advances its position and
//!    releases its claim on a message whether or not cloning the value
//!    returns: if `clone` panics, the panic propagates out of `recv` /
//!    `try_recv`, and the next call gets the next message instead of
//!    retrying that one forever. The slot's lock is held while cloning; a
//!    panic there poisons it, and `loom::lock` ignores poisoning.
//! 8. **Slots are mutexes, not read-write locks**, as in Tokio: receivers
//!    clone a value one at a time, so `T` need not be `Sync` (only `Send`)
//!    for `Sender` and `Receiver` to be `Send` and `Sync`. With a read-write
//!    lock, receivers on two threads could clone the same value at once,
//!    which is only sound for `Sync` values, and Tokio programs that move a
//!    receiver of a `!Sync` type into a task (tokio-stream's
//!    `BroadcastStream` does) would not compile.
//! 7. **Strong senders.** `num_tx` counts `Sender`s. It rises only by a
//!    clone of a live sender or by `WeakSender::upgrade`'s compare-and-swap
//!    from a non-zero value, so once it reaches zero it stays there; the
//!    drop that brings it to zero sets `tail.closed` under `tail`. So
//!    `upgrade` fails exactly when the channel is closed for good.
//!    `num_weak_tx` counts `WeakSender`s and is only reported, never acted
//!    on.
//! 8. **Waiting for no receivers.** `Sender::closed` checks `rx_cnt` and
//!    registers its waker in `tail.tx_waiters` under `tail`; the receiver
//!    drop that brings `rx_cnt` to zero drains `tx_waiters` under the same
//!    lock, so as in 3 no wakeup is lost.

use std::fmt;
use std::future::poll_fn;
use std::task::{ready, Context, Poll, Waker};

use super::waker_set::{wake_all, WakerSet};
use crate::loom::{self, Arc, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Error types for the broadcast channel.
pub mod error;
mod receiver;
mod weak_sender;

pub use weak_sender::WeakSender;

use self::error::{RecvError, SendError, TryRecvError};

/// The allocation shared by all senders and receivers.
struct Shared<T> {
    /// The ring buffer; its length is a power of two.
    buffer: Box<[Mutex<Slot<T>>]>,
    /// `buffer.len() - 1`.
    mask: usize,
    /// Write position and bookkeeping (invariants 2-4).
    tail: Mutex<Tail>,
    /// Number of live senders (invariant 7).
    num_tx: AtomicUsize,
    /// Number of live weak senders; only reported (invariant 7).
    num_weak_tx: AtomicUsize,
}

struct Tail {
    /// Position of the next message to send.
    pos: u64,
    /// Number of live receivers (invariant 4).
    rx_cnt: usize,
    /// Set when the last sender is dropped.
    closed: bool,
    /// Receivers waiting in `recv` (invariant 3).
    waiters: WakerSet,
    /// Senders waiting in `closed` for `rx_cnt` to reach zero (invariant 8).
    tx_waiters: WakerSet,
}

struct Slot<T> {
    /// Receivers that have yet to read or drop this message (invariant 4).
    rem: AtomicUsize,
    /// Position of the message held here.
    pos: u64,
    /// The message; `None` once every counted receiver is done with it.
    val: Option<T>,
}

/// Receivers beyond this would overflow the counts.
const MAX_RECEIVERS: usize = usize::MAX >> 2;

impl<T> Shared<T> {
    fn len(&self) -> u64 {
        self.buffer.len() as u64
    }

    fn slot(&self, pos: u64) -> &Mutex<Slot<T>> {
        &self.buffer[(pos as usize) & self.mask]
    }

    /// Adds a receiver; returns its first position (invariant 4).
    fn add_receiver(&self) -> u64 {
        let mut tail = loom::lock(&self.tail);
        assert!(tail.rx_cnt < MAX_RECEIVERS, "broadcast: too many receivers");
        tail.rx_cnt += 1;
        tail.pos
    }

    /// This receiver is done with the message at `pos`, which `slot` holds:
    /// decrement `rem`, and drop the value if it was the last one
    /// (invariant 5).
    fn release(&self, slot: MutexGuard<'_, Slot<T>>) {
        let pos = slot.pos;
        let last = slot.rem.fetch_sub(1, Ordering::AcqRel) == 1;
        drop(slot);
        if last {
            let mut slot = loom::lock(self.slot(pos));
            // A send may have overwritten the slot since we unlocked it; it
            // then dropped the value itself.
            let val = if slot.pos == pos && slot.rem.load(Ordering::Acquire) == 0 {
                slot.val.take()
            } else {
                None
            };
            drop(slot);
            drop(val);
        }
    }

    /// Receives the message at `*next`, advancing `*next`. With `waiter`,
    /// registers it when there is nothing new (invariant 3).
    fn recv_ref(
        &self,
        next: &mut u64,
        waiter: Option<(&mut Option<usize>, &Waker)>,
    ) -> Result<T, TryRecvError>
    where
        T: Clone,
    {
        let mut slot = loom::lock(self.slot(*next));
        if slot.pos != *next {
            // Nothing new, or overwritten: decide under `tail` (invariant 2).
            drop(slot);
            let mut tail = loom::lock(&self.tail);
            slot = loom::lock(self.slot(*next));
            if slot.pos != *next {
                drop(slot);
                if *next == tail.pos {
                    if tail.closed {
                        return Err(TryRecvError::Closed);
                    }
                    if let Some((key, waker)) = waiter {
                        let replaced = tail.waiters.register(key, waker);
                        // Invariant 1: the replaced waker goes after unlocking.
                        drop(tail);
                        drop(replaced);
                    }
                    return Err(TryRecvError::Empty);
                }
                // Position `*next` was sent and since overwritten: every
                // message before `tail.pos - len` is gone (invariant 2).
                let oldest = tail.pos - self.len();
                let missed = oldest - *next;
                *next = oldest;
                return Err(TryRecvError::Lagged(missed));
            }
            drop(tail);
        }
        // Invariant 6: past the message before cloning it, and released
        // even if the clone panics.
        *next += 1;
        let slot = Released {
            shared: self,
            slot: Some(slot),
        };
        let value = slot
            .slot
            .as_ref()
            .and_then(|slot| slot.val.clone())
            .expect("broadcast: a receiver counted in a message found it dropped");
        Ok(value)
    }
}

/// A locked slot holding the message a receiver is reading; dropping
/// it releases the receiver's claim (`Shared::release`), also on unwind.
struct Released<'a, T> {
    shared: &'a Shared<T>,
    slot: Option<MutexGuard<'a, Slot<T>>>,
}

impl<T> Drop for Released<'_, T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.shared.release(slot);
        }
    }
}

impl<T> Shared<T> {
    /// One poll of `recv`.
    fn poll_recv(
        &self,
        next: &mut u64,
        waiter: &mut RecvWaiter<'_, T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, RecvError>>
    where
        T: Clone,
    {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = match self.recv_ref(next, Some((&mut waiter.key, cx.waker()))) {
            Ok(value) => Ok(value),
            Err(TryRecvError::Empty) => return Poll::Pending,
            Err(TryRecvError::Closed) => Err(RecvError::Closed),
            Err(TryRecvError::Lagged(n)) => Err(RecvError::Lagged(n)),
        };
        coop.made_progress();
        Poll::Ready(res)
    }
}

/// One pending `recv`: gives its waiter key back when dropped.
struct RecvWaiter<'a, T> {
    shared: &'a Shared<T>,
    key: Option<usize>,
}

impl<T> Drop for RecvWaiter<'_, T> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Invariant 1: the statement's temporary guard is gone before
            // the waker is dropped.
            let waker = loom::lock(&self.shared.tail).waiters.remove(key);
            drop(waker);
        }
    }
}

/// Creates a broadcast channel that holds up to `capacity` values, returning
/// the first sender and receiver.
///
/// `capacity` is rounded up to the next power of two. More receivers come
/// from [`Sender::subscribe`] (and [`Receiver::resubscribe`]), more senders
/// from cloning the sender.
///
/// # Panics
///
/// Panics if `capacity` is zero or greater than `usize::MAX / 2`.
///
/// # Examples
///
/// ```
/// use weft::sync::broadcast;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let (tx, mut rx1) = broadcast::channel(16);
///     let mut rx2 = tx.subscribe();
///
///     let a = weft::spawn(async move {
///         assert_eq!(rx1.recv().await.unwrap(), 10);
///         assert_eq!(rx1.recv().await.unwrap(), 20);
///     });
///     let b = weft::spawn(async move {
///         assert_eq!(rx2.recv().await.unwrap(), 10);
///         assert_eq!(rx2.recv().await.unwrap(), 20);
///     });
///
///     tx.send(10).unwrap();
///     tx.send(20).unwrap();
///     a.await.unwrap();
///     b.await.unwrap();
/// });
/// ```
#[track_caller]
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    new_channel(capacity)
}

/// [`channel`] for any `T`: only receiving needs `T: Clone`, so a
/// [`Sender::new`] of a type that is not `Clone` is allowed, as in Tokio.
#[track_caller]
fn new_channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "broadcast channel capacity cannot be zero");
    assert!(
        capacity <= usize::MAX >> 1,
        "broadcast channel capacity exceeded `usize::MAX / 2`"
    );
    let len = capacity.next_power_of_two();
    let buffer = (0..len)
        .map(|i| {
            Mutex::new(Slot {
                rem: AtomicUsize::new(0),
                // One lap behind: no receiver asks for this position
                // (invariant 2).
                pos: (i as u64).wrapping_sub(len as u64),
                val: None,
            })
        })
        .collect();
    let shared = Arc::new(Shared {
        buffer,
        mask: len - 1,
        tail: Mutex::new(Tail {
            pos: 0,
            rx_cnt: 1,
            closed: false,
            waiters: WakerSet::new(),
            tx_waiters: WakerSet::new(),
        }),
        num_tx: AtomicUsize::new(1),
        num_weak_tx: AtomicUsize::new(0),
    });
    let tx = Sender {
        shared: shared.clone(),
    };
    let rx = Receiver { shared, next: 0 };
    (tx, rx)
}

/// Sends values to every [`Receiver`] of the channel.
///
/// Created by [`channel`]; clone it for more senders. The channel closes
/// when the last sender is dropped: receivers then get the values still
/// held, followed by [`RecvError::Closed`].
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// Receives every value sent on the channel after it was created.
///
/// Created by [`channel`], [`Sender::subscribe`] or
/// [`Receiver::resubscribe`]. A receiver sees only values sent after it was
/// created. Dropping a receiver that has not received some values releases
/// its claim on them, so they are freed once the other receivers are done.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// Position of the next message to receive (invariant 4).
    next: u64,
}

impl<T> Sender<T> {
    /// A sender with no receiver yet; make receivers with
    /// [`Sender::subscribe`]. (Tokio's `broadcast::Sender::new`.)
    ///
    /// # Panics
    /// As [`channel`]: a capacity of zero, or above `usize::MAX / 2`.
    ///
    /// ```
    /// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tx = weft::sync::broadcast::Sender::new(4);
    /// let mut rx = tx.subscribe();
    /// tx.send(7).unwrap();
    /// assert_eq!(rx.recv().await.unwrap(), 7);
    /// # });
    /// ```
    #[track_caller]
    pub fn new(capacity: usize) -> Sender<T> {
        new_channel(capacity).0
    }
}

impl<T> Sender<T> {
    /// Sends a value to every current receiver.
    ///
    /// Returns the number of receivers the value was sent to. Sending never
    /// waits: when the channel is full, the oldest value is overwritten, and
    /// receivers that had not received it will get [`RecvError::Lagged`].
    /// An `Ok` does not mean any receiver will actually receive the value:
    /// receivers may be dropped, or fall behind, first.
    ///
    /// # Errors
    ///
    /// Returns the value in a [`SendError`] if there are no receivers.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, rx1) = broadcast::channel(4);
    /// let rx2 = tx.subscribe();
    /// assert_eq!(tx.send(1).unwrap(), 2);
    /// drop((rx1, rx2));
    /// assert_eq!(tx.send(2).unwrap_err().0, 2);
    /// ```
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        let shared = &*self.shared;
        let mut tail = loom::lock(&shared.tail);
        if tail.rx_cnt == 0 {
            return Err(SendError(value));
        }
        let pos = tail.pos;
        let rem = tail.rx_cnt;
        let old = {
            let mut slot = loom::lock(shared.slot(pos));
            slot.pos = pos;
            slot.rem.store(rem, Ordering::Release);
            slot.val.replace(value)
        };
        // Invariant 2: advance and wake under `tail`, after the slot write.
        tail.pos = pos + 1;
        let wakers = tail.waiters.take_all();
        drop(tail);
        wake_all(wakers);
        // Invariant 5: an overwritten value is dropped by the send.
        drop(old);
        Ok(rem)
    }

    /// Creates a new receiver that gets every value sent after this call.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, _rx) = broadcast::channel(16);
    ///     tx.send(1).unwrap();
    ///
    ///     let mut rx2 = tx.subscribe();
    ///     tx.send(2).unwrap();
    ///     assert_eq!(rx2.recv().await.unwrap(), 2);
    /// });
    /// ```
    pub fn subscribe(&self) -> Receiver<T> {
        let next = self.shared.add_receiver();
        Receiver {
            shared: self.shared.clone(),
            next,
        }
    }

    /// Returns the number of values still queued: sent, and not yet
    /// received (or dropped) by every receiver that existed when they were
    /// sent, nor overwritten.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx1) = broadcast::channel(16);
    /// let mut rx2 = tx.subscribe();
    /// tx.send(10).unwrap();
    /// tx.send(20).unwrap();
    /// assert_eq!(tx.len(), 2);
    /// rx1.try_recv().unwrap();
    /// assert_eq!(tx.len(), 2);
    /// rx2.try_recv().unwrap();
    /// assert_eq!(tx.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        let shared = &*self.shared;
        let tail = loom::lock(&shared.tail);
        // Oldest to newest, the slots' `rem` is zero and then non-zero
        // (receivers read in order; invariant 4), so binary-search for the
        // first queued one.
        let base = tail.pos;
        let (mut low, mut high) = (0u64, shared.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let queued = loom::lock(shared.slot(base.wrapping_add(mid)))
                .rem
                .load(Ordering::Acquire)
                != 0;
            if queued {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        (shared.len() - low) as usize
    }

    /// Returns `true` if no value is queued (see [`len`](Sender::len)).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx) = broadcast::channel(16);
    /// assert!(tx.is_empty());
    /// tx.send(1).unwrap();
    /// assert!(!tx.is_empty());
    /// rx.try_recv().unwrap();
    /// assert!(tx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        let shared = &*self.shared;
        let tail = loom::lock(&shared.tail);
        // The newest message is the last one any receiver finishes.
        let newest = loom::lock(shared.slot(tail.pos.wrapping_sub(1)));
        newest.rem.load(Ordering::Acquire) == 0
    }

    /// Returns the number of receivers that currently exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx1) = broadcast::channel::<()>(16);
    /// assert_eq!(tx.receiver_count(), 1);
    /// let _rx2 = tx.subscribe();
    /// assert_eq!(tx.receiver_count(), 2);
    /// ```
    pub fn receiver_count(&self) -> usize {
        loom::lock(&self.shared.tail).rx_cnt
    }

    /// Returns `true` if both senders belong to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, _rx) = broadcast::channel::<()>(16);
    /// let tx2 = tx.clone();
    /// assert!(tx.same_channel(&tx2));
    /// let (tx3, _rx3) = broadcast::channel::<()>(16);
    /// assert!(!tx3.same_channel(&tx2));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Waits until no receiver is subscribed; resolves at once if there is
    /// none now. A later [`subscribe`](Sender::subscribe) opens the channel
    /// to receivers again, but does not undo a `closed` that resolved.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, rx) = broadcast::channel::<u32>(16);
    ///     let rx2 = tx.subscribe();
    ///     weft::spawn(async move { drop((rx, rx2)) });
    ///     tx.closed().await;
    ///     assert_eq!(tx.receiver_count(), 0);
    /// });
    /// ```
    pub async fn closed(&self) {
        let mut waiter = ClosedWaiter {
            shared: &self.shared,
            key: None,
        };
        poll_fn(|cx| {
            let coop = ready!(crate::coop::poll_proceed(cx));
            let mut tail = loom::lock(&self.shared.tail);
            // Invariant 8: checked and registered under `tail`.
            if tail.rx_cnt != 0 {
                let replaced = tail.tx_waiters.register(&mut waiter.key, cx.waker());
                // Invariant 1: dropped after unlocking.
                drop(tail);
                drop(replaced);
                return Poll::Pending;
            }
            drop(tail);
            coop.made_progress();
            Poll::Ready(())
        })
        .await
    }
}

/// One pending `Sender::closed`: gives its waiter key back when dropped.
struct ClosedWaiter<'a, T> {
    shared: &'a Shared<T>,
    key: Option<usize>,
}

impl<T> Drop for ClosedWaiter<'_, T> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Invariant 1: the statement's temporary guard is gone before
            // the waker is dropped.
            let waker = loom::lock(&self.shared.tail).tx_waiters.remove(key);
            drop(waker);
        }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.num_tx.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.num_tx.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut tail = loom::lock(&self.shared.tail);
            tail.closed = true;
            // Invariant 3: `closed` is set under the lock waiters check it.
            let wakers = tail.waiters.take_all();
            drop(tail);
            wake_all(wakers);
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("shared", &self.shared)
            .finish()
    }
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("capacity", &self.buffer.len())
            .field("num_tx", &self.num_tx.load(Ordering::Acquire))
            .field("num_weak_tx", &self.num_weak_tx.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
