//! How often the long-poll monitor samples: which period follows which
//! sighting (monitor.rs's module doc gives the rules: "Stuck means...",
//! "Slow unless a task was spawned" and "Nobody to help").
//!
//! Owns: [`Pace`], the period and the LIFO re-check plan the sampler
//! keeps between samples, and [`Sighting`], what one sample saw as far
//! as the next period is concerned.

use super::monitor::{Monitor, LIFO_RECHECK, LIFO_RECHECK_COOLDOWN};
use std::time::Duration;

/// What one sample saw, as far as the next period is concerned.
#[derive(Clone, Copy)]
pub(super) struct Sighting {
    /// Some worker is parked or searching, so stolen or stranded work has
    /// a taker (never on a one-worker runtime: its idle worker is the one
    /// that would be stuck).
    pub(super) can_help: bool,
    /// A worker had just started a poll with a task in its LIFO slot.
    pub(super) lifo_waiting: bool,
    /// A worker was in the same poll as at the last sample, or had just
    /// started a poll with work queued behind it.
    pub(super) same_poll: bool,
    /// This sample stole a task from a LIFO slot.
    pub(super) stole: bool,
    /// A worker spawned a task into its LIFO slot since the last sample.
    pub(super) spawned: bool,
    /// The runtime has more than one worker: a worker busy now may park
    /// and take stranded work later.
    pub(super) several_workers: bool,
}

/// How often the monitor samples (module doc, "Stuck means...", "Slow
/// unless a task was spawned" and "Nobody to help").
pub(super) struct Pace {
    pub(super) period: Duration,
    /// The next sample is the quick re-check of a LIFO sighting.
    pub(super) lifo_recheck: bool,
    /// Samples until the next LIFO re-check is allowed.
    lifo_cooldown: u32,
}

impl Pace {
    pub(super) fn new(period: Duration) -> Pace {
        Pace {
            period,
            lifo_recheck: false,
            lifo_cooldown: 0,
        }
    }

    /// After a sample taken right after another: plan the LIFO re-check
    /// if it saw a spawn into a slot the other did not, else keep the
    /// other's plan, but no slower than the ceiling if it saw a spawn
    /// that a worker could take now or later (the rules of
    /// [`after_sample`](Self::after_sample): a spawn's kick must not end
    /// in a slow sleep, and a spawn while every worker is busy must not
    /// start the kick cycle).
    pub(super) fn after_close_sample(&mut self, monitor: &Monitor, seen: Sighting) {
        if self.wants_lifo_recheck(&seen) {
            self.lifo_recheck = true;
            self.period = LIFO_RECHECK.min(monitor.min_period);
        } else if seen.spawned && seen.several_workers {
            self.period = self.period.min(monitor.max_period);
        }
    }

    /// A spawn filled a slot whose worker had just started a poll, someone
    /// could take it, and the last re-checks did not come up empty.
    fn wants_lifo_recheck(&self, seen: &Sighting) -> bool {
        seen.can_help && seen.spawned && seen.lifo_waiting && self.lifo_cooldown == 0
    }

    pub(super) fn after_sample(&mut self, monitor: &Monitor, seen: Sighting) {
        if self.lifo_recheck && !seen.stole {
            self.lifo_cooldown = LIFO_RECHECK_COOLDOWN;
        } else {
            self.lifo_cooldown = self.lifo_cooldown.saturating_sub(1);
        }
        // Nobody idle: a stolen task or a woken sleeper would find no
        // idle worker, so sample only for the threshold. A filled slot is
        // re-checked only after a spawn: message passing fills it with
        // woken tasks all the time.
        self.lifo_recheck = self.wants_lifo_recheck(&seen);
        let quick = seen.can_help && (self.lifo_recheck || seen.same_poll || seen.spawned);
        // Spawns going on while every worker is busy: a worker that parks
        // soon could take a stranded child, and sleeping slow would let
        // the next spawn kick the monitor, which would find the workers
        // still busy and pay the heavy fence to turn slow again, a cycle
        // per spawn or two on a busy server. The ceiling costs fewer
        // wake-ups than that and no fence (monitor.rs, "Nobody to help").
        let spawning_while_busy = !seen.can_help && seen.spawned && seen.several_workers;
        self.period = if !quick && !spawning_while_busy {
            (self.period * 2).clamp(monitor.min_period, monitor.slow_period)
        } else if !quick {
            (self.period * 2).clamp(monitor.min_period, monitor.max_period)
        } else if self.lifo_recheck {
            LIFO_RECHECK.min(monitor.min_period)
        } else if seen.same_poll {
            monitor.min_period
        } else {
            (self.period * 2).min(monitor.max_period)
        };
    }
}
