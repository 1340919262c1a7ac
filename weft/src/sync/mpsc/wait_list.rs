//! A FIFO queue of parked tasks, each addressed by a stable key.
//!
//! Used under the channel lock for senders waiting for capacity and for
//! `closed()` waiters. Slots live in a slab (`Vec` plus a free list), so a
//! waiter finds its own slot in O(1) by key, and parking allocates only when
//! the slab grows past its high-water mark. `fifo` holds, oldest first, the
//! keys of the slots in state [`Slot::Waiting`]; slots in any other state are
//! not in it.

use std::collections::VecDeque;
use std::task::Waker;

/// End of the free list.
const NONE: usize = usize::MAX;

/// One waiter's slot.
#[derive(Debug)]
pub(super) enum Slot {
    /// Free; links to the next free slot.
    Vacant { next: usize },
    /// Parked, in `fifo`, with the waker to wake when its turn comes.
    Waiting(Waker),
    /// Its turn came (a sender was handed a slot of capacity); it has not yet
    /// observed this.
    Granted,
    /// The channel closed while it waited; it has not yet observed this.
    Closed,
}

/// The queue; see the module doc.
#[derive(Debug)]
pub(super) struct WaitList {
    slots: Vec<Slot>,
    free: usize,
    fifo: VecDeque<usize>,
}

impl WaitList {
    pub(super) const fn new() -> WaitList {
        WaitList {
            slots: Vec::new(),
            free: NONE,
            fifo: VecDeque::new(),
        }
    }

    /// Whether no waiter is in state `Waiting`.
    pub(super) fn no_waiting(&self) -> bool {
        self.fifo.is_empty()
    }

    /// Parks a new waiter at the back of the queue and returns its key.
    pub(super) fn push(&mut self, waker: Waker) -> usize {
        let key = if self.free == NONE {
            self.slots.push(Slot::Waiting(waker));
            self.slots.len() - 1
        } else {
            let key = self.free;
            match std::mem::replace(&mut self.slots[key], Slot::Waiting(waker)) {
                Slot::Vacant { next } => self.free = next,
                _ => unreachable!("free list points at an occupied slot"),
            }
            key
        };
        self.fifo.push_back(key);
        key
    }

    /// The state of the waiter `key`.
    pub(super) fn slot(&self, key: usize) -> &Slot {
        &self.slots[key]
    }

    /// Replaces the waker of a `Waiting` waiter unless it would wake the same
    /// task; returns the old waker so the caller drops it after unlocking.
    pub(super) fn update_waker(&mut self, key: usize, waker: &Waker) -> Option<Waker> {
        match &mut self.slots[key] {
            Slot::Waiting(w) if !w.will_wake(waker) => Some(std::mem::replace(w, waker.clone())),
            _ => None,
        }
    }

    /// Frees the slot `key` (dequeuing it if it was waiting) and returns its
    /// last state.
    pub(super) fn remove(&mut self, key: usize) -> Slot {
        let slot = std::mem::replace(&mut self.slots[key], Slot::Vacant { next: self.free });
        self.free = key;
        if let Slot::Waiting(_) = slot {
            // Only a cancelled waiter leaves from the middle; queues are short.
            if let Some(pos) = self.fifo.iter().position(|&k| k == key) {
                self.fifo.remove(pos);
            }
        }
        slot
    }

    /// Moves the oldest waiting waiter to `Granted` and returns its waker.
    pub(super) fn grant_front(&mut self) -> Option<Waker> {
        let key = self.fifo.pop_front()?;
        match std::mem::replace(&mut self.slots[key], Slot::Granted) {
            Slot::Waiting(waker) => Some(waker),
            _ => unreachable!("a queued key is always waiting"),
        }
    }

    /// Moves every `Waiting` waiter, and also every `Granted` one if
    /// `granted_too`, to `Closed`. Pushes the wakers of the waiting ones onto
    /// `wakers` and returns how many granted ones were closed.
    pub(super) fn close_all(&mut self, granted_too: bool, wakers: &mut Vec<Waker>) -> usize {
        for key in self.fifo.drain(..) {
            match std::mem::replace(&mut self.slots[key], Slot::Closed) {
                Slot::Waiting(waker) => wakers.push(waker),
                _ => unreachable!("a queued key is always waiting"),
            }
        }
        let mut granted = 0;
        if granted_too {
            for slot in &mut self.slots {
                if let Slot::Granted = slot {
                    *slot = Slot::Closed;
                    granted += 1;
                }
            }
        }
        granted
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_key_reuse() {
        let mut list = WaitList::new();
        let a = list.push(Waker::noop().clone());
        let b = list.push(Waker::noop().clone());
        let c = list.push(Waker::noop().clone());
        assert!(matches!(list.remove(b), Slot::Waiting(_)));
        assert!(list.grant_front().is_some());
        assert!(matches!(list.slot(a), Slot::Granted));
        assert!(list.grant_front().is_some());
        assert!(matches!(list.slot(c), Slot::Granted));
        assert!(list.grant_front().is_none());
        assert!(list.no_waiting());
        // The freed slot is reused.
        let d = list.push(Waker::noop().clone());
        assert_eq!(d, b);
        let mut wakers = Vec::new();
        assert_eq!(list.close_all(true, &mut wakers), 2);
        assert_eq!(wakers.len(), 1);
        assert!(matches!(list.remove(a), Slot::Closed));
        assert!(matches!(list.remove(c), Slot::Closed));
        assert!(matches!(list.remove(d), Slot::Closed));
    }

    #[test]
    fn close_keeps_granted_when_asked() {
        let mut list = WaitList::new();
        let a = list.push(Waker::noop().clone());
        let b = list.push(Waker::noop().clone());
        list.grant_front();
        let mut wakers = Vec::new();
        assert_eq!(list.close_all(false, &mut wakers), 0);
        assert!(matches!(list.slot(a), Slot::Granted));
        assert!(matches!(list.slot(b), Slot::Closed));
    }

    #[test]
    fn update_waker_replaces_only_different() {
        let (_, wa) = super::super::test_support::CountWaker::new();
        let (_, wb) = super::super::test_support::CountWaker::new();
        let mut list = WaitList::new();
        let a = list.push(wa.clone());
        assert!(list.update_waker(a, &wa).is_none());
        assert!(list.update_waker(a, &wb).is_some());
        assert!(list.update_waker(a, &wb).is_none());
    }
}
