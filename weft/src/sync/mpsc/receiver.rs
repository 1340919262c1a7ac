//! The receiving half: [`RxCore`], the logic shared by both receivers, and
//! the bounded channel's [`Receiver`], a thin wrapper around it.
//!
//! [`UnboundedReceiver`](super::UnboundedReceiver) wraps the same core; the
//! two public types differ only in their docs and in `Receiver`'s capacity
//! getters.

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::task::{ready, Context, Poll};

use super::chan::{Chan, Refill};
use super::error::TryRecvError;
use crate::loom::Arc;

/// The receiving end of a channel, bounded or not: every receiver operation
/// (budgeting, error mapping, closing on drop) is written here once.
pub(super) struct RxCore<T> {
    chan: Arc<Chan<T>>,
    /// Messages moved out of the shared queue in one lock and not yet
    /// received; their slots stay taken until each is received (`mpsc`
    /// invariant 3).
    batch: Batch<T>,
}

/// The receiver's batch. It is only ever reached through `&mut` (receiving
/// takes `&mut self`), except for its length, so a shared `&RxCore` never
/// touches a `T`: the receivers stay `Sync` for every `T: Send`, as
/// Tokio's are, without requiring `T: Sync`.
struct Batch<T>(VecDeque<T>);

// The batch is taken whole or not at all by a receive (a panic caught
// around one leaves every message queued or handed out), so it is unwind
// safe whatever `T` is, as the rest of a Tokio receiver is.
impl<T> std::panic::UnwindSafe for Batch<T> {}
impl<T> std::panic::RefUnwindSafe for Batch<T> {}

// SAFETY: `&Batch<T>` exposes only `len`, which reads no `T`; every access
// to the messages goes through `&mut Batch<T>` (see the type's doc), so
// sharing a `&Batch<T>` between threads never shares a `T`.
unsafe impl<T: Send> Sync for Batch<T> {}

// Messages are moved in and out of the batch by value and never pinned
// where they sit, so the receivers are `Unpin` for every `T`, as Tokio's
// are (a `VecDeque<T>` alone would be `Unpin` only for `T: Unpin`).
impl<T> Unpin for Batch<T> {}

impl<T> Batch<T> {
    fn len(&self) -> usize {
        self.0.len()
    }
}

impl<T> RxCore<T> {
    pub(super) fn new(chan: Arc<Chan<T>>) -> RxCore<T> {
        RxCore {
            chan,
            batch: Batch(VecDeque::new()),
        }
    }

    pub(super) fn chan(&self) -> &Chan<T> {
        &self.chan
    }

    pub(super) async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    pub(super) async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        poll_fn(|cx| self.poll_recv_many(cx, buffer, limit)).await
    }

    /// Takes up to `limit` (at least 1) messages from the batch with
    /// `take`, freeing their slots.
    fn take_batch(&mut self, limit: usize, mut take: impl FnMut(T)) -> usize {
        let n = self.batch.len().min(limit);
        for v in self.batch.0.drain(..n) {
            take(v);
        }
        self.chan.release_received(n);
        n
    }

    pub(super) fn try_recv(&mut self) -> Result<T, TryRecvError> {
        if self.batch.0.is_empty() {
            match self.chan.refill(&mut self.batch.0, None) {
                Refill::Refilled => {}
                Refill::Empty => return Err(TryRecvError::Empty),
                Refill::Ended => return Err(TryRecvError::Disconnected),
            }
        }
        let mut out = None;
        self.take_batch(1, |v| out = Some(v));
        Ok(out.expect("the batch is not empty"))
    }

    pub(super) fn close(&mut self) {
        self.chan.close_rx();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.chan.is_closed_for_rx()
    }

    pub(super) fn len(&self) -> usize {
        self.batch.len() + self.chan.queued()
    }

    /// Takes up to `limit` (at least 1) messages, refilling the batch first
    /// if it is empty. `Ready(0)` means the channel has ended.
    fn poll_take(
        &mut self,
        cx: &mut Context<'_>,
        limit: usize,
        mut take: impl FnMut(T),
    ) -> Poll<usize> {
        if self.batch.0.is_empty() {
            match self.chan.refill(&mut self.batch.0, Some(cx.waker())) {
                Refill::Refilled => {}
                Refill::Empty => return Poll::Pending,
                Refill::Ended => return Poll::Ready(0),
            }
        }
        let mut n = self.take_batch(limit, &mut take);
        // The batch ran out before `limit` (only `recv_many` asks for more
        // than one): take what was sent since, too.
        if n < limit && matches!(self.chan.refill(&mut self.batch.0, None), Refill::Refilled) {
            n += self.take_batch(limit - n, &mut take);
        }
        Poll::Ready(n)
    }

    pub(super) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let mut out = None;
        ready!(self.poll_take(cx, 1, |v| out = Some(v)));
        coop.made_progress();
        Poll::Ready(out)
    }

    pub(super) fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = ready!(self.poll_take(cx, limit, |v| buffer.push(v)));
        coop.made_progress();
        Poll::Ready(res)
    }
}

