//! [`SetOnce`]: a cell set at most once, whose readers can wait for the
//! value.
//!
//! # What this file owns
//!
//! `SetOnce` and `SetOnceError`.
//!
//! # Invariants
//!
//! The cell pairs `value` with `value_set` (an `AtomicBool`), a plain lock
//! `setter` that serialises [`SetOnce::set`], and a [`Notify`] that wakes
//! waiters. Every `unsafe` block relies on these:
//!
//! 1. **Writer.** Through `&self`, `value` is written only by `set` while it
//!    holds `setter` and sees `value_set` false. Having written it, `set`
//!    stores `value_set = true` (release) before releasing `setter`, so a
//!    later `set` sees it and gives up; the value is never written again
//!    while shared.
//! 2. **Readers.** Through `&self`, `value` is read only after observing
//!    `value_set == true` (acquire); from then on it never changes.
//! 3. **Exclusive access.** `&mut self` and by-value methods may read and
//!    take the value.
//! 4. **No lost wake-up.** `set` calls `notify_waiters` after storing
//!    `value_set`. `wait` enables its `Notified` (which registers it in the
//!    `Notify`'s queue under the `Notify`'s lock, or completes it if a
//!    `notify_waiters` already ran) before it checks `value_set` again. The
//!    two meet at the `Notify`'s lock: if `wait` registered first, the
//!    `notify_waiters` serves it; if `notify_waiters` ran first, `wait`'s
//!    registration happens after it and so after the `value_set` store,
//!    and the check sees the value. So `wait` never sleeps past a `set`.
//!    The `setter` lock guards no waker (`sync/mod.rs`, "Wakers and
//!    locks"): `notify_waiters` runs after it is released.

use std::fmt;
use std::pin::pin;

use crate::loom::{AtomicBool, Mutex, Ordering, UnsafeCell};
use crate::sync::notify::Notify;

/// Error returned by [`SetOnce::set`] when the cell was already set; it
/// gives the rejected value back.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOnceError<T>(pub T);

impl<T> fmt::Display for SetOnceError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetOnceError")
    }
}

impl<T: fmt::Debug> std::error::Error for SetOnceError<T> {}

/// A thread-safe cell that is set at most once, by [`set`](SetOnce::set),
/// and that tasks can [`wait`](SetOnce::wait) on until it is.
///
/// Unlike [`OnceCell`](super::OnceCell), there is no initialiser: some
/// task sets the value, and others wait for it.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use weft::sync::SetOnce;
///
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let cell = Arc::new(SetOnce::new());
///     let reader = {
///         let cell = cell.clone();
///         weft::spawn(async move { *cell.wait().await })
///     };
///     cell.set(7).unwrap();
///     assert_eq!(reader.await.unwrap(), 7);
///     assert!(cell.set(8).is_err());
/// });
/// ```
pub struct SetOnce<T> {
    value_set: AtomicBool,
    value: UnsafeCell<Option<T>>,
    /// Serialises `set` (invariant 1); guards no data of its own.
    setter: Mutex<()>,
    /// Wakes `wait`ers once the value is set (invariant 4).
    notify: Notify,
}

// SAFETY: the value is written by one thread (invariant 1) and then shared
// by reference (invariant 2), so sharing the cell needs `T: Send + Sync`,
// and sending it needs `T: Send`, as for `std::sync::OnceLock`.
unsafe impl<T: Send + Sync> Sync for SetOnce<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SetOnce<T> {}

impl<T> SetOnce<T> {
    /// Creates an empty cell.
    pub fn new() -> SetOnce<T> {
        SetOnce {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(None),
            setter: Mutex::new(()),
            notify: Notify::new(),
        }
    }

    /// Creates an empty cell in a `const` context (for a `static`).
    ///
    /// ```
    /// use weft::sync::SetOnce;
    ///
    /// static READY: SetOnce<u32> = SetOnce::const_new();
    /// READY.set(1).unwrap();
    /// assert_eq!(READY.get(), Some(&1));
    /// ```
    #[cfg(not(loom))]
    pub const fn const_new() -> SetOnce<T> {
        SetOnce {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(None),
            setter: Mutex::new(()),
            notify: Notify::const_new(),
        }
    }

    /// Creates a cell holding `value` if it is `Some`, or an empty one.
    pub fn new_with(value: Option<T>) -> SetOnce<T> {
        SetOnce {
            value_set: AtomicBool::new(value.is_some()),
            value: UnsafeCell::new(value),
            setter: Mutex::new(()),
            notify: Notify::new(),
        }
    }

