//! A fair (FIFO) asynchronous semaphore; also the engine under [`Mutex`],
//! [`RwLock`] and [`OnceCell`].
//!
//! [`Mutex`]: super::Mutex
//! [`RwLock`]: super::RwLock
//! [`OnceCell`]: super::OnceCell
//!
//! # What this folder owns
//!
//! - `mod.rs`: [`Semaphore`], its state word and the release path;
//! - `acquire.rs`: the `Acquire` future that the public methods and the
//!   locks build on;
//! - `permit.rs`: the permit guards;
//! - `error.rs`: the error types;
//! - `tests.rs`, `loom_tests.rs`: unit tests and loom models.
//!
//! # Design
//!
//! `state` is an `AtomicUsize` holding the *available* permits shifted left
//! by two, the `WAITERS` flag in bit 1 and the `CLOSED` flag in bit 0.
//! Waiters wait in an intrusive [`List`] behind `waiters`, a mutex; each
//! `Acquire` future embeds its node (the list's own rules, in
//! `sync/intrusive.rs`, apply throughout). A node's data records how many
//! permits the waiter still `needs` and how many were already `assigned` to
//! it; its atomic `state` is `WAITING`, `ACQUIRED` or `CLOSED_OUT`.
//!
//! The code relies on these invariants:
//!
//! 1. **Where permits are.** Every permit is in exactly one place: available
//!    (counted in `state`), assigned to a waiter (its `assigned`), held by a
//!    permit guard, being handed over by a releaser, or forgotten. A waiter
//!    that is dropped gives its permits back (through the release path, so
//!    they reach the next waiter).
//! 2. **`WAITERS` mirrors the queue.** The flag is set exactly when the
//!    queue is non-empty, and it changes only under the lock: set by the
//!    compare-and-swap with which a waiter takes what is available before
//!    it enqueues, cleared by whoever empties the queue (a release, a
//!    dropped waiter, `close`).
//! 3. **Increases.** Permits are added to `state` only while `WAITERS` is
//!    clear, by a compare-and-swap that fails if the flag was set meanwhile.
//!    A release that finds the flag clear adds its permits without the
//!    lock; one that finds it set takes the lock, hands the permits to the
//!    queue in order, and adds what is left only in the same
//!    compare-and-swap that clears the flag once the queue is empty.
//!    Decreases are a compare-and-swap, lock-free (`try_acquire`, the fast
//!    path of `acquire`, `forget_permits`) or under the lock (a waiter about
//!    to enqueue).
//! 4. **No barging.** From 2 and 3, while the queue is non-empty `state`
//!    holds no permits: the waiter that made it non-empty took all of them
//!    in the compare-and-swap that set `WAITERS`, and none come back until
//!    the flag is cleared. So the lock-free fast path can never take permits
//!    a queued waiter is owed, and a large request at the head blocks
//!    smaller ones behind it (strict FIFO).
//! 5. **Completion.** A waiter is served under the lock by whoever
//!    completes it (a releaser once `needs` reaches zero, or `close`): it is
//!    unlinked, its waker taken, and last its node `state` is stored with
//!    `Release`. From then on only its future touches the node, so a future
//!    that loads a served `state` with `Acquire` completes, or is dropped,
//!    without the lock; under the lock, `WAITING` means still linked. A
//!    dropped future leaves no waker behind: its node, waker included, dies
//!    with it after it was unlinked, once its `Drop` has released the lock.
//! 7. **Wakers and the lock.** No waker is woken or dropped under the lock
//!    (`sync/mod.rs`, "Wakers and locks"): served waiters' wakers are
//!    collected (`WakeList`) and woken after unlocking, and a waker replaced
//!    by a later poll is dropped after the guard. So a waker may release
//!    permits, or lock a `Mutex` / `RwLock` built on this, from its `wake`
//!    or `Drop`.
//! 6. **Closing.** `CLOSED` is set under the lock and never cleared. After
//!    it is set no waiter enqueues; `close` fails every queued waiter, which
//!    keeps the permits already assigned to it until its future is dropped
//!    (as Tokio's does: `available_permits` and an mpsc channel's
//!    `capacity` do not rise at the close). A waiter served before the
//!    close but polled after it fails too, and gives its permits back the
//!    same way (Tokio looks at the closed flag first on every poll: no
//!    permit is issued after `close`, and no value is sent after an mpsc
//!    receiver's `close`).
//!
//! `unsafe` is used only to reach nodes through the intrusive list; each
//! block names the invariant it relies on.

