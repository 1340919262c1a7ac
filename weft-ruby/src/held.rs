//! Ruby objects held by the Rust side: the process that owns a reactor, and
//! the raw `VALUE`s the scheduler and the selector keep.
//!
//! Invariant (relied on by every `unsafe` block here): a `VALUE` given to
//! [`value`] is held by a live `Weft::Scheduler` or `Weft::Selector` and
//! reported by that object's GC mark function through [`mark`], so it is
//! alive and has not moved (non-moving marks).

use crate::state::Obj;
use magnus::rb_sys::FromRawValue;
use magnus::{Error, Ruby, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};

/// Mark `obj` during its holder's mark phase (non-moving).
pub(crate) fn mark(obj: Obj) {
    // SAFETY: called from a holder's mark function with a VALUE it holds
    // (module invariant); marking it then keeps it alive and unmoved.
    unsafe { rb_sys::rb_gc_mark(obj) }
}

/// The `Value` of a held object.
pub(crate) fn value(obj: Obj) -> Value {
    // SAFETY: `obj` is held and marked (module invariant), so still alive.
    unsafe { Value::from_raw(obj) }
}

/// Forks this process has gone through: each child's counter is one more
/// than its parent's at the fork (a `pthread_atfork` child handler, so a
/// check costs a load, not a `getpid` syscall per wait).
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_fork() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

fn forks() -> u64 {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `count_fork` is async-signal-safe (one atomic add), as a
        // handler run in the child right after `fork` must be.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(count_fork)) };
        assert_eq!(rc, 0, "pthread_atfork failed");
    });
    FORKS.load(Ordering::Relaxed)
}

/// The process that created a reactor. After `fork` the child shares the
/// parent's epoll instance, so a child must not use it: each Ruby class
/// refuses with [`OwnerPid::check`]. Ruby forks with `fork(2)` through
/// libc, which runs the `pthread_atfork` handler that counts forks.
#[derive(Default)]
pub(crate) struct OwnerPid(OnceLock<(u32, u64)>);

impl OwnerPid {
    /// Record the current process (at `initialize`).
    pub(crate) fn claim(&self) {
        let _ = self.0.set((std::process::id(), forks()));
    }

    /// This is a forked child of the owner.
    pub(crate) fn forked(&self) -> bool {
        self.0
            .get()
            .is_some_and(|&(_, forks)| forks != FORKS.load(Ordering::Relaxed))
    }

    /// `RuntimeError` naming the mistake in a forked child; `what` names
    /// the class.
    pub(crate) fn check(&self, ruby: &Ruby, what: &str) -> Result<(), Error> {
        match self.0.get() {
            Some(&(pid, _)) if self.forked() => Err(Error::new(
                ruby.exception_runtime_error(),
                format!(
                    "this {what} was created in process {pid} and cannot be used after fork \
                     (its reactor would be shared with the parent); create a new one"
                ),
            )),
            _ => Ok(()),
        }
    }
}
