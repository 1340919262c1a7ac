//! Storage for the timer wheel's entries.
//!
//! # What this file owns
//!
//! `Slab`: a `Vec` of entries addressed by index, with a free list threaded
//! through vacant entries and a generation counter per entry, so a
//! [`TimerKey`] names one timer and goes stale (instead of silently naming a
//! newer timer) once that timer is freed. `List`: a doubly linked list of
//! entries threaded through the slab by index (`prev`/`next`), so an entry
//! leaves the middle of a list in O(1). The wheel keeps one `List` per slot.
//!
//! # Invariants
//!
//! 1. An entry is vacant exactly when it is on the free list; only vacant
//!    entries are on it, chained through `next`, starting at `free`.
//! 2. An entry's `generation` changes only when the entry is freed, so a key
//!    taken before the free no longer matches. (It wraps after 2^32 frees of
//!    the same index; a key kept that long could alias a newer timer.)
//! 3. A linked entry's `prev`/`next` chain from its list's `head` to `tail`;
//!    `state` records which list holds it. Unlinked entries have `NIL` links.
//!    A list may be detached from the wheel (taken out of its slot) and
//!    drained by its owner; the `state` of entries still in it is then stale
//!    until they are relinked or fired.

use std::task::Waker;

/// No entry: the end of a chain.
pub(super) const NIL: u32 = u32::MAX;

/// A handle to one timer in a [`Wheel`](super::Wheel).
///
/// Keys are plain data: copying one does not keep the timer alive. Once the
/// timer is removed the key is stale and every operation on it is a no-op,
/// but for [`Deadlines::try_extend`](super::Deadlines::try_extend), which
/// finds the timer's cell by index alone and is for the key's one owner.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TimerKey {
    index: u32,
    generation: u32,
}

impl TimerKey {
    pub(super) fn index(self) -> u32 {
        self.index
    }
}

/// Where an entry is, as far as the wheel is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    /// On the free list; not a timer.
    Vacant,
    /// Pending and already due (deadline <= elapsed when linked): in the
    /// wheel's due list, fired by the next `advance`.
    Due,
    /// Pending in `slot` of `level`.
    Slotted { level: u8, slot: u8 },
    /// Fired; its waker was handed out. Waits for `remove` or `reset`.
    Fired,
}

/// One timer (or a vacant place for one).
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) generation: u32,
    pub(super) state: State,
    /// In ms ticks, already clamped to the wheel's maximum.
    pub(super) deadline: u64,
    /// `Some` while pending; moved out when the timer fires.
    pub(super) waker: Option<Waker>,
    prev: u32,
    /// Next entry in the same list, or the next free entry when vacant.
    next: u32,
}

/// The head and tail of a list of entries (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(super) struct List {
    head: u32,
    tail: u32,
}

impl List {
    pub(super) const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };

    pub(super) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    pub(super) fn head(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    pub(super) fn tail(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }
}

/// The entries of a wheel (see the module doc).
#[derive(Debug)]
pub(super) struct Slab {
    entries: Vec<Entry>,
    /// First vacant entry, or `NIL`.
    free: u32,
    /// Entries that are not vacant.
    len: usize,
}

impl Slab {
    pub(super) fn new() -> Slab {
        Slab {
            entries: Vec::new(),
            free: NIL,
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Takes a vacant entry (reusing a freed one first) for a new timer. The
    /// entry is unlinked; its state is `Fired` until the caller links it.
    pub(super) fn alloc(&mut self, deadline: u64, waker: Waker) -> (TimerKey, u32) {
        let index = if self.free != NIL {
            let index = self.free;
            let entry = &mut self.entries[index as usize];
            debug_assert_eq!(entry.state, State::Vacant);
            self.free = entry.next;
            entry.next = NIL;
            entry.deadline = deadline;
            entry.waker = Some(waker);
            entry.state = State::Fired;
            index
        } else {
            let index = u32::try_from(self.entries.len())
                .ok()
                .filter(|&i| i != NIL)
                .expect("timer wheel: too many timers");
            self.entries.push(Entry {
                generation: 0,
                state: State::Fired,
                deadline,
                waker: Some(waker),
                prev: NIL,
                next: NIL,
            });
            index
        };
        self.len += 1;
        let generation = self.entries[index as usize].generation;
        (TimerKey { index, generation }, index)
    }

    /// Returns the entry to the free list and makes its keys stale. The
    /// caller has unlinked it already (its state may still name the list).
    /// Hands back any waker it still held, for the caller to drop.
    #[must_use = "dropping a waker may run any code: drop it after unlocking"]
    pub(super) fn free(&mut self, index: u32) -> Option<Waker> {
        let entry = &mut self.entries[index as usize];
        debug_assert_ne!(entry.state, State::Vacant);
        debug_assert!(entry.prev == NIL && entry.next == NIL);
        entry.state = State::Vacant;
        let waker = entry.waker.take();
        entry.generation = entry.generation.wrapping_add(1);
        entry.next = self.free;
        self.free = index;
        self.len -= 1;
        waker
    }

    /// The index `key` names, if the key is not stale.
    pub(super) fn resolve(&self, key: TimerKey) -> Option<u32> {
        let entry = self.entries.get(key.index as usize)?;
        (entry.generation == key.generation && entry.state != State::Vacant).then_some(key.index)
    }

    pub(super) fn entry(&self, index: u32) -> &Entry {
        &self.entries[index as usize]
    }

    pub(super) fn entry_mut(&mut self, index: u32) -> &mut Entry {
        &mut self.entries[index as usize]
    }

    /// The entry after `index` in its list.
    pub(super) fn next_in_list(&self, index: u32) -> Option<u32> {
        let next = self.entries[index as usize].next;
        (next != NIL).then_some(next)
    }

    /// Appends the unlinked entry `index` to `list`, recording `state` as
    /// where it now is.
    pub(super) fn push_back(&mut self, list: &mut List, index: u32, state: State) {
        let tail = list.tail;
        let entry = &mut self.entries[index as usize];
        debug_assert!(entry.prev == NIL && entry.next == NIL);
        entry.prev = tail;
        entry.state = state;
        if tail == NIL {
            list.head = index;
        } else {
            self.entries[tail as usize].next = index;
        }
        list.tail = index;
    }

    /// Takes `index` out of `list`, which must hold it. Its state is left
    /// for the caller to set.
    pub(super) fn unlink(&mut self, list: &mut List, index: u32) {
        let entry = &mut self.entries[index as usize];
        let (prev, next) = (entry.prev, entry.next);
        entry.prev = NIL;
        entry.next = NIL;
        if prev == NIL {
            debug_assert_eq!(list.head, index);
            list.head = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            debug_assert_eq!(list.tail, index);
            list.tail = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
    }
}
