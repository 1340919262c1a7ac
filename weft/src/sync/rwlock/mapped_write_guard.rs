//! The mapped write guards, which [`RwLockWriteGuard::map`] and
//! [`OwnedRwLockWriteGuard::map`] return: [`RwLockMappedWriteGuard`] and
//! [`OwnedRwLockMappedWriteGuard`]. They hold all of the lock's permits and
//! a pointer to a part of the value (parent module, invariants 1 and 2);
//! mapping again narrows the pointer (invariant 3). Unlike the unmapped
//! write guards they cannot be downgraded: a read guard of the part would
//! no longer know the whole value, which Tokio does not offer either.
//!
//! [`RwLockWriteGuard::map`]: super::RwLockWriteGuard::map
//! [`OwnedRwLockWriteGuard::map`]: super::OwnedRwLockWriteGuard::map

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::RwLock;
use crate::sync::semaphore::Semaphore;

/// Exclusive write access to a part of an [`RwLock`]'s value, from
/// [`RwLockWriteGuard::map`](super::RwLockWriteGuard::map); the lock is
/// released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockMappedWriteGuard<'a, T: ?Sized> {
    s: &'a Semaphore,
    /// All of the lock's permits.
    permits: u32,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// Exclusive write access to a part `U` of the value of an
/// `Arc<RwLock<T>>`, from
/// [`OwnedRwLockWriteGuard::map`](super::OwnedRwLockWriteGuard::map).
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockMappedWriteGuard<T: ?Sized, U: ?Sized = T> {
    lock: Arc<RwLock<T>>,
    data: *mut U,
}

// SAFETY: the guard acts as a `&mut T` (invariants 1 and 2); as for
// `RwLockWriteGuard`, sending or sharing it needs `T: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync> Send for RwLockMappedWriteGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLockMappedWriteGuard<'_, T> {}
// SAFETY: as above for `U`; the guard also owns an `Arc<RwLock<T>>`, which
// needs `T: Send + Sync` to be sent or shared.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Send
    for OwnedRwLockMappedWriteGuard<T, U>
{
}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Sync
    for OwnedRwLockMappedWriteGuard<T, U>
{
}

impl<'a, T: ?Sized> RwLockMappedWriteGuard<'a, T> {
    /// A guard holding `permits` (all) of `s` and pointing at `data`
    /// (invariants 1 and 2 are the caller's to uphold).
    pub(super) fn from_parts(s: &'a Semaphore, permits: u32, data: *mut T) -> Self {
        RwLockMappedWriteGuard {
            s,
            permits,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard to a part of the part it covers; the lock stays
    /// held. Call it as `RwLockMappedWriteGuard::map(guard, f)`.
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockMappedWriteGuard, RwLockWriteGuard};
    ///
    /// let lock = RwLock::new(((1, 2), 3));
    /// let pair = RwLockWriteGuard::map(lock.try_write().unwrap(), |v| &mut v.0);
    /// let mut first = RwLockMappedWriteGuard::map(pair, |p| &mut p.0);
    /// *first = 9;
    /// drop(first);
    /// assert_eq!(*lock.try_read().unwrap(), ((9, 2), 3));
    /// ```
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        // Invariant 3: the permits move to the new guard.
        let this = ManuallyDrop::new(this);
        RwLockMappedWriteGuard::from_parts(this.s, this.permits, data)
    }

    /// Like [`map`](RwLockMappedWriteGuard::map), but `f` may decline by
    /// returning `None`, which gives the original guard back.
    pub fn try_map<F, U: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let Some(data) = f(&mut *this).map(|u| u as *mut U) else {
            return Err(this);
        };
        let this = ManuallyDrop::new(this);
        Ok(RwLockMappedWriteGuard::from_parts(
            this.s,
            this.permits,
            data,
        ))
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockMappedWriteGuard<T, U> {
    /// A guard holding every permit of `lock` and pointing at `data`
    /// (invariants 1 and 2 are the caller's to uphold).
    pub(super) fn from_parts(lock: Arc<RwLock<T>>, data: *mut U) -> Self {
        OwnedRwLockMappedWriteGuard { lock, data }
    }

    /// Takes the `Arc` out of a guard that is being consumed without
    /// releasing its permits (invariant 3: the caller moves them on).
    fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: invariant 3: `this` is never dropped or used again, so the
        // `Arc` is moved out, not duplicated.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard to a part of the part it covers; the lock stays
    /// held. Call it as `OwnedRwLockMappedWriteGuard::map(guard, f)`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{OwnedRwLockMappedWriteGuard, OwnedRwLockWriteGuard, RwLock};
    ///
    /// let lock = Arc::new(RwLock::new(((1, 2), 3)));
    /// let guard = lock.clone().try_write_owned().unwrap();
    /// let pair = OwnedRwLockWriteGuard::map(guard, |v| &mut v.0);
    /// let mut second = OwnedRwLockMappedWriteGuard::map(pair, |p| &mut p.1);
    /// *second = 7;
    /// drop(second);
    /// assert_eq!(*lock.try_read().unwrap(), ((1, 7), 3));
    /// ```
    pub fn map<F, V: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, V>
    where
        F: FnOnce(&mut U) -> &mut V,
    {
        let data = f(&mut *this) as *mut V;
        OwnedRwLockMappedWriteGuard::from_parts(Self::into_lock(this), data)
    }

    /// Like [`map`](OwnedRwLockMappedWriteGuard::map), but `f` may decline
    /// by returning `None`, which gives the original guard back.
    pub fn try_map<F, V: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<OwnedRwLockMappedWriteGuard<T, V>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut V>,
    {
        let Some(data) = f(&mut *this).map(|v| v as *mut V) else {
            return Err(this);
        };
        Ok(OwnedRwLockMappedWriteGuard::from_parts(
            Self::into_lock(this),
            data,
        ))
    }

    /// The lock this guard writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for RwLockMappedWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: invariants 1 and 2: we hold every permit, and `data`
        // points into the value.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> DerefMut for RwLockMappedWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedRwLockMappedWriteGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: invariants 1 and 2: we hold every permit, and `data`
        // points into the value, which our `Arc` keeps alive.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> DerefMut for OwnedRwLockMappedWriteGuard<T, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Drop for RwLockMappedWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.s.release(self.permits as usize);
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockMappedWriteGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(self.lock.mr as usize);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockMappedWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockMappedWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Debug> fmt::Debug for OwnedRwLockMappedWriteGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Display> fmt::Display for OwnedRwLockMappedWriteGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
