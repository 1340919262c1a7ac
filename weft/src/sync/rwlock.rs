//! An asynchronous reader-writer lock, built on the fair [`Semaphore`].
//!
//! # What this file owns
//!
//! [`RwLock`] and its read and write guards.
//!
//! # Invariant
//!
//! The semaphore `s` holds `mr` permits (the maximum number of readers) and
//! is never closed. A read guard holds one permit; a write guard holds all
//! `mr`. So while a write guard exists no other guard does, and while a read
//! guard exists no write guard does. The value in `c` is read only through
//! a guard, written only through a write guard, and otherwise touched only
//! through `&mut RwLock` or by value. Every `unsafe` block relies on this.
//!
//! Fairness and writer preference come from the semaphore's FIFO queue: a
//! waiting writer is assigned permits as readers leave and holds back every
//! reader that queues after it, so writers cannot starve.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::loom::UnsafeCell;
use crate::sync::mutex::TryLockError;
use crate::sync::semaphore::Semaphore;

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
pub struct RwLock<T> {
    /// Maximum number of concurrent readers; a writer takes all of them.
    mr: u32,
    s: Semaphore,
    c: UnsafeCell<T>,
}

// SAFETY: the lock hands `&mut T` to one thread at a time (so `T: Send`),
// and `&T` to several threads at once (so `T: Sync`), as `std::sync::RwLock`.
unsafe impl<T: Send> Send for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for RwLock<T> {}

/// Shared read access to an [`RwLock`], released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T> {
    lock: &'a RwLock<T>,
}

/// Exclusive write access to an [`RwLock`], released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T> {
    lock: &'a RwLock<T>,
}

/// Shared read access to an `Arc<RwLock>`, from [`RwLock::read_owned`].
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockReadGuard<T> {
    lock: Arc<RwLock<T>>,
}

