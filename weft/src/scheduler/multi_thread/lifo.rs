//! The LIFO slot: the one task a worker runs next, which other workers may
//! steal as a last resort.
//!
//! Owns: one atomic pointer to a queue entry (null = empty). The owner puts
//! (a plain store into an empty slot, a `swap` to displace) and takes (a
//! `swap`); the long-poll monitor (monitor.rs), the only stealer, takes with
//! `compare_exchange`. Only the owner ever writes a non-null pointer.
//!
//! Invariants:
//! - **Exactly once.** An entry leaves the slot only through an atomic read-
//!   modify-write that replaces it (the owner's `swap`, a stealer's CAS), so
//!   whoever's operation returned it is its only holder. An entry put in is
//!   never lost: a displaced one comes back to the owner, who queues it.
//! - **Publication.** Putting is a `Release` swap and taking an `Acquire`
//!   one, so a taker sees the entry's task as the putter left it (the same
//!   hand-over the run queue makes with its `tail`).
//! - **Steal only what is stranded.** The owner runs its slot task as soon
//!   as its current poll ends, so the slot is stolen only from a worker the
//!   monitor has seen in the *same* poll for a whole monitoring period. Other
//!   workers never take from it: Tokio's stealable slot (reverted) let
//!   searchers take it at once and split message-passing pairs across
//!   cores, and Go's searchers back off ~3 µs and then take it; measured
//!   here, that back-off alone (spinning searchers on 2 cores) cost 9–19%
//!   on the ping-pong rows. The monitor costs the hot path nothing.

use crate::loom::{AtomicPtr, Ordering};
use std::ptr::{null_mut, NonNull};

/// What the slot holds: an owned entry that can travel as a pointer.
pub(crate) trait SlotEntry: Sized {
    fn into_ptr(self) -> NonNull<()>;
    /// # Safety
    /// `ptr` came from [`SlotEntry::into_ptr`] and is converted back once.
    unsafe fn from_ptr(ptr: NonNull<()>) -> Self;
}

impl<S: 'static> SlotEntry for crate::task::Notified<S> {
    fn into_ptr(self) -> NonNull<()> {
        // An entry holds no reference (task/mod.rs), so nothing is leaked
        // while it travels as a pointer.
        self.header_ptr().cast()
    }

    unsafe fn from_ptr(ptr: NonNull<()>) -> Self {
        // SAFETY: forwarded contract: the pointer of an entry, used once.
        unsafe { crate::task::Notified::from_header(ptr.cast()) }
    }
}

pub(crate) struct LifoSlot<T: SlotEntry> {
    entry: AtomicPtr<()>,
    _entries: std::marker::PhantomData<T>,
}

// SAFETY: the slot hands each entry to exactly one thread (module
// invariant "exactly once"); entries are `Send` themselves.
unsafe impl<T: SlotEntry + Send> Send for LifoSlot<T> {}
// SAFETY: as above; all shared access is through the atomic.
unsafe impl<T: SlotEntry + Send> Sync for LifoSlot<T> {}

impl<T: SlotEntry> LifoSlot<T> {
    pub(crate) fn new() -> LifoSlot<T> {
        LifoSlot {
            entry: AtomicPtr::new(null_mut()),
            _entries: std::marker::PhantomData,
        }
    }

    /// Owner: put `task` in the slot; returns the entry it displaced.
    pub(crate) fn put(&self, task: T) -> Option<T> {
        let new = task.into_ptr().as_ptr();
        // Only the owner ever makes the slot non-empty, so an empty slot
        // stays empty until this store: no read-modify-write needed (the
        // usual case: the slot was taken by the last poll).
        if self.entry.load(Ordering::Relaxed).is_null() {
            self.entry.store(new, Ordering::Release);
            return None;
        }
        let prev = self.entry.swap(new, Ordering::AcqRel);
        // SAFETY: a non-null pointer in the slot is an entry put by `put`,
        // and the swap made us its only holder (module invariants).
        NonNull::new(prev).map(|p| unsafe { T::from_ptr(p) })
    }

    /// Owner: take the slot's entry, if any.
    pub(crate) fn take(&self) -> Option<T> {
        // A plain load first: an empty slot (the common case on most polls)
        // costs no read-modify-write.
        if self.entry.load(Ordering::Relaxed).is_null() {
            return None;
        }
        let prev = self.entry.swap(null_mut(), Ordering::Acquire);
        // SAFETY: as in `put`.
        NonNull::new(prev).map(|p| unsafe { T::from_ptr(p) })
    }

    /// Whether an entry is in the slot (a snapshot).
    pub(crate) fn is_occupied(&self) -> bool {
        !self.entry.load(Ordering::Relaxed).is_null()
    }

    /// The monitor: take the entry of a worker stuck in one poll (module
    /// invariant "steal only what is stranded").
    pub(crate) fn steal(&self) -> Option<T> {
        let seen = self.entry.load(Ordering::Acquire);
        if seen.is_null() {
            return None;
        }
        self.entry
            .compare_exchange(seen, null_mut(), Ordering::Acquire, Ordering::Relaxed)
            .ok()
            // SAFETY: the CAS moved `seen` out of the slot: we hold it alone.
            .map(|p| unsafe { T::from_ptr(NonNull::new_unchecked(p)) })
    }
}

impl<T: SlotEntry> Drop for LifoSlot<T> {
    fn drop(&mut self) {
        // Entries hold no reference (task/mod.rs): forgetting one is fine,
        // but give it back to its type so nothing else leaks (tests' boxes).
        if let Some(entry) = self.take() {
            drop(entry);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::loom::{thread, Arc};

    impl SlotEntry for Box<u32> {
        fn into_ptr(self) -> NonNull<()> {
            NonNull::from(Box::leak(self)).cast()
        }
        unsafe fn from_ptr(ptr: NonNull<()>) -> Self {
            // SAFETY: forwarded contract: a pointer from `into_ptr`, once.
            unsafe { Box::from_raw(ptr.cast::<u32>().as_ptr()) }
        }
    }

    /// The owner puts two tasks (the second displacing the first unless it
    /// was stolen) and takes what is left, while a stealer tries once:
    /// every task ends up with exactly one of them.
    #[test]
    fn loom_lifo_slot_put_take_steal() {
        loom::model(|| {
            let slot = Arc::new(LifoSlot::<Box<u32>>::new());
            let stealer = {
                let slot = slot.clone();
                thread::spawn(move || slot.steal().map(|b| *b))
            };
            let mut owner = Vec::new();
            if let Some(displaced) = slot.put(Box::new(1)) {
                owner.push(*displaced);
            }
            if let Some(displaced) = slot.put(Box::new(2)) {
                owner.push(*displaced);
            }
            if let Some(left) = slot.take() {
                owner.push(*left);
            }
            let stolen = stealer.join().unwrap();
            let mut all = owner.clone();
            all.extend(stolen);
            all.sort();
            assert_eq!(all, vec![1, 2], "owner {owner:?}, stolen {stolen:?}");
        });
    }
}
