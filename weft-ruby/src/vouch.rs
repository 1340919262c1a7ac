//! An IO object's mark of the poller registration it was last checked
//! against, so that a fiber waiting again on the same IO skips the check.
//!
//! Why: the poller keeps an fd's registration after its last waiter leaves
//! (epoll's registration, made once, costs nothing to keep), and a new
//! waiter on that fd number must not trust it blindly: the number may
//! have been closed and reused, and closing took the old file out of the
//! kernel's interest list. With one fiber per connection, every wait
//! starts with no other waiter on the fd. Before this mark, each such wait
//! checked the file with an `fstat` (device and inode against the
//! registration's): one syscall per request of a keep-alive server, a
//! quarter of them, and two more per connection (the check, and the new
//! registration's own identity) when each request has its own.
//!
//! How: every registration gets a serial number, unique in the process
//! (several schedulers on several threads never share one). When a wait
//! has made the registration, or trusted it (its IO is the one the fd's
//! other waiters wait on), the IO object gets the serial
//! as a hidden instance variable (an id without `@`, as Ruby keeps an
//! exception's message: not listed by `instance_variables`, not settable
//! from Ruby). A later wait whose IO carries the registration's current
//! serial is the same IO object, still open (a closed IO raises before
//! any wait), on the same fd number: the same file. A new IO object
//! carries no serial; a copy made by `dup` or `clone` carries the
//! original's, which names another fd's registration and so never
//! matches; an IO freed and its memory reused for a new one loses its
//! instance variables with it. io-event's selectors trust the IO object
//! the same way (they compare it with the last one registered).
//!
//! Invariant: an IO gets a serial only from a wait that made or trusted
//! that registration for it; the one way to fool it is `IO#reopen`, which keeps the
//! object and its fd number but swaps the file under them (`dup2`), while
//! a fiber of this scheduler waits on it, which io-event does not handle
//! either (weft-ruby/README.md, "Known gaps").

use magnus::rb_sys::{AsRawId, AsRawValue, FromRawValue};
use magnus::value::{Id, LazyId, ReprValue};
use magnus::{Fixnum, Ruby, Value};
use std::sync::atomic::{AtomicU64, Ordering};

static SERIAL_ID: LazyId = LazyId::new("__weft_registration");

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A serial for a new registration: unique in the process, and small
/// enough to be a Fixnum (2^62 registrations away).
pub fn next_serial() -> u64 {
    NEXT_SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// The serial `io` carries, if any. Only IO objects carry one: an object
/// that is not an IO but has a `fileno` is always checked.
pub fn carried(ruby: &Ruby, io: Value) -> Option<u64> {
    magnus::RFile::from_value(io)?;
    let id: Id = LazyId::get_inner_with(&SERIAL_ID, ruby);
    // SAFETY: called with the GVL held (crate invariant) on a live IO
    // object the caller holds; rb_ivar_get reads and never raises.
    let raw = unsafe { rb_sys::rb_ivar_get(io.as_raw(), id.as_raw()) };
    // SAFETY: `raw` is a VALUE Ruby just returned, alive as `io` holds it.
    let value = unsafe { Value::from_raw(raw) };
    Fixnum::from_value(value).and_then(|n| u64::try_from(n.to_i64()).ok())
}

/// Mark `io` as checked against the registration numbered `serial`. A
/// frozen IO is left unmarked (rb_ivar_set would raise), and so checked at
/// every wait, as before.
pub fn mark(ruby: &Ruby, io: Value, serial: u64) {
    if magnus::RFile::from_value(io).is_none() || io.is_frozen() {
        return;
    }
    let id: Id = LazyId::get_inner_with(&SERIAL_ID, ruby);
    let value = ruby.integer_from_u64(serial);
    // SAFETY: GVL held, `io` a live unfrozen IO object (checked above), so
    // rb_ivar_set does not raise; `value` is a Fixnum (serials stay below
    // 2^62), which needs no marking.
    unsafe { rb_sys::rb_ivar_set(io.as_raw(), id.as_raw(), value.as_raw()) };
}
