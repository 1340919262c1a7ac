//! A fair (FIFO) asynchronous semaphore; also the engine under [`Mutex`],
//! [`RwLock`] and [`OnceCell`].
//!
//! [`Mutex`]: super::Mutex
//! [`RwLock`]: super::RwLock
//! [`OnceCell`]: super::OnceCell
//!
//! # What this file owns
//!
//! [`Semaphore`], its permits and errors, and the `Acquire` future that the
//! locks build on.
//!
//! # Design
//!
//! `state` is an `AtomicUsize` holding the *available* permits shifted left
//! by one, and the `CLOSED` flag in bit 0. Waiters wait in a
//! [`WaitList`] behind `waiters`, a mutex. Each waiter records how many
//! permits it still `needs` and how many have already been `assigned` to it.
//!
//! The code relies on these invariants:
//!
//! 1. **Where permits are.** Every permit is in exactly one place: available
//!    (counted in `state`), assigned to a waiter (its `assigned`), held by a
//!    permit guard, or forgotten. A waiter that is dropped gives its assigned
//!    permits back (through the release path, so they reach the next waiter).
//! 2. **Increases happen under the lock, and only with an empty queue.**
//!    Releasing permits takes the `waiters` lock, hands the permits to the
//!    queue in order, and adds to `state` only what is left once the queue
//!    is empty. Decreases are a compare-and-swap, either lock-free (the fast
//!    path of `try_acquire`/`acquire`) or under the lock (a waiter about to
//!    enqueue takes what is available towards its need).
//! 3. **No barging.** From 2 it follows that, while the queue is non-empty,
//!    `state` holds no permits: the waiter that made it non-empty took all of
//!    them, and only an empty queue lets permits back in. So the lock-free
//!    fast path can never take permits a queued waiter is owed, and a large
//!    request at the head blocks smaller ones behind it (strict FIFO).
//! 4. **Completion.** A waiter is unlinked by whoever completes it: the
//!    releaser once `needs` reaches zero, or `close`. Its slot, including its
//!    waker, is freed only by its own future, on completion or drop, under
//!    the lock: a dropped future leaves no waker behind.
//! 5. **Closing.** `CLOSED` is set under the lock and never cleared. After
//!    it is set no waiter enqueues; `close` fails every queued waiter and
//!    returns their assigned permits to `state`.
//!
//! There is no `unsafe` code in this file.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

use crate::loom::{AtomicUsize, Mutex, Ordering};
use crate::sync::wait_list::{WaitList, WakeList};

const CLOSED: usize = 1;
const PERMIT_SHIFT: u32 = 1;

/// Error returned by [`Semaphore::acquire`] and friends when the semaphore
/// has been closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireError(());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// Error returned by [`Semaphore::try_acquire`] and friends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore has been [closed](Semaphore::close).
    Closed,
    /// Not enough permits are available right now (or other tasks are
    /// queued ahead).
    NoPermits,
}

impl TryAcquireError {
    /// Whether the semaphore was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, TryAcquireError::Closed)
    }

    /// Whether there were not enough permits.
    pub fn is_no_permits(&self) -> bool {
        matches!(self, TryAcquireError::NoPermits)
    }
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

/// A counting semaphore performing asynchronous permit acquisition.
///
/// A semaphore holds a number of permits; [`acquire`](Semaphore::acquire)
/// waits until one is available and returns a [`SemaphorePermit`] that gives
/// it back when dropped. The semaphore is fair: waiters are served strictly
/// in the order they started waiting, and a request for many permits at the
/// front of the queue holds back smaller requests behind it.
///
/// # Examples
///
/// Limit how many tasks run a section at once:
///
/// ```
/// use std::sync::Arc;
/// use weft::sync::Semaphore;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let semaphore = Arc::new(Semaphore::new(3));
///     let mut handles = Vec::new();
///     for i in 0..10 {
///         let permit = semaphore.clone().acquire_owned().await.unwrap();
///         handles.push(weft::spawn(async move {
///             let _permit = permit; // released when the task ends
///             i * 2
///         }));
///     }
///     let mut sum = 0;
///     for h in handles {
///         sum += h.await.unwrap();
///     }
///     assert_eq!(sum, 90);
///     assert_eq!(semaphore.available_permits(), 3);
/// });
/// ```
pub struct Semaphore {
    /// Available permits << 1 | `CLOSED` (invariants 2 and 5).
    state: AtomicUsize,
    waiters: Mutex<WaitList<Waiter>>,
}

