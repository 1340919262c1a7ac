//! The slab-based FIFO waiter queue of the `mpsc` channels' `closed()`
//! waiters and of `WakerSet`, and a batch of wakers to wake
//! after a lock is released (also used by [`Notify`](super::Notify) and
//! [`Semaphore`](super::Semaphore), whose waiters live in the intrusive
//! list of `intrusive.rs` instead).
//!
//! # What this file owns
//!
//! `WaitList<T>`: a doubly linked list threaded through a slab (`Vec`) of
//! slots, so a waiter is named by a plain index ("key") and can leave the
//! middle of the queue in O(1). It is entirely safe code: no waiter memory is
//! borrowed by the list, so a future that holds a key may be moved freely.
//!
//! `WakeList`: a bounded batch of wakers, woken when it is dropped.
//!
//! # Invariants
//!
//! 1. **Slot ownership.** A slot is allocated by `push_back` and freed only
//!    by `remove`. Between the two, exactly one owner (the future that
//!    pushed it) holds its key; no one else frees it. Being *linked* (in the
//!    queue) is separate from being *allocated*: whoever serves a waiter
//!    unlinks it (`pop_front`, `unlink`) and records the outcome in the
//!    value, and the owner later reads the outcome and `remove`s it.
//! 2. **Links.** `head`/`tail` and each linked slot's `prev`/`next` form one
//!    chain in queue order; unlinked slots have `linked == false`, and free
//!    slots are chained through `next` from `free`.
//!
//! The list is not synchronised: its users keep it behind a mutex.

use std::fmt;
use std::task::Waker;

/// No slot: the end of a chain.
const NIL: usize = usize::MAX;

/// A FIFO queue of waiters addressed by stable keys (see the module doc).
pub(crate) struct WaitList<T> {
    slots: Vec<Slot<T>>,
    /// First free slot, chained through `Slot::next`.
    free: usize,
    head: usize,
    tail: usize,
    /// Allocated (not necessarily linked) slots.
    allocated: usize,
}

struct Slot<T> {
    /// `None` only while the slot is free.
    value: Option<T>,
    prev: usize,
    next: usize,
    linked: bool,
}

impl<T> WaitList<T> {
    pub(crate) const fn new() -> Self {
        WaitList {
            slots: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
            allocated: 0,
        }
    }

    /// Whether no waiter is queued (allocated but unlinked slots may remain).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Allocates a slot for `value`, links it at the back, returns its key.
    pub(crate) fn push_back(&mut self, value: T) -> usize {
        let key = if self.free != NIL {
            let key = self.free;
            self.free = self.slots[key].next;
            self.slots[key].value = Some(value);
            key
        } else {
            self.slots.push(Slot {
                value: Some(value),
                prev: NIL,
                next: NIL,
                linked: false,
            });
            self.slots.len() - 1
        };
        self.allocated += 1;
        let slot = &mut self.slots[key];
        slot.prev = self.tail;
        slot.next = NIL;
        slot.linked = true;
        if self.tail == NIL {
            self.head = key;
        } else {
            self.slots[self.tail].next = key;
        }
        self.tail = key;
        key
    }

    /// The key of the first queued waiter.
    pub(crate) fn front(&self) -> Option<usize> {
        (self.head != NIL).then_some(self.head)
    }

