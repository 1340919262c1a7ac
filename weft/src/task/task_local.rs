//! `task_local!`: values that belong to one future (and what it awaits), not
//! to a thread.
//!
//! Owns: [`LocalKey`] (a thread-local slot per key) and
//! [`TaskLocalFuture`], which puts its value into the slot for the length
//! of each poll of its future and takes it back out afterwards, so the
//! value follows the future from thread to thread and never leaks into
//! another task polled on the same thread.
//!
//! Invariants: the slot holds a value only while a scope (a poll of a
//! `TaskLocalFuture`, or a `sync_scope` closure) runs on this thread; the
//! previous content is put back when the scope ends, unwinding included
//! (the `Swap` guard), so scopes nest. A scope cannot start inside `with`
//! on the same key (the slot is borrowed): that panics, as in Tokio.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Declares task-local keys: `task_local! { pub static ID: u32; }`.
///
/// ```
/// weft::task_local! {
///     static REQUEST_ID: u64;
/// }
///
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// REQUEST_ID
///     .scope(7, async {
///         assert_eq!(REQUEST_ID.get(), 7);
///         weft::task::yield_now().await; // survives suspension
///         assert_eq!(REQUEST_ID.get(), 7);
///     })
///     .await;
/// assert!(REQUEST_ID.try_with(|_| ()).is_err());
/// # });
/// ```
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __task_local_key {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __WEFT_TASK_LOCAL: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey::__new(__WEFT_TASK_LOCAL)
        };
    };
}

/// A key for task-local data, made by [`task_local!`](crate::task_local).
/// The value is set for a future with [`LocalKey::scope`] (or a closure with
/// [`LocalKey::sync_scope`]) and read inside it.
pub struct LocalKey<T: 'static> {
    inner: std::thread::LocalKey<RefCell<Option<T>>>,
}

/// [`LocalKey::try_with`] outside any scope of the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError {
    _private: (),
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value not set: access it inside LocalKey::scope or sync_scope")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn __new(inner: std::thread::LocalKey<RefCell<Option<T>>>) -> LocalKey<T> {
        LocalKey { inner }
    }

    /// Run `future` with this key set to `value` (during each of its polls).
    /// The value is dropped when the returned future is (or taken back
    /// with [`TaskLocalFuture::take_value`]).
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            slot: Some(value),
            future: Some(future),
            _pinned: PhantomPinned,
        }
    }

    /// Run `f` with this key set to `value`; the value is dropped after.
    ///
    /// # Panics
    /// Inside [`LocalKey::with`] on the same key.
    #[track_caller]
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut slot = Some(value);
        let swap = Swap::enter(self, &mut slot);
        let out = f();
        drop(swap);
        out
    }

    /// Run `f` on the value.
    ///
    /// # Panics
    /// Outside a scope of this key.
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Run `f` on the value, or say it is not set.
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        let value = self.inner.try_with(|cell| {
            let borrow = cell.borrow();
            borrow.as_ref().map(f)
        });
        match value {
            Ok(Some(r)) => Ok(r),
            _ => Err(AccessError { _private: () }),
        }
    }

    /// A copy of the value.
    ///
    /// # Panics
    /// Outside a scope of this key.
    #[track_caller]
    pub fn get(&'static self) -> T
    where
        T: Clone,
    {
        self.with(T::clone)
    }

    /// A copy of the value, or `AccessError` outside a scope of this key
    /// (the non-panicking [`get`](Self::get)).
    pub fn try_get(&'static self) -> Result<T, AccessError>
    where
        T: Clone,
    {
        self.try_with(T::clone)
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

/// Puts a value in a key's slot and, on drop, swaps it back out (the
/// module invariant's guard).
struct Swap<'a, T: 'static> {
    key: &'static LocalKey<T>,
    slot: &'a mut Option<T>,
}

impl<'a, T: 'static> Swap<'a, T> {
    #[track_caller]
    fn enter(key: &'static LocalKey<T>, slot: &'a mut Option<T>) -> Swap<'a, T> {
        // The panic is outside the closure, so it names the caller's line.
        let swapped = key.inner.with(|cell| match cell.try_borrow_mut() {
            Ok(mut current) => {
                std::mem::swap(&mut *current, slot);
                true
            }
            Err(_) => false,
        });
        if !swapped {
            panic!(
                "a task-local scope started inside LocalKey::with on the same key: end the `with` \
                 closure first"
            );
        }
        Swap { key, slot }
    }
}

impl<'a, T: 'static> Swap<'a, T> {
    /// `enter`, or `None` when the slot cannot be reached (thread-local
    /// destroyed, or borrowed by `with`): for destructors, which must not
    /// panic.
    fn try_enter(key: &'static LocalKey<T>, slot: &'a mut Option<T>) -> Option<Swap<'a, T>> {
        let entered = key.inner.try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut current) => {
                std::mem::swap(&mut *current, slot);
                true
            }
            Err(_) => false,
        });
        matches!(entered, Ok(true)).then_some(Swap { key, slot })
    }
}

impl<T: 'static> Drop for Swap<'_, T> {
    fn drop(&mut self) {
        let slot = &mut *self.slot;
        let _ = self.key.inner.try_with(|cell| {
            if let Ok(mut current) = cell.try_borrow_mut() {
                std::mem::swap(&mut *current, slot);
            }
        });
    }
}

/// The future returned by [`LocalKey::scope`].
pub struct TaskLocalFuture<T: 'static, F> {
    key: &'static LocalKey<T>,
    slot: Option<T>,
    /// `None` once it completed (the future is dropped inside the scope).
    future: Option<F>,
    _pinned: PhantomPinned,
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Take the value back out (`None` if already taken). From then on the
    /// future runs without it.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: `slot` is not structurally pinned (only `future` is).
        unsafe { self.get_unchecked_mut() }.slot.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned: never moved out while
        // pinned (it is dropped in place, below); `slot` is not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let swap = Swap::enter(this.key, &mut this.slot);
        let Some(future) = this.future.as_mut() else {
            drop(swap);
            panic!("TaskLocalFuture polled after it completed");
        };
        // SAFETY: as above: `future` stays where it is until dropped.
        let polled = unsafe { Pin::new_unchecked(future) }.poll(cx);
        if polled.is_ready() {
            // Dropped inside the scope, so its destructor sees the value.
            this.future = None;
        }
        drop(swap);
        polled
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        if self.future.is_some() {
            // The future's destructor runs inside the scope too (when the
            // slot can be reached at all).
            let swap = Swap::try_enter(self.key, &mut self.slot);
            self.future = None;
            drop(swap);
        }
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.slot)
            .finish_non_exhaustive()
    }
}
