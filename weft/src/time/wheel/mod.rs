//! The hierarchical timing wheel behind `weft::time`: a set of timers, each
//! a deadline and a waker, and a clock (`elapsed`) that only moves forward.
//!
//! # What this file owns
//!
//! `Wheel`: the placement of pending timers into 6 levels of 64 slots, the
//! walk that moves time forward and fires what is due, and the earliest
//! pending deadline. Entry storage and the intrusive slot lists are in
//! [`slab`]; each timer's latest deadline, which its owner may push later
//! without the lock, is in [`deadlines`]. The wheel is not synchronised: its owner (the time driver)
//! keeps it behind a lock and wakes the wakers it hands out after releasing
//! that lock.
//!
//! # Shape
//!
//! Time is in 1 ms ticks. A slot of level `n` spans 64^n ticks, so a level
//! spans 64^(n+1) and the whole wheel 2^36 (about 795 days). A pending timer
//! with deadline `d > elapsed` is put in the level of the highest bit in
//! which `d` and `elapsed` differ (bits 6n..6n+5 give level n) and in the
//! slot holding `d` at that level. Deadlines at or beyond the wheel's span go
//! into the top level, in the slot of `d`'s top-level digit, and are placed
//! again when that slot comes around. A timer whose deadline is already
//! reached when it is armed goes into the `due` list instead.
//!
//! `advance(now)` fires the due list, then repeatedly takes the occupied slot
//! with the earliest start (a bitmask per level and `trailing_zeros` find it
//! without looking at empty slots), sets `elapsed` to that start, fires the
//! entries whose deadline is exactly that start and places the others again,
//! now in a lower level. So timers fire in deadline order (after the due
//! list, which is in arming order), and a jump of any length costs a few
//! steps per timer: each is looked at about once per level, and when only
//! far timers (beyond one turn of the top level) are left, the wheel jumps
//! straight to just before the earliest of them and places them again.
//!
//! # Invariants
//!
//! 1. `elapsed` only grows, and is at most [`MAX_TICK`]; so are deadlines.
//! 2. An entry is in a list exactly when it is pending. The due list holds
//!    pending entries with `deadline <= elapsed`. A slot holds pending
//!    entries with `deadline >= start`, where `start > elapsed` is the
//!    first time after `elapsed`'s own slot at that level that the slot
//!    begins (so the slot `elapsed` is in stands for one full turn later;
//!    only the top level ever has entries there). Below the top level a
//!    slot's entries are also before its end.
//! 3. Hence the lowest occupied level holds the earliest slot, and (below
//!    the top level) the earliest deadline is in that slot.
//! 4. Bit `s` of a level's `occupied` is set exactly when slot `s` is
//!    non-empty.
//! 5. `pending` counts entries in lists; the slab's `len` counts pending
//!    plus fired (not yet removed) entries.
//! 6. `earliest`, when `Known`, is the exact earliest pending placement.
//!
//! A placement (an entry's `deadline`) is a lower bound of the timer's
//! latest deadline, which its owner may push later without the driver's
//! lock ([`deadlines`](self::deadlines)): a timer whose placement comes up
//! fires only if its latest deadline has come too, and is placed again
//! otherwise. So `next_deadline` is a lower bound of the true earliest
//! deadline, never later than it.

mod deadlines;
mod slab;
#[cfg(all(test, not(loom)))]
mod tests;

use std::cell::Cell;
use std::fmt;
use std::task::Waker;

pub(crate) use self::deadlines::Deadlines;
use self::deadlines::Due;
pub(crate) use self::slab::TimerKey;
use self::slab::{List, Slab, State};
use crate::loom::Arc;

/// log2 of the slots per level.
const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
const LEVELS: usize = 6;
const TOP: usize = LEVELS - 1;
/// Ticks spanned by the whole wheel: one turn of the top level.
const WHEEL_SPAN: u64 = 1 << (SLOT_BITS * LEVELS as u32);

/// The largest tick the wheel represents (about 146 million years). Larger
/// deadlines and `now` values are treated as this one, so a timer armed with
/// `u64::MAX` fires only on `advance(MAX_TICK or more)`.
pub(crate) const MAX_TICK: u64 = 1 << 62;

/// One level: a list per slot and which of them are non-empty.
struct Level {
    occupied: u64,
    slots: [List; SLOTS],
}