    /// Creates a cell already holding `value`, in a `const` context.
    ///
    /// ```
    /// use weft::sync::SetOnce;
    ///
    /// static LIMIT: SetOnce<u32> = SetOnce::const_new_with(10);
    /// assert_eq!(LIMIT.get(), Some(&10));
    /// assert!(LIMIT.set(11).is_err());
    /// ```
    #[cfg(not(loom))]
    pub const fn const_new_with(value: T) -> SetOnce<T> {
        SetOnce {
            value_set: AtomicBool::new(true),
            value: UnsafeCell::new(Some(value)),
            setter: Mutex::new(()),
            notify: Notify::const_new(),
        }
    }

    /// Whether the cell holds a value.
    pub fn initialized(&self) -> bool {
        self.value_set.load(Ordering::Acquire)
    }

    /// The value, or `None` if the cell has not been set yet.
    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: invariant 2: `value_set` observed true (acquire).
            self.value.with(|p| unsafe { (*p).as_ref() })
        } else {
            None
        }
    }

    /// Sets the value and wakes every task in [`wait`](SetOnce::wait), or
    /// returns it back in [`SetOnceError`] if the cell was already set.
    ///
    /// When several calls race, exactly one succeeds; once a call has
    /// failed, [`get`](SetOnce::get) returns the winner's value.
    ///
    /// ```
    /// use weft::sync::{SetOnce, SetOnceError};
    ///
    /// let cell = SetOnce::new();
    /// assert_eq!(cell.set(1), Ok(()));
    /// assert_eq!(cell.set(2), Err(SetOnceError(2)));
    /// assert_eq!(cell.get(), Some(&1));
    /// ```
    pub fn set(&self, value: T) -> Result<(), SetOnceError<T>> {
        if self.initialized() {
            return Err(SetOnceError(value));
        }
        {
            let _setter = crate::loom::lock(&self.setter);
            // Invariant 1: re-checked under `setter`, where only we write.
            if self.value_set.load(Ordering::Acquire) {
                return Err(SetOnceError(value));
            }
            // SAFETY: invariant 1: we hold `setter` and `value_set` is false,
            // so no reader looks at `value` and no other writer exists.
            self.value.with_mut(|p| unsafe { *p = Some(value) });
            self.value_set.store(true, Ordering::Release);
        }
        // Invariant 4: after the store, and outside `setter`.
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits until the cell is set, then returns a reference to the value.
    /// Returns at once if it is set already.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel safe: dropping the future loses nothing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use weft::sync::SetOnce;
    ///
    /// weft::runtime::Runtime::new().unwrap().block_on(async {
    ///     let cell = Arc::new(SetOnce::new());
    ///     let setter = cell.clone();
    ///     weft::spawn(async move { setter.set("ready").unwrap() });
    ///     assert_eq!(*cell.wait().await, "ready");
    /// });
    /// ```
    pub async fn wait(&self) -> &T {
        loop {
            if let Some(value) = self.get() {
                return value;
            }
            let mut notified = pin!(self.notify.notified());
            // Invariant 4: register before checking again.
            notified.as_mut().enable();
            if let Some(value) = self.get() {
                return value;
            }
            notified.await;
        }
    }

    /// Consumes the cell, returning the value if it was set.
    pub fn into_inner(self) -> Option<T> {
        // SAFETY: invariant 3: we own the cell.
        self.value.with_mut(|p| unsafe { (*p).take() })
    }
}

impl<T> Default for SetOnce<T> {
    fn default() -> Self {
        SetOnce::new()
    }
}

impl<T> From<T> for SetOnce<T> {
    fn from(value: T) -> Self {
        SetOnce::new_with(Some(value))
    }
}

impl<T: Clone> Clone for SetOnce<T> {
    fn clone(&self) -> Self {
        SetOnce::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for SetOnce<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for SetOnce<T> {}

impl<T: fmt::Debug> fmt::Debug for SetOnce<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetOnce")
            .field("value", &self.get())
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;
    use std::sync::Arc as StdArc;

    /// Invariant 4: a `wait` racing a `set` on another thread always wakes
    /// and sees the value, however the two interleave.
    #[test]
    fn wait_racing_set() {
        loom::model(|| {
            let cell = StdArc::new(SetOnce::new());
            let setter = cell.clone();
            let t = thread::spawn(move || setter.set(5).unwrap());
            assert_eq!(*loom::future::block_on(cell.wait()), 5);
            t.join().unwrap();
        });
    }

    /// Invariant 1: of two racing `set`s exactly one wins, and the loser
    /// finds the winner's value published.
    #[test]
    fn racing_sets() {
        loom::model(|| {
            let cell = StdArc::new(SetOnce::new());
            let other = cell.clone();
            let t = thread::spawn(move || other.set(1).is_ok());
            let mine = cell.set(2).is_ok();
            let theirs = t.join().unwrap();
            assert!(mine ^ theirs);
            let expected = if mine { 2 } else { 1 };
            assert_eq!(cell.get(), Some(&expected));
        });
    }
}
