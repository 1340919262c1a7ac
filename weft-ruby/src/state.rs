//! `Weft::Scheduler`'s bookkeeping beside its selector, in plain Rust (no
//! Ruby calls, no syscalls).
//!
//! Owns: the waiters the selector does not know (one per fiber suspended
//! in `block` or `kernel_sleep`, or in an `io_wait` with a timeout, in a
//! generation-checked slab), the timer heap, the `timeout_after` raises
//! and the queue of waiters woken here (unblocked or timed out). The
//! fibers waiting on fds are the selector's ([`crate::selector`]).
//!
//! Ruby objects are held as raw `VALUE`s ([`Obj`]); everything stored here
//! is reported by [`State::each_object`], which the GC mark function walks.
//! Keeping this module free of Ruby lets `cargo test` check it without a VM.
//!
//! Invariants:
//! - A waiter is woken at most once: [`State::wake`] ignores a waiter that
//!   is already woken or gone, so a timer and an `unblock` racing for one
//!   fiber resume it once; a waiter is removed by its own fiber when that
//!   fiber comes back (by this queue or by the selector), so a wake queued
//!   here for a fiber the selector resumed first finds it gone.
//! - A timer or raise entry refers to its target by key/id; cancelling only
//!   removes the target, and a stale heap entry is skipped when it expires.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::Instant;

/// A raw Ruby `VALUE` (a fiber, an IO, an exception class, a message).
pub type Obj = rb_sys::VALUE;

/// `IO::READABLE`.
pub const READABLE: u8 = 1;
/// `IO::PRIORITY`.
pub const PRIORITY: u8 = 2;
/// `IO::WRITABLE`.
pub const WRITABLE: u8 = 4;

/// A waiter's slot in the slab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    index: u32,
    generation: u32,
}

/// Why a waiter was resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Its timeout passed.
    TimedOut,
    /// `unblock` was called for its fiber.
    Unblocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An `io_wait` with a timeout (the selector holds its fd wait).
    IoTimeout,
    Block,
    Sleep,
}

#[derive(Debug)]
struct Waiter {
    fiber: Obj,
    kind: Kind,
    timed: bool,
    woken: Option<Wake>,
}

struct Slot {
    generation: u32,
    waiter: Option<Waiter>,
}

/// A pending `timeout_after`: raise `class`, `message` in `fiber`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raise {
    pub fiber: Obj,
    pub class: Obj,
    pub message: Obj,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Wake(Key),
    Raise(u64),
}

/// All of the scheduler's state but the poller.
#[derive(Default)]
pub struct State {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
    timers: BinaryHeap<Reverse<(Instant, u64, Target)>>,
    seq: u64,
    raises: HashMap<u64, Raise>,
    ready: VecDeque<Key>,
    /// Fibers suspended in `block` or `kernel_sleep`, for `unblock` (which
    /// names the fiber).
    blocked: HashMap<Obj, Key>,
}