impl<T> Drop for RxCore<T> {
    fn drop(&mut self) {
        self.chan.drop_rx(std::mem::take(&mut self.batch.0));
    }
}

/// Receives values from the associated [`Sender`](super::Sender)s.
///
/// Created by [`channel`](super::channel).
pub struct Receiver<T> {
    inner: RxCore<T>,
}

impl<T> Receiver<T> {
    pub(super) fn new(chan: Arc<Chan<T>>) -> Receiver<T> {
        Receiver {
            inner: RxCore::new(chan),
        }
    }
}

impl<T> Receiver<T> {
    /// Receives the next message, waiting until one arrives.
    ///
    /// Returns `None` once the channel is closed and every buffered message
    /// has been received: when every sender is dropped, or after
    /// [`close`](Receiver::close) once no [`Permit`](super::Permit) is outstanding.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe. If `recv` is used as the event in a
    /// `select!` statement and some other branch completes first, it is
    /// guaranteed that no messages were received on this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(100);
    ///
    ///     weft::spawn(async move {
    ///         tx.send("hello").await.unwrap();
    ///     });
    ///
    ///     assert_eq!(Some("hello"), rx.recv().await);
    ///     assert_eq!(None, rx.recv().await);
    /// });
    /// ```
    pub async fn recv(&mut self) -> Option<T> {
        self.inner.recv().await
    }