/// Exclusive write access to an `Arc<RwLock>`, from
/// [`RwLock::write_owned`].
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockWriteGuard<T> {
    lock: Arc<RwLock<T>>,
}

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
            max_reads > 0 && max_reads <= MAX_READS,
            "a RwLock must admit between 1 and {MAX_READS} readers"
        );
        RwLock {
            mr: max_reads,
            s: Semaphore::new(max_reads as usize),
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
        RwLockReadGuard { lock: self }
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
        RwLockWriteGuard { lock: self }
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
        OwnedRwLockReadGuard { lock: self }
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
        OwnedRwLockWriteGuard { lock: self }
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
            Ok(()) => Ok(RwLockReadGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock for writing without waiting. Fails if any guard is
    /// held or any task is queued for the lock.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        match self.s.try_acquire_raw(self.mr as usize) {
            Ok(()) => Ok(RwLockWriteGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock a shared `RwLock` for reading without waiting.
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        match self.s.try_acquire_raw(1) {
            Ok(()) => Ok(OwnedRwLockReadGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Tries to lock a shared `RwLock` for writing without waiting.
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        match self.s.try_acquire_raw(self.mr as usize) {
            Ok(()) => Ok(OwnedRwLockWriteGuard { lock: self }),
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
        // SAFETY: module invariant: `&mut self` rules out any guard.
        self.c.with_mut(|p| unsafe { &mut *p })
    }

    /// Consumes the lock, returning the value.
    pub fn into_inner(self) -> T {
        let RwLock { mr: _, s: _, c } = self;
        // SAFETY: module invariant: we own the lock, so no guard exists; the
        // value is read once and the cell forgotten, so it is moved out.
        let value = c.with_mut(|p| unsafe { std::ptr::read(p) });
        std::mem::forget(c);
        value
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

impl<T: fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

// ----- Guards ---------------------------------------------------------------

impl<'a, T> RwLockWriteGuard<'a, T> {
    /// Turns the write lock into a read lock without letting any other
    /// writer in between. Readers queued behind may then proceed.
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockWriteGuard};
    ///
    /// let lock = RwLock::new(1);
    /// let mut w = lock.try_write().unwrap();
    /// *w = 2;
    /// let r = RwLockWriteGuard::downgrade(w);
    /// assert_eq!(*r, 2);
    /// assert!(lock.try_read().is_ok());
    /// assert!(lock.try_write().is_err());
    /// ```
    pub fn downgrade(this: Self) -> RwLockReadGuard<'a, T> {
        let lock = this.lock;
        std::mem::forget(this);
        // Keep one of the writer's permits as the reader's.
        lock.s.release(lock.mr as usize - 1);
        RwLockReadGuard { lock }
    }
}

macro_rules! deref_shared {
    ($name:ident $(<$lt:lifetime>)?) => {
        impl<T> Deref for $name<$($lt,)? T> {
            type Target = T;
            fn deref(&self) -> &T {
                // SAFETY: module invariant: a guard holds at least one
                // permit, so no other guard writes the value.
                self.lock.c.with(|p| unsafe { &*p })
            }
        }
        impl<T: fmt::Debug> fmt::Debug for $name<$($lt,)? T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }
        impl<T: fmt::Display> fmt::Display for $name<$($lt,)? T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    };
}

macro_rules! deref_exclusive {
    ($name:ident $(<$lt:lifetime>)?) => {
        impl<T> DerefMut for $name<$($lt,)? T> {
            fn deref_mut(&mut self) -> &mut T {
                // SAFETY: module invariant: a write guard holds every
                // permit, so no other guard exists.
                self.lock.c.with_mut(|p| unsafe { &mut *p })
            }
        }
    };
}

deref_shared!(RwLockReadGuard<'_>);
deref_shared!(OwnedRwLockReadGuard);
deref_shared!(RwLockWriteGuard<'_>);
deref_shared!(OwnedRwLockWriteGuard);
deref_exclusive!(RwLockWriteGuard<'_>);
deref_exclusive!(OwnedRwLockWriteGuard);

impl<T> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T> Drop for OwnedRwLockReadGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.s.release(self.lock.mr as usize);
    }
}

impl<T> Drop for OwnedRwLockWriteGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(self.lock.mr as usize);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    #[test]
    fn readers_share_writers_exclude() {
        let lock = RwLock::new(0);
        let r1 = lock.try_read().unwrap();
        let r2 = lock.try_read().unwrap();
        assert!(lock.try_write().is_err());
        drop((r1, r2));
        let mut w = lock.try_write().unwrap();
        *w = 1;
        assert!(lock.try_read().is_err());
        drop(w);
        assert_eq!(*lock.try_read().unwrap(), 1);
    }

    #[test]
    fn waiting_writer_blocks_new_readers() {
        let lock = RwLock::new(0);
        let cx = &mut Context::from_waker(Waker::noop());
        let r = lock.try_read().unwrap();
        let mut w = pin!(lock.write());
        assert!(w.as_mut().poll(cx).is_pending());
        // A writer is queued: new readers must wait behind it.
        assert!(lock.try_read().is_err());
        let mut r2 = pin!(lock.read());
        assert!(r2.as_mut().poll(cx).is_pending());
        drop(r);
        let Poll::Ready(mut wg) = w.as_mut().poll(cx) else {
            panic!("writer not granted")
        };
        *wg = 7;
        assert!(r2.as_mut().poll(cx).is_pending());
        drop(wg);
        let Poll::Ready(rg) = r2.as_mut().poll(cx) else {
            panic!("reader not granted")
        };
        assert_eq!(*rg, 7);
    }

    #[test]
    fn max_readers_and_downgrade() {
        let lock = RwLock::with_max_readers(1, 2);
        let w = lock.try_write().unwrap();
        let r = RwLockWriteGuard::downgrade(w);
        let r2 = lock.try_read().unwrap();
        assert!(lock.try_read().is_err(), "only two readers");
        drop((r, r2));
        assert_eq!(lock.into_inner(), 1);
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<RwLock<u8>>();
        assert_send_sync::<RwLockReadGuard<'static, u8>>();
        assert_send_sync::<RwLockWriteGuard<'static, u8>>();
        assert_send_sync::<OwnedRwLockReadGuard<u8>>();
        assert_send_sync::<OwnedRwLockWriteGuard<u8>>();
    }
}