impl State {
    fn insert(&mut self, waiter: Waiter) -> Key {
        self.live += 1;
        match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.waiter = Some(waiter);
                Key {
                    index,
                    generation: slot.generation,
                }
            }
            None => {
                let index = u32::try_from(self.slots.len()).expect("2^32 waiting fibers");
                self.slots.push(Slot {
                    generation: 0,
                    waiter: Some(waiter),
                });
                Key {
                    index,
                    generation: 0,
                }
            }
        }
    }

    fn get_mut(&mut self, key: Key) -> Option<&mut Waiter> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.waiter.as_mut()
    }

    /// A fiber starts an `io_wait` with a timeout (the timer is added
    /// with [`State::add_timer`]).
    pub fn add_io_timeout(&mut self, fiber: Obj) -> Key {
        self.insert(Waiter {
            fiber,
            kind: Kind::IoTimeout,
            timed: true,
            woken: None,
        })
    }

    /// A fiber starts waiting in `block` (`timed`: with a timeout).
    pub fn add_block(&mut self, fiber: Obj, timed: bool) -> Key {
        let key = self.insert(Waiter {
            fiber,
            kind: Kind::Block,
            timed,
            woken: None,
        });
        self.blocked.insert(fiber, key);
        key
    }

    /// A fiber starts sleeping (`timed` false: until woken some other way).
    /// `unblock` wakes a sleeper too: `ConditionVariable#wait` and
    /// `Mutex#sleep` sleep through `kernel_sleep` and are woken by
    /// `unblock`.
    pub fn add_sleep(&mut self, fiber: Obj, timed: bool) -> Key {
        let key = self.insert(Waiter {
            fiber,
            kind: Kind::Sleep,
            timed,
            woken: None,
        });
        self.blocked.insert(fiber, key);
        key
    }

    /// Time out `key` at `at`.
    pub fn add_timer(&mut self, key: Key, at: Instant) {
        if let Some(w) = self.get_mut(key) {
            w.timed = true;
        }
        self.seq += 1;
        self.timers.push(Reverse((at, self.seq, Target::Wake(key))));
    }

    /// Raise in a fiber at `at` unless cancelled first; returns its id.
    pub fn add_raise(&mut self, raise: Raise, at: Instant) -> u64 {
        self.seq += 1;
        let id = self.seq;
        self.raises.insert(id, raise);
        self.timers.push(Reverse((at, id, Target::Raise(id))));
        id
    }

    /// Cancel a raise (its block finished first).
    pub fn cancel_raise(&mut self, id: u64) {
        self.raises.remove(&id);
    }

    /// The waiter is done (resumed, or unwound by an exception): unlink it
    /// everywhere and say why it was woken (None: it was not).
    pub fn remove(&mut self, key: Key) -> Option<Wake> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        let waiter = slot.waiter.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(key.index);
        self.live -= 1;
        if waiter.kind != Kind::IoTimeout && self.blocked.get(&waiter.fiber) == Some(&key) {
            self.blocked.remove(&waiter.fiber);
        }
        waiter.woken
    }

    /// Queue `key` to be resumed because of `why` (once).
    pub fn wake(&mut self, key: Key, why: Wake) -> bool {
        match self.get_mut(key) {
            Some(w) if w.woken.is_none() => {
                w.woken = Some(why);
                self.ready.push_back(key);
                true
            }
            _ => false,
        }
    }

    /// `unblock` for `fiber`: wake it if it is in `block`.
    pub fn unblock(&mut self, fiber: Obj) -> bool {
        match self.blocked.get(&fiber) {
            Some(&key) => self.wake(key, Wake::Unblocked),
            None => false,
        }
    }

    /// Fire every timer due at `now`; the raises due are returned.
    pub fn expire(&mut self, now: Instant) -> Vec<Raise> {
        let mut raises = Vec::new();
        while let Some(Reverse((at, _, target))) = self.timers.peek().copied() {
            if at > now {
                break;
            }
            self.timers.pop();
            match target {
                Target::Wake(key) => {
                    self.wake(key, Wake::TimedOut);
                }
                Target::Raise(id) => raises.extend(self.raises.remove(&id)),
            }
        }
        raises
    }

    /// The earliest live deadline (stale entries at the top are dropped).
    pub fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(Reverse((at, _, target))) = self.timers.peek().copied() {
            let live = match target {
                Target::Wake(key) => self.get_mut(key).is_some_and(|w| w.woken.is_none()),
                Target::Raise(id) => self.raises.contains_key(&id),
            };
            if live {
                return Some(at);
            }
            self.timers.pop();
        }
        None
    }

    /// The next fiber to resume.
    pub fn pop_ready(&mut self) -> Option<Obj> {
        while let Some(key) = self.ready.pop_front() {
            if let Some(w) = self.get_mut(key) {
                return Some(w.fiber);
            }
        }
        None
    }

    /// How many fibers are queued to resume.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Fibers suspended in a hook.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Fibers waiting with a deadline (`Scheduler#waiting`).
    pub fn timed_fibers(&self) -> Vec<Obj> {
        self.slots
            .iter()
            .filter_map(|s| s.waiter.as_ref())
            .filter(|w| w.timed && w.woken.is_none())
            .map(|w| w.fiber)
            .collect()
    }

    /// Every Ruby object held, for the GC mark function.
    pub fn each_object(&self, mut f: impl FnMut(Obj)) {
        for w in self.slots.iter().filter_map(|s| s.waiter.as_ref()) {
            f(w.fiber);
        }
        for r in self.raises.values() {
            f(r.fiber);
            f(r.class);
            f(r.message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_timed_io_wait_is_woken_once_by_its_timer() {
        let mut s = State::default();
        let now = Instant::now();
        let k = s.add_io_timeout(100);
        s.add_timer(k, now);
        assert_eq!(s.timed_fibers(), vec![100]);
        assert!(!s.unblock(100), "unblock does not wake an I/O wait");
        assert!(s.expire(now).is_empty());
        assert_eq!(s.pop_ready(), Some(100));
        assert_eq!(s.remove(k), Some(Wake::TimedOut));
        assert_eq!(s.live(), 0);
    }

    #[test]
    fn a_wake_for_a_fiber_that_came_back_first_is_skipped() {
        // The selector resumed the fiber (its fd became ready) before the
        // loop got to the timer's wake: the fiber removed its waiter.
        let mut s = State::default();
        let now = Instant::now();
        let k = s.add_io_timeout(100);
        s.add_timer(k, now);
        s.expire(now);
        assert_eq!(s.remove(k), Some(Wake::TimedOut));
        assert_eq!(s.pop_ready(), None);
    }

    #[test]
    fn a_waiter_is_woken_once() {
        let mut s = State::default();
        let k = s.add_block(100, true);
        let now = Instant::now();
        s.add_timer(k, now);
        assert!(s.unblock(100));
        assert!(s.expire(now + Duration::from_millis(1)).is_empty());
        assert!(!s.unblock(100));
        assert_eq!(s.pop_ready(), Some(100));
        assert_eq!(s.pop_ready(), None);
        assert_eq!(s.remove(k), Some(Wake::Unblocked));
        assert!(!s.unblock(100), "not blocked any more");
        assert_eq!(s.next_deadline(), None, "the stale timer is dropped");
    }

    #[test]
    fn timers_fire_in_deadline_order() {
        let mut s = State::default();
        let now = Instant::now();
        let keys: Vec<Key> = (0..5).map(|i| s.add_sleep(100 + i, true)).collect();
        for (i, k) in keys.iter().enumerate() {
            s.add_timer(*k, now + Duration::from_millis(10 * (5 - i as u64)));
        }
        assert_eq!(s.timed_fibers().len(), 5);
        assert_eq!(s.next_deadline(), Some(now + Duration::from_millis(10)));
        s.expire(now + Duration::from_millis(100));
        let order: Vec<Obj> = std::iter::from_fn(|| s.pop_ready()).collect();
        assert_eq!(order, vec![104, 103, 102, 101, 100]);
    }

    #[test]
    fn cancelled_raise_does_not_fire() {
        let mut s = State::default();
        let now = Instant::now();
        let r = Raise {
            fiber: 1,
            class: 2,
            message: 3,
        };
        let id = s.add_raise(r, now);
        let _ = s.add_raise(r, now);
        s.cancel_raise(id);
        assert_eq!(s.expire(now), vec![r]);
        let mut seen = 0;
        s.each_object(|_| seen += 1);
        assert_eq!(seen, 0);
    }
}
