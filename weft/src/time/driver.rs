//! The time driver: one timer wheel per runtime, behind one lock.
//!
//! Owns: the [`Wheel`] (1 ms ticks counted from the runtime's start), the
//! clock, and `parked_until`, the tick the parked driver will wake at.
//!
//! Invariants:
//! - A deadline is rounded *up* to a tick and the wheel's "now" is rounded
//!   *down*, so a timer never fires before its deadline.
//! - `parked_until` is `Some(t)` exactly while a parked driver sleeps until
//!   tick `t` (`u64::MAX`: no timer). A timer inserted earlier than that
//!   must unpark the driver, which then recomputes its timeout; the check
//!   and the driver's computation happen under the same lock, so a new
//!   earliest timer cannot be missed.
//! - A pending timer's place in the wheel is a lower bound of its
//!   deadline: its owner sets a later one without the lock, and the wheel
//!   re-places the timer when the old place comes up (`wheel/deadlines.rs`).
//!   So the driver may wake for a timer that moved, never late for one.
//! - A pending timer's waker is set only by its owner (the `Sleep` holding
//!   its key) and taken only when it fires or is freed. So the owner knows,
//!   without the lock, which waker its unfired timer holds, and a poll by
//!   that same waker needs no lock (`poll_fired`).
//! - A deadline too far for the wheel (clamped to its `MAX_TICK`, over a
//!   hundred million years) means "never": parks ignore it, so an idle
//!   frozen clock never jumps there and fires it early. (A timer pushed
//!   there lazily still makes an idle frozen clock jump to its old place
//!   once, where it is re-placed; nothing fires. Tokio's does the same.)
//! - Wakers are called, and dropped, after the lock is released: a waker's
//!   wake or drop may run any code, timer code included. (A waker is cloned
//!   into the wheel under the lock; for weft's own wakers that is a
//!   reference count, and a foreign waker whose clone re-entered the timer
//!   would be the one case left.)

use super::clock::Clock;
use super::wheel::{Deadlines, TimerKey, WakerId, Wheel, MAX_TICK};
use crate::loom::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::time::{Duration, Instant};

pub(crate) struct Handle {
    state: Mutex<State>,
    /// The wheel's, shared: a later deadline is set without the lock.
    deadlines: Arc<Deadlines>,
    clock: Clock,
    /// Tick 0.
    start: Instant,
}

struct State {
    wheel: Wheel,
    parked_until: Option<u64>,
    is_shutdown: bool,
}

/// The outcome of arming a timer.
#[must_use]
pub(crate) enum Armed {
    /// Pending; the driver needs an unpark if `unpark` (the timer is
    /// earlier than the driver's wake-up). `waker`: the stored waker's
    /// identity, for [`Handle::poll_fired`].
    Pending {
        key: TimerKey,
        unpark: bool,
        waker: WakerId,
    },
    /// The deadline has already passed: complete at once.
    Elapsed,
}

/// The outcome of moving a timer ([`Handle::rearm`]).
#[must_use]
pub(crate) enum Rearmed {
    /// Pending at the new deadline, as [`Armed::Pending`].
    Pending { key: TimerKey, unpark: bool },
    /// No timer any more (it had fired, or its task was woken because the
    /// new deadline has passed): the next poll arms one.
    Unarmed,
}

