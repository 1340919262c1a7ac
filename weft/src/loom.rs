//! The one place that picks std or loom synchronisation types.
//!
//! Every module that touches shared memory imports its atomics, `UnsafeCell`,
//! `Mutex`, `Condvar`, `Arc` and thread functions from here, so that building
//! with `--cfg loom` swaps the whole crate onto loom's model-checked versions.
//! `UnsafeCell` is always loom's API shape (`with` / `with_mut`), so code reads
//! the same under both.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
    };
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

    /// `std::cell::UnsafeCell` with loom's closure-based access API.
    #[derive(Debug, Default)]
    #[repr(transparent)]
    pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(value: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }
    }

    impl<T: ?Sized> UnsafeCell<T> {
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }

    /// Lock a std mutex, ignoring poisoning: weft never leaves shared state
    /// half-updated across a panic while holding a lock.
    pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read-lock an `RwLock`, ignoring poisoning (see [`lock`]).
    pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
        l.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Write-lock an `RwLock`, ignoring poisoning (see [`lock`]).
    pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
        l.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
    };
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) use loom::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub(crate) use loom::thread;

    pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read-lock an `RwLock`, ignoring poisoning (see [`lock`]).
    pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
        l.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Write-lock an `RwLock`, ignoring poisoning (see [`lock`]).
    pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
        l.write().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) use imp::*;
pub(crate) use std::sync::atomic::Ordering;
