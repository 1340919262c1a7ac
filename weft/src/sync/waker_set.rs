//! Wakers of tasks waiting for one condition, all woken together when it
//! changes.
//!
//! # What this file owns
//!
//! [`WakerSet`]: the waiter storage of `watch` (receivers waiting in
//! `changed`, senders waiting in `closed`) and `broadcast` (receivers
//! waiting in `recv`), built on [`WaitList`]. It has no lock of its own: the
//! channel keeps it inside the mutex that also guards the condition being
//! waited for, which is what makes "check the condition, then register" free
//! of lost wakeups.
//!
//! # Invariants
//!
//! 1. **Keys.** A waiter owns the key [`WakerSet::register`] gave it until
//!    it passes the key to [`WakerSet::remove`] (the waiting future does so
//!    when dropped, whether it completed or was cancelled).
//! 2. **Queued means `Some`.** An allocated slot holds `Some(waker)` exactly
//!    while it is linked in the list. [`WakerSet::take_all`] unlinks each
//!    slot and takes its waker, leaving `None` in the still-allocated slot;
//!    a later `register` with that key frees it and queues a new slot.
//! 3. **No waker dropped or woken here.** The set lives under its user's
//!    lock (`sync/mod.rs`, "Wakers and locks"), so it never drops or wakes a
//!    waker itself: `register` and `remove` return the waker they replace or
//!    unqueue, `take_all` returns the ones to wake.

use std::task::Waker;

use super::wait_list::WaitList;

/// Wakers waiting for one condition; see the module doc.
#[derive(Debug)]
pub(crate) struct WakerSet {
    list: WaitList<Option<Waker>>,
}

impl WakerSet {
    pub(crate) const fn new() -> Self {
        WakerSet {
            list: WaitList::new(),
        }
    }

    /// Queues `waker` under `*key`, taking a key when `*key` is `None`. A
    /// waker still queued under the key is replaced, unless it would wake
    /// the same task; the replaced one is returned, for the caller to drop
    /// after unlocking (invariant 3).
    #[must_use = "drop the replaced waker after unlocking"]
    pub(crate) fn register(&mut self, key: &mut Option<usize>, waker: &Waker) -> Option<Waker> {
        if let Some(k) = *key {
            match self.list.get_mut(k) {
                Some(queued) => {
                    if queued.will_wake(waker) {
                        return None;
                    }
                    return Some(std::mem::replace(queued, waker.clone()));
                }
                // Invariant 2: already woken and unlinked; start afresh (the
                // slot holds no waker).
                None => {
                    let _ = self.list.remove(k);
                }
            }
        }
        *key = Some(self.list.push_back(Some(waker.clone())));
        None
    }

    /// Gives back `key`, returning its waker if it is still queued, for the
    /// caller to drop after unlocking (invariant 3).
    #[must_use = "drop the removed waker after unlocking"]
    pub(crate) fn remove(&mut self, key: usize) -> Option<Waker> {
        self.list.remove(key)
    }

    /// Unqueues every waiter and returns their wakers, so the caller can
    /// wake them after unlocking.
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        while let Some(k) = self.list.pop_front() {
            wakers.extend(self.list.get_mut(k).take());
        }
        wakers
    }

    /// Whether no waiter is queued.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Wakes every waker in `wakers`.
pub(crate) fn wake_all(wakers: Vec<Waker>) {
    for waker in wakers {
        waker.wake();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn register_take_remove() {
        let mut set = WakerSet::new();
        let (ca, cb) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let (wa, wb) = (Waker::from(ca.clone()), Waker::from(cb.clone()));
        let (mut a, mut b) = (None, None);
        assert!(set.register(&mut a, &wa).is_none());
        assert!(set.register(&mut a, &wa).is_none());
        assert!(set.register(&mut b, &wb).is_none());
        assert!(set.remove(b.take().unwrap()).is_some());
        wake_all(set.take_all());
        assert_eq!(ca.0.load(Ordering::SeqCst), 1);
        assert_eq!(cb.0.load(Ordering::SeqCst), 0);
        assert!(set.is_empty());

        // A woken waiter registers again under its old key.
        assert!(set.register(&mut a, &wb).is_none());
        // A different waker under a queued key is handed back.
        let replaced = set.register(&mut a, &wa).expect("replaced waker");
        assert!(replaced.will_wake(&wb));
        assert_eq!(set.take_all().len(), 1);
        assert!(set.remove(a.take().unwrap()).is_none());
        assert!(set.take_all().is_empty());
        assert!(set.is_empty());
    }
}
