//! The read guards: [`RwLockReadGuard`] (borrowing the lock) and
//! [`OwnedRwLockReadGuard`] (owning an `Arc` of it). Each holds one permit
//! and a pointer into the value (parent module, invariants 1 and 2); `map`
//! narrows the pointer and keeps the permit (invariant 3).

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

use super::RwLock;
use crate::sync::semaphore::Semaphore;

/// Shared read access to an [`RwLock`], or to a part of its value after
/// [`map`](RwLockReadGuard::map); the read lock is released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    s: &'a Semaphore,
    data: *const T,
    marker: PhantomData<&'a T>,
}

/// Shared read access to an `Arc<RwLock<T>>`, from
/// [`RwLock::read_owned`]; after [`map`](OwnedRwLockReadGuard::map) it
/// dereferences to a part `U` of the value.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockReadGuard<T: ?Sized, U: ?Sized = T> {
    lock: Arc<RwLock<T>>,
    data: *const U,
}

// SAFETY: a read guard acts as a `&T` (invariants 1 and 2: only read
// through, and no writer while it lives), which may be sent and shared
// when `T: Sync`.
unsafe impl<T: ?Sized + Sync> Send for RwLockReadGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: as above for `U`; the guard also owns an `Arc<RwLock<T>>`, whose
// last drop may drop the `T` on whichever thread holds it, so `T` must be
// `Send + Sync` as for the `Arc` itself.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Sync> Send for OwnedRwLockReadGuard<T, U> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Sync> Sync for OwnedRwLockReadGuard<T, U> {}

impl<'a, T: ?Sized> RwLockReadGuard<'a, T> {
    /// The guard for a read permit just acquired from `lock`.
    pub(super) fn new(lock: &'a RwLock<T>) -> RwLockReadGuard<'a, T> {
        RwLockReadGuard {
            s: &lock.s,
            data: lock.c.with(|p| p),
            marker: PhantomData,
        }
    }

    /// A guard holding one read permit of `s` and pointing at `data`
    /// (invariants 1 and 2 are the caller's to uphold).
    pub(super) fn from_parts(s: &'a Semaphore, data: *const T) -> RwLockReadGuard<'a, T> {
        RwLockReadGuard {
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Makes a guard for a part of the locked value; the read lock stays
    /// held until the new guard is dropped. An associated function, so it
    /// does not shadow a method of `T`: call it as
    /// `RwLockReadGuard::map(guard, f)`.
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockReadGuard};
    ///
    /// let lock = RwLock::new((1, 2));
    /// let second = RwLockReadGuard::map(lock.try_read().unwrap(), |p| &p.1);
    /// assert_eq!(*second, 2);
    /// assert!(lock.try_write().is_err());
    /// drop(second);
    /// assert!(lock.try_write().is_ok());
    /// ```
    pub fn map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        // Invariant 3: the permit moves to the new guard.
        let this = ManuallyDrop::new(this);
        RwLockReadGuard::from_parts(this.s, data)
    }

    /// Like [`map`](RwLockReadGuard::map), but `f` may decline by returning
    /// `None`, which gives the original guard back.
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockReadGuard};
    ///
    /// let lock = RwLock::new(vec![1, 2]);
    /// let guard = lock.try_read().unwrap();
    /// let guard = RwLockReadGuard::try_map(guard, |v| v.get(5)).unwrap_err();
    /// let first = RwLockReadGuard::try_map(guard, |v| v.first()).unwrap();
    /// assert_eq!(*first, 1);
    /// ```
    pub fn try_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let Some(data) = f(&*this).map(|u| u as *const U) else {
            return Err(this);
        };
        // Invariant 3: the permit moves to the new guard.
        let this = ManuallyDrop::new(this);
        Ok(RwLockReadGuard::from_parts(this.s, data))
    }
}

impl<T: ?Sized> OwnedRwLockReadGuard<T> {
    /// The guard for a read permit just acquired from `lock`.
    pub(super) fn new(lock: Arc<RwLock<T>>) -> OwnedRwLockReadGuard<T> {
        let data = lock.c.with(|p| p);
        OwnedRwLockReadGuard { lock, data }
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockReadGuard<T, U> {
    /// A guard holding one read permit of `lock` and pointing at `data`
    /// (invariants 1 and 2 are the caller's to uphold).
    pub(super) fn from_parts(lock: Arc<RwLock<T>>, data: *const U) -> Self {
        OwnedRwLockReadGuard { lock, data }
    }

    /// Takes the `Arc` out of a guard that is being consumed without
    /// releasing its permit (invariant 3: the caller moves the permit on).
    fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: invariant 3: `this` is never dropped or used again, so the
        // `Arc` is moved out, not duplicated.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Makes a guard for a part of the locked value; the read lock stays
    /// held until the new guard is dropped. Call it as
    /// `OwnedRwLockReadGuard::map(guard, f)`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{OwnedRwLockReadGuard, RwLock};
    ///
    /// let lock = Arc::new(RwLock::new((1, 2)));
    /// let guard = lock.clone().try_read_owned().unwrap();
    /// let second = OwnedRwLockReadGuard::map(guard, |p| &p.1);
    /// assert_eq!(*second, 2);
    /// assert!(lock.try_write().is_err());
    /// ```
    pub fn map<F, V: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, V>
    where
        F: FnOnce(&U) -> &V,
    {
        let data = f(&*this) as *const V;
        OwnedRwLockReadGuard::from_parts(Self::into_lock(this), data)
    }

    /// Like [`map`](OwnedRwLockReadGuard::map), but `f` may decline by
    /// returning `None`, which gives the original guard back.
    pub fn try_map<F, V: ?Sized>(this: Self, f: F) -> Result<OwnedRwLockReadGuard<T, V>, Self>
    where
        F: FnOnce(&U) -> Option<&V>,
    {
        let Some(data) = f(&*this).map(|v| v as *const V) else {
            return Err(this);
        };
        Ok(OwnedRwLockReadGuard::from_parts(
            Self::into_lock(this),
            data,
        ))
    }

    /// The lock this guard reads.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{OwnedRwLockReadGuard, RwLock};
    ///
    /// let lock = Arc::new(RwLock::new(1));
    /// let guard = lock.clone().try_read_owned().unwrap();
    /// assert!(Arc::ptr_eq(OwnedRwLockReadGuard::rwlock(&guard), &lock));
    /// ```
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: invariants 1 and 2: `data` points into the value, which no
        // writer touches while this read permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedRwLockReadGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: invariants 1 and 2, as for `RwLockReadGuard`.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.s.release(1);
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockReadGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Debug> fmt::Debug for OwnedRwLockReadGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Display> fmt::Display for OwnedRwLockReadGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