/// One queued acquisition.
#[derive(Debug)]
struct Waiter {
    waker: Option<Waker>,
    /// Permits still missing; zero once served.
    needs: usize,
    /// Permits already handed to this waiter (invariant 1).
    assigned: usize,
    outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Waiting,
    /// All permits assigned; the future owns them.
    Acquired,
    /// The semaphore was closed while waiting.
    Closed,
}

impl Semaphore {
    /// The maximum number of permits a semaphore can hold.
    pub const MAX_PERMITS: usize = usize::MAX >> 3;

    /// Creates a semaphore with `permits` available permits.
    ///
    /// # Panics
    ///
    /// Panics if `permits` exceeds [`Semaphore::MAX_PERMITS`].
    #[track_caller]
    pub fn new(permits: usize) -> Semaphore {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore may not have more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
        Semaphore {
            state: AtomicUsize::new(permits << PERMIT_SHIFT),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// Creates a semaphore with `permits` available permits, in a `const`
    /// context (for a `static`).
    ///
    /// ```
    /// use weft::sync::Semaphore;
    ///
    /// static SEM: Semaphore = Semaphore::const_new(10);
    /// assert_eq!(SEM.available_permits(), 10);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics (at compile time in a `const`) if `permits` exceeds
    /// [`Semaphore::MAX_PERMITS`].
    #[cfg(not(loom))]
    pub const fn const_new(permits: usize) -> Semaphore {
        assert!(permits <= Self::MAX_PERMITS);
        Semaphore {
            state: AtomicUsize::new(permits << PERMIT_SHIFT),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// Returns the number of permits available now (not counting permits
    /// already assigned to queued waiters).
    pub fn available_permits(&self) -> usize {
        self.state.load(Ordering::Acquire) >> PERMIT_SHIFT
    }

    /// Adds `n` permits, waking waiters in queue order that can now proceed.
    ///
    /// # Panics
    ///
    /// Panics if the total of available permits would exceed
    /// [`Semaphore::MAX_PERMITS`].
    #[track_caller]
    pub fn add_permits(&self, n: usize) {
        assert!(
            n <= Self::MAX_PERMITS,
            "number of added permits ({n}) would overflow MAX_PERMITS ({})",
            Self::MAX_PERMITS
        );
        self.release(n);
    }

    /// Permanently removes up to `n` available permits, returning how many
    /// were removed. Permits held by permit guards or assigned to waiters
    /// are not affected.
    ///
    /// ```
    /// use weft::sync::Semaphore;
    ///
    /// let sem = Semaphore::new(5);
    /// assert_eq!(sem.forget_permits(3), 3);
    /// assert_eq!(sem.forget_permits(3), 2);
    /// assert_eq!(sem.available_permits(), 0);
    /// ```
    pub fn forget_permits(&self, n: usize) -> usize {
        let mut cur = self.state.load(Ordering::Relaxed);
        loop {
            let take = (cur >> PERMIT_SHIFT).min(n);
            match self.state.compare_exchange_weak(
                cur,
                cur - (take << PERMIT_SHIFT),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return take,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Closes the semaphore: every queued and future `acquire` fails with
    /// [`AcquireError`], and `try_acquire` with [`TryAcquireError::Closed`].
    /// Permits already acquired stay valid and are still returned on drop.
    ///
    /// ```
    /// use weft::sync::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(1);
    /// sem.close();
    /// assert!(sem.is_closed());
    /// assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
    /// ```
    pub fn close(&self) {
        let mut waiters = crate::loom::lock(&self.waiters);
        // Invariant 5: set under the lock, so no waiter enqueues after this.
        self.state.fetch_or(CLOSED, Ordering::Release);
        let mut returned = 0;
        let mut wakers = Vec::new();
        while let Some(key) = waiters.pop_front() {
            let w = waiters.get_mut(key);
            w.outcome = Outcome::Closed;
            returned += std::mem::take(&mut w.assigned);
            wakers.extend(w.waker.take());
        }
        if returned > 0 {
            // Invariant 2: the queue is empty now, so these may go to `state`.
            self.state
                .fetch_add(returned << PERMIT_SHIFT, Ordering::Release);
        }
        drop(waiters);
        for w in wakers {
            w.wake();
        }
    }

    /// Returns `true` if the semaphore has been closed.
    pub fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Tries to acquire one permit without waiting.
    ///
    /// Fails with [`TryAcquireError::NoPermits`] if none is available,
    /// including when other tasks are queued for permits (they are served
    /// first), and with [`TryAcquireError::Closed`] after
    /// [`close`](Semaphore::close).
    ///
    /// ```
    /// use weft::sync::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(1);
    /// let p = sem.try_acquire().unwrap();
    /// assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
    /// drop(p);
    /// assert!(sem.try_acquire().is_ok());
    /// ```
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// Tries to acquire `n` permits without waiting. See
    /// [`try_acquire`](Semaphore::try_acquire).
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_raw(n as usize)?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n,
        })
    }

    /// Tries to acquire one permit of a shared semaphore without waiting;
    /// the permit keeps the semaphore alive. See
    /// [`try_acquire`](Semaphore::try_acquire).
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    /// Tries to acquire `n` permits of a shared semaphore without waiting.
    /// See [`try_acquire`](Semaphore::try_acquire).
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_raw(n as usize)?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n,
        })
    }

    /// Acquires one permit, waiting until one is available.
    ///
    /// Fails only if the semaphore is [closed](Semaphore::close).
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute permits in the order
    /// they were requested. Cancelling a call to `acquire` makes you lose
    /// your place in the queue. Permits are never lost: any handed to the
    /// cancelled call go to the next waiter.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::Semaphore;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let sem = Semaphore::new(2);
    ///     let a = sem.acquire().await.unwrap();
    ///     let b = sem.acquire().await.unwrap();
    ///     assert_eq!(sem.available_permits(), 0);
    ///     drop((a, b));
    ///     assert_eq!(sem.available_permits(), 2);
    /// });
    /// ```
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.acquire_many(1).await
    }

