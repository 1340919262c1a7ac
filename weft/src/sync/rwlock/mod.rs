//! An asynchronous reader-writer lock, built on the fair [`Semaphore`].
//!
//! # What this folder owns
//!
//! - `mod.rs`: [`RwLock`] itself, and the invariants below;
//! - `read_guard.rs`: [`RwLockReadGuard`] and [`OwnedRwLockReadGuard`];
//! - `write_guard.rs`: [`RwLockWriteGuard`] and [`OwnedRwLockWriteGuard`];
//! - `mapped_write_guard.rs`: [`RwLockMappedWriteGuard`] and
//!   [`OwnedRwLockMappedWriteGuard`], the write guards `map` returns;
//! - `tests.rs`: unit tests.
//!
//! # Invariants
//!
//! 1. **Permits.** The semaphore `s` holds `mr` permits (the maximum number
//!    of readers) and is never closed. A read guard holds one permit; a
//!    write guard (mapped or not) holds all `mr`. So while a write guard
//!    exists no other guard does, and while a read guard exists no write
//!    guard does. The value in `c` is read only through a guard, written
//!    only through a write guard, and otherwise touched only through
//!    `&mut RwLock` or by value.
//! 2. **Where a guard points.** A guard's `data` points into the value in
//!    `c`: at the whole value, or at the part a `map` closure returned from
//!    a reference the guard lent it. It stays valid while the guard lives,
//!    because the guard keeps the lock alive (a borrow for the guard's
//!    lifetime, or the `Arc` of an owned guard) and holds its permits, so
//!    nobody else can move or write the value. A read guard's `data` is only
//!    read through.
//! 3. **Moving permits.** `map`, `try_map`, `into_mapped`, `downgrade` and
//!    the `downgrade_map`s move the source guard's permits (and its `Arc`)
//!    into the new guard: the source is put in `ManuallyDrop` and never
//!    dropped, so every permit is released once, by the guard that holds
//!    it last (a downgrade releases all but one at once). The closure runs
//!    before the move: if it panics, or a `try_` closure returns `None`, the
//!    source guard is untouched and is dropped or returned as it is.
//!
//! Every `unsafe` block names the invariant it relies on.
//!
//! Fairness and writer preference come from the semaphore's FIFO queue: a
//! waiting writer is assigned permits as readers leave and holds back every
//! reader that queues after it, so writers cannot starve.

use std::fmt;
use std::sync::Arc;

use crate::loom::UnsafeCell;
use crate::sync::mutex::TryLockError;
use crate::sync::semaphore::Semaphore;

mod mapped_write_guard;
mod read_guard;
mod write_guard;

#[cfg(all(test, not(loom)))]
mod tests;

pub use mapped_write_guard::{OwnedRwLockMappedWriteGuard, RwLockMappedWriteGuard};
pub use read_guard::{OwnedRwLockReadGuard, RwLockReadGuard};
pub use write_guard::{OwnedRwLockWriteGuard, RwLockWriteGuard};

/// The default (and largest) number of concurrent readers.
const MAX_READS: u32 = u32::MAX >> 3;

/// An asynchronous reader-writer lock: any number of readers, or one writer.
///
/// The lock is fair and writer-preferring: tasks get the lock in the order
/// they asked for it, and a writer waiting for the lock blocks readers that
/// arrive after it, so a stream of readers cannot starve a writer.
///
/// # Examples
///
/// ```
/// use weft::sync::RwLock;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let lock = RwLock::new(5);
///     {
///         let r1 = lock.read().await;
///         let r2 = lock.read().await;
///         assert_eq!(*r1 + *r2, 10);
///     }
///     {
///         let mut w = lock.write().await;
///         *w += 1;
///     }
///     assert_eq!(*lock.read().await, 6);
/// });
/// ```
pub struct RwLock<T: ?Sized> {
    /// Maximum number of concurrent readers; a writer takes all of them.
    mr: u32,
    s: Semaphore,
    c: UnsafeCell<T>,
}

// SAFETY: the lock hands `&mut T` to one thread at a time (so `T: Send`),
// and `&T` to several threads at once (so `T: Sync`), as `std::sync::RwLock`.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T> RwLock<T> {
    /// Creates an unlocked `RwLock` holding `t`.
    pub fn new(t: T) -> RwLock<T> {
        Self::with_max_readers(t, MAX_READS)
    }

    /// Creates an unlocked `RwLock` that admits at most `max_reads`
    /// concurrent readers.
    ///
    /// # Panics
    ///
    /// Panics if `max_reads` is zero or more than `u32::MAX >> 3`.
    #[track_caller]
    pub fn with_max_readers(t: T, max_reads: u32) -> RwLock<T> {
        assert!(
            max_reads != 0,
            "a RwLock may not be created with 0 readers: pass a max_reads of 1 or more"
        );
        assert!(
            max_reads <= MAX_READS,
            "a RwLock may not be created with more than {MAX_READS} readers"
        );
        RwLock {
            mr: max_reads,
            s: Semaphore::new(max_reads as usize),
            c: UnsafeCell::new(t),
        }
    }

    /// Creates an unlocked `RwLock` that admits at most `max_reads`
    /// concurrent readers, in a `const` context (for a `static`).
    ///
    /// ```
    /// use weft::sync::RwLock;
    ///
    /// static LOCK: RwLock<u8> = RwLock::const_with_max_readers(0, 2);
    /// let a = LOCK.try_read().unwrap();
    /// let b = LOCK.try_read().unwrap();
    /// assert!(LOCK.try_read().is_err());
    /// drop((a, b));
    /// ```
    ///
    /// # Panics
    ///
    /// Panics (at compile time in a `const`) if `max_reads` is zero or more
    /// than `u32::MAX >> 3`.
    #[cfg(not(loom))]
    pub const fn const_with_max_readers(t: T, max_reads: u32) -> RwLock<T> {
        assert!(
            max_reads != 0,
            "a RwLock may not be created with 0 readers: pass a max_reads of 1 or more"
        );
        assert!(
            max_reads <= MAX_READS,
            "a RwLock may not be created with more than u32::MAX >> 3 readers"
        );
        RwLock {
            mr: max_reads,
            s: Semaphore::const_new(max_reads as usize),
            c: UnsafeCell::new(t),
        }
    }

    /// Creates an unlocked `RwLock` in a `const` context (for a `static`).
    #[cfg(not(loom))]
    pub const fn const_new(t: T) -> RwLock<T> {
        RwLock {
            mr: MAX_READS,
            s: Semaphore::const_new(MAX_READS as usize),
            c: UnsafeCell::new(t),
        }
    }

    /// Consumes the lock, returning the value.
    pub fn into_inner(self) -> T {
        let RwLock { mr: _, s: _, c } = self;
        // SAFETY: invariant 1: we own the lock, so no guard exists; the
        // value is read once and the cell forgotten, so it is moved out.
        let value = c.with_mut(|p| unsafe { std::ptr::read(p) });
        std::mem::forget(c);
        value
    }
}

