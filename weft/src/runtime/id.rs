//! `runtime::Id`: an opaque number naming one runtime.
//!
//! Owns: the process-wide counter ids are drawn from. Every runtime built
//! gets the next one, so two runtimes alive at once never share an id (a
//! 64-bit counter does not wrap in practice).

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies a runtime, unique among the runtimes this process has built
/// ([`Handle::id`](super::Handle::id)). Its value says nothing else: it
/// is for logs and for telling runtimes apart.
///
/// ```
/// let a = weft::runtime::Runtime::new().unwrap();
/// let b = weft::runtime::Runtime::new().unwrap();
/// assert_ne!(a.handle().id(), b.handle().id());
/// assert_eq!(a.handle().id(), a.handle().clone().id());
/// ```
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq)]
pub struct Id(NonZeroU64);

impl Id {
    /// The next unused id.
    pub(crate) fn next() -> Id {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Id(NonZeroU64::new(n).expect("runtime ids start at 1 and a u64 does not wrap"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
