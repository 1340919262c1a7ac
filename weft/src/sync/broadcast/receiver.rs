//! `Receiver`'s methods: receiving, the handle counts it reports, and the
//! handle's drop. The protocol they follow is stated once in the parent
//! module's doc (`broadcast/mod.rs`, "Protocol"); comments here refer to its
//! invariants by number.

use std::fmt;
use std::future::poll_fn;

use super::error::{RecvError, TryRecvError};
use super::{Receiver, RecvWaiter, Shared};
use crate::loom::{self, Arc, Ordering};
use crate::sync::waker_set::wake_all;

impl<T> Receiver<T> {
    /// Returns `true` once every [`Sender`](super::Sender) has been dropped
    /// (values still held can be received, then `recv` fails with
    /// [`RecvError::Closed`]).
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, rx) = broadcast::channel::<()>(4);
    /// assert!(!rx.is_closed());
    /// drop(tx);
    /// assert!(rx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        loom::lock(&self.shared.tail).closed
    }

    /// Returns the number of live [`Sender`](super::Sender)s of the channel.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, rx) = broadcast::channel::<()>(4);
    /// let tx2 = tx.clone();
    /// assert_eq!(rx.sender_strong_count(), 2);
    /// drop((tx, tx2));
    /// assert_eq!(rx.sender_strong_count(), 0);
    /// ```
    pub fn sender_strong_count(&self) -> usize {
        self.shared.num_tx.load(Ordering::Acquire)
    }

    /// Returns the number of live [`WeakSender`](super::WeakSender)s of the
    /// channel.
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, rx) = broadcast::channel::<()>(4);
    /// let weak = tx.downgrade();
    /// assert_eq!(rx.sender_weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(rx.sender_weak_count(), 0);
    /// ```
    pub fn sender_weak_count(&self) -> usize {
        self.shared.num_weak_tx.load(Ordering::Relaxed)
    }

    /// Returns the number of values sent that this receiver has not yet
    /// received.
    ///
    /// This may exceed the channel's capacity: the receiver has then fallen
    /// behind, and its next receive returns a `Lagged` error.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx) = broadcast::channel(16);
    /// tx.send(10).unwrap();
    /// tx.send(20).unwrap();
    /// assert_eq!(rx.len(), 2);
    /// rx.try_recv().unwrap();
    /// assert_eq!(rx.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        let pos = loom::lock(&self.shared.tail).pos;
        (pos - self.next) as usize
    }

    /// Returns `true` if there is no value this receiver has not yet
    /// received.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx) = broadcast::channel(16);
    /// assert!(rx.is_empty());
    /// tx.send(1).unwrap();
    /// assert!(!rx.is_empty());
    /// rx.try_recv().unwrap();
    /// assert!(rx.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        loom::lock(&self.shared.tail).pos == self.next
    }

    /// Returns `true` if both receivers belong to the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, rx) = broadcast::channel::<()>(16);
    /// let rx2 = tx.subscribe();
    /// assert!(rx.same_channel(&rx2));
    /// let (_tx3, rx3) = broadcast::channel::<()>(16);
    /// assert!(!rx3.same_channel(&rx2));
    /// ```
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T: Clone> Receiver<T> {
    /// Creates a new receiver on the same channel, starting at the newest
    /// position: it receives only values sent after this call, not the
    /// ones this receiver has yet to receive.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = broadcast::channel(2);
    ///     tx.send(1).unwrap();
    ///
    ///     let mut rx2 = rx.resubscribe();
    ///     tx.send(2).unwrap();
    ///
    ///     assert_eq!(rx2.recv().await.unwrap(), 2);
    ///     assert_eq!(rx.recv().await.unwrap(), 1);
    /// });
    /// ```
    pub fn resubscribe(&self) -> Self {
        let next = self.shared.add_receiver();
        Receiver {
            shared: self.shared.clone(),
            next,
        }
    }

    /// Receives the next value, waiting until one is sent.
    ///
    /// Every receiver gets every value sent while it exists, in order.
    /// Counts against the task's cooperative budget.
    ///
    /// # Errors
    ///
    /// - [`RecvError::Lagged(n)`](RecvError::Lagged) if the receiver fell
    ///   more than the channel's capacity behind and `n` values were
    ///   overwritten before it got them. This is reported once; the next
    ///   call returns the oldest value still held.
    /// - [`RecvError::Closed`] once every sender has been dropped and this
    ///   receiver has received every value still held.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe. If `recv` is used as the event in a
    /// `select!`-style statement and some other branch completes first, it
    /// is guaranteed that no messages were received on this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast::{self, error::RecvError};
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let (tx, mut rx) = broadcast::channel(2);
    ///
    ///     tx.send(10).unwrap();
    ///     tx.send(20).unwrap();
    ///     tx.send(30).unwrap();
    ///
    ///     // The channel holds 2 values: 10 was overwritten.
    ///     assert_eq!(rx.recv().await, Err(RecvError::Lagged(1)));
    ///     assert_eq!(rx.recv().await, Ok(20));
    ///     assert_eq!(rx.recv().await, Ok(30));
    ///
    ///     drop(tx);
    ///     assert_eq!(rx.recv().await, Err(RecvError::Closed));
    /// });
    /// ```
    pub async fn recv(&mut self) -> Result<T, RecvError> {
        let shared: &Shared<T> = &self.shared;
        let next = &mut self.next;
        let mut waiter = RecvWaiter { shared, key: None };
        poll_fn(|cx| shared.poll_recv(next, &mut waiter, cx)).await
    }

    /// Receives the next value if there is one, without waiting.
    ///
    /// Does not register for a wakeup and does not count against the
    /// cooperative budget, so it also works outside async code.
    ///
    /// # Errors
    ///
    /// - [`TryRecvError::Empty`] if there is no new value and a sender is
    ///   alive.
    /// - [`TryRecvError::Lagged(n)`](TryRecvError::Lagged) as for
    ///   [`recv`](Receiver::recv).
    /// - [`TryRecvError::Closed`] once every sender has been dropped and
    ///   this receiver has received every value still held.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast::{self, error::TryRecvError};
    ///
    /// let (tx, mut rx) = broadcast::channel(16);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.send(10).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(10));
    /// drop(tx);
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    /// ```
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.shared.recv_ref(&mut self.next, None)
    }

    /// Blocks the current thread until a value is received.
    ///
    /// For use from synchronous code. Errors as for
    /// [`recv`](Receiver::recv).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context,
    /// where blocking the thread would stall the runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::broadcast;
    ///
    /// let (tx, mut rx) = broadcast::channel(16);
    /// let t = std::thread::spawn(move || rx.blocking_recv());
    /// tx.send(10).unwrap();
    /// assert_eq!(t.join().unwrap(), Ok(10));
    /// ```
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Result<T, RecvError> {
        crate::sync::blocking_wait::block_on(
            "broadcast::Receiver::blocking_recv",
            "rx.recv().await",
            self.recv(),
        )
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let shared = &*self.shared;
        let (until, closed_waiters) = {
            let mut tail = loom::lock(&shared.tail);
            tail.rx_cnt -= 1;
            // Invariant 8: the last receiver wakes `Sender::closed` under
            // `tail`; the wakers are woken after it is released.
            let closed_waiters = if tail.rx_cnt == 0 {
                tail.tx_waiters.take_all()
            } else {
                Vec::new()
            };
            (tail.pos, closed_waiters)
        };
        // Invariant 4: give up our claim on every message we were counted
        // in and have not read. Positions before `until - len` are
        // certainly overwritten; others may be overwritten meanwhile.
        let mut pos = self.next.max(until.saturating_sub(shared.len()));
        while pos < until {
            let slot = loom::lock(shared.slot(pos));
            if slot.pos == pos {
                shared.release(slot);
            }
            pos += 1;
        }
        // Woken last, as Tokio's: a `closed` waiter's wake-up already sees
        // the channel as the receiver left it (no receiver, and none of
        // its unread messages still counted in `len`).
        wake_all(closed_waiters);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("next", &self.next)
            .field("shared", &self.shared)
            .finish()
    }
}
