//! Differential test of `weft::sync` against crates.io Tokio's `sync`.
//!
//! Each primitive has one interpreter, written once in a group macro and
//! expanded twice by `for_both!`: in `on_tokio` (with `k` = `tokio`) and in
//! `on_weft` (with `k` = `weft`). A seeded xorshift generator makes a random
//! script of operations on one primitive instance and on a few live futures
//! (create, poll, drop a future; release a permit or guard; send, close,
//! try_* ...).
//! Both interpreters run the script outside any runtime (so the coop budget
//! is unconstrained for both), single-threaded, polling boxed futures by
//! hand with counting wakers. After each step they record what a program
//! can observe: the step's result (`Pending` / `Ready(..)`, values, error
//! kinds mapped to their variant names) and a state line (counts, lengths,
//! closed flags), plus, for every live future, whether it has been woken
//! since its last poll.
//!
//! Comparison, step by step:
//! - different results or state lines: a mismatch;
//! - a future Tokio has woken and weft has not: the script is replayed with
//!   a poll of that future right after the step; if Tokio's poll is then
//!   `Ready` (or the two polls differ), weft lost a wake-up (a program
//!   waiting on it could hang): a mismatch. If Tokio's poll is `Pending`
//!   too, Tokio's wake was spurious: only counted;
//! - a future weft has woken and Tokio has not: a spurious wake-up, allowed,
//!   only counted and reported on stderr.
//!
//! A mismatching script is shrunk (ops removed while the same kind of
//! mismatch at the same kind of op remains) and reported with its seed and
//! both logs up to the first difference.
//!
//! `SYNC_DIFF_SEEDS=N` runs N seeds per primitive (default 3,000);
//! `SYNC_DIFF_SEED=S` runs the one seed S; `SYNC_DIFF_SKIP=Close,DropRx`
//! leaves ops of those variants out of the generated scripts (to look for
//! other differences behind a known one).
//!
//! The tests at the end are regression cases: minimal scripts for the
//! differences from Tokio this test found, all since fixed in weft (all
//! involve closing). They pass, as do `semaphore_matches_tokio` and
//! `mpsc_matches_tokio`, which first found them.
//!
//! This file holds the tests; the parts live in `sync_differential/`:
//! - `harness.rs`: the generator, counting wakers, step logs, `for_both!`,
//!   and running, comparing, shrinking and reporting scripts;
//! - `ops.rs`: each primitive's ops and configuration;
//! - `scripts.rs`: the random script generators;
//! - `interp_locks.rs`, `interp_notify_barrier.rs`, `interp_mpsc_oneshot.rs`,
//!   `interp_watch_broadcast.rs`: the interpreters, by group of primitives;
//! - `interp_errors.rs`: every error type's `Display`, on both crates;
//! - `prims.rs`: each primitive's generator and interpreters, paired.
#![cfg(not(loom))]

#[path = "sync_differential/harness.rs"]
mod harness;
#[path = "sync_differential/interp_errors.rs"]
mod interp_errors;
#[path = "sync_differential/interp_locks.rs"]
mod interp_locks;
#[path = "sync_differential/interp_mpsc_oneshot.rs"]
mod interp_mpsc_oneshot;
#[path = "sync_differential/interp_notify_barrier.rs"]
mod interp_notify_barrier;
#[path = "sync_differential/interp_watch_broadcast.rs"]
mod interp_watch_broadcast;
#[path = "sync_differential/ops.rs"]
mod ops;
#[path = "sync_differential/prims.rs"]
mod prims;
#[path = "sync_differential/scripts.rs"]
mod scripts;
#[path = "support/seeded_rng.rs"]
mod seeded_rng;

use harness::{assert_same, fuzz};
use ops::{BcastCfg, BcastOp, MpscCfg, MpscOp, NotifyOp, SemCfg, SemOp};
use prims::{BARRIER, BROADCAST, MPSC, MUTEX, NOTIFY, ONESHOT, RWLOCK, SEMAPHORE, WATCH};

#[test]
fn semaphore_matches_tokio() {
    fuzz(&SEMAPHORE);
}