/// The memo behind [`Wheel::next_deadline`].
#[derive(Clone, Copy, Debug)]
enum Earliest {
    Unknown,
    Known(Option<u64>),
}

/// A hierarchical timing wheel (see the module doc).
pub(crate) struct Wheel {
    elapsed: u64,
    levels: Box<[Level; LEVELS]>,
    /// Pending entries armed with a deadline already reached.
    due: List,
    slab: Slab,
    /// Each timer's latest deadline, shared with its owner (`deadlines.rs`):
    /// a pending timer's placement is a lower bound of it.
    deadlines: Arc<Deadlines>,
    pending: usize,
    earliest: Cell<Earliest>,
}

impl fmt::Debug for Wheel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wheel")
            .field("elapsed", &self.elapsed)
            .field("len", &self.len())
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl Default for Wheel {
    fn default() -> Wheel {
        Wheel::new()
    }
}

/// Ticks spanned by one slot of `level`.
fn slot_span(level: usize) -> u64 {
    1 << (SLOT_BITS * level as u32)
}

/// The slot of `level` that `tick` falls in, ignoring higher levels.
fn slot_of(tick: u64, level: usize) -> usize {
    ((tick >> (SLOT_BITS * level as u32)) as usize) & (SLOTS - 1)
}

/// The level for a deadline `deadline > elapsed`: the highest 6-bit digit in
/// which the two differ, capped at the top level.
fn level_for(elapsed: u64, deadline: u64) -> usize {
    let differing = (elapsed ^ deadline) | (SLOTS as u64 - 1);
    let top_bit = u64::BITS - 1 - differing.leading_zeros();
    ((top_bit / SLOT_BITS) as usize).min(TOP)
}

/// Stores a clone of `waker` unless the stored one wakes the same task;
/// returns the displaced waker, for the caller to drop after unlocking,
/// and the identity of the waker now stored.
fn store_waker(stored: &mut Option<Waker>, waker: &Waker) -> (Option<Waker>, WakerId) {
    match stored {
        Some(current) if current.will_wake(waker) => (None, WakerId::of(current)),
        _ => {
            let clone = waker.clone();
            let id = WakerId::of(&clone);
            (stored.replace(clone), id)
        }
    }
}

/// A waker's identity as [`Waker::will_wake`] compares it (its data and
/// vtable pointers), kept as integers: a `Sleep` remembers which waker its
/// timer holds, and skips the lock when it is polled by the same one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct WakerId {
    data: usize,
    vtable: usize,
}

impl WakerId {
    /// Matches no waker (a vtable is never at address 0).
    pub(crate) const NONE: WakerId = WakerId { data: 0, vtable: 0 };

    #[inline]
    pub(crate) fn of(waker: &Waker) -> WakerId {
        WakerId {
            data: waker.data() as usize,
            vtable: std::ptr::from_ref(waker.vtable()) as usize,
        }
    }
}

impl Wheel {
    /// An empty wheel at time 0.
    pub(crate) fn new() -> Wheel {
        let level = || Level {
            occupied: 0,
            slots: [List::EMPTY; SLOTS],
        };
        Wheel {
            elapsed: 0,
            levels: Box::new(std::array::from_fn(|_| level())),
            due: List::EMPTY,
            slab: Slab::new(),
            deadlines: Arc::new(Deadlines::new()),
            pending: 0,
            earliest: Cell::new(Earliest::Known(None)),
        }
    }

    /// Current time of the wheel in ms ticks (monotonic; starts at 0).
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// The timers' latest deadlines, for their owners to extend without
    /// the lock ([`Deadlines::try_extend`]).
    pub(crate) fn deadlines(&self) -> &Arc<Deadlines> {
        &self.deadlines
    }

    /// Live entries: pending plus fired-but-not-removed.
    pub(crate) fn len(&self) -> usize {
        self.slab.len()
    }

    #[cfg(all(test, not(loom)))] // tests inspect
    /// Pending entries only.
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Arms a timer for `deadline` (ms ticks, the clock of [`elapsed`]). A
    /// deadline `<= elapsed()` is allowed: it fires on the next `advance`,
    /// whatever its `now`. O(1) (amortised, for the slab's growth).
    ///
    /// [`elapsed`]: Wheel::elapsed
    pub(crate) fn insert(&mut self, deadline: u64, waker: Waker) -> TimerKey {
        let deadline = deadline.min(MAX_TICK);
        let (key, index) = self.slab.alloc(deadline, waker);
        self.deadlines.set(index, deadline);
        self.link(index);
        key
    }