impl Handle {
    pub(crate) fn new(start_paused: bool) -> Handle {
        let clock = Clock::new(start_paused);
        let start = clock.now();
        let wheel = Wheel::new();
        Handle {
            deadlines: wheel.deadlines().clone(),
            state: Mutex::new(State {
                wheel,
                parked_until: None,
                is_shutdown: false,
            }),
            clock,
            start,
        }
    }

    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        crate::loom::lock(&self.state)
    }

    /// The tick at which a timer for `deadline` may fire (rounded up),
    /// clamped to the wheel's `MAX_TICK` as the wheel would clamp it.
    fn deadline_tick(&self, deadline: Instant) -> u64 {
        let d = deadline.saturating_duration_since(self.start);
        // In u64 (no 128-bit division).
        d.as_secs()
            .saturating_mul(1000)
            .saturating_add(u64::from(d.subsec_nanos().div_ceil(1_000_000)))
            .min(MAX_TICK)
    }

    /// The current tick (rounded down).
    fn now_tick(&self) -> u64 {
        let d = self.clock.now().saturating_duration_since(self.start);
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn tick_instant(&self, tick: u64) -> Instant {
        self.start + Duration::from_millis(tick)
    }

    /// Arm a timer for `deadline` that wakes `waker`.
    ///
    /// Elapsed only if its tick is one the wheel has already passed; a
    /// deadline that passed since the driver last turned is armed and fires
    /// on the next turn. So the first poll of a sleep whose deadline just
    /// passed yields to the driver once, as Tokio's does (its `reregister`
    /// compares with the wheel's time, not the clock), and no clock is read.
    pub(crate) fn arm(&self, deadline: Instant, waker: &Waker) -> Armed {
        let tick = self.deadline_tick(deadline);
        let mut state = self.lock();
        if state.is_shutdown {
            drop(state);
            panic!("{}", SHUTDOWN_MSG);
        }
        if tick <= state.wheel.elapsed() {
            return Armed::Elapsed;
        }
        let waker = waker.clone();
        let stored = WakerId::of(&waker);
        let key = state.wheel.insert(tick, waker);
        Armed::Pending {
            key,
            unpark: state.note_new_deadline(tick),
            waker: stored,
        }
    }

    /// Move a timer to `deadline`, keeping the waker it holds: the task
    /// that armed it is woken at the new deadline without polling again.
    /// A deadline the wheel has already passed wakes it at once (the timer
    /// is freed; the next poll finds the sleep elapsed); one that passed
    /// since the driver's last turn fires on its next turn, as in `arm`.
    /// A timer that already fired holds no waker any more: it is freed,
    /// and the next poll arms a new one.
    ///
    /// `key` must be the caller's own (a `Sleep`'s): a later deadline is
    /// set without the lock, and the wheel re-places the timer when its
    /// old one comes (`wheel/deadlines.rs`).
    pub(crate) fn rearm(&self, key: TimerKey, deadline: Instant) -> Rearmed {
        let tick = self.deadline_tick(deadline);
        if self.deadlines.try_extend(key, tick) {
            // Later than the wheel's placement: no earlier wake-up needed.
            return Rearmed::Pending { key, unpark: false };
        }
        let mut state = self.lock();
        if !state.is_shutdown && tick > state.wheel.elapsed() && state.wheel.move_pending(key, tick)
        {
            return Rearmed::Pending {
                key,
                unpark: state.note_new_deadline(tick),
            };
        }
        // Fired (no waker left), a deadline the wheel has passed, or shut
        // down.
        let waker = state.wheel.release(key);
        let shutdown = state.is_shutdown;
        drop(state);
        if let Some(waker) = waker {
            // Past deadline: the wait is over, as when a timer fires. On a
            // runtime that shut down, the next poll reports it.
            if !shutdown {
                waker.wake();
            }
        }
        Rearmed::Unarmed
    }

    /// True once the timer fired; otherwise make sure it holds a waker
    /// that wakes `waker`'s task. `stored` is the identity of the waker the
    /// timer holds, as the caller was last told (by `arm` or here); it is
    /// kept up to date.
    ///
    /// `key` must be the caller's own, as for `rearm`. Then only its owner
    /// changes the timer's waker, so when `waker` is the one `stored` names
    /// and the timer's cell does not say fired, the poll is over without
    /// the lock: a fire that comes after that look wakes the stored waker,
    /// which is this task's. (A runtime shut down fired every timer: the
    /// locked path then panics, as before.) Model:
    /// `time/loom_poll_pending.rs`.
    pub(crate) fn poll_fired(&self, key: TimerKey, stored: &mut WakerId, waker: &Waker) -> bool {
        if *stored == WakerId::of(waker) && !self.deadlines.has_fired(key) {
            return false;
        }
        let mut state = self.lock();
        if state.is_shutdown {
            drop(state);
            panic!("{}", SHUTDOWN_MSG);
        }
        let update = state.wheel.update_waker(key, waker);
        drop(state);
        // Any displaced waker is dropped here, after unlocking.
        match update {
            Some((_displaced, now_stored)) => {
                *stored = now_stored;
                false
            }
            None => true,
        }
    }

    /// Whether the timer fired, without touching its waker. `key` must be
    /// the caller's own, as for `rearm` (it is read without the lock).
    pub(crate) fn has_fired(&self, key: TimerKey) -> bool {
        self.deadlines.has_fired(key)
    }

    /// Free a timer's entry (cancelled or done). Its waker, if it still has
    /// one, is dropped after the lock is released.
    pub(crate) fn cancel(&self, key: TimerKey) {
        let waker = self.lock().wheel.release(key);
        drop(waker);
    }

    /// Live timer entries (armed, or fired and not yet freed).
    pub(crate) fn entry_count(&self) -> usize {
        self.lock().wheel.len()
    }

    /// Whether a park with `timeout` would move a paused clock to the
    /// next timer instead of waiting ([`park_timeout`](Self::park_timeout)).
    pub(crate) fn would_auto_advance(&self, timeout: Option<Duration>) -> bool {
        timeout != Some(Duration::ZERO)
            && self.clock.is_paused()
            && self.clock.can_auto_advance()
            && self
                .lock()
                .wheel
                .next_deadline()
                .is_some_and(|tick| tick < MAX_TICK)
    }

    /// How long a park may block, given the caller's own `timeout`. With a
    /// paused clock and no `spawn_blocking` work in flight, a blocking park
    /// moves time to the next timer instead and does not block.
    ///
    /// `take_woken` reports (and clears) whether the runtime was unparked
    /// since it last looked at its tasks: if so, it may have work it has
    /// not seen (say, the task a finished `spawn_blocking` just woke), so
    /// time is not moved and the park returns at once to let it look.
    pub(crate) fn park_timeout(
        &self,
        timeout: Option<Duration>,
        take_woken: impl FnOnce() -> bool,
    ) -> Option<Duration> {
        let mut state = self.lock();
        // A deadline at the wheel's last tick was past its range: it means
        // "never", so a park neither waits for it nor moves a frozen clock
        // to it (that would fire it before its deadline).
        let next = state.wheel.next_deadline().filter(|&tick| tick < MAX_TICK);
        let blocking = timeout != Some(Duration::ZERO);
        // With `spawn_blocking` work in flight, wait for it (its completion
        // unparks us) rather than jump over it. `can_auto_advance` is read
        // first: a closure that finished released it after waking its
        // handle, and that wake's unpark is what `take_woken` sees.
        if self.clock.is_paused() && blocking && self.clock.can_auto_advance() {
            if let Some(tick) = next {
                if take_woken() {
                    state.parked_until = None;
                    return Some(Duration::ZERO);
                }
                // By the whole milliseconds from the current tick to the
                // timer's, as Tokio's driver does: a clock left between
                // two ticks by an `advance` stays as far past its tick
                // (after `advance(500 µs)`, a 1 ms sleep wakes at 2.5 ms).
                let ticks = tick.saturating_sub(self.now_tick());
                self.clock.advance(Duration::from_millis(ticks));
                state.parked_until = None;
                return Some(Duration::ZERO);
            }
        }
        let until_timer = next.map(|tick| {
            self.tick_instant(tick)
                .saturating_duration_since(self.clock.now())
        });
        state.parked_until = if blocking {
            Some(next.unwrap_or(u64::MAX))
        } else {
            None
        };
        match (timeout, until_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// After a park: fire every timer that is due.
    pub(crate) fn process(&self) {
        self.fire_until(|state| {
            state.parked_until = None;
            self.now_tick()
        });
    }

    /// Fire every timer (the runtime is going away); later polls panic.
    pub(crate) fn shutdown(&self) {
        self.fire_until(|state| {
            state.is_shutdown = true;
            u64::MAX
        });
    }

    /// Under the lock, let `prepare` update the state and say up to which
    /// tick to fire; wake the fired timers after the lock is released.
    fn fire_until(&self, prepare: impl FnOnce(&mut State) -> u64) {
        let mut wakers = Vec::new();
        {
            let mut state = self.lock();
            let until = prepare(&mut state);
            state.wheel.advance(until, |w| wakers.push(w));
        }
        for w in wakers {
            w.wake();
        }
    }
}

impl State {
    /// A timer for `tick` was armed: does the parked driver need waking?
    fn note_new_deadline(&mut self, tick: u64) -> bool {
        match self.parked_until {
            Some(until) if tick < until => {
                self.parked_until = Some(tick);
                true
            }
            _ => false,
        }
    }
}

const SHUTDOWN_MSG: &str = "A Tokio 1.x context was found, but it is being shutdown. A weft timer \
                            was used after its runtime shut down; timers belong to the runtime \
                            they were created on, so create them on a running runtime";
