//! The scripts: what every task of one run does, step by step, and the
//! seeded generator that makes them.
//!
//! A [`Script`] is a list of tasks; task 0 is the root (the future given to
//! `block_on`, or spawned by it: [`Root`]), every other task is spawned by exactly one `Spawn` or
//! `SetSpawn` step of its parent (so the task ids of a script name the same
//! task on both runtimes). Durations and instants are whole microseconds;
//! an absolute instant (`SleepUntil`, a reset's target, ...) counts from
//! the runtime's start, which is also tick 0 of both timer wheels.
//!
//! [`FAR`] stands for `Duration::MAX` (an instant that far out for
//! `Until`): timers that far out are clamped by both crates.
//!
//! Scripts print with `{:?}` almost as Rust expressions (`vec![..]` per
//! task; an interval's work list and `FAR` need editing), so a failure's
//! script pastes into a regression test.

use super::rng::Rng;
use std::fmt;

/// Microseconds.
pub type Us = u64;

/// `Duration::MAX` as a duration; as an instant, `u64::MAX` µs from the
/// start (about 585,000 years).
pub const FAR: Us = u64::MAX;

#[derive(Clone, PartialEq, Eq)]
pub struct Script {
    /// Where the root task runs.
    pub root: Root,
    pub tasks: Vec<Vec<Step>>,
}

/// Where task 0 runs. Tokio's `current_thread` scheduler polls the
/// `block_on` future before the spawned tasks woken with it (not
/// documented), so both places are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// It is the future given to `block_on`.
    BlockOn,
    /// It is spawned; `block_on` awaits its `JoinHandle`.
    Spawned,
}

/// A future inside a `Timeout` or a `select!` branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fut {
    /// `sleep(us)`.
    Sleep(Us),
    /// `sleep_until(start + us)`.
    Until(Us),
    /// `yield_now()`.
    Yield,
    /// `std::future::pending()`.
    Never,
}

/// `MissedTickBehavior`, crate-neutral.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Burst,
    Delay,
    Skip,
}

/// How far a `Sleep` gets before it is reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetWhen {
    /// Never polled.
    Unpolled,
    /// Polled once (its timer armed, unless already due).
    Polled,
    /// Awaited to completion, then reset (so it waits again).
    Completed,
}

/// An interval's first tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// `interval(period)`.
    Plain,
    /// `interval_at(now + us, period)`.
    In(Us),
    /// `interval_at(now - us, period)` (not before the runtime's start).
    Ago(Us),
}

/// What a task does between two ticks of an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    Nothing,
    /// Busy work: `advance(us)` (the clock moves while the task runs).
    Advance(Us),
    /// Idle: `sleep(us)`.
    Sleep(Us),
    Yield,
    /// `Interval::reset()`.
    Reset,
    /// `Interval::reset_immediately()`.
    ResetNow,
    /// `Interval::reset_after(us)`.
    ResetAfter(Us),
    /// `Interval::reset_at(start + us)`.
    ResetAt(Us),
}

