//! [`OnceCell`]: a cell written at most once, with async initialisation.
//!
//! # What this file owns
//!
//! `OnceCell` and `SetError`.
//!
//! # Invariants
//!
//! The cell pairs `value` with `value_set` (an `AtomicBool`) and a
//! [`Semaphore`] of one permit that serialises initialisers. Every `unsafe`
//! block relies on these:
//!
//! 1. **Writer.** Through `&self`, `value` is written only by the holder of
//!    the semaphore's permit, and only while `value_set` is false. Having
//!    written it, the holder sets `value_set` (release) and closes the
//!    semaphore without returning the permit, so no one ever writes again.
//!    An initialiser that fails, panics or is cancelled drops the permit
//!    unused, and the next queued initialiser gets it.
//! 2. **Readers.** Through `&self`, `value` is read only after observing
//!    `value_set == true` (acquire); from then on it never changes while
//!    shared. A closed semaphore therefore means "initialised": the close
//!    happens after the release store, and waiters see it through the
//!    semaphore's lock.
//! 3. **Exclusive access.** `&mut self` and by-value methods may read and
//!    write everything, and reset the cell to the uninitialised state.

use std::fmt;
use std::future::Future;

use crate::loom::{AtomicBool, Ordering, UnsafeCell};
use crate::sync::semaphore::Semaphore;

/// Error returned by [`OnceCell::set`], giving the value back.
#[derive(Debug, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell was already initialised.
    AlreadyInitializedError(T),
    /// The cell is being initialised by another task right now.
    InitializingError(T),
}

impl<T> SetError<T> {
    /// Whether the cell was already initialised.
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// Whether another task was initialising the cell.
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}

impl<T> fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => f.write_str("AlreadyInitializedError"),
            SetError::InitializingError(_) => f.write_str("InitializingError"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for SetError<T> {}

/// A thread-safe cell that is written at most once, typically by the first
/// task to call [`get_or_init`](OnceCell::get_or_init) with an async
/// initialiser.
///
/// While one initialiser runs, other callers wait for it (in FIFO order);
/// if it fails or is cancelled, the next waiting caller runs its own.
///
/// # Examples
///
/// ```
/// use weft::sync::OnceCell;
///
/// static CONFIG: OnceCell<u32> = OnceCell::const_new();
///
/// async fn load() -> u32 {
///     42
/// }
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let a = weft::spawn(async { *CONFIG.get_or_init(load).await });
///     let b = weft::spawn(async { *CONFIG.get_or_init(load).await });
///     assert_eq!(a.await.unwrap(), 42);
///     assert_eq!(b.await.unwrap(), 42);
///     assert_eq!(CONFIG.get(), Some(&42));
/// });
/// ```
pub struct OnceCell<T> {
    value_set: AtomicBool,
    value: UnsafeCell<Option<T>>,
    semaphore: Semaphore,
}

// SAFETY: the value is written by one thread (invariant 1) and then shared
// by reference (invariant 2), so sharing the cell needs `T: Send + Sync`,
// and sending it needs `T: Send`, as for `std::sync::OnceLock`.
unsafe impl<T: Send + Sync> Sync for OnceCell<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for OnceCell<T> {}

/// Returns the initialiser's permit to the semaphore if dropped, that is,
/// if the initialiser fails, panics or is cancelled (invariant 1).
struct InitPermit<'a>(&'a Semaphore);

impl Drop for InitPermit<'_> {
    fn drop(&mut self) {
        self.0.release(1);
    }
}

impl<T> OnceCell<T> {
    /// Creates an empty cell.
    pub fn new() -> OnceCell<T> {
        OnceCell {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(None),
            semaphore: Semaphore::new(1),
        }
    }

    /// Creates an empty cell in a `const` context (for a `static`).
    #[cfg(not(loom))]
    pub const fn const_new() -> OnceCell<T> {
        OnceCell {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(None),
            semaphore: Semaphore::const_new(1),
        }
    }

    /// Creates a cell already holding `value`, in a `const` context (for a
    /// `static`).
    ///
    /// ```
    /// use weft::sync::OnceCell;
    ///
    /// static ANSWER: OnceCell<u32> = OnceCell::const_new_with(42);
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     // Already initialised: the initialiser never runs.
    ///     assert_eq!(*ANSWER.get_or_init(|| async { 0 }).await, 42);
    /// });
    /// ```
    #[cfg(not(loom))]
    pub const fn const_new_with(value: T) -> OnceCell<T> {
        // The state `publish` leaves behind (invariant 1): value set, and
        // the semaphore closed with the permit gone, so no one writes again.
        OnceCell {
            value_set: AtomicBool::new(true),
            value: UnsafeCell::new(Some(value)),
            semaphore: Semaphore::const_closed(),
        }
    }

