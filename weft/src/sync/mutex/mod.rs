//! An asynchronous mutual-exclusion lock, built on the fair [`Semaphore`].
//!
//! # What this folder owns
//!
//! - `mod.rs`: [`Mutex`], its guards [`MutexGuard`] and [`OwnedMutexGuard`],
//!   and [`TryLockError`] (shared with `RwLock`);
//! - `mapped.rs`: the guards `map` returns, [`MappedMutexGuard`] and
//!   [`OwnedMappedMutexGuard`], and every guard's `map` / `try_map`;
//! - `tests.rs`: unit tests.
//!
//! # Invariants
//!
//! The semaphore `s` has exactly one permit, and it is never closed. The
//! value in `c` is accessed only (a) through a guard, and a guard exists only
//! while it holds that permit, so at most one guard exists at a time; or
//! (b) through `&mut Mutex` / by value, when no guard can exist.
//!
//! (c) **Mapping.** A mapped guard points at a part of the value that a
//! `map` closure returned from the `&mut` its source guard lent it; the
//! pointer stays valid while the mapped guard holds the permit (and, for
//! an owned one, the `Arc` that keeps the mutex alive). `map` moves the
//! permit (and `Arc`) from the source guard to the new one: the source is
//! put in `ManuallyDrop` and never dropped, so the permit is released once,
//! by the last guard. The closure runs first: if it panics, or a `try_map`
//! closure returns `None`, the source guard is untouched.
//!
//! Every `unsafe` block below relies on these.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::loom::UnsafeCell;
use crate::sync::semaphore::Semaphore;

mod mapped;

#[cfg(all(test, not(loom)))]
mod tests;

pub use mapped::{MappedMutexGuard, OwnedMappedMutexGuard};

/// Error returned by [`Mutex::try_lock`], [`RwLock::try_read`] and
/// [`RwLock::try_write`] when the lock is held.
///
/// [`RwLock::try_read`]: super::RwLock::try_read
/// [`RwLock::try_write`]: super::RwLock::try_write
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryLockError(pub(super) ());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryLockError {}

/// An asynchronous mutex: like `std::sync::Mutex`, but [`lock`](Mutex::lock)
/// waits without blocking the thread, and the guard may be held across an
/// `.await`.
///
/// The lock is fair: tasks acquire it in the order they called `lock`. Hold
/// a plain `std::sync::Mutex` instead when the guard is never held across an
/// `.await`; it is cheaper.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weft::sync::Mutex;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let count = Arc::new(Mutex::new(0));
///     let mut handles = Vec::new();
///     for _ in 0..10 {
///         let count = count.clone();
///         handles.push(weft::spawn(async move {
///             let mut n = count.lock().await;
///             *n += 1;
///         }));
///     }
///     for h in handles {
///         h.await.unwrap();
///     }
///     assert_eq!(*count.lock().await, 10);
/// });
/// ```
pub struct Mutex<T: ?Sized> {
    s: Semaphore,
    c: UnsafeCell<T>,
}

// SAFETY: the module invariant gives one thread at a time access to the
// value, which only needs `T: Send` (as for `std::sync::Mutex`).
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// A handle to a held [`Mutex`]; the lock is released when it is dropped.
/// Dereferences to the protected value.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
}

/// An owned handle to a held [`Mutex`], from [`Mutex::lock_owned`]; it keeps
/// the mutex alive through its `Arc`, so it can move into a spawned task.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct OwnedMutexGuard<T: ?Sized> {
    lock: Arc<Mutex<T>>,
}

// SAFETY: a shared guard only gives out `&T` (invariant: exclusive access
// while the guard lives), which is safe to share when `T: Sync`.
unsafe impl<T: ?Sized + Send + Sync> Sync for MutexGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for OwnedMutexGuard<T> {}

impl<T> Mutex<T> {
    /// Creates an unlocked mutex holding `t`.
    pub fn new(t: T) -> Mutex<T> {
        Mutex {
            s: Semaphore::new(1),
            c: UnsafeCell::new(t),
        }
    }

    /// Creates an unlocked mutex in a `const` context (for a `static`).
    ///
    /// ```
    /// use weft::sync::Mutex;
    ///
    /// static LOCK: Mutex<i32> = Mutex::const_new(5);
    /// assert_eq!(*LOCK.try_lock().unwrap(), 5);
    /// ```
    #[cfg(not(loom))]
    pub const fn const_new(t: T) -> Mutex<T> {
        Mutex {
            s: Semaphore::const_new(1),
            c: UnsafeCell::new(t),
        }
    }