use std::fmt;
use std::sync::Arc;
use std::task::Waker;

use crate::loom::{AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::sync::intrusive::List;
use crate::sync::wait_list::WakeList;

mod acquire;
mod error;
mod permit;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use acquire::Acquire;
pub use error::{AcquireError, TryAcquireError};
pub use permit::{OwnedSemaphorePermit, SemaphorePermit};

const CLOSED: usize = 0b01;
const WAITERS: usize = 0b10;
const PERMIT_SHIFT: u32 = 2;

/// A waiter node's `state`: queued (under the lock: still linked).
const WAITING: usize = 0;
/// A waiter node's `state`: all its permits were assigned.
const ACQUIRED: usize = 1;
/// A waiter node's `state`: failed by `close`.
const CLOSED_OUT: usize = 2;

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
    /// Available permits << 2 | `WAITERS` | `CLOSED` (invariants 2, 3, 6).
    state: AtomicUsize,
    waiters: Mutex<List<Waiter>>,
}

/// The lock-protected part of a queued acquisition's node.
#[derive(Debug)]
struct Waiter {
    /// Taken by whoever serves the waiter (invariant 5).
    waker: Option<Waker>,
    /// Permits still missing; zero once served.
    needs: usize,
    /// Permits already handed to this waiter (invariant 1).
    assigned: usize,
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
            waiters: Mutex::new(List::new()),
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
            waiters: Mutex::new(List::new()),
        }
    }

    /// A semaphore that is closed from the start and has no permits, in a
    /// `const` context: what `OnceCell::const_new_with` needs, a cell whose
    /// initialiser permit is already gone for good. No waiter can ever
    /// enqueue on it (invariant 6), and no `WAITERS` flag is set.
    #[cfg(not(loom))]
    pub(crate) const fn const_closed() -> Semaphore {
        Semaphore {
            state: AtomicUsize::new(CLOSED),
            waiters: Mutex::new(List::new()),
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
        // Checked here against the count now, so the panic names the
        // caller's line; `release` checks again as it adds (permits may be
        // returned meanwhile).
        Self::check_overflow(self.state.load(Ordering::Relaxed), n);
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
        // Declared before the guard, so even on unwind no waker is dropped
        // under the lock (invariant 7).
        let mut wakers = Vec::new();
        let mut waiters = crate::loom::lock(&self.waiters);
        // Invariant 6: set under the lock, so no waiter enqueues after this.
        self.state.fetch_or(CLOSED, Ordering::Release);
        while let Some(node) = waiters.pop_front() {
            // SAFETY: under the lock, `node` was linked until just now, so it
            // is valid and ours to serve (invariant 5).
            let node = unsafe { node.as_ref() };
            // SAFETY: the lock is held (intrusive invariant 2). Its assigned
            // permits stay with it (invariant 6).
            let waker = unsafe { node.with_data(|w| w.waker.take()) };
            // Invariant 5: last, the outcome; the node is not touched again.
            node.state().store(CLOSED_OUT, Ordering::Release);
            wakers.extend(waker);
        }
        // Invariant 2: the queue is empty, so clear `WAITERS`.
        self.add_to_state(0, true);
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
            permits: n as usize,
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
            permits: n as usize,
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
            permits: n as usize,
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
            permits: n as usize,
        })
    }

    /// Blocks the current thread until one permit is acquired. For use from
    /// synchronous code (a plain thread, or `spawn_blocking`).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context,
    /// where blocking the thread could deadlock the tasks that would release
    /// permits.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::Semaphore;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let held = sem.try_acquire().unwrap();
    /// let s = sem.clone();
    /// let waiter = std::thread::spawn(move || {
    ///     s.blocking_acquire().unwrap().forget();
    /// });
    /// drop(held);
    /// waiter.join().unwrap();
    /// assert_eq!(sem.available_permits(), 0);
    /// ```
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        super::blocking_wait::block_on(
            "Semaphore::blocking_acquire",
            "semaphore.acquire().await",
            self.acquire(),
        )
    }

    /// Blocks the current thread until `n` permits are acquired. See
    /// [`acquire_many`](Semaphore::acquire_many).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        super::blocking_wait::block_on(
            "Semaphore::blocking_acquire_many",
            "semaphore.acquire_many(n).await",
            self.acquire_many(n),
        )
    }

    /// Blocks the current thread until one permit of a shared semaphore is
    /// acquired. See [`acquire_owned`](Semaphore::acquire_owned).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        super::blocking_wait::block_on(
            "Semaphore::blocking_acquire_owned",
            "semaphore.acquire_owned().await",
            self.acquire_owned(),
        )
    }

    /// Blocks the current thread until `n` permits of a shared semaphore are
    /// acquired. See [`acquire_many_owned`](Semaphore::acquire_many_owned).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    #[track_caller]
    pub fn blocking_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        super::blocking_wait::block_on(
            "Semaphore::blocking_acquire_many_owned",
            "semaphore.acquire_many_owned(n).await",
            self.acquire_many_owned(n),
        )
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
            // Invariant 4: a non-empty queue leaves nothing here to take.
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
        Acquire::new(self, n)
    }

    /// Returns `n` permits: straight to `state` while no one waits, else to
    /// queued waiters in order and what is left over to `state`
    /// (invariant 3).
    pub(crate) fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut cur = self.state.load(Ordering::Relaxed);
        while cur & WAITERS == 0 {
            Self::check_overflow(cur, n);
            // Invariant 3: fails if a waiter set `WAITERS` meanwhile.
            match self.state.compare_exchange_weak(
                cur,
                cur + (n << PERMIT_SHIFT),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
        let waiters = crate::loom::lock(&self.waiters);
        self.release_locked(n, waiters);
    }

    #[track_caller]
    fn check_overflow(cur: usize, n: usize) {
        assert!(
            n <= Self::MAX_PERMITS - (cur >> PERMIT_SHIFT),
            "number of added permits ({n}) would overflow MAX_PERMITS ({})",
            Self::MAX_PERMITS
        );
    }

    /// Adds `n` permits to `state`, clearing `WAITERS` too if
    /// `clear_waiters`. Called under the lock, with the queue empty when
    /// `clear_waiters` is set (invariants 2 and 3).
    fn add_to_state(&self, n: usize, clear_waiters: bool) {
        let mask = if clear_waiters { !WAITERS } else { !0 };
        let mut cur = self.state.load(Ordering::Relaxed);
        loop {
            let next = (cur & mask) + (n << PERMIT_SHIFT);
            if next == cur {
                return;
            }
            Self::check_overflow(cur, n);
            match self
                .state
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Hands `rem` permits to the queue in order; once the queue is empty,
    /// clears `WAITERS` and adds what is left to `state` (invariant 3). Also
    /// called with `rem == 0` by a waiter that just left the queue, to clear
    /// the flag if it was the last.
    fn release_locked<'a>(&'a self, mut rem: usize, waiters: MutexGuard<'a, List<Waiter>>) {
        let mut wakers = WakeList::new();
        // Declared after `wakers`, so on unwind (an overflow panic) the
        // guard goes before `wakers` wakes what it holds (invariant 7).
        let mut waiters = waiters;
        loop {
            while rem > 0 && wakers.can_push() {
                let Some(node) = waiters.front() else { break };
                // SAFETY: a queued node is valid while we hold the lock
                // (intrusive invariant 1).
                let node_ref = unsafe { node.as_ref() };
                // SAFETY: the lock is held (intrusive invariant 2).
                let served = unsafe {
                    node_ref.with_data(|w| {
                        let give = rem.min(w.needs);
                        w.needs -= give;
                        w.assigned += give;
                        rem -= give;
                        (w.needs == 0).then(|| w.waker.take())
                    })
                };
                let Some(waker) = served else { break };
                waiters.pop_front();
                // Invariant 5: last, the outcome; the node is not touched
                // again.
                node_ref.state().store(ACQUIRED, Ordering::Release);
                wakers.push(waker);
            }
            if waiters.is_empty() {
                self.add_to_state(rem, true);
                rem = 0;
            }
            drop(waiters);
            wakers.wake_all();
            if rem == 0 {
                return;
            }
            // The batch of wakers was full: wake it outside the lock, then
            // continue handing out the rest (still owned by us, not in
            // `state`, and `WAITERS` is still set, so invariant 4 holds).
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