    /// Creates a cell holding `value` if it is `Some`, or an empty one.
    pub fn new_with(value: Option<T>) -> OnceCell<T> {
        match value {
            None => OnceCell::new(),
            Some(v) => {
                let semaphore = Semaphore::new(0);
                semaphore.close();
                OnceCell {
                    value_set: AtomicBool::new(true),
                    value: UnsafeCell::new(Some(v)),
                    semaphore,
                }
            }
        }
    }

    /// Whether the cell holds a value.
    pub fn initialized(&self) -> bool {
        self.value_set.load(Ordering::Acquire)
    }

    /// The value, or `None` if the cell is not initialised yet.
    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: invariant 2: `value_set` observed true (acquire).
            self.value.with(|p| unsafe { (*p).as_ref() })
        } else {
            None
        }
    }

    /// The value, mutably, or `None` if the cell is not initialised.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        // SAFETY: invariant 3: `&mut self` is exclusive.
        self.value.with_mut(|p| unsafe { (*p).as_mut() })
    }

    /// Stores `value` while holding the permit, publishes it, and closes
    /// the semaphore so the permit is never handed out again.
    fn publish(&self, permit: InitPermit<'_>, value: T) -> &T {
        std::mem::forget(permit);
        // SAFETY: invariant 1: we hold the permit and `value_set` is false
        // (only a permit holder sets it, and then never returns the permit).
        self.value.with_mut(|p| unsafe { *p = Some(value) });
        self.value_set.store(true, Ordering::Release);
        self.semaphore.close();
        self.get().expect("value was just published")
    }

    /// Sets the value if the cell is empty and no initialiser is running.
    ///
    /// Returns the value back in [`SetError::AlreadyInitializedError`] if
    /// the cell holds a value, or in [`SetError::InitializingError`] if
    /// another task is initialising it.
    ///
    /// ```
    /// use weft::sync::OnceCell;
    ///
    /// let cell = OnceCell::new();
    /// assert!(cell.set(1).is_ok());
    /// assert!(cell.set(2).unwrap_err().is_already_init_err());
    /// assert_eq!(cell.get(), Some(&1));
    /// ```
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        if self.initialized() {
            return Err(SetError::AlreadyInitializedError(value));
        }
        match self.semaphore.try_acquire_raw(1) {
            Ok(()) => {
                self.publish(InitPermit(&self.semaphore), value);
                Ok(())
            }
            Err(e) if e.is_closed() => Err(SetError::AlreadyInitializedError(value)),
            Err(_) => Err(SetError::InitializingError(value)),
        }
    }

    /// Returns the value, initialising it with `f().await` first if the
    /// cell is empty. Only one initialiser runs at a time; other callers
    /// wait for it and then return its value.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe in that cancelling it never leaves the
    /// cell half-initialised: if the call running the initialiser is
    /// cancelled (or its initialiser panics), the next waiting caller runs
    /// its own initialiser. Waiting callers queue in FIFO order, and a
    /// cancelled caller loses its place in the queue.
    ///
    /// ```
    /// use weft::sync::OnceCell;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let cell = OnceCell::new();
    ///     assert_eq!(*cell.get_or_init(|| async { 1 }).await, 1);
    ///     // Already set: the second initialiser does not run.
    ///     assert_eq!(*cell.get_or_init(|| async { 2 }).await, 1);
    /// });
    /// ```
    pub async fn get_or_init<F, Fut>(&self, f: F) -> &T
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        if let Some(v) = self.get() {
            return v;
        }
        match self.semaphore.acquire_raw(1).await {
            Ok(()) => {
                let permit = InitPermit(&self.semaphore);
                let value = f().await;
                self.publish(permit, value)
            }
            // Invariant 2: closed means initialised.
            Err(_) => self
                .get()
                .expect("a closed OnceCell semaphore means a set value"),
        }
    }

    /// Returns the value, initialising it with `f().await` first if the
    /// cell is empty; if `f` fails, the cell stays empty, the error is
    /// returned, and the next waiting caller runs its own initialiser.
    ///
    /// # Cancel safety
    ///
    /// As for [`get_or_init`](OnceCell::get_or_init).
    ///
    /// ```
    /// use weft::sync::OnceCell;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let cell = OnceCell::new();
    ///     let failed: Result<&u32, &str> = cell.get_or_try_init(|| async { Err("nope") }).await;
    ///     assert!(failed.is_err());
    ///     assert!(!cell.initialized());
    ///     let ok: Result<&u32, &str> = cell.get_or_try_init(|| async { Ok(3) }).await;
    ///     assert_eq!(ok, Ok(&3));
    /// });
    /// ```
    pub async fn get_or_try_init<E, F, Fut>(&self, f: F) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        if let Some(v) = self.get() {
            return Ok(v);
        }
        match self.semaphore.acquire_raw(1).await {
            Ok(()) => {
                let permit = InitPermit(&self.semaphore);
                let value = f().await?;
                Ok(self.publish(permit, value))
            }
            // Invariant 2: closed means initialised.
            Err(_) => Ok(self
                .get()
                .expect("a closed OnceCell semaphore means a set value")),
        }
    }

    /// Takes the value out, leaving the cell empty (and usable again).
    ///
    /// ```
    /// use weft::sync::OnceCell;
    ///
    /// let mut cell = OnceCell::new_with(Some(1));
    /// assert_eq!(cell.take(), Some(1));
    /// assert!(!cell.initialized());
    /// assert!(cell.set(2).is_ok());
    /// ```
    pub fn take(&mut self) -> Option<T> {
        // Invariant 3: exclusive access, so relaxed accesses suffice (`get_mut`
        // is not available on loom's atomics).
        if !self.value_set.load(Ordering::Relaxed) {
            return None;
        }
        self.value_set.store(false, Ordering::Relaxed);
        self.semaphore = Semaphore::new(1);
        // SAFETY: invariant 3: `&mut self` is exclusive.
        self.value.with_mut(|p| unsafe { (*p).take() })
    }

    /// Consumes the cell, returning its value if it was initialised.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> Self {
        OnceCell::new()
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell::new_with(Some(value))
    }
}

