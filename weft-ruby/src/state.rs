//! The scheduler's bookkeeping, in plain Rust (no Ruby calls, no syscalls).
//!
//! Owns: the waiters (one per fiber suspended in a hook, in a generation-
//! checked slab), the fd table (each fd's waiters and the IO they wait
//! on), the timer heap, the
//! `timeout_after` raises and the ready queue.
//!
//! Ruby objects are held as raw `VALUE`s ([`Obj`]); everything stored here
//! is reported by [`State::each_object`], which the GC mark function walks.
//! Keeping this module free of Ruby lets `cargo test` check it without a VM.
//!
//! Invariants:
//! - A waiter is woken at most once: [`State::wake`] ignores a waiter that
//!   is already woken or gone, so an fd event, a timer and an `unblock`
//!   racing for one fiber resume it once.
//! - A timer or raise entry refers to its target by key/id; cancelling only
//!   removes the target, and a stale heap entry is skipped when it expires.
//! - An fd entry keeps its IO (and so the right to trust its registration)
//!   only while it has waiters; when the last one leaves, the IO is
//!   forgotten and the next waiter has the poller verify the fd's
//!   registration (see [`IoCtl`]), because the fd number may meanwhile belong to a new file.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::os::fd::RawFd;
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
    /// The fd is ready for these events.
    Events(u8),
    /// Its timeout passed.
    TimedOut,
    /// `unblock` was called for its fiber.
    Unblocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Io(RawFd),
    Block,
    Sleep,
}

#[derive(Debug)]
struct Waiter {
    fiber: Obj,
    kind: Kind,
    events: u8,
    timed: bool,
    woken: Option<Wake>,
}

struct Slot {
    generation: u32,
    waiter: Option<Waiter>,
}

/// Whether an I/O waiter's IO is the one its fd's registration was made
/// for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoCtl {
    /// The fd had no waiters, or they wait on another IO: the fd number may
    /// belong to a new file since, so the poller must check its
    /// registration.
    Verify,
    /// Other fibers wait on this same IO: the registration is good.
    Known,
}

#[derive(Debug, Default)]
struct FdEntry {
    io: Option<Obj>,
    waiters: Vec<Key>,
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
    fds: HashMap<RawFd, FdEntry>,
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

    fn get(&self, key: Key) -> Option<&Waiter> {
        let slot = self.slots.get(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.waiter.as_ref()
    }

    fn get_mut(&mut self, key: Key) -> Option<&mut Waiter> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        slot.waiter.as_mut()
    }

    /// A fiber starts waiting on `fd` (of `io`) for `events`.
    pub fn add_io(&mut self, fiber: Obj, io: Obj, fd: RawFd, events: u8) -> (Key, IoCtl) {
        let key = self.insert(Waiter {
            fiber,
            kind: Kind::Io(fd),
            events,
            timed: false,
            woken: None,
        });
        let entry = self.fds.entry(fd).or_default();
        let known = entry.io == Some(io);
        entry.io = Some(io);
        entry.waiters.push(key);
        let ctl = if known { IoCtl::Known } else { IoCtl::Verify };
        (key, ctl)
    }

    /// The union of the events `fd`'s waiters wait for.
    pub fn wanted(&self, fd: RawFd) -> u8 {
        let Some(entry) = self.fds.get(&fd) else {
            return 0;
        };
        entry
            .waiters
            .iter()
            .filter_map(|k| self.get(*k))
            .fold(0, |acc, w| acc | w.events)
    }

    /// A fiber starts waiting in `block` (`timed`: with a timeout).
    pub fn add_block(&mut self, fiber: Obj, timed: bool) -> Key {
        let key = self.insert(Waiter {
            fiber,
            kind: Kind::Block,
            events: 0,
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
            events: 0,
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
        match waiter.kind {
            Kind::Io(fd) => {
                if let Some(entry) = self.fds.get_mut(&fd) {
                    entry.waiters.retain(|k| *k != key);
                    if entry.waiters.is_empty() {
                        entry.io = None;
                    }
                }
            }
            Kind::Block | Kind::Sleep => {
                if self.blocked.get(&waiter.fiber) == Some(&key) {
                    self.blocked.remove(&waiter.fiber);
                }
            }
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

    /// The poller reports `ready` events on `fd`: wake each waiter that
    /// asked for one of them. `all` (an error or hang-up) wakes every
    /// waiter with what it asked for, so its next call sees the error.
    pub fn dispatch(&mut self, fd: RawFd, ready: u8, all: bool) {
        let Some(entry) = self.fds.get(&fd) else {
            return;
        };
        let waiters = entry.waiters.clone();
        for key in waiters {
            let Some(w) = self.get_mut(key) else { continue };
            let got = if all { w.events } else { w.events & ready };
            if got != 0 {
                self.wake(key, Wake::Events(got));
            }
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

    /// The fds that have waiters, with the IO they wait on.
    pub fn waited_ios(&self) -> Vec<(RawFd, Obj)> {
        self.fds
            .iter()
            .filter(|(_, e)| !e.waiters.is_empty())
            .filter_map(|(fd, e)| Some((*fd, e.io?)))
            .collect()
    }

    /// Every Ruby object held, for the GC mark function.
    pub fn each_object(&self, mut f: impl FnMut(Obj)) {
        for w in self.slots.iter().filter_map(|s| s.waiter.as_ref()) {
            f(w.fiber);
        }
        for io in self.fds.values().filter_map(|e| e.io) {
            f(io);
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
    fn several_waiters_on_one_fd_share_one_registration() {
        let mut s = State::default();
        let (a, ctl) = s.add_io(100, 7, 3, READABLE);
        assert_eq!(ctl, IoCtl::Verify);
        let (b, ctl) = s.add_io(101, 7, 3, READABLE);
        assert_eq!(ctl, IoCtl::Known, "same IO: the registration is good");
        let (c, ctl) = s.add_io(102, 7, 3, WRITABLE);
        assert_eq!(ctl, IoCtl::Known);
        assert_eq!(s.wanted(3), READABLE | WRITABLE);
        s.dispatch(3, READABLE, false);
        assert_eq!(s.pop_ready(), Some(100));
        assert_eq!(s.pop_ready(), Some(101));
        assert_eq!(s.pop_ready(), None, "the writer is not woken");
        assert_eq!(s.remove(a), Some(Wake::Events(READABLE)));
        assert_eq!(s.remove(b), Some(Wake::Events(READABLE)));
        assert_eq!(s.remove(c), None);
        assert_eq!(s.live(), 0);
        assert_eq!(s.wanted(3), 0);
        // With no waiters the IO is forgotten, so the next wait verifies.
        let (_, ctl) = s.add_io(103, 7, 3, READABLE);
        assert_eq!(ctl, IoCtl::Verify);
    }

    #[test]
    fn a_new_io_on_a_reused_fd_rearms() {
        let mut s = State::default();
        let (_, _) = s.add_io(100, 7, 3, READABLE);
        let (_, ctl) = s.add_io(101, 8, 3, READABLE);
        assert_eq!(ctl, IoCtl::Verify);
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
