//! Mapped mutex guards: [`MappedMutexGuard`] and [`OwnedMappedMutexGuard`],
//! which dereference to a part of a locked [`Mutex`]'s value, and the
//! `map` / `try_map` functions of every mutex guard. The rules are the
//! parent module's invariants, (c) in particular.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::{Mutex, MutexGuard, OwnedMutexGuard};
use crate::sync::semaphore::Semaphore;

/// A handle to a held [`Mutex`] that dereferences to a part of the value,
/// from [`MutexGuard::map`]; the lock is released when it is dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MappedMutexGuard<'a, T: ?Sized> {
    s: &'a Semaphore,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// An owned handle to a held `Arc<Mutex<T>>` that dereferences to a part
/// `U` of the value, from [`OwnedMutexGuard::map`].
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct OwnedMappedMutexGuard<T: ?Sized, U: ?Sized = T> {
    lock: Arc<Mutex<T>>,
    data: *mut U,
}

// SAFETY: the mapped guard acts as a `&'a mut T` (invariants (a) and (c):
// it holds the permit): sendable when `T: Send`, shareable when `T: Sync`.
unsafe impl<T: ?Sized + Send> Send for MappedMutexGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Sync> Sync for MappedMutexGuard<'_, T> {}
// SAFETY: as above for `U`; the guard also owns an `Arc<Mutex<T>>`, which
// is `Send` when `T: Send`, and shared `&U` needs `T: Send + Sync` as for
// `OwnedMutexGuard`.
unsafe impl<T: ?Sized + Send, U: ?Sized + Send> Send for OwnedMappedMutexGuard<T, U> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Sync for OwnedMappedMutexGuard<T, U> {}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Makes a guard for a part of the locked value; the lock stays held
    /// until the new guard is dropped. An associated function, so it does
    /// not shadow a method of `T`: call it as `MutexGuard::map(guard, f)`.
    ///
    /// ```
    /// use weft::sync::{Mutex, MutexGuard};
    ///
    /// let mutex = Mutex::new((1, 2));
    /// let mut second = MutexGuard::map(mutex.try_lock().unwrap(), |p| &mut p.1);
    /// *second = 5;
    /// assert!(mutex.try_lock().is_err());
    /// drop(second);
    /// assert_eq!(*mutex.try_lock().unwrap(), (1, 5));
    /// ```
    pub fn map<U: ?Sized, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        // Invariant (c): the permit moves to the new guard.
        let this = ManuallyDrop::new(this);
        MappedMutexGuard::from_parts(&this.lock.s, data)
    }

    /// Like [`map`](MutexGuard::map), but `f` may decline by returning
    /// `None`, which gives the original guard back.
    ///
    /// ```
    /// use weft::sync::{Mutex, MutexGuard};
    ///
    /// let mutex = Mutex::new(vec![1, 2]);
    /// let guard = mutex.try_lock().unwrap();
    /// let guard = MutexGuard::try_map(guard, |v| v.get_mut(5)).unwrap_err();
    /// let mut first = MutexGuard::try_map(guard, |v| v.first_mut()).unwrap();
    /// *first = 7;
    /// drop(first);
    /// assert_eq!(*mutex.try_lock().unwrap(), [7, 2]);
    /// ```
    pub fn try_map<U: ?Sized, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let Some(data) = f(&mut *this).map(|u| u as *mut U) else {
            return Err(this);
        };
        let this = ManuallyDrop::new(this);
        Ok(MappedMutexGuard::from_parts(&this.lock.s, data))
    }
}

impl<T: ?Sized> OwnedMutexGuard<T> {
    /// Takes the `Arc` out of a guard that is being consumed without
    /// releasing its permit (invariant (c): the caller moves it on).
    fn into_lock(this: Self) -> Arc<Mutex<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: invariant (c): `this` is never dropped or used again, so
        // the `Arc` is moved out, not duplicated.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Makes an owned guard for a part of the locked value; the lock stays
    /// held until the new guard is dropped. Call it as
    /// `OwnedMutexGuard::map(guard, f)`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{Mutex, OwnedMutexGuard};
    ///
    /// let mutex = Arc::new(Mutex::new((1, 2)));
    /// let guard = mutex.clone().try_lock_owned().unwrap();
    /// let mut second = OwnedMutexGuard::map(guard, |p| &mut p.1);
    /// *second = 5;
    /// drop(second);
    /// assert_eq!(*mutex.try_lock().unwrap(), (1, 5));
    /// ```
    pub fn map<U: ?Sized, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        OwnedMappedMutexGuard::from_parts(Self::into_lock(this), data)
    }

    /// Like [`map`](OwnedMutexGuard::map), but `f` may decline by returning
    /// `None`, which gives the original guard back.
    pub fn try_map<U: ?Sized, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let Some(data) = f(&mut *this).map(|u| u as *mut U) else {
            return Err(this);
        };
        Ok(OwnedMappedMutexGuard::from_parts(
            Self::into_lock(this),
            data,
        ))
    }
}

