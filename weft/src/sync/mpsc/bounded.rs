//! The bounded channel's sending side: [`channel`], [`Sender`], [`Permit`],
//! [`OwnedPermit`] and [`WeakSender`]. The receiver is in `receiver.rs`,
//! reserving several slots at once (`PermitIterator`) in `permit_iter.rs`.

use std::fmt;

use super::chan::Chan;
use super::error::{SendError, TrySendError};
use super::receiver::Receiver;
use crate::loom::Arc;

/// Creates a bounded channel for communicating between asynchronous tasks
/// with back-pressure.
///
/// The channel buffers up to `buffer` messages. Once the buffer is full,
/// [`Sender::send`] waits until the receiver takes a message; senders that
/// wait are served in the order they started waiting.
///
/// # Panics
///
/// Panics if `buffer` is 0: a channel that can hold nothing could never
/// transfer a message (use a `oneshot` or `Notify`-style primitive for a
/// rendezvous).
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
///         for i in 0..10 {
///             if let Err(_) = tx.send(i).await {
///                 println!("receiver dropped");
///                 return;
///             }
///         }
///     });
///
///     while let Some(i) = rx.recv().await {
///         println!("got = {}", i);
///     }
/// });
/// ```
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(
        buffer > 0,
        "mpsc bounded channel requires buffer > 0 (got 0); use a capacity of at least 1"
    );
    let chan = Arc::new(Chan::new(Some(buffer)));
    (Sender { chan: chan.clone() }, Receiver::new(chan))
}

/// Sends values to the associated [`Receiver`].
///
/// Created by [`channel`]. Clone it to send from several tasks; the channel
/// closes when the last `Sender` (and [`OwnedPermit`]) is dropped.
pub struct Sender<T> {
    pub(super) chan: Arc<Chan<T>>,
}

/// A sender that does not keep the channel open.
///
/// Created by [`Sender::downgrade`]. Turn it back into a [`Sender`] with
/// [`upgrade`](WeakSender::upgrade), which fails once every `Sender` has been
/// dropped.
pub struct WeakSender<T> {
    chan: Arc<Chan<T>>,
}

/// One reserved slot of capacity in the channel, from [`Sender::reserve`].
///
/// [`send`](Permit::send) puts a message in the slot without waiting and
/// without failing. Dropping the permit unused gives the slot back.
pub struct Permit<'a, T> {
    pub(super) chan: &'a Chan<T>,
}

/// An owned [`Permit`], from [`Sender::reserve_owned`]; it holds the
/// [`Sender`] and gives it back from [`send`](OwnedPermit::send).
pub struct OwnedPermit<T> {
    /// `None` only after `send`/`release` consumed the permit.
    tx: Option<Sender<T>>,
}

