//! Whether a ring holds nothing, readable without the ring's lock
//! (ring/mod.rs, `Ring::is_empty`; uring/mod.rs, "An owner whose ring
//! holds nothing waits in epoll").
//!
//! Owns: one flag, "the ring held no request in flight, none queued and
//! no poll on the epoll descriptor armed at the latest release of its
//! lock".
//!
//! Invariants:
//! - **Stored only under the ring's lock**, at each release, from the
//!   state the lock guards: the flag's order of stores is the lock's, so
//!   its latest value is the state at the latest release.
//! - **Only the ring's owner trusts a `true` it reads.** The owner is the
//!   only thread that puts requests in its ring; other threads' lock
//!   sections only take requests out (reaps) or act on requests already
//!   in it. A load sees the owner's own latest store or a later one, and
//!   a later store comes from a later hold of the lock, where a ring the
//!   owner left non-empty is seen as such until it empties. So a `true`
//!   the owner reads was the ring's state after its own last change and
//!   still is; a stale `false` only costs a look under the lock. Another
//!   thread may read a `true` the owner has since replaced, and must not
//!   act on it. Loom model: `loom_empty_flag.rs`.

use crate::loom::AtomicBool;
use std::sync::atomic::Ordering;

#[derive(Debug)]
pub(super) struct EmptyFlag(AtomicBool);

impl EmptyFlag {
    /// A new ring holds nothing.
    pub(super) fn new() -> EmptyFlag {
        EmptyFlag(AtomicBool::new(true))
    }

    /// At a release of the ring's lock, still holding it.
    pub(super) fn record(&self, empty: bool) {
        self.0.store(empty, Ordering::Relaxed);
    }

    /// For the ring's owner: whether its ring holds nothing.
    pub(super) fn owner_sees_empty(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
