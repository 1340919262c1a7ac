//! Who is searching and who is asleep: the notification policy of the
//! multi-thread scheduler.
//!
//! Owns: one atomic word packing the number of *searching* workers (low 16
//! bits) and of *unparked* workers (high bits), plus the list of sleeping
//! workers behind a mutex.
//!
//! Policy (from "Making the Tokio scheduler 10x faster"):
//! - New work wakes a sleeper only if no worker is searching: a searcher
//!   will find the work itself, and waking more would make a herd.
//! - At most half of the workers search at once; stealing is wasted effort
//!   beyond that.
//! - A searcher that finds work stops searching; if it was the *last*
//!   searcher it wakes one sleeper, who starts searching in turn. Load thus
//!   ramps up one worker at a time. Work that a searcher's own drivers
//!   gave it (its io_uring ring's batch point) is not a find: the last
//!   searcher then only re-checks the queues, as one going to sleep does
//!   (worker.rs, `Found::Own`).
//!
//! Invariants:
//! - A worker is in `sleepers` iff it is parked and has not been chosen to
//!   wake. `worker_to_notify` removes it and counts it as unparked and
//!   searching in one step, under the lock, so a worker is never woken twice
//!   for one notification.
//! - The counts use SeqCst: the "is anyone searching?" read in
//!   `worker_to_notify` must be ordered after the caller's queue push, and a
//!   worker's "stop searching" must be ordered before its final queue
//!   re-check, or a push and a park could miss each other.

use crate::loom::{lock, AtomicUsize, Mutex, Ordering};

const UNPARK_SHIFT: usize = 16;
const SEARCH_MASK: usize = (1 << UNPARK_SHIFT) - 1;

pub(super) struct Idle {
    state: AtomicUsize,
    num_workers: usize,
    sleepers: Mutex<Vec<usize>>,
}

fn searching(state: usize) -> usize {
    state & SEARCH_MASK
}

fn unparked(state: usize) -> usize {
    state >> UNPARK_SHIFT
}

impl Idle {
    pub(super) fn new(num_workers: usize) -> Idle {
        assert!(num_workers < SEARCH_MASK, "too many worker threads");
        Idle {
            // Every worker starts unparked and not searching.
            state: AtomicUsize::new(num_workers << UNPARK_SHIFT),
            num_workers,
            sleepers: Mutex::new(Vec::with_capacity(num_workers)),
        }
    }

    /// Work was pushed: pick a sleeper to wake, if the policy says so.
    pub(super) fn worker_to_notify(&self) -> Option<usize> {
        if !self.should_notify() {
            return None;
        }
        let mut sleepers = lock(&self.sleepers);
        // Re-check under the lock: another notifier may have won.
        if !self.should_notify() {
            return None;
        }
        let worker = sleepers.pop()?;
        // The woken worker starts out searching.
        self.state
            .fetch_add(1 | (1 << UNPARK_SHIFT), Ordering::SeqCst);
        Some(worker)
    }

    fn should_notify(&self) -> bool {
        // A read-modify-write, not a load: it takes part in the total order
        // of the searching counter's updates (see module invariants).
        let state = self.state.fetch_add(0, Ordering::SeqCst);
        searching(state) == 0 && unparked(state) < self.num_workers
    }