/// One step of a task. Handle indices are taken modulo the number of
/// handles the task holds (a step on an empty list logs `NoHandle`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `sleep(us)`.
    Sleep(Us),
    /// `sleep_until(start + us)`.
    SleepUntil(Us),
    /// `sleep(first)`, brought to `when`, `reset(start + to)`, awaited.
    Reset { first: Us, when: ResetWhen, to: Us },
    /// `sleep(first)`, polled once if `poll`, then `sleep(wait).await`,
    /// then `is_elapsed()` of the first.
    IsElapsed { first: Us, poll: bool, wait: Us },
    /// `timeout(limit, inner)`.
    Timeout { limit: Us, inner: Fut },
    /// `timeout_at(start + at, inner)`.
    TimeoutAt { at: Us, inner: Fut },
    /// `select! { biased; _ = a => 0, _ = b => 1 }`.
    Select(Fut, Fut),
    /// An interval (with the behavior set, unless `None`), ticked once per
    /// `work` item, each tick followed by its work.
    Interval {
        start: Start,
        period: Us,
        behavior: Option<Behavior>,
        work: Vec<Work>,
    },
    /// `yield_now()`.
    Yield,
    /// `advance(us)`.
    Advance(Us),
    /// `let f = advance(us);` then log `Instant::now()`, then `f.await`.
    AdvanceLazy(Us),
    /// `spawn(task)`, keeping the `JoinHandle`.
    Spawn(usize),
    /// Await (and give up) a held `JoinHandle`.
    Await(usize),
    /// `JoinHandle::abort` (the handle is kept).
    Abort(usize),
    /// `JoinHandle::is_finished`.
    IsFinished(usize),
    /// Drop a held `JoinHandle`, keeping its `AbortHandle`.
    Detach(usize),
    /// `AbortHandle::abort` on a detached task.
    AbortDetached(usize),
    /// `JoinSet::spawn(task)`.
    SetSpawn(usize),
    /// `JoinSet::join_next_with_id().await`.
    JoinNext,
    /// `JoinSet::try_join_next_with_id()`.
    TryJoinNext,
    /// Abort one member through the `AbortHandle` `JoinSet::spawn` returned.
    SetAbort(usize),
    /// `JoinSet::abort_all()`.
    AbortAll,
    /// `JoinSet::shutdown().await`.
    Shutdown,
    /// Drop the `JoinSet` (aborting its members) and start a new one.
    DropSet,
    /// `JoinSet::detach_all()`.
    DetachAll,
    /// `panic!` (never in the root).
    Panic,
}

impl Step {
    /// The variant's name, as `TIME_DIFF_SKIP` spells it.
    pub fn name(&self) -> &'static str {
        KINDS[self.kind()]
    }

    fn kind(&self) -> usize {
        match self {
            Step::Sleep(_) => 0,
            Step::SleepUntil(_) => 1,
            Step::Reset { .. } => 2,
            Step::Timeout { .. } => 3,
            Step::Select(..) => 4,
            Step::Interval { .. } => 5,
            Step::Yield => 6,
            Step::Advance(_) => 7,
            Step::AdvanceLazy(_) => 8,
            Step::Spawn(_) => 9,
            Step::Await(_) => 10,
            Step::Abort(_) => 11,
            Step::IsFinished(_) => 12,
            Step::Detach(_) => 13,
            Step::AbortDetached(_) => 14,
            Step::SetSpawn(_) => 15,
            Step::JoinNext => 16,
            Step::TryJoinNext => 17,
            Step::SetAbort(_) => 18,
            Step::AbortAll => 19,
            Step::Shutdown => 20,
            Step::DropSet => 21,
            Step::Panic => 22,
            Step::IsElapsed { .. } => 23,
            Step::DetachAll => 24,
            Step::TimeoutAt { .. } => 25,
        }
    }

    /// The task this step spawns, if any.
    pub fn child(&self) -> Option<usize> {
        match *self {
            Step::Spawn(c) | Step::SetSpawn(c) => Some(c),
            _ => None,
        }
    }
}

/// Step names, indexed by `Step::kind`.
pub const KINDS: [&str; 26] = [
    "Sleep",
    "SleepUntil",
    "Reset",
    "Timeout",
    "Select",
    "Interval",
    "Yield",
    "Advance",
    "AdvanceLazy",
    "Spawn",
    "Await",
    "Abort",
    "IsFinished",
    "Detach",
    "AbortDetached",
    "SetSpawn",
    "JoinNext",
    "TryJoinNext",
    "SetAbort",
    "AbortAll",
    "Shutdown",
    "DropSet",
    "Panic",
    "IsElapsed",
    "DetachAll",
    "TimeoutAt",
];