    /// Acquires `n` permits at once, waiting until all are available.
    ///
    /// Permits are assigned to the request as they become available, in
    /// queue order; while it waits, later requests (even for one permit)
    /// wait behind it.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute permits in the order
    /// they were requested. Cancelling a call to `acquire_many` makes you
    /// lose your place in the queue; permits already assigned to it are
    /// given back.
    pub async fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.acquire_raw(n as usize).await?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n,
        })
    }

    /// Acquires one permit of a shared semaphore; the permit keeps the
    /// semaphore alive, so it can move into a spawned task.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute permits in the order
    /// they were requested. Cancelling a call to `acquire_owned` makes you
    /// lose your place in the queue.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_many_owned(1).await
    }

    /// Acquires `n` permits of a shared semaphore. See
    /// [`acquire_many`](Semaphore::acquire_many).
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute permits in the order
    /// they were requested. Cancelling a call to `acquire_many_owned` makes
    /// you lose your place in the queue.
    pub async fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_raw(n as usize).await?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n,
        })
    }

    // ----- Internals used by the permits and by the locks ----------------

    /// The lock-free fast path: one compare-and-swap when uncontended.
    pub(crate) fn try_acquire_raw(&self, n: usize) -> Result<(), TryAcquireError> {
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            if cur & CLOSED != 0 {
                return Err(TryAcquireError::Closed);
            }
            if cur >> PERMIT_SHIFT < n {
                return Err(TryAcquireError::NoPermits);
            }
            // Invariant 3: a non-empty queue leaves nothing here to take.
            match self.state.compare_exchange_weak(
                cur,
                cur - (n << PERMIT_SHIFT),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// A future that acquires `n` permits (without a guard).
    pub(crate) fn acquire_raw(&self, n: usize) -> Acquire<'_> {
        Acquire {
            sem: self,
            num: n,
            state: AcquireState::Idle,
        }
    }

    /// Returns `n` permits: hands them to queued waiters in order, and what
    /// is left over to `state` (invariant 2).
    pub(crate) fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let waiters = crate::loom::lock(&self.waiters);
        self.release_locked(n, waiters);
    }

    fn release_locked<'a>(
        &'a self,
        mut rem: usize,
        mut waiters: crate::loom::MutexGuard<'a, WaitList<Waiter>>,
    ) {
        let mut wakers = WakeList::new();
        loop {
            while rem > 0 && wakers.can_push() {
                let Some(key) = waiters.front() else { break };
                let w = waiters.get_mut(key);
                let give = rem.min(w.needs);
                w.needs -= give;
                w.assigned += give;
                rem -= give;
                if w.needs == 0 {
                    w.outcome = Outcome::Acquired;
                    let waker = w.waker.take();
                    waiters.unlink(key);
                    wakers.push(waker);
                }
            }
            if rem > 0 && waiters.is_empty() {
                // Invariant 2: only an empty queue lets permits into `state`.
                let mut cur = self.state.load(Ordering::Relaxed);
                loop {
                    assert!(
                        rem <= Self::MAX_PERMITS - (cur >> PERMIT_SHIFT),
                        "number of added permits ({rem}) would overflow MAX_PERMITS ({})",
                        Self::MAX_PERMITS
                    );
                    match self.state.compare_exchange_weak(
                        cur,
                        cur + (rem << PERMIT_SHIFT),
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(actual) => cur = actual,
                    }
                }
                rem = 0;
            }
            drop(waiters);
            wakers.wake_all();
            if rem == 0 {
                return;
            }
            // The batch of wakers was full: wake it outside the lock, then
            // continue handing out the rest (still owned by us, not in
            // `state`, so invariant 3 holds meanwhile).
            waiters = crate::loom::lock(&self.waiters);
        }
    }
}