#[test]
fn notify_matches_tokio() {
    fuzz(&NOTIFY);
}

#[test]
fn mutex_matches_tokio() {
    fuzz(&MUTEX);
}

#[test]
fn rwlock_matches_tokio() {
    fuzz(&RWLOCK);
}

#[test]
fn mpsc_matches_tokio() {
    fuzz(&MPSC);
}

#[test]
fn oneshot_matches_tokio() {
    fuzz(&ONESHOT);
}

#[test]
fn watch_matches_tokio() {
    fuzz(&WATCH);
}

#[test]
fn broadcast_matches_tokio() {
    fuzz(&BROADCAST);
}

#[test]
fn barrier_matches_tokio() {
    fuzz(&BARRIER);
}

#[test]
fn error_displays_match_tokio() {
    assert_eq!(
        interp_errors::on_weft::error_displays(),
        interp_errors::on_tokio::error_displays()
    );
}

/// A few hand-written scripts of the behaviours the brief names, so they
/// are checked whatever the random scripts happen to hit.
#[test]
fn directed_scripts_match_tokio() {
    use SemOp as S;
    // FIFO: a big acquire_many at the head blocks a later small one.
    assert_same(
        &SEMAPHORE,
        SemCfg { permits: 1 },
        vec![
            S::Acquire {
                slot: 0,
                n: 3,
                owned: false,
            },
            S::Poll {
                slot: 0,
                fresh: false,
            },
            S::Acquire {
                slot: 1,
                n: 1,
                owned: true,
            },
            S::Poll {
                slot: 1,
                fresh: false,
            },
            S::TryAcquire { n: 1, owned: false },
            S::AddPermits { n: 1 },
            S::Poll {
                slot: 1,
                fresh: false,
            },
            S::AddPermits { n: 1 },
            S::Poll {
                slot: 0,
                fresh: false,
            },
            S::Poll {
                slot: 1,
                fresh: false,
            },
            S::Release { h: 0 },
            S::Poll {
                slot: 1,
                fresh: false,
            },
            S::Close,
        ],
    );
    use NotifyOp as N;
    // A dropped, notified Notified passes its notification on.
    assert_same(
        &NOTIFY,
        (),
        vec![
            N::Notified {
                slot: 0,
                owned: false,
            },
            N::Poll {
                slot: 0,
                fresh: false,
            },
            N::Notified {
                slot: 1,
                owned: true,
            },
            N::Enable { slot: 1 },
            N::NotifyOne,
            N::DropFut { slot: 0 },
            N::Poll {
                slot: 1,
                fresh: false,
            },
            N::NotifyWaiters,
            N::Notified {
                slot: 2,
                owned: false,
            },
            N::NotifyLast,
            N::Poll {
                slot: 2,
                fresh: false,
            },
        ],
    );
    use BcastOp as B;
    // Capacity 3 rounds up to 4; a receiver subscribed mid-stream; lag.
    assert_same(
        &BROADCAST,
        BcastCfg { cap: 3 },
        vec![
            B::Send { tx: 0 },
            B::Send { tx: 0 },
            B::Subscribe { tx: 0, rx: 1 },
            B::Send { tx: 0 },
            B::Send { tx: 0 },
            B::Send { tx: 0 },
            B::TryRecv { rx: 0 },
            B::TryRecv { rx: 0 },
            B::Send { tx: 0 },
            B::TryRecv { rx: 1 },
            B::TryRecv { rx: 1 },
            B::DropTx { tx: 0 },
            B::TryRecv { rx: 1 },
        ],
    );
}

// ---------------------------------------------------------------------------
// Regression cases: minimal scripts for the differences from Tokio this test
// found, since fixed in weft. Each pins down Tokio's behaviour there.
// ---------------------------------------------------------------------------