    /// Replaces the stored waker if the timer is still pending (no clone if
    /// the stored one `will_wake` the same task). Returns `None` if the timer
    /// already fired, or if `key` is stale; otherwise `Some` of the displaced
    /// waker, which the caller drops after releasing its lock (a waker's drop
    /// may run arbitrary code), and of the stored waker's identity.
    pub(crate) fn update_waker(
        &mut self,
        key: TimerKey,
        waker: &Waker,
    ) -> Option<(Option<Waker>, WakerId)> {
        let index = self.slab.resolve(key)?;
        let entry = self.slab.entry_mut(index);
        if entry.state == State::Fired {
            return None;
        }
        Some(store_waker(&mut entry.waker, waker))
    }

    /// Moves a pending timer to `deadline`, its waker and key unchanged
    /// (`Sleep::reset`). O(1). False, with nothing done, if the timer has
    /// fired or `key` is stale.
    pub(crate) fn move_pending(&mut self, key: TimerKey, deadline: u64) -> bool {
        let Some(index) = self.slab.resolve(key) else {
            return false;
        };
        if self.slab.entry(index).state == State::Fired {
            return false;
        }
        self.relink(index, deadline);
        true
    }

    #[cfg(all(test, not(loom)))] // the driver moves only pending timers; tests inspect
    /// Moves a timer, pending or fired, to `deadline`; it is pending again
    /// with `waker`. O(1). A stale key is a no-op.
    pub(crate) fn reset(&mut self, key: TimerKey, deadline: u64, waker: &Waker) {
        let Some(index) = self.slab.resolve(key) else {
            return;
        };
        self.relink(index, deadline);
        drop(store_waker(&mut self.slab.entry_mut(index).waker, waker).0);
    }

    /// Takes entry `index` out of its list (unless it fired, which left
    /// it in none) and links it again for `deadline`.
    fn relink(&mut self, index: u32, deadline: u64) {
        if self.slab.entry(index).state != State::Fired {
            self.unlink(index);
        }
        let deadline = deadline.min(MAX_TICK);
        self.slab.entry_mut(index).deadline = deadline;
        self.deadlines.set(index, deadline);
        self.link(index);
    }

    /// Frees the timer's entry (O(1)); its key and every copy become stale.
    /// Returns true if the timer had fired. A stale key is a no-op returning
    /// false. A pending timer's waker is dropped here, so callers holding a
    /// lock use [`release`](Self::release) instead.
    #[cfg(all(test, not(loom)))] // the driver releases; tests inspect
    pub(crate) fn remove(&mut self, key: TimerKey) -> bool {
        let Some(index) = self.slab.resolve(key) else {
            return false;
        };
        let fired = self.slab.entry(index).state == State::Fired;
        drop(self.free_entry(index));
        fired
    }

    /// Frees the timer's entry, as [`remove`](Self::remove), and hands back
    /// the waker a pending timer still held, for the caller to drop after
    /// releasing its lock (a waker's drop may run any code). `None` for a
    /// fired timer (its waker was handed out) or a stale key.
    pub(crate) fn release(&mut self, key: TimerKey) -> Option<Waker> {
        let index = self.slab.resolve(key)?;
        self.free_entry(index)
    }

    fn free_entry(&mut self, index: u32) -> Option<Waker> {
        if self.slab.entry(index).state != State::Fired {
            self.unlink(index);
        }
        self.slab.free(index)
    }

    #[cfg(all(test, not(loom)))] // tests inspect
    /// Whether the timer has fired (and not been reset since). False for a
    /// stale key.
    pub(crate) fn is_fired(&self, key: TimerKey) -> bool {
        self.slab
            .resolve(key)
            .is_some_and(|index| self.slab.entry(index).state == State::Fired)
    }

