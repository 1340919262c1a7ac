//! The differences from Tokio this test found, each as a minimal case,
//! all fixed in weft. Each test pins Tokio's behaviour down for that case;
//! its doc says what Tokio does and what weft did before the fix. All
//! showed on both weft drivers.

use crate::cases::CaseScript;
use crate::harness::assert_same;
use crate::CASES;

fn case(n: usize) {
    for multi in [false, true] {
        assert_same(
            &CASES,
            CaseScript {
                cases: vec![n],
                multi,
            },
        );
    }
}

/// `AsyncFdRegisterError`'s `Display` and `Debug` show the cause alone,
/// as Tokio's do; weft's said "could not register the file descriptor:
/// <cause>" and `AsyncFdRegisterError { cause: .., .. }`.
#[test]
fn register_error_shows_the_cause_alone() {
    case(1);
}

/// A refused datagram leaves an error on a UDP socket with nothing to
/// read: Tokio's `poll_read_ready` stays pending (its read direction is
/// `READABLE | READ_CLOSED`) and `poll_write_ready`'s guard has no
/// `ERROR`; weft's direction masks had `ERROR` too, so `poll_read_ready`
/// was ready with `ERROR` alone.
#[test]
fn an_error_alone_is_no_read_readiness() {
    case(5);
}

/// The guards' `Debug` is Tokio's (`ReadyGuard { async_fd: .. }`,
/// `MutReadyGuard { async_fd: .. }`); weft's showed the readiness under
/// weft's own names.
#[test]
fn guards_debug_as_tokio_does() {
    case(12);
}

/// `AsyncFd::try_io` after the runtime shut down looks at the readiness
/// only, as Tokio's does (`WouldBlock` with none, the closure not run);
/// weft's failed with the shutdown error.
#[test]
fn try_io_after_shutdown_looks_at_the_readiness() {
    case(16);
}

/// A guard's `retain_ready` is a no-op, as in Tokio (the guard still
/// shows the readiness; a later `clear_ready` still clears it), and
/// `clear_ready_matching` clears all it is given, even what the guard did
/// not see (a readable guard clearing `WRITABLE`); weft's `retain_ready`
/// emptied the guard (so the later clear did nothing), and its
/// `clear_ready_matching` cleared only what the guard had seen.
#[test]
fn retain_keeps_the_guard_and_clear_matching_clears_all_it_is_given() {
    case(17);
}

/// Two waits woken by one event; the first clears the readiness before
/// the second is polled again: Tokio's second wait ends, with an empty
/// readiness (a woken `Readiness` future is done); weft's went back to
/// sleep.
#[test]
fn a_woken_wait_ends_even_if_the_readiness_was_cleared_since() {
    case(18);
}

/// `Ready` as Tokio's: its `Debug` ends with `is_priority` (on Linux),
/// and it has `|=` and an order (weft's `Debug` had no `is_priority`, and
/// `|=` and `cmp` did not compile).
#[test]
fn ready_prints_orders_and_accumulates_as_tokio_does() {
    case(20);
}

/// Registered for `ERROR` (alone, or with `WRITABLE` or `PRIORITY`), a
/// wait for `READABLE` sees the peer's bytes, as on Tokio, whose
/// registration asks the poller for reads whenever `ERROR` is in the
/// interest; weft's asked for reads only for an error-only interest on
/// epoll, and on io_uring never armed a read poll for one: the wait hung.
#[test]
fn an_error_interest_registers_reads_too() {
    case(23);
}