/// Relative weights of the step kinds, in `KINDS` order.
const WEIGHTS: [u32; 26] = [
    10, 5, 5, 8, 5, 6, 5, 4, 1, 6, 4, 3, 2, 2, 2, 6, 5, 2, 2, 1, 1, 1, 2, 3, 1, 3,
];

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Script {{ root: Root::{:?}, tasks: vec![", self.root)?;
        for (i, steps) in self.tasks.iter().enumerate() {
            writeln!(f, "    // task {i}")?;
            writeln!(f, "    vec!{steps:?},")?;
        }
        write!(f, "] }}")
    }
}

/// What the generator may use.
#[derive(Clone, Debug)]
pub struct GenCfg {
    /// Timer durations and instants with a sub-millisecond part (else
    /// whole milliseconds).
    pub sub_ms_timers: bool,
    /// `advance` by durations with a sub-millisecond part, so the clock
    /// leaves millisecond boundaries (else it stays on them: auto-advance
    /// moves it to a millisecond tick).
    pub sub_ms_clock: bool,
    /// Step kinds left out (by name).
    pub skip: Vec<String>,
}

const MAX_TASKS: usize = 9;
const MAX_DEPTH: usize = 3;

/// The script of `seed`.
pub fn generate(seed: u64, cfg: &GenCfg) -> Script {
    let mut g = Gen {
        rng: Rng::new(seed),
        cfg,
        tasks: Vec::new(),
    };
    let root = if g.rng.one_in(2) {
        Root::BlockOn
    } else {
        Root::Spawned
    };
    g.task(0);
    Script {
        root,
        tasks: g.tasks,
    }
}

struct Gen<'a> {
    rng: Rng,
    cfg: &'a GenCfg,
    tasks: Vec<Vec<Step>>,
}

