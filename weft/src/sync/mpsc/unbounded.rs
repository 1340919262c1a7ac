//! The unbounded channel's handles: [`UnboundedSender`],
//! [`WeakUnboundedSender`] and [`UnboundedReceiver`].

use std::fmt;
use std::task::{Context, Poll};

use super::chan::Chan;
use super::error::{SendError, TryRecvError};
use super::receiver::RxCore;
use crate::loom::Arc;

/// Creates an unbounded channel for communicating between asynchronous
/// tasks without back-pressure.
///
/// [`UnboundedSender::send`] never waits: the buffer grows as needed, limited
/// only by memory. Prefer a bounded [`channel`](super::channel) when the
/// producers can outrun the consumer.
///
/// # Examples
///
/// ```
/// use weft::sync::mpsc;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let (tx, mut rx) = mpsc::unbounded_channel();
///
///     weft::spawn(async move {
///         for i in 0..10 {
///             if tx.send(i).is_err() {
///                 println!("receiver dropped");
///                 return;
///             }
///         }
///     });
///
///     let mut n = 0;
///     while let Some(i) = rx.recv().await {
///         assert_eq!(i, n);
///         n += 1;
///     }
///     assert_eq!(n, 10);
/// });
/// ```
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = Arc::new(Chan::new(None));
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver {
            inner: RxCore::new(chan),
        },
    )
}

/// Sends values to the associated [`UnboundedReceiver`].
///
/// Created by [`unbounded_channel`]. Clone it to send from several tasks;
/// the channel closes when the last `UnboundedSender` is dropped.
pub struct UnboundedSender<T> {
    chan: Arc<Chan<T>>,
}

/// An unbounded sender that does not keep the channel open.
///
/// Created by [`UnboundedSender::downgrade`]; turn it back into an
/// [`UnboundedSender`] with [`upgrade`](WeakUnboundedSender::upgrade).
pub struct WeakUnboundedSender<T> {
    chan: Arc<Chan<T>>,
}

/// Receives values from the associated [`UnboundedSender`]s.
///
/// Created by [`unbounded_channel`].
pub struct UnboundedReceiver<T> {
    inner: RxCore<T>,
}

impl<T> UnboundedSender<T> {
    /// Sends a value without waiting.
    ///
    /// Fails, giving the value back, if the receiver has been closed or
    /// dropped. `Ok` does not mean the value will be received: the receiver
    /// may still be dropped before taking it. Being synchronous, this does
    /// not spend cooperative budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::unbounded_channel();
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// drop(rx);
    /// assert_eq!(tx.send(2).unwrap_err().0, 2);
    /// ```
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        self.chan.send_unbounded(message).map_err(SendError)
    }

    /// Waits until the receiver is closed or dropped.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe. Once the channel is closed, it stays
    /// closed forever and all future calls to `closed` will return
    /// immediately.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    ///     weft::spawn(async move { rx.close() });
    ///     tx.closed().await;
    ///     assert!(tx.is_closed());
    /// });
    /// ```
    pub async fn closed(&self) {
        self.chan.closed().await
    }

    /// Returns `true` if the receiver has been closed or dropped, so sends
    /// fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::unbounded_channel::<()>();
    /// assert!(!tx.is_closed());
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.chan.is_rx_closed()
    }

    /// Returns `true` if `self` and `other` send to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// assert!(tx.same_channel(&tx.clone()));
    /// let (other, _rx2) = mpsc::unbounded_channel::<()>();
    /// assert!(!tx.same_channel(&other));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }

    /// Creates a [`WeakUnboundedSender`], which does not keep the channel
    /// open.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// let weak = tx.downgrade();
    /// assert!(weak.upgrade().is_some());
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakUnboundedSender<T> {
        self.chan.weak_clone();
        WeakUnboundedSender {
            chan: self.chan.clone(),
        }
    }

    /// Returns the number of live [`UnboundedSender`]s of this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// assert_eq!(tx.clone().strong_count(), 2);
    /// assert_eq!(tx.strong_count(), 1);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.chan.tx_count()
    }

    /// Returns the number of live [`WeakUnboundedSender`]s of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// let weak = tx.downgrade();
    /// assert_eq!(tx.weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(tx.weak_count(), 0);
    /// ```
    pub fn weak_count(&self) -> usize {
        self.chan.weak_count()
    }
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.tx_clone();
        UnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.tx_drop();
    }
}

impl<T> fmt::Debug for UnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedSender")
            .field("chan", &self.chan)
            .finish()
    }
}

impl<T> WeakUnboundedSender<T> {
    /// Tries to turn this into an [`UnboundedSender`]; returns `None` once
    /// every `UnboundedSender` has been dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::unbounded_channel();
    /// let weak = tx.downgrade();
    /// weak.upgrade().unwrap().send(1).unwrap();
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn upgrade(&self) -> Option<UnboundedSender<T>> {
        if self.chan.tx_upgrade() {
            Some(UnboundedSender {
                chan: self.chan.clone(),
            })
        } else {
            None
        }
    }

    /// Returns the number of live strong senders ([`UnboundedSender`]s) of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// let weak = tx.downgrade();
    /// assert_eq!(weak.strong_count(), 1);
    /// drop(tx);
    /// assert_eq!(weak.strong_count(), 0);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.chan.tx_count()
    }

    /// Returns the number of live [`WeakUnboundedSender`]s of the channel, this one
    /// included.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded_channel::<()>();
    /// let weak = tx.downgrade();
    /// let weak2 = weak.clone();
    /// assert_eq!(weak.weak_count(), 2);
    /// drop(weak2);
    /// assert_eq!(weak.weak_count(), 1);
    /// ```
    pub fn weak_count(&self) -> usize {
        self.chan.weak_count()
    }
}

