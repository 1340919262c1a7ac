//! Runs one script on both runtimes and judges the two logs.
//!
//! The logs are compared task by task: each task's own entries (virtual
//! time, step, observation) must be the same on both runtimes. How tasks
//! that are ready at the same instant interleave is not documented by
//! Tokio, and such an interleaving can change what a task sees (a clock
//! moved by another task's `advance`, an abort that lands before or after
//! the target's last step, the order of a JoinSet's same-instant results).
//! So at the first divergence (the earliest, over all tasks), the verdict
//! looks at the instant the diverging step started and the instant of the
//! divergence. The difference is only informational ([`Verdict::Tie`]) if,
//! at either instant, on either runtime:
//! - another task logged anything (it ran then too);
//! - another task was inside an `advance` (Tokio fires the timers it moved
//!   past only when its driver next turns, and documents that a `sleep`
//!   may not complete on its first poll after an `advance`; weft fires
//!   them at once); or, for a step that also ended at that instant, the
//!   task itself had just returned from an `advance` there (a spurious
//!   wake-up can have Tokio poll it again before its driver turns);
//! - or the difference is a task dropped with the runtime on one side and
//!   running no earlier than the root's return on the other (how much runs
//!   between the root's return and `block_on`'s is not documented).
//!
//! Otherwise the task ran alone at both ends of the step, and the
//! difference is real ([`Verdict::Mismatch`]). The documented facts of
//! `facts.rs` are checked on both logs first: weft failing one is always
//! real.

use crate::facts;
use crate::interp::{on_tokio, on_weft};
use crate::log::{Entry, Ev};
use crate::script::Script;
use std::fmt::Write as _;
use std::sync::mpsc;
use std::time::Duration;

/// How long one run may take before it counts as hung (virtual time makes
/// every script finish in milliseconds of real time).
const HANG: Duration = Duration::from_secs(10);

pub struct Outcome {
    pub tokio: Vec<Entry>,
    pub weft: Vec<Entry>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Same,
    /// The logs differ first where the interleaving of same-instant tasks
    /// may explain it.
    Tie(Divergence),
    /// The logs differ where one task ran alone.
    Mismatch(Divergence),
    /// weft's log breaks a documented fact.
    Broken(String),
    /// Tokio's log breaks a "documented fact", or Tokio's run hung or
    /// panicked: the checker or the interpreter is wrong.
    CheckerBug(String),
    /// weft's run hung (Tokio's finished) or panicked outside a task.
    WeftFailed(String),
}

/// The first place the two logs differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub task: usize,
    /// The task's step whose entry differs (`None`: its start, end or drop).
    pub step: Option<usize>,
    /// The step's kind, or "Start/End".
    pub kind: String,
    pub tokio: Option<Entry>,
    pub weft: Option<Entry>,
}

impl Verdict {
    /// What must stay the same while a failing script is shrunk.
    pub fn signature(&self) -> Option<String> {
        match self {
            Verdict::Mismatch(d) => Some(format!("mismatch at {}", d.kind)),
            Verdict::Broken(m) => Some(format!("broken {}", rule(m))),
            Verdict::WeftFailed(m) => Some(format!("weft's run {m}")),
            _ => None,
        }
    }
}

/// The `[rule]` tag of a broken fact's message.
pub fn rule(m: &str) -> &str {
    let from = m.find('[').unwrap_or(0);
    let to = m.find(']').map_or(m.len(), |t| t + 1);
    &m[from..to]
}

pub fn run(script: &Script) -> Outcome {
    let tokio = guarded(on_tokio::run, script);
    let weft = guarded(on_weft::run, script);
    let verdict = match (&tokio, &weft) {
        (Err(m), _) => Verdict::CheckerBug(format!("Tokio's run {m}")),
        (_, Err(m)) => Verdict::WeftFailed(m.to_string()),
        (Ok(t), Ok(w)) => judge(script, t, w),
    };
    Outcome {
        tokio: tokio.unwrap_or_default(),
        weft: weft.unwrap_or_default(),
        verdict,
    }
}

/// Runs `f` on a thread of its own, so a run that hangs fails the test
/// (its thread is left behind) instead of stalling it.
fn guarded(f: fn(&Script) -> Vec<Entry>, script: &Script) -> Result<Vec<Entry>, &'static str> {
    let (tx, rx) = mpsc::channel();
    let script = script.clone();
    std::thread::spawn(move || {
        let _ = tx.send(f(&script));
    });
    match rx.recv_timeout(HANG) {
        Ok(log) => Ok(log),
        Err(mpsc::RecvTimeoutError::Timeout) => Err("hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("panicked"),
    }
}