    /// Consumes the mutex, returning the value.
    pub fn into_inner(self) -> T {
        let Mutex { s: _, c } = self;
        // SAFETY: module invariant (b): we own the mutex, so no guard
        // exists; the value is read once and the cell forgotten below, so
        // it is moved out, not duplicated.
        let value = c.with_mut(|p| unsafe { std::ptr::read(p) });
        std::mem::forget(c);
        value
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks the mutex, waiting until it is available.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `lock` makes you lose your place
    /// in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::Mutex;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let mutex = Mutex::new(1);
    ///     let mut n = mutex.lock().await;
    ///     *n = 2;
    ///     drop(n);
    ///     assert_eq!(*mutex.lock().await, 2);
    /// });
    /// ```
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        self.acquire().await;
        MutexGuard { lock: self }
    }

    /// Locks a shared mutex, returning a guard that owns the `Arc`.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `lock_owned` makes you lose your
    /// place in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::Mutex;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let mutex = Arc::new(Mutex::new(1));
    ///     let mut guard = mutex.clone().lock_owned().await;
    ///     weft::spawn(async move { *guard += 1 }).await.unwrap();
    ///     assert_eq!(*mutex.lock().await, 2);
    /// });
    /// ```
    pub async fn lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        self.acquire().await;
        OwnedMutexGuard { lock: self }
    }

    async fn acquire(&self) {
        if self.s.acquire_raw(1).await.is_err() {
            // Invariant: the semaphore is never closed.
            unreachable!("the semaphore of a Mutex is never closed");
        }
    }

    /// Tries to lock the mutex without waiting. Fails with
    /// [`TryLockError`] if it is held, or if other tasks are queued for it.
    ///
    /// ```
    /// use weft::sync::Mutex;
    ///
    /// let mutex = Mutex::new(1);
    /// let guard = mutex.try_lock().unwrap();
    /// assert!(mutex.try_lock().is_err());
    /// drop(guard);
    /// assert!(mutex.try_lock().is_ok());
    /// ```
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        match self.s.try_acquire_raw(1) {
            Ok(()) => Ok(MutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock a shared mutex without waiting. See
    /// [`try_lock`](Mutex::try_lock).
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        match self.s.try_acquire_raw(1) {
            Ok(()) => Ok(OwnedMutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Blocks the current thread until the mutex is locked. For use from
    /// synchronous code.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context,
    /// where blocking the thread would stall the runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::Mutex;
    ///
    /// let mutex = Arc::new(Mutex::new(1));
    /// let m = mutex.clone();
    /// std::thread::spawn(move || *m.blocking_lock() += 1).join().unwrap();
    /// assert_eq!(*mutex.blocking_lock(), 2);
    /// ```
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        super::blocking_wait::block_on("Mutex::blocking_lock", "mutex.lock().await", self.lock())
    }

    /// Blocks the current thread until the shared mutex is locked. See
    /// [`blocking_lock`](Mutex::blocking_lock).
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    #[track_caller]
    pub fn blocking_lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        super::blocking_wait::block_on(
            "Mutex::blocking_lock_owned",
            "mutex.lock_owned().await",
            self.lock_owned(),
        )
    }

    /// Returns a mutable reference to the value. No locking is needed: the
    /// `&mut` borrow proves no guard exists.
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: module invariant (b): `&mut self` rules out any guard.
        self.c.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(t: T) -> Self {
        Mutex::new(t)
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

// ----- Guards ---------------------------------------------------------------

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The mutex this guard locks.
    pub fn mutex(this: &Self) -> &'a Mutex<T> {
        this.lock
    }
}

impl<T: ?Sized> OwnedMutexGuard<T> {
    /// The mutex this guard locks.
    pub fn mutex(this: &Self) -> &Arc<Mutex<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the permit (module invariant).
        self.lock.c.with(|p| unsafe { &*p })
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the permit (module invariant).
        self.lock.c.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> Deref for OwnedMutexGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the permit (module invariant).
        self.lock.c.with(|p| unsafe { &*p })
    }
}

impl<T: ?Sized> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the permit (module invariant).
        self.lock.c.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