impl<T: Clone> Clone for OnceCell<T> {
    fn clone(&self) -> Self {
        OnceCell::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for OnceCell<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceCell<T> {}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceCell")
            .field("value", &self.get())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    #[test]
    fn set_get_take() {
        let mut cell = OnceCell::new();
        assert_eq!(cell.get(), None);
        cell.set(1).unwrap();
        assert_eq!(cell.set(2), Err(SetError::AlreadyInitializedError(2)));
        assert_eq!(cell.get(), Some(&1));
        *cell.get_mut().unwrap() = 3;
        assert_eq!(cell.take(), Some(3));
        assert_eq!(cell.take(), None);
        cell.set(4).unwrap();
        assert_eq!(cell.clone().into_inner(), Some(4));
    }

    #[test]
    fn set_while_initialising_fails() {
        let cell = OnceCell::new();
        let cx = &mut Context::from_waker(Waker::noop());
        let mut init = pin!(cell.get_or_init(std::future::pending::<u32>));
        assert!(init.as_mut().poll(cx).is_pending());
        assert_eq!(cell.set(1), Err(SetError::InitializingError(1)));
    }

    #[test]
    fn cancelled_initialiser_lets_next_run() {
        let cell = OnceCell::new();
        let cx = &mut Context::from_waker(Waker::noop());
        let mut first = Box::pin(cell.get_or_init(std::future::pending::<u32>));
        assert!(first.as_mut().poll(cx).is_pending());
        let mut second = pin!(cell.get_or_init(|| async { 7 }));
        assert!(second.as_mut().poll(cx).is_pending());
        drop(first);
        assert_eq!(second.as_mut().poll(cx), Poll::Ready(&7));
        assert!(cell.semaphore.is_closed());
    }

    #[test]
    fn waiters_get_the_first_value() {
        let cell = OnceCell::new();
        let cx = &mut Context::from_waker(Waker::noop());
        let mut second = pin!(cell.get_or_init(|| async { 2 }));
        let (tx, rx) = crate::sync::oneshot::channel::<u32>();
        let mut first = pin!(cell.get_or_init(|| async { rx.await.unwrap() }));
        assert!(first.as_mut().poll(cx).is_pending());
        assert!(second.as_mut().poll(cx).is_pending());
        tx.send(1).unwrap();
        assert_eq!(first.as_mut().poll(cx), Poll::Ready(&1));
        assert_eq!(second.as_mut().poll(cx), Poll::Ready(&1));
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<OnceCell<u8>>();
    }
}