fn judge(script: &Script, tokio: &[Entry], weft: &[Entry]) -> Verdict {
    if let Err(m) = facts::check(script, tokio) {
        return Verdict::CheckerBug(m);
    }
    if let Err(m) = facts::check(script, weft) {
        return Verdict::Broken(m);
    }
    if tokio == weft {
        return Verdict::Same;
    }
    let key = |e: Option<&&Entry>| e.map_or(u64::MAX, |e| e.t.unwrap_or(u64::MAX - 1));
    let mut first: Option<(u64, usize, usize)> = None;
    for task in 0..script.tasks.len() {
        let a: Vec<&Entry> = tokio.iter().filter(|e| e.task == task).collect();
        let b: Vec<&Entry> = weft.iter().filter(|e| e.task == task).collect();
        let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) else {
            continue;
        };
        let t = key(a.get(i)).min(key(b.get(i)));
        if first.is_none_or(|f| t < f.0) {
            first = Some((t, task, i));
        }
    }
    let Some((t, task, i)) = first else {
        // Same per task, different interleaving: not a difference at all.
        return Verdict::Same;
    };
    let a: Vec<&Entry> = tokio.iter().filter(|e| e.task == task).collect();
    let b: Vec<&Entry> = weft.iter().filter(|e| e.task == task).collect();
    let step = a
        .get(i)
        .and_then(|e| e.step)
        .or(b.get(i).and_then(|e| e.step));
    let kind = step.map_or("Start/End", |s| script.tasks[task][s].name());
    let d = Divergence {
        task,
        step,
        kind: kind.to_string(),
        tokio: a.get(i).map(|e| (*e).clone()),
        weft: b.get(i).map(|e| (*e).clone()),
    };
    // The instant the step started: the task's last agreed entry.
    let started = i.checked_sub(1).and_then(|j| a[j].t);
    // When the root returned: `block_on` returns soon after, but how many
    // other ready tasks run before it does is not documented (Tokio runs
    // them until its scheduler next looks at the `block_on` future).
    let root_end = tokio
        .iter()
        .chain(weft)
        .filter(|e| e.task == 0 && e.t.is_some())
        .map(|e| e.t.unwrap())
        .max();
    let at_drop = |e: Option<&&Entry>| e.is_none_or(|e| e.t.is_none());
    if (at_drop(a.get(i)) || at_drop(b.get(i))) && root_end.is_some_and(|r| t >= r) {
        return Verdict::Tie(d);
    }
    let crowded = |instant: Option<u64>| {
        instant.is_some_and(|x| {
            [tokio, weft]
                .iter()
                .any(|log| others_at(log, task, x) || advancing_over(log, task, x))
        })
    };
    // A task's first entry comes from its first poll, after the step of
    // its spawner that spawned it: never alone.
    // A step that ended at the instant its own task's `advance` left the
    // clock at: it may have been polled before the driver turned.
    let just_advanced = started == Some(t)
        && [tokio, weft]
            .iter()
            .any(|log| advance_ended_at(log, task, t));
    let same_instant_members = step.is_some_and(|s| joined_same_instant(tokio, weft, task, s));
    if i == 0 || just_advanced || crowded(started) || crowded(Some(t)) || same_instant_members {
        Verdict::Tie(d)
    } else {
        Verdict::Mismatch(d)
    }
}

/// At `task`'s step `step`, the two runtimes joined different members of
/// a set, and those two members finished at the same instant on both
/// runtimes. A `JoinSet` hands out members in the order they finished,
/// and the order of tasks finishing at one instant follows the order
/// they were polled in, which Tokio does not document (it resumes the
/// task that yielded last first, for one).
fn joined_same_instant(tokio: &[Entry], weft: &[Entry], task: usize, step: usize) -> bool {
    let joined = |log: &[Entry]| {
        log.iter().find_map(|e| match &e.ev {
            Ev::Join(Some(out), _) | Ev::TryJoin(Some(out), _)
                if e.task == task && e.step == Some(step) =>
            {
                out.task()
            }
            _ => None,
        })
    };
    let (Some(a), Some(b)) = (joined(tokio), joined(weft)) else {
        return false;
    };
    // The instant a task's future returned or was dropped.
    let finished = |log: &[Entry], member: usize| {
        log.iter()
            .rev()
            .find(|e| e.task == member && matches!(e.ev, Ev::End | Ev::Dropped))
            .and_then(|e| e.t)
    };
    a != b
        && [tokio, weft].iter().all(|log| {
            let at = finished(log, a);
            at.is_some() && at == finished(log, b)
        })
}

/// Another task than `task` logged something at instant `x`.
fn others_at(log: &[Entry], task: usize, x: u64) -> bool {
    log.iter().any(|e| e.task != task && e.t == Some(x))
}

/// Another task than `task` was inside an `advance` at instant `x` (had
/// moved the clock, or was about to, and had not resumed yet). Tokio moves
/// the clock at once but fires the timers due only when its driver next
/// turns ("calls to `sleep` are not guaranteed to complete the first time
/// they are polled after a call to `advance`"), weft fires them at once.
fn advancing_over(log: &[Entry], task: usize, x: u64) -> bool {
    log.iter().enumerate().any(|(i, e)| {
        e.task != task
            && e.ev == Ev::Advancing
            && e.t.is_some_and(|from| from <= x)
            && log[i + 1..]
                .iter()
                .find(|n| n.task == e.task)
                .is_none_or(|n| n.t.is_none_or(|to| to >= x))
    })
}

/// `task`'s own `advance` returned at instant `x`.
fn advance_ended_at(log: &[Entry], task: usize, x: u64) -> bool {
    let mine: Vec<&Entry> = log.iter().filter(|e| e.task == task).collect();
    mine.windows(2)
        .any(|w| w[0].ev == Ev::Advancing && w[1].t == Some(x))
}

/// Both logs, side by side per task up to a little past the divergence,
/// then each whole, in the order it happened.
pub fn describe(script: &Script, o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "verdict: {:?}", o.verdict);
    let _ = writeln!(s, "script:\n{script:?}");
    let _ = writeln!(s, "--- Tokio's log:");
    for e in &o.tokio {
        let _ = writeln!(s, "  {e:?}");
    }
    let _ = writeln!(s, "--- weft's log:");
    for e in &o.weft {
        let _ = writeln!(s, "  {e:?}");
    }
    s
}