impl<T> Sender<T> {
    /// Sends a value, waiting until there is capacity.
    ///
    /// Returns an error, holding the value, if the receiver has been closed
    /// or dropped. `Ok` does not mean the value will be received: the
    /// receiver may still be dropped before taking it.
    ///
    /// # Cancel safety
    ///
    /// If `send` is used as the event in a `select!` statement and some
    /// other branch completes first, then it is guaranteed that the message
    /// was not sent. However, in that case, the message is dropped and will
    /// be lost.
    ///
    /// To avoid losing messages, use [`reserve`](Sender::reserve) to reserve
    /// capacity before sending the message.
    ///
    /// This channel uses a queue to ensure that calls to `send` and
    /// `reserve` complete in the order they were requested. Cancelling a
    /// call to `send` makes you lose your place in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///
    ///     weft::spawn(async move {
    ///         for i in 0..10 {
    ///             if let Err(_) = tx.send(i).await {
    ///                 println!("receiver dropped");
    ///                 return;
    ///             }
    ///         }
    ///     });
    ///
    ///     let mut next = 0;
    ///     while let Some(i) = rx.recv().await {
    ///         assert_eq!(i, next);
    ///         next += 1;
    ///     }
    ///     assert_eq!(next, 10);
    /// });
    /// ```
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.chan.reserve().await {
            Ok(()) => {
                self.chan.send_reserved(value);
                Ok(())
            }
            Err(_) => Err(SendError(value)),
        }
    }

    /// Tries to send a value immediately.
    ///
    /// Fails with [`TrySendError::Full`] if no slot is free right now
    /// (including when other senders are waiting for the next free slot),
    /// and with [`TrySendError::Closed`] if the receiver was closed or
    /// dropped. Either error gives the value back. Does not wait and does not
    /// spend cooperative budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc::{self, error::TrySendError};
    ///
    /// let (tx, rx) = mpsc::channel(1);
    /// tx.try_send(1).unwrap();
    /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    /// drop(rx);
    /// assert_eq!(tx.try_send(3), Err(TrySendError::Closed(3)));
    /// ```
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.chan.try_send(value)
    }

    /// Sends a value from synchronous code, blocking the thread until there
    /// is capacity.
    ///
    /// Returns an error, holding the value, if the receiver has been closed
    /// or dropped.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context (a
    /// thread driving a weft runtime), where blocking would stall the
    /// runtime's tasks. Use `send(..).await` there instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel::<u8>(1);
    ///
    ///     let sync_code = std::thread::spawn(move || {
    ///         tx.blocking_send(10).unwrap();
    ///     });
    ///
    ///     assert_eq!(rx.recv().await, Some(10));
    ///     sync_code.join().unwrap();
    /// });
    /// ```
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        crate::sync::blocking_wait::block_on(
            "mpsc::Sender::blocking_send",
            "tx.send(value).await",
            self.send(value),
        )
    }

    /// Waits for capacity and reserves one slot for a later
    /// [`Permit::send`].
    ///
    /// Useful to avoid producing a message nobody has room for, and to send
    /// without risk of losing the message (a permit's `send` cannot fail or
    /// wait). Dropping the permit unused gives the slot back. Fails if the
    /// receiver has been closed or dropped.
    ///
    /// # Cancel safety
    ///
    /// This channel uses a queue to ensure that calls to `send` and
    /// `reserve` complete in the order they were requested. Cancelling a
    /// call to `reserve` makes you lose your place in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///
    ///     let permit = tx.reserve().await.unwrap();
    ///     // The only slot is reserved: a `try_send` fails.
    ///     assert!(tx.try_send(123).is_err());
    ///     permit.send(456);
    ///
    ///     assert_eq!(rx.recv().await.unwrap(), 456);
    /// });
    /// ```
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        match self.chan.reserve().await {
            Ok(()) => Ok(Permit { chan: &self.chan }),
            Err(_) => Err(SendError(())),
        }
    }

    /// Like [`reserve`](Sender::reserve), but the permit owns the sender, so
    /// it can be moved into another task. [`OwnedPermit::send`] returns the
    /// sender.
    ///
    /// # Cancel safety
    ///
    /// This channel uses a queue to ensure that calls to `send` and
    /// `reserve` complete in the order they were requested. Cancelling a
    /// call to `reserve_owned` makes you lose your place in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///     let permit = tx.reserve_owned().await.unwrap();
    ///     weft::spawn(async move {
    ///         let _tx = permit.send(456);
    ///     });
    ///     assert_eq!(rx.recv().await, Some(456));
    /// });
    /// ```
    pub async fn reserve_owned(self) -> Result<OwnedPermit<T>, SendError<()>> {
        match self.chan.reserve().await {
            Ok(()) => Ok(OwnedPermit { tx: Some(self) }),
            Err(_) => Err(SendError(())),
        }
    }

    /// Tries to reserve a slot without waiting.
    ///
    /// Fails with `TrySendError::Full(())` if none is free right now and with
    /// `TrySendError::Closed(())` if the receiver was closed or dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel(1);
    /// let permit = tx.try_reserve().unwrap();
    /// assert!(tx.try_reserve().is_err());
    /// permit.send(1);
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        match self.chan.try_reserve() {
            Ok(()) => Ok(Permit { chan: &self.chan }),
            Err(true) => Err(TrySendError::Closed(())),
            Err(false) => Err(TrySendError::Full(())),
        }
    }

    /// Like [`try_reserve`](Sender::try_reserve), but the permit owns the
    /// sender, as with [`reserve_owned`](Sender::reserve_owned). On failure
    /// the sender is handed back in the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc::{self, error::TrySendError};
    ///
    /// let (tx, mut rx) = mpsc::channel(1);
    /// let permit = tx.clone().try_reserve_owned().unwrap();
    /// assert!(matches!(tx.try_reserve_owned(), Err(TrySendError::Full(_))));
    /// permit.send(1);
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        match self.chan.try_reserve() {
            Ok(()) => Ok(OwnedPermit { tx: Some(self) }),
            Err(true) => Err(TrySendError::Closed(self)),
            Err(false) => Err(TrySendError::Full(self)),
        }
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
    ///     let (tx, rx) = mpsc::channel::<()>(1);
    ///     weft::spawn(async move { drop(rx) });
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
    /// let (tx, rx) = mpsc::channel::<()>(1);
    /// assert!(!tx.is_closed());
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.chan.is_rx_closed()
    }

    /// Returns the number of free slots: how many messages can be sent
    /// right now without waiting. Slots held by permits are not free.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel::<()>(5);
    /// assert_eq!(tx.capacity(), 5);
    /// let permit = tx.try_reserve().unwrap();
    /// assert_eq!(tx.capacity(), 4);
    /// permit.send(());
    /// assert_eq!(tx.capacity(), 4);
    /// rx.try_recv().unwrap();
    /// assert_eq!(tx.capacity(), 5);
    /// ```
    pub fn capacity(&self) -> usize {
        self.chan.capacity()
    }

    /// Returns the buffer size the channel was created with.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(5);
    /// assert_eq!(tx.max_capacity(), 5);
    /// ```
    pub fn max_capacity(&self) -> usize {
        self.chan.max_capacity()
    }

    /// Returns `true` if `self` and `other` send to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
    /// let tx2 = tx.clone();
    /// assert!(tx.same_channel(&tx2));
    /// let (tx3, _rx3) = mpsc::channel::<()>(1);
    /// assert!(!tx.same_channel(&tx3));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }

    /// Creates a [`WeakSender`], which does not keep the channel open.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
    /// let weak = tx.downgrade();
    /// assert!(weak.upgrade().is_some());
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn downgrade(&self) -> WeakSender<T> {
        self.chan.weak_clone();
        WeakSender {
            chan: self.chan.clone(),
        }
    }

    /// Returns the number of live [`Sender`]s (and [`OwnedPermit`]s) of this
    /// channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
    /// let tx2 = tx.clone();
    /// assert_eq!(tx.strong_count(), 2);
    /// drop(tx2);
    /// assert_eq!(tx.strong_count(), 1);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.chan.tx_count()
    }

    /// Returns the number of live [`WeakSender`]s of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
    /// let weak = tx.downgrade();
    /// assert_eq!(tx.weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(tx.weak_count(), 0);
    /// ```
    pub fn weak_count(&self) -> usize {
        self.chan.weak_count()
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.tx_clone();
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.tx_drop();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").field("chan", &self.chan).finish()
    }
}