    /// Become a searcher, unless half the workers already search.
    #[must_use]
    pub(super) fn transition_worker_to_searching(&self) -> bool {
        let state = self.state.load(Ordering::SeqCst);
        if 2 * searching(state) >= self.num_workers {
            return false;
        }
        // Racing searchers may overshoot the limit slightly: harmless.
        self.state.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// Stop searching. Returns true if this was the last searcher, in which
    /// case the caller must notify another worker.
    #[must_use]
    pub(super) fn transition_worker_from_searching(&self) -> bool {
        let prev = self.state.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(searching(prev) > 0);
        searching(prev) == 1
    }

    /// Going to sleep. Returns true if the worker was the last searcher.
    #[must_use]
    pub(super) fn transition_worker_to_parked(&self, worker: usize, is_searching: bool) -> bool {
        let mut sleepers = lock(&self.sleepers);
        let dec = (1 << UNPARK_SHIFT) + usize::from(is_searching);
        let prev = self.state.fetch_sub(dec, Ordering::SeqCst);
        sleepers.push(worker);
        is_searching && searching(prev) == 1
    }

    /// A parked worker woke up for a reason of its own (work in its own
    /// queue): take it off the sleepers list. Returns whether it was there.
    pub(super) fn unpark_worker_by_id(&self, worker: usize) -> bool {
        let mut sleepers = lock(&self.sleepers);
        let Some(pos) = sleepers.iter().position(|&w| w == worker) else {
            return false;
        };
        sleepers.swap_remove(pos);
        self.state.fetch_add(1 << UNPARK_SHIFT, Ordering::SeqCst);
        true
    }

    /// Whether any worker is unparked. A read-modify-write, so that it takes
    /// part in the total order of the counts' updates: the long-poll
    /// monitor reads it after announcing that it goes dormant, and a worker
    /// counted unparked reads that announcement after its update (see
    /// `Monitor::wait`).
    pub(super) fn any_unparked(&self) -> bool {
        unparked(self.state.fetch_add(0, Ordering::SeqCst)) > 0
    }

    /// Whether some worker is parked or searching, so that work moved to
    /// the inject queue has someone to run it soon. A plain load: the
    /// long-poll monitor uses it only to choose how often to sample, and a
    /// stale answer costs one sampling period.
    pub(super) fn any_idle(&self) -> bool {
        let state = self.state.load(Ordering::Relaxed);
        unparked(state) < self.num_workers || searching(state) > 0
    }

    /// Whether the worker is still on the sleepers list (not chosen to wake).
    pub(super) fn is_parked(&self, worker: usize) -> bool {
        lock(&self.sleepers).contains(&worker)
    }

    #[cfg(all(test, not(loom)))]
    pub(super) fn num_searching(&self) -> usize {
        searching(self.state.load(Ordering::SeqCst))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn no_notify_while_someone_searches() {
        let idle = Idle::new(4);
        assert!(!idle.transition_worker_to_parked(3, false));
        assert!(idle.transition_worker_to_searching());
        assert_eq!(idle.worker_to_notify(), None);
        assert!(idle.transition_worker_from_searching());
        assert_eq!(idle.worker_to_notify(), Some(3));
        // The woken worker counts as searching, so nobody else is woken.
        assert_eq!(idle.num_searching(), 1);
        assert_eq!(idle.worker_to_notify(), None);
    }

    #[test]
    fn at_most_half_search() {
        let idle = Idle::new(4);
        assert!(idle.transition_worker_to_searching());
        assert!(idle.transition_worker_to_searching());
        assert!(!idle.transition_worker_to_searching());
    }

    #[test]
    fn last_searcher_to_park_reports_it() {
        let idle = Idle::new(2);
        assert!(idle.transition_worker_to_searching());
        assert!(idle.transition_worker_to_parked(0, true));
        assert!(idle.is_parked(0));
        assert!(idle.unpark_worker_by_id(0));
        assert!(!idle.is_parked(0));
        assert!(!idle.unpark_worker_by_id(0));
    }

    #[test]
    fn any_idle_follows_parks_searches_and_wakes() {
        let idle = Idle::new(2);
        assert!(!idle.any_idle());
        assert!(!idle.transition_worker_to_parked(1, false));
        assert!(idle.any_idle());
        // Woken to search: still idle until it finds work.
        assert_eq!(idle.worker_to_notify(), Some(1));
        assert!(idle.any_idle());
        assert!(idle.transition_worker_from_searching());
        assert!(!idle.any_idle());
    }

    #[test]
    fn nobody_to_wake_when_all_awake() {
        let idle = Idle::new(2);
        assert_eq!(idle.worker_to_notify(), None);
    }
}