impl Default for Semaphore {
    /// A semaphore with no permits.
    fn default() -> Self {
        Semaphore::new(0)
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        f.debug_struct("Semaphore")
            .field("permits", &(state >> PERMIT_SHIFT))
            .field("closed", &(state & CLOSED != 0))
            .finish_non_exhaustive()
    }
}

// ----- The acquire future ---------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum AcquireState {
    /// Not queued yet.
    Idle,
    /// Queued under this key (the future owns the slot, invariant 4).
    Queued(usize),
    /// Completed: permits handed out, slot freed.
    Done,
}

/// Future acquiring `num` permits without wrapping them in a guard; the
/// caller owns them once it resolves to `Ok`.
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Acquire<'a> {
    sem: &'a Semaphore,
    num: usize,
    state: AcquireState,
}

impl Acquire<'_> {
    /// The body of `poll`, without the budget.
    fn poll_acquire(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        let sem = self.sem;
        match self.state {
            AcquireState::Idle => {
                match sem.try_acquire_raw(self.num) {
                    Ok(()) => {
                        self.state = AcquireState::Done;
                        return Poll::Ready(Ok(()));
                    }
                    Err(TryAcquireError::Closed) => {
                        self.state = AcquireState::Done;
                        return Poll::Ready(Err(AcquireError(())));
                    }
                    Err(TryAcquireError::NoPermits) => {}
                }
                let mut waiters = crate::loom::lock(&sem.waiters);
                let mut cur = sem.state.load(Ordering::Acquire);
                let taken = loop {
                    if cur & CLOSED != 0 {
                        self.state = AcquireState::Done;
                        return Poll::Ready(Err(AcquireError(())));
                    }
                    let avail = cur >> PERMIT_SHIFT;
                    // Invariant 3: with waiters queued there is nothing here.
                    debug_assert!(waiters.is_empty() || avail == 0);
                    let take = avail.min(self.num);
                    if take == 0 {
                        break 0;
                    }
                    match sem.state.compare_exchange_weak(
                        cur,
                        cur - (take << PERMIT_SHIFT),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => break take,
                        Err(actual) => cur = actual,
                    }
                };
                if taken == self.num {
                    // Permits were released between the fast path and here.
                    self.state = AcquireState::Done;
                    return Poll::Ready(Ok(()));
                }
                let key = waiters.push_back(Waiter {
                    waker: Some(cx.waker().clone()),
                    needs: self.num - taken,
                    assigned: taken,
                    outcome: Outcome::Waiting,
                });
                self.state = AcquireState::Queued(key);
                Poll::Pending
            }
            AcquireState::Queued(key) => {
                let mut waiters = crate::loom::lock(&sem.waiters);
                let w = waiters.get_mut(key);
                match w.outcome {
                    Outcome::Waiting => {
                        match &w.waker {
                            Some(old) if old.will_wake(cx.waker()) => {}
                            _ => w.waker = Some(cx.waker().clone()),
                        }
                        Poll::Pending
                    }
                    Outcome::Acquired => {
                        waiters.remove(key);
                        self.state = AcquireState::Done;
                        Poll::Ready(Ok(()))
                    }
                    Outcome::Closed => {
                        waiters.remove(key);
                        self.state = AcquireState::Done;
                        Poll::Ready(Err(AcquireError(())))
                    }
                }
            }
            AcquireState::Done => panic!("semaphore acquire future polled after completion"),
        }
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let coop = ready!(crate::coop::poll_proceed(cx));
        let res = ready!(self.poll_acquire(cx));
        coop.made_progress();
        Poll::Ready(res)
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let AcquireState::Queued(key) = self.state else {
            return;
        };
        let mut waiters = crate::loom::lock(&self.sem.waiters);
        // Invariant 4: we own the slot; freeing it drops our waker.
        let w = waiters.remove(key);
        // Invariant 1: give back what was handed to us (zero if closed).
        if w.assigned > 0 {
            self.sem.release_locked(w.assigned, waiters);
        }
    }
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("num", &self.num)
            .field("state", &self.state)
            .finish()
    }
}