    /// Receives up to `limit` messages into `buffer` (appending), waiting
    /// until at least one is available. Returns how many were received;
    /// `0` means the channel is closed and drained (or `limit` is 0).
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe. If `recv_many` is used as the event in a
    /// `select!` statement and some other branch completes first, it is
    /// guaranteed that no messages were received on this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(10);
    ///     for i in 0..5 {
    ///         tx.send(i).await.unwrap();
    ///     }
    ///     drop(tx);
    ///     let mut buf = Vec::new();
    ///     assert_eq!(rx.recv_many(&mut buf, 3).await, 3);
    ///     assert_eq!(rx.recv_many(&mut buf, 3).await, 2);
    ///     assert_eq!(rx.recv_many(&mut buf, 3).await, 0);
    ///     assert_eq!(buf, [0, 1, 2, 3, 4]);
    /// });
    /// ```
    pub async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        self.inner.recv_many(buffer, limit).await
    }

    /// Tries to receive the next message without waiting.
    ///
    /// Fails with [`TryRecvError::Empty`] if no message is buffered but the
    /// channel is open, and with [`TryRecvError::Disconnected`] if it is
    /// closed and drained. Does not spend cooperative budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc::{self, error::TryRecvError};
    ///
    /// let (tx, mut rx) = mpsc::channel(1);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// drop(tx);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    /// ```
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
    }

    /// Receives the next message from synchronous code, blocking the thread
    /// until one arrives. Returns `None` when the channel is closed and
    /// drained.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context (a
    /// thread driving a weft runtime), where blocking would stall the
    /// runtime's tasks. Use `recv().await` there instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel::<u8>(10);
    ///
    ///     let sync_code = std::thread::spawn(move || rx.blocking_recv());
    ///
    ///     tx.send(10).await.unwrap();
    ///     assert_eq!(sync_code.join().unwrap(), Some(10));
    /// });
    /// ```
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        crate::sync::blocking_wait::block_on(
            "mpsc::Receiver::blocking_recv",
            "rx.recv().await",
            self.inner.recv(),
        )
    }

    /// Returns the number of live strong senders of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel::<u8>(4);
    /// let tx2 = tx.clone();
    /// assert_eq!(rx.sender_strong_count(), 2);
    /// drop((tx, tx2));
    /// assert_eq!(rx.sender_strong_count(), 0);
    /// ```
    pub fn sender_strong_count(&self) -> usize {
        self.inner.chan().tx_count()
    }

    /// Returns the number of live weak senders of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel::<u8>(4);
    /// let weak = tx.downgrade();
    /// assert_eq!(rx.sender_weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(rx.sender_weak_count(), 0);
    /// ```
    pub fn sender_weak_count(&self) -> usize {
        self.inner.chan().weak_count()
    }

    /// Blocks the current thread until at least one message arrives, then
    /// moves up to `limit` messages into `buffer`, as
    /// [`recv_many`](Receiver::recv_many) does. Returns the number moved: `0`
    /// only when `limit` is zero or the channel is closed and drained. For
    /// use from synchronous code.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel(4);
    /// let sync_code = std::thread::spawn(move || {
    ///     let mut buffer = Vec::new();
    ///     rx.blocking_recv_many(&mut buffer, 10);
    ///     buffer
    /// });
    /// tx.try_send(7).unwrap();
    /// assert_eq!(sync_code.join().unwrap(), [7]);
    /// ```
    #[track_caller]
    pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        crate::sync::blocking_wait::block_on(
            "mpsc::Receiver::blocking_recv_many",
            "rx.recv_many(buffer, limit).await",
            self.inner.recv_many(buffer, limit),
        )
    }

    /// Closes the receiving half without dropping it.
    ///
    /// No new message can be sent (`send`, `try_send` and `reserve` fail,
    /// and senders waiting for capacity fail), but messages already buffered
    /// can still be received, and outstanding [`Permit`](super::Permit)s can still send.
    /// To receive every message, call [`recv`](Receiver::recv) until it
    /// returns `None`, which happens once the buffer is drained and every
    /// outstanding permit is used or dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(2);
    ///     tx.send(1).await.unwrap();
    ///     rx.close();
    ///     assert!(tx.send(2).await.is_err());
    ///     assert_eq!(rx.recv().await, Some(1));
    ///     assert_eq!(rx.recv().await, None);
    /// });
    /// ```
    pub fn close(&mut self) {
        self.inner.close();
    }

    /// Returns `true` if the channel is closed: [`close`](Receiver::close)
    /// was called, or every sender was dropped. Buffered messages may still
    /// be waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel::<()>(1);
    /// assert!(!rx.is_closed());
    /// drop(tx);
    /// assert!(rx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Returns the number of buffered messages.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel(3);
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// assert_eq!(rx.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Returns `true` if no message is buffered.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel(1);
    /// assert!(rx.is_empty());
    /// tx.try_send(0).unwrap();
    /// assert!(!rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns the number of free slots (see [`Sender::capacity`](super::Sender::capacity)).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::channel(3);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.capacity(), 2);
    /// assert_eq!(rx.max_capacity(), 3);
    /// ```
    pub fn capacity(&self) -> usize {
        self.inner.chan().capacity()
    }

    /// Returns the buffer size the channel was created with.
    pub fn max_capacity(&self) -> usize {
        self.inner.chan().max_capacity()
    }

    /// Polls to receive the next message.
    ///
    /// Returns `Ready(Some(v))` with a message, `Ready(None)` once the
    /// channel is closed and drained, or `Pending` after registering `cx`'s
    /// waker, which is woken when a message arrives or the channel closes.
    /// Only the waker from the most recent call is woken. Spends one unit of
    /// cooperative budget when it returns `Ready`; with none left it returns
    /// `Pending` and wakes the task at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///     tx.send(5).await.unwrap();
    ///     assert_eq!(poll_fn(|cx| rx.poll_recv(cx)).await, Some(5));
    /// });
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.inner.poll_recv(cx)
    }

    /// Polls to receive up to `limit` messages into `buffer` (see
    /// [`recv_many`](Receiver::recv_many) and
    /// [`poll_recv`](Receiver::poll_recv)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(4);
    ///     tx.send(1).await.unwrap();
    ///     tx.send(2).await.unwrap();
    ///     let mut buf = Vec::new();
    ///     assert_eq!(poll_fn(|cx| rx.poll_recv_many(cx, &mut buf, 4)).await, 2);
    ///     assert_eq!(buf, [1, 2]);
    /// });
    /// ```
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        self.inner.poll_recv_many(cx, buffer, limit)
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("chan", self.inner.chan())
            .finish()
    }
}
