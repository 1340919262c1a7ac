//! `Interval`: ticks at a fixed period.
//!
//! Owns: the next tick's [`Sleep`], the period, and what to do about ticks
//! missed while the task was busy ([`MissedTickBehavior`]).

use super::sleep::{sleep_until, Sleep};
use super::Instant;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

/// An interval whose first tick completes at once, then every `period`.
///
/// # Panics
/// If `period` is zero; outside a runtime with the time driver.
///
/// ```
/// use std::time::Duration;
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let mut every = weft::time::interval(Duration::from_millis(2));
/// let first = every.tick().await;
/// let second = every.tick().await;
/// assert_eq!(second - first, Duration::from_millis(2));
/// # });
/// ```
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "interval: `period` must be non-zero (a zero period would tick in a busy loop)"
    );
    interval_at(Instant::now(), period)
}

/// An interval whose first tick completes at `start`.
///
/// # Panics
/// If `period` is zero; outside a runtime with the time driver.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "interval_at: `period` must be non-zero (a zero period would tick in a busy loop)"
    );
    Interval {
        delay: sleep_until(start),
        period,
        missed_tick_behavior: MissedTickBehavior::default(),
    }
}

/// What an [`Interval`] does when ticks were missed (the task was late by
/// more than a few milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks as fast as possible, then keep the original
    /// schedule.
    #[default]
    Burst,
    /// Start a new schedule `period` after the late tick.
    Delay,
    /// Skip the missed ticks; the next one is the next on the original
    /// schedule.
    Skip,
}

impl MissedTickBehavior {
    fn next_deadline(self, missed: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            MissedTickBehavior::Burst => missed.saturating_add_or_never(period),
            MissedTickBehavior::Delay => now.saturating_add_or_never(period),
            MissedTickBehavior::Skip => {
                let late = (now - missed).as_nanos();
                let into_period = late % period.as_nanos();
                now.saturating_add_or_never(period - Duration::from_nanos(into_period as u64))
            }
        }
    }
}

/// Ticks at a fixed period; created by [`interval`] or [`interval_at`].
#[derive(Debug)]
pub struct Interval {
    delay: Sleep,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

impl Interval {
    /// Wait for the next tick; returns its scheduled instant. Cancel-safe.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Poll-style [`tick`](Self::tick).
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        ready!(Pin::new(&mut self.delay).poll(cx));
        let scheduled = self.delay.deadline();
        let now = Instant::now();
        // A tick up to 5 ms late is on time: only lateness beyond that
        // counts as missed.
        let next = if now.saturating_duration_since(scheduled) > Duration::from_millis(5) {
            self.missed_tick_behavior
                .next_deadline(scheduled, now, self.period)
        } else {
            scheduled.saturating_add_or_never(self.period)
        };
        Pin::new(&mut self.delay).reset(next);
        Poll::Ready(scheduled)
    }

    /// Restart: the next tick is one period from now.
    pub fn reset(&mut self) {
        Pin::new(&mut self.delay).reset(Instant::now().saturating_add_or_never(self.period));
    }

    /// The next tick completes at once.
    pub fn reset_immediately(&mut self) {
        Pin::new(&mut self.delay).reset(Instant::now());
    }

    /// The next tick is `after` from now.
    pub fn reset_after(&mut self, after: Duration) {
        Pin::new(&mut self.delay).reset(Instant::now().saturating_add_or_never(after));
    }

    /// The next tick is at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        Pin::new(&mut self.delay).reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The missed-tick strategy.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Set the missed-tick strategy.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }
}

use std::future::Future as _;