    /// The earliest pending placement, exactly (clamped to [`MAX_TICK`]):
    /// a lower bound of the earliest latest deadline (see the module doc); it
    /// is `<= elapsed()` when a timer was armed in the past. `None` when
    /// nothing is pending.
    ///
    /// The answer is remembered until a change can alter it (the earliest
    /// timer is removed or reset, or something fires). Working it out again
    /// reads the entries of the earliest occupied slot (for the top level,
    /// of the first few slots), not the whole wheel.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        if let Earliest::Known(earliest) = self.earliest.get() {
            return earliest;
        }
        let earliest = self.find_earliest();
        self.earliest.set(Earliest::Known(earliest));
        earliest
    }

    /// Advances to `now` (a `now` below `elapsed()` counts as `elapsed()`),
    /// firing every pending timer with deadline `<= now`: first those armed
    /// with a deadline already reached (in arming order), then the rest in
    /// deadline order. A fired timer's waker is moved out and passed to
    /// `wake`, and the entry stays, fired, until `remove` or `reset`.
    /// Returns the number fired.
    ///
    /// Cost: O(levels) per occupied slot passed, plus O(1) per timer fired
    /// or moved down a level; empty stretches of time cost nothing.
    ///
    /// `wake` must not panic (the driver only collects wakers). If it does,
    /// the wheel stays safe to use and to drop, but the timers left in the
    /// slot being processed may fire late and `next_deadline` may overlook
    /// them.
    pub(crate) fn advance(&mut self, now: u64, mut wake: impl FnMut(Waker)) -> usize {
        let now = now.min(MAX_TICK).max(self.elapsed);
        if !matches!(self.earliest.get(), Earliest::Known(e) if e.is_none_or(|e| e > now)) {
            // Something will fire, so the earliest deadline changes.
            self.earliest.set(Earliest::Unknown);
        }
        let mut fired = 0;
        while let Some(index) = self.due.head() {
            self.unlink(index);
            // Against `elapsed`, not `now`: one pushed past `elapsed` is
            // placed in the slots, to fire in deadline order with the rest.
            let elapsed = self.elapsed;
            fired += usize::from(self.fire_or_move(index, elapsed, &mut wake));
        }
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now {
                break;
            }
            if level == TOP {
                // Only far timers are left. If the next one is more than a
                // full turn away, jump there instead of turning the top
                // level over and over.
                let earliest = self.next_deadline().unwrap_or(u64::MAX);
                let target = now.min(earliest - 1);
                if target.saturating_sub(start) >= WHEEL_SPAN {
                    self.rebase(target);
                    continue;
                }
            }
            self.elapsed = start;
            // Far top-level timers may land in this very slot again; they go
            // after `last`, and wait for the next turn.
            let last = self.levels[level].slots[slot].tail();
            loop {
                let index = self.levels[level].slots[slot]
                    .head()
                    .expect("timer wheel: slot emptied while being processed");
                self.unlink(index);
                if self.slab.entry(index).deadline <= start {
                    fired += usize::from(self.fire_or_move(index, start, &mut wake));
                } else {
                    self.link(index);
                }
                if Some(index) == last {
                    break;
                }
            }
        }
        self.elapsed = now;
        fired
    }

    /// Moves `elapsed` to `target` when every pending timer is in the top
    /// level and none is due by `target`, and places them all again. Costs
    /// O(timers), however far `target` is.
    fn rebase(&mut self, target: u64) {
        debug_assert!(self.due.is_empty());
        debug_assert!(self.levels[..TOP].iter().all(|lvl| lvl.occupied == 0));
        debug_assert!(self.next_deadline().is_some_and(|e| e > target));
        let top = &mut self.levels[TOP];
        top.occupied = 0;
        let mut lists = std::mem::replace(&mut top.slots, [List::EMPTY; SLOTS]);
        self.elapsed = target;
        for list in &mut lists {
            while let Some(index) = list.head() {
                self.slab.unlink(list, index);
                // `link` counts it pending again; the earliest is unchanged.
                self.pending -= 1;
                self.link(index);
            }
        }
    }

    /// Puts the unlinked entry `index` where its deadline belongs (see the
    /// module doc) and counts it pending.
    fn link(&mut self, index: u32) {
        let deadline = self.slab.entry(index).deadline;
        if deadline <= self.elapsed {
            self.slab.push_back(&mut self.due, index, State::Due);
        } else {
            let level = level_for(self.elapsed, deadline);
            let slot = slot_of(deadline, level);
            let state = State::Slotted {
                level: level as u8,
                slot: slot as u8,
            };
            let lvl = &mut self.levels[level];
            self.slab.push_back(&mut lvl.slots[slot], index, state);
            lvl.occupied |= 1 << slot;
        }
        self.pending += 1;
        if let Earliest::Known(earliest) = self.earliest.get() {
            let earliest = earliest.map_or(deadline, |e| e.min(deadline));
            self.earliest.set(Earliest::Known(Some(earliest)));
        }
    }

    /// Takes the pending entry `index` out of its list and stops counting it
    /// pending; its state is left for the caller to set.
    fn unlink(&mut self, index: u32) {
        let entry = self.slab.entry(index);
        let deadline = entry.deadline;
        match entry.state {
            State::Due => self.slab.unlink(&mut self.due, index),
            State::Slotted { level, slot } => {
                let lvl = &mut self.levels[level as usize];
                let list = &mut lvl.slots[slot as usize];
                self.slab.unlink(list, index);
                if list.is_empty() {
                    lvl.occupied &= !(1 << slot);
                }
            }
            State::Vacant | State::Fired => {
                unreachable!("timer wheel: unlinking an unlinked entry")
            }
        }
        self.pending -= 1;
        if let Earliest::Known(Some(earliest)) = self.earliest.get() {
            if deadline <= earliest {
                self.earliest.set(Earliest::Unknown);
            }
        }
    }

    /// The unlinked entry `index` was placed at a tick `<= now`: fire it
    /// (true), unless its owner pushed its deadline past `now` meanwhile,
    /// in which case it is placed there (see `deadlines.rs`).
    fn fire_or_move(&mut self, index: u32, now: u64, wake: &mut impl FnMut(Waker)) -> bool {
        match self.deadlines.try_fire(index, now) {
            Due::Fire => {
                self.fire(index, wake);
                true
            }
            Due::MovedTo(latest) => {
                self.slab.entry_mut(index).deadline = latest;
                self.link(index);
                false
            }
        }
    }

    /// Marks the unlinked entry `index` fired and hands its waker to `wake`.
    fn fire(&mut self, index: u32, wake: &mut impl FnMut(Waker)) {
        let entry = self.slab.entry_mut(index);
        entry.state = State::Fired;
        let waker = entry.waker.take();
        debug_assert!(
            waker.is_some(),
            "timer wheel: pending entry without a waker"
        );
        if let Some(waker) = waker {
            wake(waker);
        }
    }

    /// When slot `slot` of `level` next begins: the first time after the
    /// slot `elapsed` is in at that level (invariant 2).
    fn slot_start(&self, level: usize, slot: usize) -> u64 {
        let span = slot_span(level);
        let current = slot_of(self.elapsed, level);
        let steps = ((slot + SLOTS - current - 1) % SLOTS + 1) as u64;
        (self.elapsed & !(span - 1)) + steps * span
    }

    /// Among the slots of `level` whose bits are set in `mask` (non-zero),
    /// the one that begins first, and its start.
    fn first_slot_in(&self, level: usize, mask: u64) -> (usize, u64) {
        debug_assert_ne!(mask, 0);
        let after_current = (slot_of(self.elapsed, level) + 1) % SLOTS;
        let offset = mask.rotate_right(after_current as u32).trailing_zeros() as usize;
        let slot = (after_current + offset) % SLOTS;
        (slot, self.slot_start(level, slot))
    }

    /// The occupied slot that begins first: (level, slot, start).
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        let (level, lvl) = self
            .levels
            .iter()
            .enumerate()
            .find(|(_, lvl)| lvl.occupied != 0)?;
        let (slot, start) = self.first_slot_in(level, lvl.occupied);
        Some((level, slot, start))
    }

    /// The exact earliest pending deadline, from the lists (invariant 3).
    fn find_earliest(&self) -> Option<u64> {
        if !self.due.is_empty() {
            return Some(self.earliest_in(&self.due));
        }
        let (level, lvl) = self
            .levels
            .iter()
            .enumerate()
            .find(|(_, lvl)| lvl.occupied != 0)?;
        // Below the top level the first slot decides; at the top, a slot may
        // hold only far deadlines, so keep going while a later slot could
        // still begin before the best deadline found.
        let mut best = u64::MAX;
        let mut mask = lvl.occupied;
        while mask != 0 {
            let (slot, start) = self.first_slot_in(level, mask);
            if start >= best {
                break;
            }
            best = best.min(self.earliest_in(&lvl.slots[slot]));
            mask &= !(1 << slot);
        }
        Some(best)
    }

    /// The smallest deadline in the non-empty `list`.
    fn earliest_in(&self, list: &List) -> u64 {
        let mut cursor = list.head();
        let mut best = u64::MAX;
        while let Some(index) = cursor {
            best = best.min(self.slab.entry(index).deadline);
            cursor = self.slab.next_in_list(index);
        }
        best
    }
}
