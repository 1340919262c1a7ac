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
use std::sync::OnceLock;

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

/// The process that created a reactor. After `fork` the child shares the
/// parent's epoll instance, so a child must not use it: each Ruby class
/// refuses with [`OwnerPid::check`].
#[derive(Default)]
pub(crate) struct OwnerPid(OnceLock<u32>);

impl OwnerPid {
    /// Record the current process (at `initialize`).
    pub(crate) fn claim(&self) {
        let _ = self.0.set(std::process::id());
    }

    /// This is a forked child of the owner.
    pub(crate) fn forked(&self) -> bool {
        self.0.get().is_some_and(|pid| *pid != std::process::id())
    }

    /// `RuntimeError` naming the mistake in a forked child; `what` names
    /// the class.
    pub(crate) fn check(&self, ruby: &Ruby, what: &str) -> Result<(), Error> {
        match self.0.get() {
            Some(pid) if *pid != std::process::id() => Err(Error::new(
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