impl Gen<'_> {
    /// Adds a task (and, recursively, the tasks it spawns); returns its id.
    fn task(&mut self, depth: usize) -> usize {
        let id = self.tasks.len();
        self.tasks.push(Vec::new());
        let len = self.rng.range_u64(1, if depth == 0 { 10 } else { 6 });
        let weights: Vec<u32> = KINDS
            .iter()
            .zip(WEIGHTS)
            .map(|(name, w)| {
                let spawns = matches!(*name, "Spawn" | "SetSpawn");
                let off = self.cfg.skip.iter().any(|s| s == name)
                    || (spawns && depth >= MAX_DEPTH)
                    || (*name == "Panic" && depth == 0);
                if off {
                    0
                } else {
                    w
                }
            })
            .collect();
        let mut steps = Vec::new();
        for _ in 0..len {
            let kind = self.rng.pick(&weights);
            let step = match KINDS[kind] {
                "Spawn" | "SetSpawn" if self.tasks.len() >= MAX_TASKS => continue,
                "Spawn" => Step::Spawn(self.task(depth + 1)),
                "SetSpawn" => Step::SetSpawn(self.task(depth + 1)),
                name => self.leaf(name),
            };
            let last = step == Step::Panic;
            steps.push(step);
            if last {
                break;
            }
        }
        self.tasks[id] = steps;
        id
    }

    fn leaf(&mut self, name: &str) -> Step {
        match name {
            "Sleep" => Step::Sleep(self.dur()),
            "SleepUntil" => Step::SleepUntil(self.abs()),
            "Reset" => Step::Reset {
                first: self.dur(),
                when: [ResetWhen::Unpolled, ResetWhen::Polled, ResetWhen::Completed]
                    [self.rng.below(3) as usize],
                to: self.abs(),
            },
            "IsElapsed" => Step::IsElapsed {
                first: self.dur(),
                poll: self.rng.one_in(2),
                wait: self.dur(),
            },
            "Timeout" => {
                let inner = self.fut(true);
                let finite = !matches!(inner, Fut::Never | Fut::Until(FAR));
                let limit = if finite && self.rng.one_in(20) {
                    FAR
                } else {
                    self.dur()
                };
                Step::Timeout { limit, inner }
            }
            "Select" => {
                let a = self.fut(true);
                let b = self.fut(!matches!(a, Fut::Never | Fut::Until(FAR)));
                Step::Select(a, b)
            }
            "Interval" => self.interval(),
            "Yield" => Step::Yield,
            "Advance" => Step::Advance(self.advance()),
            "AdvanceLazy" => Step::AdvanceLazy(self.advance()),
            "Await" => Step::Await(self.idx()),
            "Abort" => Step::Abort(self.idx()),
            "IsFinished" => Step::IsFinished(self.idx()),
            "Detach" => Step::Detach(self.idx()),
            "AbortDetached" => Step::AbortDetached(self.idx()),
            "JoinNext" => Step::JoinNext,
            "TryJoinNext" => Step::TryJoinNext,
            "SetAbort" => Step::SetAbort(self.idx()),
            "AbortAll" => Step::AbortAll,
            "Shutdown" => Step::Shutdown,
            "DropSet" => Step::DropSet,
            "DetachAll" => Step::DetachAll,
            "TimeoutAt" => {
                let inner = self.fut(true);
                let at = if matches!(inner, Fut::Never | Fut::Until(FAR)) {
                    self.abs()
                } else {
                    self.abs_or_far()
                };
                Step::TimeoutAt { at, inner }
            }
            "Panic" => Step::Panic,
            other => unreachable!("{other}"),
        }
    }

    fn interval(&mut self) -> Step {
        let period = self.rng.range_u64(1, 10) * 1000 + self.sub_ms();
        let start = match self.rng.below(3) {
            0 => Start::Plain,
            1 => Start::In(self.dur()),
            _ => Start::Ago(self.dur()),
        };
        let behavior = match self.rng.below(4) {
            0 => None,
            1 => Some(Behavior::Burst),
            2 => Some(Behavior::Delay),
            _ => Some(Behavior::Skip),
        };
        let ticks = self.rng.range_u64(1, 6);
        let mut work = Vec::new();
        for _ in 0..ticks {
            let w = match self.rng.pick(&[4, 6, 3, 1, 1, 1, 1, 1]) {
                0 => Work::Nothing,
                1 => Work::Advance(self.busy(period, self.cfg.sub_ms_clock)),
                2 => Work::Sleep(self.busy(period, self.cfg.sub_ms_timers)),
                3 => Work::Yield,
                4 => Work::Reset,
                5 => Work::ResetNow,
                6 => Work::ResetAfter(self.dur()),
                _ => Work::ResetAt(self.abs()),
            };
            work.push(w);
        }
        Step::Interval {
            start,
            period,
            behavior,
            work,
        }
    }

    /// Work between ticks: up to three periods.
    fn busy(&mut self, period: Us, sub_ms: bool) -> Us {
        let d = self.rng.below(3 * period + 1);
        if sub_ms {
            d
        } else {
            d / 1000 * 1000
        }
    }

    /// A future for a timeout or select branch; one that never completes
    /// (`Never`, `Until(FAR)`) only if allowed.
    fn fut(&mut self, never_ok: bool) -> Fut {
        match self.rng.below(if never_ok { 5 } else { 4 }) {
            0 | 1 if self.rng.one_in(20) => Fut::Sleep(FAR),
            0 | 1 => Fut::Sleep(self.dur()),
            2 => Fut::Until(self.abs()),
            3 => Fut::Yield,
            _ if self.rng.one_in(4) => Fut::Until(FAR),
            _ => Fut::Never,
        }
    }

    fn idx(&mut self) -> usize {
        self.rng.below(4) as usize
    }

    fn sub_ms(&mut self) -> Us {
        if self.cfg.sub_ms_timers && self.rng.one_in(4) {
            self.rng.range_u64(1, 999)
        } else {
            0
        }
    }

    /// A duration: zero, short, or up to 40 ms.
    fn dur(&mut self) -> Us {
        let ms = match self.rng.below(10) {
            0 => 0,
            1..=4 => self.rng.range_u64(1, 5),
            _ => self.rng.range_u64(1, 40),
        };
        ms * 1000 + self.sub_ms()
    }

    /// A duration to `advance` by.
    fn advance(&mut self) -> Us {
        let d = self.dur();
        if self.cfg.sub_ms_clock {
            d
        } else {
            d / 1000 * 1000
        }
    }

    /// An instant, up to 60 ms after the start, or rarely `FAR`.
    fn abs_or_far(&mut self) -> Us {
        if self.rng.one_in(20) {
            FAR
        } else {
            self.abs()
        }
    }

    /// An instant, up to 60 ms after the start.
    fn abs(&mut self) -> Us {
        self.rng.below(61) * 1000 + self.sub_ms()
    }
}
