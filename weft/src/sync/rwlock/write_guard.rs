//! The write guards: [`RwLockWriteGuard`] (borrowing the lock) and
//! [`OwnedRwLockWriteGuard`] (owning an `Arc` of it). Each holds all of the
//! lock's permits (parent module, invariant 1); `map` and `into_mapped`
//! turn one into a mapped write guard, and the `downgrade`s into a read
//! guard, moving the permits along (invariant 3).

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::{
    OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard, RwLock, RwLockMappedWriteGuard,
    RwLockReadGuard,
};
use crate::sync::semaphore::Semaphore;

/// Exclusive write access to an [`RwLock`], released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    s: &'a Semaphore,
    /// All of the lock's permits (its maximum number of readers).
    permits: u32,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// Exclusive write access to an `Arc<RwLock<T>>`, from
/// [`RwLock::write_owned`].
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    lock: Arc<RwLock<T>>,
}

// SAFETY: a write guard acts as a `&mut T` (invariants 1 and 2), and it can
// be downgraded into a read guard, which shares `&T`: so sending or sharing
// it needs `T: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync> Send for RwLockWriteGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLockWriteGuard<'_, T> {}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// The guard for the write permits just acquired from `lock`.
    pub(super) fn new(lock: &'a RwLock<T>) -> RwLockWriteGuard<'a, T> {
        RwLockWriteGuard {
            s: &lock.s,
            permits: lock.mr,
            data: lock.c.with_mut(|p| p),
            marker: PhantomData,
        }
    }

    /// Consumes the guard without releasing its permits, returning what
    /// the next guard needs (invariant 3).
    fn into_parts(this: Self) -> (&'a Semaphore, u32, *mut T) {
        let this = ManuallyDrop::new(this);
        (this.s, this.permits, this.data)
    }

    /// Makes a write guard for a part of the locked value; the lock stays
    /// held until the new guard is dropped. Call it as
    /// `RwLockWriteGuard::map(guard, f)`.
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockWriteGuard};
    ///
    /// let lock = RwLock::new((1, 2));
    /// let mut second = RwLockWriteGuard::map(lock.try_write().unwrap(), |p| &mut p.1);
    /// *second = 5;
    /// assert!(lock.try_read().is_err());
    /// drop(second);
    /// assert_eq!(*lock.try_read().unwrap(), (1, 5));
    /// ```
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let (s, permits, _) = Self::into_parts(this);
        RwLockMappedWriteGuard::from_parts(s, permits, data)
    }

    /// Like [`map`](RwLockWriteGuard::map), but `f` may decline by returning
    /// `None`, which gives the original guard back.
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
        let (s, permits, _) = Self::into_parts(this);
        Ok(RwLockMappedWriteGuard::from_parts(s, permits, data))
    }

    /// Turns this guard into a [`RwLockMappedWriteGuard`] of the whole
    /// value, for code that handles mapped guards only.
    pub fn into_mapped(this: Self) -> RwLockMappedWriteGuard<'a, T> {
        let (s, permits, data) = Self::into_parts(this);
        RwLockMappedWriteGuard::from_parts(s, permits, data)
    }

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
    pub fn downgrade(self) -> RwLockReadGuard<'a, T> {
        let (s, permits, data) = Self::into_parts(self);
        // Invariant 3: keep one of the writer's permits as the reader's.
        s.release(permits as usize - 1);
        RwLockReadGuard::from_parts(s, data)
    }

    /// Downgrades to a read lock on a part of the value: `f` runs while
    /// the write lock is still held, then the lock is downgraded as by
    /// [`downgrade`](RwLockWriteGuard::downgrade).
    ///
    /// ```
    /// use weft::sync::{RwLock, RwLockWriteGuard};
    ///
    /// let lock = RwLock::new((1, 2));
    /// let second = RwLockWriteGuard::downgrade_map(lock.try_write().unwrap(), |p| &p.1);
    /// assert_eq!(*second, 2);
    /// assert!(lock.try_read().is_ok());
    /// assert!(lock.try_write().is_err());
    /// ```
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let (s, permits, _) = Self::into_parts(this);
        s.release(permits as usize - 1);
        RwLockReadGuard::from_parts(s, data)
    }

    /// Like [`downgrade_map`](RwLockWriteGuard::downgrade_map), but `f` may
    /// decline by returning `None`, which gives the write guard back
    /// (still a write lock).
    pub fn try_downgrade_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let Some(data) = f(&*this).map(|u| u as *const U) else {
            return Err(this);
        };
        let (s, permits, _) = Self::into_parts(this);
        s.release(permits as usize - 1);
        Ok(RwLockReadGuard::from_parts(s, data))
    }
}

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    /// The guard for the write permits just acquired from `lock`.
    pub(super) fn new(lock: Arc<RwLock<T>>) -> OwnedRwLockWriteGuard<T> {
        OwnedRwLockWriteGuard { lock }
    }

    /// Takes the `Arc` out of a guard that is being consumed without
    /// releasing its permits (invariant 3: the caller moves them on).
    fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: invariant 3: `this` is never dropped or used again, so the
        // `Arc` is moved out, not duplicated.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Makes a write guard for a part of the locked value; the lock stays
    /// held until the new guard is dropped. Call it as
    /// `OwnedRwLockWriteGuard::map(guard, f)`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{OwnedRwLockWriteGuard, RwLock};
    ///
    /// let lock = Arc::new(RwLock::new((1, 2)));
    /// let guard = lock.clone().try_write_owned().unwrap();
    /// let mut second = OwnedRwLockWriteGuard::map(guard, |p| &mut p.1);
    /// *second = 5;
    /// drop(second);
    /// assert_eq!(*lock.try_read().unwrap(), (1, 5));
    /// ```
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        OwnedRwLockMappedWriteGuard::from_parts(Self::into_lock(this), data)
    }

    /// Like [`map`](OwnedRwLockWriteGuard::map), but `f` may decline by
    /// returning `None`, which gives the original guard back.
    pub fn try_map<F, U: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<OwnedRwLockMappedWriteGuard<T, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let Some(data) = f(&mut *this).map(|u| u as *mut U) else {
            return Err(this);
        };
        Ok(OwnedRwLockMappedWriteGuard::from_parts(
            Self::into_lock(this),
            data,
        ))
    }

    /// Turns this guard into an [`OwnedRwLockMappedWriteGuard`] of the
    /// whole value.
    pub fn into_mapped(this: Self) -> OwnedRwLockMappedWriteGuard<T> {
        let lock = Self::into_lock(this);
        let data = lock.c.with_mut(|p| p);
        OwnedRwLockMappedWriteGuard::from_parts(lock, data)
    }

    /// Turns the write lock into a read lock without letting any other
    /// writer in between.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::RwLock;
    ///
    /// let lock = Arc::new(RwLock::new(1));
    /// let r = lock.clone().try_write_owned().unwrap().downgrade();
    /// assert_eq!(*r, 1);
    /// assert!(lock.try_read().is_ok());
    /// assert!(lock.try_write().is_err());
    /// ```
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let lock = Self::into_lock(self);
        // Invariant 3: keep one of the writer's permits as the reader's.
        lock.s.release(lock.mr as usize - 1);
        OwnedRwLockReadGuard::new(lock)
    }

    /// Downgrades to a read lock on a part of the value: `f` runs while
    /// the write lock is still held.
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let lock = Self::into_lock(this);
        lock.s.release(lock.mr as usize - 1);
        OwnedRwLockReadGuard::from_parts(lock, data)
    }

    /// Like [`downgrade_map`](OwnedRwLockWriteGuard::downgrade_map), but
    /// `f` may decline by returning `None`, which gives the write guard
    /// back.
    pub fn try_downgrade_map<F, U: ?Sized>(
        this: Self,
        f: F,
    ) -> Result<OwnedRwLockReadGuard<T, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let Some(data) = f(&*this).map(|u| u as *const U) else {
            return Err(this);
        };
        let lock = Self::into_lock(this);
        lock.s.release(lock.mr as usize - 1);
        Ok(OwnedRwLockReadGuard::from_parts(lock, data))
    }

    /// The lock this guard writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: invariants 1 and 2: we hold every permit, and `data`
        // points into the value.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Deref for OwnedRwLockWriteGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: invariant 1: we hold every permit.
        self.lock.c.with(|p| unsafe { &*p })
    }
}

impl<T: ?Sized> DerefMut for OwnedRwLockWriteGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: invariant 1: we hold every permit.
        self.lock.c.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.s.release(self.permits as usize);
    }
}

impl<T: ?Sized> Drop for OwnedRwLockWriteGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(self.lock.mr as usize);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedRwLockWriteGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for OwnedRwLockWriteGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