// ----- Permits ------------------------------------------------------------

/// Permits acquired from a [`Semaphore`], returned to it when dropped.
#[must_use = "dropping the permit releases it at once"]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    permits: u32,
}

/// Permits acquired from an `Arc<Semaphore>`, returned to it when dropped.
/// Owning the `Arc` lets the permit move into a spawned task.
#[must_use = "dropping the permit releases it at once"]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    permits: u32,
}

impl<'a> SemaphorePermit<'a> {
    /// Forgets the permits without releasing them: the semaphore's capacity
    /// shrinks by [`num_permits`](SemaphorePermit::num_permits).
    ///
    /// ```
    /// use weft::sync::Semaphore;
    ///
    /// let sem = Semaphore::new(2);
    /// sem.try_acquire().unwrap().forget();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The number of permits this guard holds.
    pub fn num_permits(&self) -> usize {
        self.permits as usize
    }

    /// Moves the permits of `other` into `self`.
    ///
    /// # Panics
    ///
    /// Panics if the two permits come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            std::ptr::eq(self.sem, other.sem),
            "merging permits from different semaphores"
        );
        self.permits += other.permits;
        other.permits = 0;
    }

    /// Splits `n` permits off into a new guard, or returns `None` if this
    /// guard holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = u32::try_from(n).ok()?;
        if n > self.permits {
            return None;
        }
        self.permits -= n;
        Some(SemaphorePermit {
            sem: self.sem,
            permits: n,
        })
    }
}