    /// The value of an allocated slot.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn get(&self, key: usize) -> &T {
        self.slots[key]
            .value
            .as_ref()
            .expect("WaitList: key of a freed slot")
    }

    /// The value of an allocated slot, mutably.
    pub(crate) fn get_mut(&mut self, key: usize) -> &mut T {
        self.slots[key]
            .value
            .as_mut()
            .expect("WaitList: key of a freed slot")
    }

    /// Takes `key` out of the queue, keeping its slot allocated. Does
    /// nothing if it is not queued.
    pub(crate) fn unlink(&mut self, key: usize) {
        let slot = &mut self.slots[key];
        if !slot.linked {
            return;
        }
        slot.linked = false;
        let (prev, next) = (slot.prev, slot.next);
        slot.prev = NIL;
        slot.next = NIL;
        if prev == NIL {
            self.head = next;
        } else {
            self.slots[prev].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.slots[next].prev = prev;
        }
    }

    /// Unlinks the first queued waiter and returns its key.
    pub(crate) fn pop_front(&mut self) -> Option<usize> {
        let key = self.front()?;
        self.unlink(key);
        Some(key)
    }

    /// Unlinks `key` if needed, frees its slot and returns its value.
    pub(crate) fn remove(&mut self, key: usize) -> T {
        self.unlink(key);
        let slot = &mut self.slots[key];
        let value = slot.value.take().expect("WaitList: key of a freed slot");
        slot.next = self.free;
        self.free = key;
        self.allocated -= 1;
        if self.allocated == 0 {
            // Nothing refers to any slot: drop the free chain so a burst of
            // waiters does not leave a long chain behind.
            self.slots.clear();
            self.free = NIL;
        }
        value
    }

    /// Number of queued waiters (O(n); for tests and `Debug`).
    pub(crate) fn len(&self) -> usize {
        let mut n = 0;
        let mut cur = self.head;
        while cur != NIL {
            n += 1;
            cur = self.slots[cur].next;
        }
        n
    }

    /// Number of allocated slots (queued or served but not yet removed).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn allocated(&self) -> usize {
        self.allocated
    }
}

impl<T> fmt::Debug for WaitList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitList")
            .field("queued", &self.len())
            .field("allocated", &self.allocated)
            .finish()
    }
}

/// How many wakers a [`WakeList`] holds before its user must release the
/// lock and wake them.
const WAKE_BATCH: usize = 32;

/// A batch of wakers collected under a lock and woken after it is released.
/// Dropping the list wakes whatever it holds, so a panic between collecting
/// and waking does not strand a waiter.
pub(crate) struct WakeList {
    wakers: [Option<Waker>; WAKE_BATCH],
    len: usize,
}

impl WakeList {
    pub(crate) fn new() -> Self {
        WakeList {
            wakers: [const { None }; WAKE_BATCH],
            len: 0,
        }
    }

    /// Whether another waker fits.
    pub(crate) fn can_push(&self) -> bool {
        self.len < WAKE_BATCH
    }

    /// Adds a waker (if any). The caller checks `can_push` first.
    pub(crate) fn push(&mut self, waker: Option<Waker>) {
        debug_assert!(self.can_push());
        if let Some(w) = waker {
            self.wakers[self.len] = Some(w);
            self.len += 1;
        }
    }

    /// Wakes and forgets every collected waker.
    pub(crate) fn wake_all(&mut self) {
        for slot in &mut self.wakers[..self.len] {
            if let Some(w) = slot.take() {
                w.wake();
            }
        }
        self.len = 0;
    }
}

impl Drop for WakeList {
    fn drop(&mut self) {
        self.wake_all();
    }
}

impl fmt::Debug for WakeList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WakeList").field("len", &self.len).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn queued(l: &WaitList<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut cur = l.head;
        while cur != NIL {
            out.push(*l.get(cur));
            cur = l.slots[cur].next;
        }
        out
    }

    #[test]
    fn fifo_and_middle_removal() {
        let mut l = WaitList::new();
        let a = l.push_back(1);
        let b = l.push_back(2);
        let c = l.push_back(3);
        assert_eq!(queued(&l), [1, 2, 3]);
        assert_eq!(l.remove(b), 2);
        assert_eq!(queued(&l), [1, 3]);
        let d = l.push_back(4);
        assert_eq!(d, b, "freed slot is reused");
        assert_eq!(l.pop_front(), Some(a));
        assert_eq!(queued(&l), [3, 4]);
        // Popped but still allocated until removed.
        assert_eq!(*l.get(a), 1);
        l.unlink(d);
        assert_eq!(queued(&l), [3]);
        assert_eq!(l.remove(a), 1);
        assert_eq!(l.remove(d), 4);
        assert_eq!(l.remove(c), 3);
        assert!(l.is_empty());
        assert_eq!(l.allocated(), 0);
        assert!(l.slots.is_empty());
    }
}