impl<T> Clone for WeakUnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.weak_clone();
        WeakUnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for WeakUnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.weak_drop();
    }
}

impl<T> fmt::Debug for WeakUnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakUnboundedSender")
            .field("chan", &self.chan)
            .finish()
    }
}

impl<T> UnboundedReceiver<T> {
    /// Receives the next message, waiting until one arrives.
    ///
    /// Returns `None` once the channel is closed (every sender dropped, or
    /// [`close`](UnboundedReceiver::close) called) and every buffered
    /// message has been received.
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
    ///     let (tx, mut rx) = mpsc::unbounded_channel();
    ///
    ///     weft::spawn(async move {
    ///         tx.send("hello").unwrap();
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
    ///     let (tx, mut rx) = mpsc::unbounded_channel();
    ///     for i in 0..5 {
    ///         tx.send(i).unwrap();
    ///     }
    ///     let mut buf = Vec::new();
    ///     assert_eq!(rx.recv_many(&mut buf, 10).await, 5);
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
    /// let (tx, mut rx) = mpsc::unbounded_channel();
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.send(1).unwrap();
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
    /// let (tx, mut rx) = mpsc::unbounded_channel::<u8>();
    /// let sync_code = std::thread::spawn(move || rx.blocking_recv());
    /// tx.send(10).unwrap();
    /// assert_eq!(sync_code.join().unwrap(), Some(10));
    /// ```
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        crate::sync::blocking_wait::block_on(
            "mpsc::UnboundedReceiver::blocking_recv",
            "rx.recv().await",
            self.inner.recv(),
        )
    }

    /// Returns the number of live strong senders of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, rx) = mpsc::unbounded_channel::<u8>();
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
    /// let (tx, rx) = mpsc::unbounded_channel::<u8>();
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
    /// [`recv_many`](UnboundedReceiver::recv_many) does. Returns the number moved: `0`
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
    /// let (tx, mut rx) = mpsc::unbounded_channel();
    /// let sync_code = std::thread::spawn(move || {
    ///     let mut buffer = Vec::new();
    ///     rx.blocking_recv_many(&mut buffer, 10);
    ///     buffer
    /// });
    /// tx.send(7).unwrap();
    /// assert_eq!(sync_code.join().unwrap(), [7]);
    /// ```
    #[track_caller]
    pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        crate::sync::blocking_wait::block_on(
            "mpsc::UnboundedReceiver::blocking_recv_many",
            "rx.recv_many(buffer, limit).await",
            self.inner.recv_many(buffer, limit),
        )
    }

    /// Closes the receiving half without dropping it.
    ///
    /// No new message can be sent, but messages already buffered can still
    /// be received: call [`recv`](UnboundedReceiver::recv) until it returns
    /// `None` to receive them all.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::unbounded_channel();
    ///     tx.send(1).unwrap();
    ///     rx.close();
    ///     assert!(tx.send(2).is_err());
    ///     assert_eq!(rx.recv().await, Some(1));
    ///     assert_eq!(rx.recv().await, None);
    /// });
    /// ```
    pub fn close(&mut self) {
        self.inner.close();
    }

    /// Returns `true` if the channel is closed:
    /// [`close`](UnboundedReceiver::close) was called, or every sender was
    /// dropped. Buffered messages may still be waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    /// assert!(!rx.is_closed());
    /// rx.close();
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
    /// let (tx, rx) = mpsc::unbounded_channel::<u8>();
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.len(), 1);
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
    /// let (tx, rx) = mpsc::unbounded_channel::<u8>();
    /// assert!(rx.is_empty());
    /// tx.send(0).unwrap();
    /// assert!(!rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    ///     let (tx, mut rx) = mpsc::unbounded_channel();
    ///     tx.send(5).unwrap();
    ///     assert_eq!(poll_fn(|cx| rx.poll_recv(cx)).await, Some(5));
    /// });
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.inner.poll_recv(cx)
    }

    /// Polls to receive up to `limit` messages into `buffer` (see
    /// [`recv_many`](UnboundedReceiver::recv_many) and
    /// [`poll_recv`](UnboundedReceiver::poll_recv)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::unbounded_channel();
    ///     tx.send(1).unwrap();
    ///     let mut buf = Vec::new();
    ///     assert_eq!(poll_fn(|cx| rx.poll_recv_many(cx, &mut buf, 4)).await, 1);
    ///     assert_eq!(buf, [1]);
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

impl<T> fmt::Debug for UnboundedReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedReceiver")
            .field("chan", self.inner.chan())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "unbounded_tests.rs"]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;

    #[test]
    fn send_races_recv() {
        loom::model(|| {
            let (tx, mut rx) = unbounded_channel();
            let t = thread::spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            assert_eq!(loom::future::block_on(rx.recv()), Some(1));
            assert_eq!(loom::future::block_on(rx.recv()), Some(2));
            assert_eq!(loom::future::block_on(rx.recv()), None);
            t.join().unwrap();
        });
    }

    #[test]
    fn send_races_close() {
        loom::model(|| {
            let (tx, mut rx) = unbounded_channel();
            let t = thread::spawn(move || (tx.send(1).is_ok(), tx.send(2).is_ok()));
            rx.close();
            let mut got = Vec::new();
            while let Some(v) = loom::future::block_on(rx.recv()) {
                got.push(v);
            }
            let (a, b) = t.join().unwrap();
            let mut expected = Vec::new();
            if a {
                expected.push(1);
            }
            if b {
                expected.push(2);
            }
            // Once the first send fails, so does the second.
            assert!(a || !b);
            assert_eq!(got, expected);
        });
    }
}