/// An `acquire` that was handed its permits (and woken) but not yet polled
/// when the semaphore closes: its poll returns `Err(AcquireError)`, as
/// Tokio's does (its poll checks `CLOSED` first, and the permits go back
/// when the future drops), so no permit is issued after `close()` ("prevents
/// the semaphore from issuing new permits"). weft used to return the permit.
#[test]
fn semaphore_acquire_served_before_close_fails_when_polled_after_it() {
    use SemOp::*;
    assert_same(
        &SEMAPHORE,
        SemCfg { permits: 0 },
        vec![
            Acquire {
                slot: 0,
                n: 1,
                owned: false,
            },
            Poll {
                slot: 0,
                fresh: false,
            },
            AddPermits { n: 1 },
            Close,
            Poll {
                slot: 0,
                fresh: false,
            },
        ],
    );
}

/// The same on a bounded mpsc channel: a `send` waiting for capacity is
/// woken by a receive, then the receiver calls `close()`. As on Tokio, the
/// send returns `Err(SendError(v))` and nothing more arrives (Tokio
/// documents `close` as preventing any further messages). weft used to
/// return `Ok` and deliver the value after the close.
#[test]
fn mpsc_send_woken_before_close_is_not_delivered() {
    use MpscOp::*;
    assert_same(
        &MPSC,
        MpscCfg { cap: 1 },
        vec![
            TrySend { tx: 0 },
            Send { slot: 0, tx: 0 },
            Poll {
                slot: 0,
                fresh: false,
            },
            TryRecv,
            RxClose,
            Poll {
                slot: 0,
                fresh: false,
            },
            TryRecv,
        ],
    );
}

/// As above, but with `reserve_owned` (`reserve` is the same) and the
/// receiver dropped: the reserve returns `Err(SendError)`, as Tokio's does
/// (documented: an error once the receiver is closed or dropped). weft used
/// to return a permit, whose `send` then dropped the value. (A plain `send`
/// in the same place always returned `Err` on both.)
#[test]
fn mpsc_reserve_woken_before_receiver_drop_fails() {
    use MpscOp::*;
    assert_same(
        &MPSC,
        MpscCfg { cap: 1 },
        vec![
            TrySend { tx: 0 },
            Reserve { slot: 0, tx: 0 },
            Poll {
                slot: 0,
                fresh: false,
            },
            TryRecv,
            DropRx,
            Poll {
                slot: 0,
                fresh: false,
            },
        ],
    );
}

/// `close()` with an `acquire_many` at the head of the queue that holds
/// part of its permits: as on Tokio, those permits stay with the waiter
/// (out of `available_permits()`) until its future is polled (`Err`) or
/// dropped. weft used to put them back at once.
#[test]
fn semaphore_close_leaves_a_waiters_partial_permits_with_it_until_dropped() {
    use SemOp::*;
    assert_same(
        &SEMAPHORE,
        SemCfg { permits: 1 },
        vec![
            Acquire {
                slot: 0,
                n: 3,
                owned: false,
            },
            Poll {
                slot: 0,
                fresh: false,
            },
            Close,
        ],
    );
}

/// The same through a bounded channel's `capacity()`: a `reserve_many(2)`
/// holding one slot when the receiver closes. As on Tokio, capacity stays 0
/// until the waiter is polled or dropped (it "goes up when values are
/// received"). weft's capacity used to become 1 at once.
#[test]
fn mpsc_close_leaves_a_waiters_partial_capacity_with_it() {
    use MpscOp::*;
    assert_same(
        &MPSC,
        MpscCfg { cap: 2 },
        vec![
            TrySend { tx: 0 },
            ReserveMany {
                slot: 0,
                tx: 0,
                n: 2,
                k: 0,
            },
            Poll {
                slot: 0,
                fresh: false,
            },
            RxClose,
        ],
    );
}

/// `OwnedPermit::send` after the receiver was dropped: as on Tokio, the
/// value is queued (dropped with the channel) and the slot stays used, so
/// `capacity()` stays down. weft used to drop the value at once and give
/// the slot back.
#[test]
fn mpsc_permit_send_after_receiver_drop_keeps_the_slot_until_the_channel_goes() {
    use MpscOp::*;
    assert_same(
        &MPSC,
        MpscCfg { cap: 2 },
        vec![
            Reserve { slot: 0, tx: 0 },
            Poll {
                slot: 0,
                fresh: false,
            },
            DropRx,
            PermitSend { h: 0 },
        ],
    );
}