impl OwnedSemaphorePermit {
    /// Forgets the permits without releasing them: the semaphore's capacity
    /// shrinks by [`num_permits`](OwnedSemaphorePermit::num_permits).
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The number of permits this guard holds.
    pub fn num_permits(&self) -> usize {
        self.permits as usize
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// Moves the permits of `other` into `self`.
    ///
    /// # Panics
    ///
    /// Panics if the two permits come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            Arc::ptr_eq(&self.sem, &other.sem),
            "merging permits from different semaphores"
        );
        self.permits += other.permits;
        other.permits = 0;
    }

    /// Splits `n` permits off into a new guard, or returns `None` if this
    /// guard holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = u32::try_from(n).ok()?;
        if n > self.permits {
            return None;
        }
        self.permits -= n;
        Some(OwnedSemaphorePermit {
            sem: self.sem.clone(),
            permits: n,
        })
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.release(self.permits as usize);
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.release(self.permits as usize);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("sem", &self.sem)
            .field("permits", &self.permits)
            .finish()
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("sem", &self.sem)
            .field("permits", &self.permits)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::mpsc::test_support::CountWaker;
    use std::sync::Arc as StdArc;

    fn poll(f: &mut Acquire<'_>, w: &Waker) -> Poll<Result<(), AcquireError>> {
        Pin::new(f).poll(&mut Context::from_waker(w))
    }

    fn queued(sem: &Semaphore) -> usize {
        crate::loom::lock(&sem.waiters).len()
    }

    #[test]
    fn fast_path_and_release() {
        let sem = Semaphore::new(2);
        let a = sem.try_acquire_many(2).unwrap();
        assert_eq!(sem.available_permits(), 0);
        assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
        drop(a);
        assert_eq!(sem.available_permits(), 2);
    }

    #[test]
    fn big_waiter_blocks_small_later_ones() {
        let sem = Semaphore::new(1);
        let (c1, w1) = CountWaker::new();
        let (c2, w2) = CountWaker::new();
        let mut big = sem.acquire_raw(3);
        assert!(poll(&mut big, &w1).is_pending());
        // The one available permit went to the big waiter.
        assert_eq!(sem.available_permits(), 0);
        let mut small = sem.acquire_raw(1);
        assert!(poll(&mut small, &w2).is_pending());
        assert!(sem.try_acquire().is_err());
        sem.release(1);
        assert_eq!((c1.count(), c2.count()), (0, 0));
        sem.release(1);
        assert_eq!(c1.count(), 1);
        assert_eq!(c2.count(), 0);
        assert!(poll(&mut big, &w1).is_ready());
        sem.release(1);
        assert_eq!(c2.count(), 1);
        assert!(poll(&mut small, &w2).is_ready());
        sem.release(3);
        assert_eq!(sem.available_permits(), 3);
        assert_eq!(crate::loom::lock(&sem.waiters).allocated(), 0);
    }

    #[test]
    fn dropped_waiter_returns_partial_permits_and_waker() {
        let sem = Semaphore::new(2);
        let (_c1, w1) = CountWaker::new();
        let (c2, w2) = CountWaker::new();
        let mut big = sem.acquire_raw(5);
        assert!(poll(&mut big, &w1).is_pending());
        let mut small = sem.acquire_raw(1);
        assert!(poll(&mut small, &w2).is_pending());
        // The counter, `w1`, and the clone stored in the queue.
        assert_eq!(StdArc::strong_count(&_c1), 3, "waker stored");
        drop(big);
        assert_eq!(StdArc::strong_count(&_c1), 2, "waker freed on drop");
        assert_eq!(c2.count(), 1, "next waiter served");
        assert_eq!(sem.available_permits(), 1);
        assert!(poll(&mut small, &w2).is_ready());
        sem.release(1);
        assert_eq!(sem.available_permits(), 2);
    }

    #[test]
    fn dropped_served_waiter_returns_permits() {
        let sem = Semaphore::new(0);
        let (c, w) = CountWaker::new();
        let mut a = sem.acquire_raw(2);
        assert!(poll(&mut a, &w).is_pending());
        sem.release(2);
        assert_eq!(c.count(), 1);
        assert_eq!(sem.available_permits(), 0);
        drop(a);
        assert_eq!(sem.available_permits(), 2);
        assert_eq!(queued(&sem), 0);
    }

    #[test]
    fn close_fails_waiters_and_returns_assigned() {
        let sem = Semaphore::new(1);
        let (c, w) = CountWaker::new();
        let mut a = sem.acquire_raw(3);
        assert!(poll(&mut a, &w).is_pending());
        sem.close();
        assert_eq!(c.count(), 1);
        assert_eq!(poll(&mut a, &w), Poll::Ready(Err(AcquireError(()))));
        assert_eq!(sem.available_permits(), 1);
        let mut b = sem.acquire_raw(1);
        assert_eq!(poll(&mut b, &w), Poll::Ready(Err(AcquireError(()))));
        assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
    }

    #[test]
    fn waker_is_updated() {
        let sem = Semaphore::new(0);
        let (c1, w1) = CountWaker::new();
        let (c2, w2) = CountWaker::new();
        let mut a = sem.acquire_raw(1);
        assert!(poll(&mut a, &w1).is_pending());
        assert!(poll(&mut a, &w2).is_pending());
        sem.release(1);
        assert_eq!(c1.count(), 0);
        assert_eq!(c2.count(), 1);
        assert!(poll(&mut a, &w2).is_ready());
    }

    #[test]
    fn many_waiters_over_a_wake_batch() {
        let sem = Semaphore::new(0);
        let (c, w) = CountWaker::new();
        let mut futs: Vec<_> = (0..100).map(|_| sem.acquire_raw(1)).collect();
        for f in &mut futs {
            assert!(poll(f, &w).is_pending());
        }
        sem.add_permits(150);
        assert_eq!(c.count(), 100);
        assert_eq!(sem.available_permits(), 50);
        for f in &mut futs {
            assert!(poll(f, &w).is_ready());
        }
    }

    #[test]
    fn permit_merge_split_forget() {
        let sem = Semaphore::new(4);
        let mut a = sem.try_acquire_many(2).unwrap();
        let b = sem.try_acquire().unwrap();
        a.merge(b);
        assert_eq!(a.num_permits(), 3);
        let c = a.split(2).unwrap();
        assert!(a.split(2).is_none());
        c.forget();
        drop(a);
        assert_eq!(sem.available_permits(), 2);
    }

    #[test]
    #[should_panic(expected = "overflow")]
    fn add_permits_overflow_panics() {
        let sem = Semaphore::new(Semaphore::MAX_PERMITS);
        sem.add_permits(1);
    }

    #[test]
    fn budget_is_spent_and_refunded() {
        crate::coop::budget(|| {
            let sem = Semaphore::new(0);
            let before = crate::coop::remaining();
            let mut a = sem.acquire_raw(1);
            assert!(poll(&mut a, Waker::noop()).is_pending());
            assert_eq!(crate::coop::remaining(), before);
            sem.release(1);
            assert!(poll(&mut a, Waker::noop()).is_ready());
            assert_eq!(crate::coop::remaining(), before.map(|n| n - 1));
        });
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Semaphore>();
        assert_send_sync::<SemaphorePermit<'static>>();
        assert_send_sync::<OwnedSemaphorePermit>();
        assert_send_sync::<Acquire<'static>>();
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;
    use std::sync::Arc as StdArc;

    #[test]
    fn two_acquirers_and_release() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(1));
            let s2 = sem.clone();
            let t = thread::spawn(move || {
                loom::future::block_on(async {
                    let p = s2.acquire().await.unwrap();
                    drop(p);
                });
            });
            loom::future::block_on(async {
                let p = sem.acquire().await.unwrap();
                drop(p);
            });
            t.join().unwrap();
            assert_eq!(sem.available_permits(), 1);
            assert_eq!(crate::loom::lock(&sem.waiters).allocated(), 0);
        });
    }

    #[test]
    fn two_acquirers_racing_add_permits() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(0));
            let (s1, s2) = (sem.clone(), sem.clone());
            let acquirer = thread::spawn(move || {
                loom::future::block_on(s1.acquire()).unwrap().forget();
            });
            let releaser = thread::spawn(move || s2.add_permits(2));
            loom::future::block_on(sem.acquire()).unwrap().forget();
            acquirer.join().unwrap();
            releaser.join().unwrap();
            assert_eq!(sem.available_permits(), 0);
            assert_eq!(crate::loom::lock(&sem.waiters).allocated(), 0);
        });
    }

    #[test]
    fn release_wakes_queued_acquirer() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(0));
            let s2 = sem.clone();
            let t = thread::spawn(move || s2.add_permits(2));
            loom::future::block_on(async {
                sem.acquire_many(2).await.unwrap().forget();
            });
            t.join().unwrap();
            assert_eq!(sem.available_permits(), 0);
        });
    }

    #[test]
    fn cancel_queued_acquire_racing_add_permits() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(1));
            let s2 = sem.clone();
            let t = thread::spawn(move || s2.add_permits(1));
            {
                let mut fut = sem.acquire_raw(3);
                // Takes the one available permit and queues for two more.
                let _ = Pin::new(&mut fut).poll(&mut Context::from_waker(Waker::noop()));
                drop(fut);
            }
            t.join().unwrap();
            assert_eq!(sem.available_permits(), 2);
            assert_eq!(crate::loom::lock(&sem.waiters).allocated(), 0);
        });
    }

    #[test]
    fn cancel_racing_the_release_that_serves_it() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(0));
            let s2 = sem.clone();
            let mut fut = sem.acquire_raw(1);
            let _ = Pin::new(&mut fut).poll(&mut Context::from_waker(Waker::noop()));
            let t = thread::spawn(move || s2.add_permits(1));
            // The permit reaches `fut` (which must hand it back on drop) or
            // `state`; either way the next acquirer gets it.
            drop(fut);
            loom::future::block_on(sem.acquire_raw(1)).unwrap();
            t.join().unwrap();
            assert_eq!(sem.available_permits(), 0);
            assert_eq!(crate::loom::lock(&sem.waiters).allocated(), 0);
        });
    }

    #[test]
    fn close_racing_queued_acquire() {
        loom::model(|| {
            let sem = StdArc::new(Semaphore::new(0));
            let s2 = sem.clone();
            let t = thread::spawn(move || s2.close());
            let res = loom::future::block_on(sem.acquire_raw(1));
            assert!(res.is_err());
            t.join().unwrap();
        });
    }
}
