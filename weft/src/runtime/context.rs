//! The thread-local runtime context.
//!
//! Owns: which runtime a thread is "in" (for `Handle::current()` and
//! `weft::spawn`), whether the thread is currently driving a runtime (so a
//! nested `block_on` is caught), and which scheduler context is active (so a
//! wake on a worker thread goes to that worker's local queue).
//!
//! Invariants:
//! - The handle stack is restored by guards in LIFO order; dropping guards
//!   out of order panics with an explanation.
//! - `SCHEDULER` points at a context that lives on the stack of the
//!   function that set it, and is cleared before that function returns.

use crate::scheduler;
use std::cell::{Cell, RefCell};
use std::ptr::NonNull;

thread_local! {
    static HANDLE: RefCell<HandleStack> = const { RefCell::new(HandleStack { current: None, depth: 0 }) };
    static ENTERED: Cell<Entered> = const { Cell::new(Entered::No) };
    static SCHEDULER: Cell<Option<NonNull<scheduler::Context>>> = const { Cell::new(None) };
}

struct HandleStack {
    current: Option<scheduler::Handle>,
    depth: usize,
}

/// Whether this thread is driving a runtime right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entered {
    No,
    /// Driving; `block_in_place` is allowed (a multi_thread worker).
    Yes {
        allow_block_in_place: bool,
    },
}

/// Run `f` with the current handle, if any, without cloning it.
pub(crate) fn with_current<R>(f: impl FnOnce(&scheduler::Handle) -> R) -> Option<R> {
    HANDLE
        .try_with(|h| h.borrow().current.as_ref().map(f))
        .ok()
        .flatten()
}

/// True when this thread's context thread-local is already destroyed.
pub(crate) fn is_destroyed() -> bool {
    HANDLE.try_with(|_| ()).is_err()
}

pub(crate) fn try_current() -> Option<scheduler::Handle> {
    with_current(Clone::clone)
}

/// Restores the previous current handle when dropped.
#[must_use = "the handle is current only while the guard lives"]
pub(crate) struct SetCurrentGuard {
    prev: Option<scheduler::Handle>,
    /// `None`: the thread-local was already destroyed and nothing was set.
    depth: Option<usize>,
}

/// Make `handle` current until the guard drops. While the thread's locals
/// are being destroyed (a runtime kept in a `thread_local!` shutting down
/// at thread exit) nothing can be set; the guard is then inert and code in
/// that shutdown sees no current runtime.
pub(crate) fn set_current(handle: &scheduler::Handle) -> SetCurrentGuard {
    HANDLE
        .try_with(|h| {
            let mut h = h.borrow_mut();
            h.depth += 1;
            let prev = h.current.replace(handle.clone());
            SetCurrentGuard {
                prev,
                depth: Some(h.depth),
            }
        })
        .unwrap_or(SetCurrentGuard {
            prev: None,
            depth: None,
        })
}

impl Drop for SetCurrentGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        let Some(depth) = self.depth else { return };
        let _ = HANDLE.try_with(|h| {
            let mut h = h.borrow_mut();
            if h.depth != depth {
                if !std::thread::panicking() {
                    panic!(
                        "runtime EnterGuards dropped out of order: drop each guard returned by \
                         Runtime::enter / Handle::enter before the one created before it"
                    );
                }
                return;
            }
            h.depth -= 1;
            h.current = prev;
        });
    }
}

pub(crate) fn entered() -> Entered {
    ENTERED.try_with(|e| e.get()).unwrap_or(Entered::No)
}

/// Marks the thread as driving a runtime; restores the previous state on drop.
#[must_use = "the thread counts as driving a runtime only while the guard lives"]
pub(crate) struct EnterRuntimeGuard {
    prev: Entered,
}

/// Mark this thread as driving a runtime.
///
/// # Panics
/// If it already is: blocking a worker on another future would deadlock.
#[track_caller]
pub(crate) fn enter_runtime(allow_block_in_place: bool) -> EnterRuntimeGuard {
    let prev = entered();
    if prev != Entered::No {
        panic!(
            "Cannot start a runtime from within a runtime. This happens because a function \
             (like `block_on`) attempted to block the current thread while the thread is being \
             used to drive asynchronous tasks. If you are in an async function, use `.await` on \
             the future instead of blocking on it. Otherwise move the blocking call into \
             `weft::task::spawn_blocking` or `weft::task::block_in_place`."
        );
    }
    ENTERED.with(|e| {
        e.set(Entered::Yes {
            allow_block_in_place,
        })
    });
    EnterRuntimeGuard { prev }
}

/// Forbid `block_in_place` on this thread until the guard drops, if it is
/// driving a runtime: a `LocalSet`'s tasks cannot move to another thread,
/// so handing this thread's work off (what `block_in_place` does) would
/// leave them blocked behind the closure. As Tokio, which panics there too;
/// and as Tokio, `block_in_place` on a multi_thread worker ignores this
/// (block_in_place.rs): the worker's queue moves, the set stays polled.
pub(crate) fn disallow_block_in_place() -> DisallowBlockInPlaceGuard {
    let prev = entered();
    if let Entered::Yes {
        allow_block_in_place: true,
    } = prev
    {
        ENTERED.with(|e| {
            e.set(Entered::Yes {
                allow_block_in_place: false,
            })
        });
    }
    DisallowBlockInPlaceGuard { prev }
}

/// Restores the `block_in_place` permission [`disallow_block_in_place`]
/// took away.
#[must_use = "block_in_place is forbidden only while the guard lives"]
pub(crate) struct DisallowBlockInPlaceGuard {
    prev: Entered,
}

impl Drop for DisallowBlockInPlaceGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = ENTERED.try_with(|e| e.set(prev));
    }
}

/// Temporarily leave the "driving" state (used by `block_in_place`, whose
/// closure may call `block_on`).
pub(crate) fn exit_runtime<R>(f: impl FnOnce() -> R) -> R {
    let prev = ENTERED.with(|e| e.replace(Entered::No));
    struct Restore(Entered);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = ENTERED.try_with(|e| e.set(self.0));
        }
    }
    let _restore = Restore(prev);
    f()
}

impl Drop for EnterRuntimeGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = ENTERED.try_with(|e| e.set(prev));
    }
}

/// Run `f` with `cx` as this thread's active scheduler context.
pub(crate) fn set_scheduler<R>(cx: &scheduler::Context, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<NonNull<scheduler::Context>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = SCHEDULER.try_with(|s| s.set(self.0));
        }
    }
    let prev = SCHEDULER.with(|s| s.replace(Some(NonNull::from(cx))));
    let _reset = Reset(prev);
    f()
}

/// Run `f` with the active scheduler context of this thread, if any.
pub(crate) fn with_scheduler<R>(f: impl FnOnce(Option<&scheduler::Context>) -> R) -> R {
    let ptr = SCHEDULER.try_with(|s| s.get()).ok().flatten();
    // SAFETY: `set_scheduler` keeps the context alive and registered only
    // for the duration of its closure (module invariant).
    f(ptr.map(|p| unsafe { p.as_ref() }))
}

/// Wake `waker` once this thread's scheduler has polled its drivers (a
/// yield; see scheduler/defer.rs), or at once outside a scheduler.
pub(crate) fn defer(waker: &std::task::Waker) {
    if !with_scheduler(|cx| cx.is_some_and(|cx| cx.defer(waker))) {
        waker.wake_by_ref();
    }
}

/// Count a forced yield on the current runtime (called by coop).
pub(crate) fn budget_forced_yield() {
    with_current(|h| h.scheduler_metrics().inc_budget_forced_yield());
}