impl<'a, T: ?Sized> MappedMutexGuard<'a, T> {
    /// A guard holding the permit of `s` and pointing at `data` (the
    /// caller upholds invariant (c)).
    fn from_parts(s: &'a Semaphore, data: *mut T) -> Self {
        MappedMutexGuard {
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard to a part of the part it covers; the lock stays
    /// held. Call it as `MappedMutexGuard::map(guard, f)`.
    ///
    /// ```
    /// use weft::sync::{MappedMutexGuard, Mutex, MutexGuard};
    ///
    /// let mutex = Mutex::new(((1, 2), 3));
    /// let pair = MutexGuard::map(mutex.try_lock().unwrap(), |v| &mut v.0);
    /// let mut first = MappedMutexGuard::map(pair, |p| &mut p.0);
    /// *first = 9;
    /// drop(first);
    /// assert_eq!(*mutex.try_lock().unwrap(), ((9, 2), 3));
    /// ```
    pub fn map<U: ?Sized, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let this = ManuallyDrop::new(this);
        MappedMutexGuard::from_parts(this.s, data)
    }

    /// Like [`map`](MappedMutexGuard::map), but `f` may decline by
    /// returning `None`, which gives the original guard back.
    pub fn try_map<U: ?Sized, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let Some(data) = f(&mut *this).map(|u| u as *mut U) else {
            return Err(this);
        };
        let this = ManuallyDrop::new(this);
        Ok(MappedMutexGuard::from_parts(this.s, data))
    }
}

impl<T: ?Sized, U: ?Sized> OwnedMappedMutexGuard<T, U> {
    /// A guard holding the permit of `lock` and pointing at `data` (the
    /// caller upholds invariant (c)).
    fn from_parts(lock: Arc<Mutex<T>>, data: *mut U) -> Self {
        OwnedMappedMutexGuard { lock, data }
    }

    /// Takes the `Arc` out without releasing the permit (invariant (c)).
    fn into_lock(this: Self) -> Arc<Mutex<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: invariant (c): `this` is never dropped or used again, so
        // the `Arc` is moved out, not duplicated.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard to a part of the part it covers; the lock stays
    /// held. Call it as `OwnedMappedMutexGuard::map(guard, f)`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::{Mutex, OwnedMappedMutexGuard, OwnedMutexGuard};
    ///
    /// let mutex = Arc::new(Mutex::new(((1, 2), 3)));
    /// let guard = mutex.clone().try_lock_owned().unwrap();
    /// let pair = OwnedMutexGuard::map(guard, |v| &mut v.0);
    /// let mut second = OwnedMappedMutexGuard::map(pair, |p| &mut p.1);
    /// *second = 7;
    /// drop(second);
    /// assert_eq!(*mutex.try_lock().unwrap(), ((1, 7), 3));
    /// ```
    pub fn map<S: ?Sized, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, S>
    where
        F: FnOnce(&mut U) -> &mut S,
    {
        let data = f(&mut *this) as *mut S;
        OwnedMappedMutexGuard::from_parts(Self::into_lock(this), data)
    }

    /// Like [`map`](OwnedMappedMutexGuard::map), but `f` may decline by
    /// returning `None`, which gives the original guard back.
    pub fn try_map<S: ?Sized, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, S>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut S>,
    {
        let Some(data) = f(&mut *this).map(|s| s as *mut S) else {
            return Err(this);
        };
        Ok(OwnedMappedMutexGuard::from_parts(
            Self::into_lock(this),
            data,
        ))
    }

    /// The mutex this guard locks.
    pub fn mutex(this: &Self) -> &Arc<Mutex<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for MappedMutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: invariant (c): `data` points into the locked value and
        // this guard holds the permit.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> DerefMut for MappedMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedMappedMutexGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: invariant (c): `data` points into the locked value, which
        // our `Arc` keeps alive, and this guard holds the permit.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> DerefMut for OwnedMappedMutexGuard<T, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: as for `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Drop for MappedMutexGuard<'_, T> {
    fn drop(&mut self) {
        self.s.release(1);
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedMappedMutexGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MappedMutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MappedMutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Debug> fmt::Debug for OwnedMappedMutexGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Display> fmt::Display for OwnedMappedMutexGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