impl<T> WeakSender<T> {
    /// Tries to turn this into a [`Sender`]; returns `None` once every
    /// `Sender` has been dropped (the channel is then closed for good).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::channel(1);
    /// let weak = tx.downgrade();
    /// weak.upgrade().unwrap().try_send(1).unwrap();
    /// drop(tx);
    /// assert!(weak.upgrade().is_none());
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn upgrade(&self) -> Option<Sender<T>> {
        if self.chan.tx_upgrade() {
            Some(Sender {
                chan: self.chan.clone(),
            })
        } else {
            None
        }
    }

    /// Returns the number of live strong senders ([`Sender`]s, and
    /// [`OwnedPermit`]s, which hold one) of the channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
    /// let weak = tx.downgrade();
    /// assert_eq!(weak.strong_count(), 1);
    /// drop(tx);
    /// assert_eq!(weak.strong_count(), 0);
    /// ```
    pub fn strong_count(&self) -> usize {
        self.chan.tx_count()
    }

    /// Returns the number of live [`WeakSender`]s of the channel, this one
    /// included.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<()>(1);
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

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        self.chan.weak_clone();
        WeakSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        self.chan.weak_drop();
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender")
            .field("chan", &self.chan)
            .finish()
    }
}

impl<T> Permit<'_, T> {
    /// Sends `value` into the reserved slot. Never waits and never fails:
    /// if the receiver has been dropped meanwhile, the value is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///     let permit = tx.reserve().await.unwrap();
    ///     permit.send("hello");
    ///     assert_eq!(rx.recv().await, Some("hello"));
    /// });
    /// ```
    pub fn send(self, value: T) {
        let chan = self.chan;
        std::mem::forget(self);
        chan.send_reserved(value);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        self.chan.release_reserved();
    }
}

