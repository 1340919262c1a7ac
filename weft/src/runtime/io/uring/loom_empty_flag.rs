//! Loom model of a ring's [`EmptyFlag`] (empty_flag.rs): the owner starts
//! requests and reads the flag without the lock; another thread reaps
//! (completes) requests under the lock. The ring's state is a count of
//! requests in flight behind a mutex, whose every release records the
//! flag, as `Ring`'s lock does.

use super::empty_flag::EmptyFlag;
use crate::loom::{lock, thread, Arc, Mutex};

struct Ring {
    in_flight: Mutex<usize>,
    empty: EmptyFlag,
}

impl Ring {
    /// A ring with one request the owner started.
    fn with_one_request() -> Arc<Ring> {
        let ring = Arc::new(Ring {
            in_flight: Mutex::new(0),
            empty: EmptyFlag::new(),
        });
        ring.locked(|n| *n += 1);
        ring
    }

    /// A hold of the ring's lock, recording the flag at its release.
    fn locked<R>(&self, f: impl FnOnce(&mut usize) -> R) -> R {
        let mut in_flight = lock(&self.in_flight);
        let result = f(&mut in_flight);
        self.empty.record(*in_flight == 0);
        result
    }
}

/// The owner never reads "empty" while a request it started is still in
/// flight, whatever another thread's reaps store meanwhile; and once it
/// reads "empty", the lock agrees.
#[test]
fn the_owner_never_sees_its_ring_empty_with_a_request_in_flight() {
    loom::model(|| {
        // The owner's first request, then a reaper that completes one.
        let ring = Ring::with_one_request();
        let reaper = spawn_reaper(&ring);
        // A second request, started while the reaper may run.
        ring.locked(|n| *n += 1);
        let seen_empty = ring.empty.owner_sees_empty();
        let in_flight = *lock(&ring.in_flight);
        assert!(
            !seen_empty || in_flight == 0,
            "read empty with {in_flight} in flight"
        );
        // Its own second request is in flight until reaped: never empty.
        assert!(!seen_empty, "read empty after starting a request");
        reaper.join().unwrap();
        ring.locked(|n| *n -= 1);
        assert!(ring.empty.owner_sees_empty(), "all reaped, yet not empty");
    });
}

/// The owner reads "empty" after another thread reaped its last request
/// (or "not empty" before): never a value that contradicts a state the
/// owner could still be in.
#[test]
fn a_reap_by_another_thread_empties_the_ring_for_the_owner() {
    loom::model(|| {
        let ring = Ring::with_one_request();
        let reaper = spawn_reaper(&ring);
        if ring.empty.owner_sees_empty() {
            assert_eq!(*lock(&ring.in_flight), 0, "empty read before the reap");
        }
        reaper.join().unwrap();
        // After the join the reap's store is the latest.
        assert!(ring.empty.owner_sees_empty());
    });
}

/// Another thread completing (reaping) one request.
fn spawn_reaper(ring: &Arc<Ring>) -> thread::JoinHandle<()> {
    let ring = ring.clone();
    thread::spawn(move || ring.locked(|n| *n -= 1))
}
