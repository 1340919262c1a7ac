//! When a wait may trust an fd's registration without asking the kernel
//! what the fd names (the `fstat` identity check, one syscall per wait of
//! a keep-alive connection: 6–13% of a request's CPU, BENCHMARKS.md).
//!
//! Owns [`IO_SWAPS`], a process-wide count of the Ruby calls that can make
//! an IO object's fd number name another file: `IO#close` (of this IO, or
//! of another IO object on the same fd, after which the number can be
//! reused) and `IO#reopen`. `lib/weft.rb` prepends a module to `IO` that
//! counts them through `Weft._io_swapped`.
//!
//! Invariant: a registration is trusted by a wait only with the same
//! [`Stamp`] as the wait that last verified it (checked its identity, or
//! registered it): the same IO object, no close or reopen anywhere in the
//! process since, and no garbage collection since. A GC is in the stamp
//! because a leaked IO's finalizer closes its fd without `IO#close`, and
//! because a new IO object can take a freed one's address only after a GC.
//! What it can't see: an fd closed or `dup2`ed behind Ruby by C code while
//! an IO object still uses the number (`Process.daemon` on stdio sockets,
//! an extension closing an fd it does not own); such a program's reads are
//! already broken, and its waits on the stale registration would hang.

use magnus::prelude::*;
use magnus::rb_sys::AsRawValue;
use magnus::{Error, Ruby, Value};
use std::sync::atomic::{AtomicU64, Ordering};

/// `IO#close` and `IO#reopen` calls so far, in any thread.
pub static IO_SWAPS: AtomicU64 = AtomicU64::new(0);

/// What a wait by one IO knew about the world when it verified an fd's
/// registration (module invariant).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Stamp {
    /// The IO object (its address).
    pub reader: u64,
    /// [`IO_SWAPS`] then.
    pub swaps: u64,
    /// Ruby's `GC.count` then.
    pub gcs: u64,
}

/// The stamp of a wait by `io` now. Needs the GVL (reads `GC.count`).
pub fn stamp(io: Value) -> Stamp {
    Stamp {
        reader: io.as_raw(),
        // Acquire: pairs with the release in `io_swapped`, so a close or
        // reopen on another thread that happened before is seen.
        swaps: IO_SWAPS.load(Ordering::Acquire),
        // SAFETY: the caller holds the GVL; `rb_gc_count` only reads a
        // counter.
        gcs: unsafe { rb_sys::rb_gc_count() } as u64,
    }
}

/// `Weft._io_swapped`: an IO is about to be closed or reopened.
fn io_swapped() {
    IO_SWAPS.fetch_add(1, Ordering::Release);
}

pub fn define(ruby: &Ruby) -> Result<(), Error> {
    let weft = ruby.define_module("Weft")?;
    weft.define_singleton_method("_io_swapped", magnus::function!(io_swapped, 0))?;
    Ok(())
}