impl<T> fmt::Debug for Permit<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("chan", &self.chan).finish()
    }
}

impl<T> OwnedPermit<T> {
    /// Sends `value` into the reserved slot and returns the sender. Never
    /// waits and never fails (see [`Permit::send`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = mpsc::channel(1);
    ///     let tx = tx.reserve_owned().await.unwrap().send(1);
    ///     assert_eq!(rx.recv().await, Some(1));
    ///     tx.send(2).await.unwrap();
    /// });
    /// ```
    pub fn send(mut self, value: T) -> Sender<T> {
        let tx = self.tx.take().expect("permit used once");
        tx.chan.send_reserved(value);
        tx
    }

    /// Gives the slot back without sending and returns the sender.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<u8>(1);
    /// let permit = futures::executor::block_on(tx.reserve_owned()).unwrap();
    /// let tx = permit.release();
    /// assert_eq!(tx.capacity(), 1);
    /// ```
    pub fn release(mut self) -> Sender<T> {
        let tx = self.tx.take().expect("permit used once");
        tx.chan.release_reserved();
        tx
    }
}

impl<T> OwnedPermit<T> {
    /// Returns `true` if both permits reserve slots of the same channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<u8>(2);
    /// let a = tx.clone().try_reserve_owned().unwrap();
    /// let b = tx.try_reserve_owned().unwrap();
    /// assert!(a.same_channel(&b));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        match (&self.tx, &other.tx) {
            (Some(a), Some(b)) => a.same_channel(b),
            _ => false,
        }
    }

    /// Returns `true` if this permit reserves a slot of `sender`'s channel.
    ///
    /// ```
    /// use weft::sync::mpsc;
    ///
    /// let (tx, _rx) = mpsc::channel::<u8>(1);
    /// let (other, _other_rx) = mpsc::channel::<u8>(1);
    /// let permit = tx.clone().try_reserve_owned().unwrap();
    /// assert!(permit.same_channel_as_sender(&tx));
    /// assert!(!permit.same_channel_as_sender(&other));
    /// ```
    pub fn same_channel_as_sender(&self, sender: &Sender<T>) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.same_channel(sender))
    }
}

impl<T> Drop for OwnedPermit<T> {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            tx.chan.release_reserved();
        }
    }
}

impl<T> fmt::Debug for OwnedPermit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").field("tx", &self.tx).finish()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "bounded_tests.rs"]
mod tests;

#[cfg(all(test, loom))]
#[path = "bounded_loom_tests.rs"]
mod loom_tests;