impl<T: ?Sized> RwLock<T> {
    async fn acquire(&self, n: u32) {
        if self.s.acquire_raw(n as usize).await.is_err() {
            // Invariant: the semaphore is never closed.
            unreachable!("the semaphore of a RwLock is never closed");
        }
    }

    /// Locks for reading, waiting while a writer holds the lock or is
    /// queued ahead.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `read` makes you lose your place
    /// in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::RwLock;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let lock = Arc::new(RwLock::new(1));
    ///     let r = lock.read().await;
    ///     let lock2 = lock.clone();
    ///     // Another reader gets in while we hold ours.
    ///     weft::spawn(async move { assert_eq!(*lock2.read().await, 1) })
    ///         .await
    ///         .unwrap();
    ///     drop(r);
    /// });
    /// ```
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        self.acquire(1).await;
        RwLockReadGuard::new(self)
    }

    /// Locks for writing, waiting until no reader or writer holds the lock.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `write` makes you lose your place
    /// in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use weft::sync::RwLock;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let lock = RwLock::new(1);
    ///     *lock.write().await += 1;
    ///     assert_eq!(*lock.read().await, 2);
    /// });
    /// ```
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.acquire(self.mr).await;
        RwLockWriteGuard::new(self)
    }

    /// Locks a shared `RwLock` for reading; the guard owns the `Arc`.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `read_owned` makes you lose your
    /// place in the queue.
    pub async fn read_owned(self: Arc<Self>) -> OwnedRwLockReadGuard<T> {
        self.acquire(1).await;
        OwnedRwLockReadGuard::new(self)
    }

    /// Locks a shared `RwLock` for writing; the guard owns the `Arc`.
    ///
    /// # Cancel safety
    ///
    /// This method uses a queue to fairly distribute locks in the order they
    /// were requested. Cancelling a call to `write_owned` makes you lose your
    /// place in the queue.
    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        self.acquire(self.mr).await;
        OwnedRwLockWriteGuard::new(self)
    }

    /// Tries to lock for reading without waiting. Fails if a writer holds
    /// the lock or any task is queued for it.
    ///
    /// ```
    /// use weft::sync::RwLock;
    ///
    /// let lock = RwLock::new(1);
    /// let r = lock.try_read().unwrap();
    /// assert!(lock.try_read().is_ok());
    /// assert!(lock.try_write().is_err());
    /// drop(r);
    /// ```
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        match self.s.try_acquire_raw(1) {
            Ok(()) => Ok(RwLockReadGuard::new(self)),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock for writing without waiting. Fails if any guard is
    /// held or any task is queued for the lock.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        match self.s.try_acquire_raw(self.mr as usize) {
            Ok(()) => Ok(RwLockWriteGuard::new(self)),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock a shared `RwLock` for reading without waiting.
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        match self.s.try_acquire_raw(1) {
            Ok(()) => Ok(OwnedRwLockReadGuard::new(self)),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock a shared `RwLock` for writing without waiting.
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        match self.s.try_acquire_raw(self.mr as usize) {
            Ok(()) => Ok(OwnedRwLockWriteGuard::new(self)),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Blocks the current thread until it holds a read lock. For use from
    /// synchronous code.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    ///
    /// ```
    /// use weft::sync::RwLock;
    ///
    /// let lock = RwLock::new(3);
    /// assert_eq!(*lock.blocking_read(), 3);
    /// ```
    #[track_caller]
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        super::blocking_wait::block_on("RwLock::blocking_read", "lock.read().await", self.read())
    }

    /// Blocks the current thread until it holds the write lock. For use
    /// from synchronous code.
    ///
    /// # Panics
    ///
    /// Panics if called from inside an asynchronous execution context.
    ///
    /// ```
    /// use weft::sync::RwLock;
    ///
    /// let lock = RwLock::new(3);
    /// *lock.blocking_write() += 1;
    /// assert_eq!(*lock.blocking_read(), 4);
    /// ```
    #[track_caller]
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        super::blocking_wait::block_on("RwLock::blocking_write", "lock.write().await", self.write())
    }

    /// Returns a mutable reference to the value; the `&mut` borrow proves no
    /// guard exists.
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: invariant 1: `&mut self` rules out any guard.
        self.c.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(t: T) -> Self {
        RwLock::new(t)
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}
