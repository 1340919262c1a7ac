//! Each timer's latest deadline, readable and extendable without the
//! driver's lock: how a timeout pushed later on every event (hyper's
//! timers, tokio-util's `DelayQueue`, a keep-alive reset per request) costs
//! one compare-and-swap instead of a lock and two list moves.
//!
//! # What this file owns
//!
//! `Deadlines`: one atomic cell per slab index, in pages that are never
//! moved or freed while the wheel lives, so a cell can be reached by index
//! without the lock. Page `k` holds `BASE << k` cells; a page is made
//! (under the driver's lock) before any key naming one of its cells is
//! handed out. No `unsafe`: pages are `OnceLock`s.
//!
//! # The handshake (the idea is Tokio's `extend_expiration`)
//!
//! A pending timer sits in the wheel at its *placement* tick; its cell
//! holds its *latest* deadline, `>=` the placement, or [`FIRED`].
//! - The timer's owner (the one `Sleep` holding the key; no one else
//!   extends it) pushes the deadline later with [`Deadlines::try_extend`]:
//!   a CAS from the latest value to the new one. It fails if the timer
//!   fired, or if the new deadline is earlier than the latest; the owner
//!   then takes the lock and moves the timer (`Wheel::move_pending`).
//! - The wheel, under the lock, decides to fire a timer whose placement is
//!   due with [`Deadlines::try_fire`]: a CAS from the latest value to
//!   `FIRED`, only if that value is due. If the cell holds a later
//!   deadline, the wheel places the timer again there instead.
//!
//! Both are CASes on one cell, so they are ordered: an extension either
//! lands before the wheel's decision (which then sees it and re-places the
//! timer) or fails (the timer fired, and the owner's locked path sees it).
//! A timer never fires before a deadline its owner was told it now has.
//! Model: `time/loom_lazy_extend.rs`.
//!
//! A lower bound in the wheel means the driver may wake at a deadline that
//! was extended since: it re-places the timer and sleeps again (as Tokio's
//! driver does). Its timeouts are never later than the true earliest
//! deadline, so no timer is late.

use super::TimerKey;
use crate::loom::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The cell value of a timer that fired (ticks never reach it: they are
/// clamped to `MAX_TICK`).
pub(super) const FIRED: u64 = u64::MAX;

/// Cells in page 0. Small under loom, where every atomic is modelled.
#[cfg(not(loom))]
const BASE: usize = 64;
#[cfg(loom)]
const BASE: usize = 2;

/// Enough pages for every `u32` index: pages `0..PAGES` hold
/// `BASE * (2^PAGES - 1)` cells.
const PAGES: usize = 32;

/// The outcome of the wheel's look at a timer whose placement is due.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Due {
    /// It fires: its cell now says so, and extensions fail.
    Fire,
    /// Its owner pushed it to this later tick: place it there.
    MovedTo(u64),
}

pub(crate) struct Deadlines {
    pages: [OnceLock<Box<[AtomicU64]>>; PAGES],
}

impl Deadlines {
    pub(super) fn new() -> Deadlines {
        Deadlines {
            pages: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Page and offset of `index`: page `k` starts at `BASE * (2^k - 1)`.
    fn locate(index: u32) -> (usize, usize) {
        let scaled = index as usize / BASE + 1;
        let page = (usize::BITS - 1 - scaled.leading_zeros()) as usize;
        let offset = index as usize - BASE * ((1 << page) - 1);
        (page, offset)
    }

    fn cell(&self, index: u32) -> &AtomicU64 {
        let (page, offset) = Self::locate(index);
        let page = self.pages[page]
            .get()
            .expect("timer wheel: a key names a cell whose page was never made");
        &page[offset]
    }

    /// Makes sure `index` has a cell (under the driver's lock, before the
    /// key is handed out), and sets it: the timer is pending until `tick`.
    pub(super) fn set(&self, index: u32, tick: u64) {
        let (page, offset) = Self::locate(index);
        let page = self.pages[page]
            .get_or_init(|| (0..BASE << page).map(|_| AtomicU64::new(FIRED)).collect());
        page[offset].store(tick, Ordering::Release);
    }

    /// The owner's lock-free path: push the pending timer `key` to `tick`,
    /// true if done. False if it fired, or if `tick` is earlier than its
    /// latest deadline: the caller then takes the lock.
    ///
    /// `key` must be live and held by the caller (a `Sleep`'s own key): the
    /// cell is found by index alone, without the generation check, so a
    /// stale key would name whatever timer reuses its index. A `Sleep`
    /// gives its key up (`Option::take`) whenever it frees the timer, so
    /// none is ever stale; the cancel path pays nothing to guard it.
    pub(crate) fn try_extend(&self, key: TimerKey, tick: u64) -> bool {
        let cell = self.cell(key.index());
        let latest = cell.load(Ordering::Acquire);
        if latest == FIRED || tick < latest {
            return false;
        }
        tick == latest
            || cell
                .compare_exchange(latest, tick, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// Whether the timer `key` fired, read without the lock. The same
    /// contract as [`try_extend`](Self::try_extend): `key` is live and the
    /// caller's own. A timer that fires right after this look still wakes
    /// the waker it holds, so a "no" is never a lost wake-up.
    #[inline]
    pub(crate) fn has_fired(&self, key: TimerKey) -> bool {
        self.cell(key.index()).load(Ordering::Acquire) == FIRED
    }

    /// The wheel's decision (under the lock) on timer `index`, whose
    /// placement is due at `now`: fire it, or move it to the later
    /// deadline its owner set.
    pub(super) fn try_fire(&self, index: u32, now: u64) -> Due {
        let cell = self.cell(index);
        let mut latest = cell.load(Ordering::Acquire);
        loop {
            debug_assert_ne!(
                latest, FIRED,
                "timer wheel: a pending timer's cell says fired"
            );
            if latest > now {
                return Due::MovedTo(latest);
            }
            match cell.compare_exchange(latest, FIRED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Due::Fire,
                // Its owner extended it meanwhile: look again.
                Err(now_latest) => latest = now_latest,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn pages_tile_every_index() {
        let mut expected = (0, 0);
        for index in 0..BASE as u32 * 40 {
            assert_eq!(Deadlines::locate(index), expected, "index {index}");
            expected.1 += 1;
            if expected.1 == BASE << expected.0 {
                expected = (expected.0 + 1, 0);
            }
        }
        assert!(Deadlines::locate(u32::MAX).0 < PAGES);
    }
}
