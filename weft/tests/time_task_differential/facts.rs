//! What Tokio documents about time and tasks, checked on one run's log by
//! itself (whatever the interleaving): both runtimes must pass. A failure
//! on Tokio's log means this checker is wrong; on weft's, weft breaks a
//! promise Tokio makes.
//!
//! - A timer never fires before its deadline (`sleep`, `sleep_until`, a
//!   reset `Sleep` and its `deadline()`, `timeout`'s both outcomes, a
//!   `select!` branch, an interval tick).
//! - An interval's ticks return their scheduled instants: the start, then
//!   one period on, or, for a tick more than 5 ms late (Tokio's threshold;
//!   its docs only say "too much time"; weft copies it),
//!   per `MissedTickBehavior`: Burst (one period after the missed tick),
//!   Delay (one period after now), Skip (the next instant of the original
//!   schedule after now); a reset sets the next one.
//! - A join reports the task it names: `Ok` only after the task returned,
//!   a panic only after it panicked, cancelled only after the joiner asked
//!   for its abort and its future was dropped; a JoinSet yields each member
//!   at most once, "in the order they complete" (a member is never joined
//!   while one that finished before it waits in the set); `shutdown`
//!   returns after every member finished.
//! - `is_finished` agrees with what the task did before the call.
//! - `task::try_id()` is the id of the task's `JoinHandle` (or set
//!   `AbortHandle`) inside a task, `None` in the `block_on` future.
//! - A task whose abort was asked before it finished never runs again: its
//!   next entry is `Dropped`.
//! - Every spawned task ends exactly once (returns, or is dropped: by an
//!   abort, a panic, or the runtime's drop), with nothing logged after.

use crate::log::{Entry, Ev, IdCheck, JoinOut};
use crate::script::{Behavior, Fut, Root, Script, Start, Step, Us, Work, FAR};

/// Tokio's lateness threshold for counting a tick as missed.
const LATE: Us = 5_000;

/// Where both crates put a deadline `Duration::MAX` away: 30 years on.
const FAR_AWAY: Us = 86_400 * 365 * 30 * 1_000_000;

/// The deadline of a timer for `d` from `start`.
fn after(start: Us, d: Us) -> Us {
    if d == FAR {
        start + FAR_AWAY
    } else {
        start + d
    }
}

/// The first broken promise, if any.
pub fn check(script: &Script, log: &[Entry]) -> Result<(), String> {
    for task in 0..script.tasks.len() {
        check_task(script, log, task)?;
    }
    Ok(())
}

fn terminal(ev: &Ev) -> bool {
    matches!(ev, Ev::End | Ev::Dropped)
}

/// The index of `task`'s terminal entry, if any.
fn end_of(log: &[Entry], task: usize) -> Option<usize> {
    log.iter().position(|e| e.task == task && terminal(&e.ev))
}

fn never_early(what: &str, t: Option<u64>, deadline: Us) -> Result<(), String> {
    match t {
        Some(t) if t < deadline => Err(format!(
            "[timer early] {what} completed at {t} us, before its deadline {deadline} us"
        )),
        _ => Ok(()),
    }
}

/// The instant a completed branch future was due (`None`: never).
fn due(f: Fut, start: Us) -> Option<Us> {
    match f {
        Fut::Sleep(d) => Some(after(start, d)),
        Fut::Until(FAR) => None,
        Fut::Until(a) => Some(a),
        Fut::Yield => Some(start),
        Fut::Never => None,
    }
}

fn next_tick(b: Behavior, x: Us, t: Us, p: Us) -> Us {
    if t <= x + LATE {
        return x + p;
    }
    match b {
        Behavior::Burst => x + p,
        Behavior::Delay => t + p,
        Behavior::Skip => t + p - (t - x) % p,
    }
}

fn check_task(script: &Script, log: &[Entry], task: usize) -> Result<(), String> {
    let mine: Vec<(usize, &Entry)> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e.task == task)
        .collect();
    let ctx = |msg: String| format!("task {task}: {msg}");
    // Ends exactly once, last.
    let ends = mine.iter().filter(|(_, e)| terminal(&e.ev)).count();
    if ends > 1 || (ends == 1 && !terminal(&mine.last().unwrap().1.ev)) {
        return Err(ctx(
            "[ends once] ended more than once, or logged after its end".into(),
        ));
    }
    let spawned = script.tasks.iter().enumerate().find_map(|(p, steps)| {
        let s = steps.iter().position(|s| s.child() == Some(task))?;
        Some((p, s))
    });
    if let Some((parent, s)) = spawned {
        let done = log.iter().any(|e| e.task == parent && e.step == Some(s));
        if done && ends == 0 {
            return Err(ctx(
                "[ends once] spawned, but never returned nor was dropped".into(),
            ));
        }
    }
    let mut prev: Option<u64> = None;
    let mut joined: Vec<usize> = Vec::new();
    let mut asked: Vec<usize> = Vec::new();
    // The set's members not joined yet.
    let mut members: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < mine.len() {
        let (at, e) = mine[k];
        let Some(i) = e.step else {
            if let Ev::Start(ids) = e.ev {
                let want = if task == 0 && script.root == Root::BlockOn {
                    IdCheck::NoTask
                } else {
                    IdCheck::Same
                };
                if ids != want {
                    return Err(ctx(format!(
                        "[task id] task::try_id() at its start: {ids:?}"
                    )));
                }
            }
            prev = e.t;
            k += 1;
            continue;
        };
        // All entries of step i.
        let mut group = vec![(at, e)];
        while k + 1 < mine.len() && mine[k + 1].1.step == Some(i) {
            k += 1;
            group.push(mine[k]);
        }
        k += 1;
        let start = prev.unwrap_or(0);
        let (last_at, last) = *group.last().unwrap();
        let step = &script.tasks[task][i];
        let t = last.t;
        let what = format!("step {i} ({step:?})");
        match (step, &last.ev) {
            (Step::Sleep(d), Ev::Done) => never_early(&what, t, start + d),
            (Step::SleepUntil(a), Ev::Done) => never_early(&what, t, *a),
            (Step::Reset { to, .. }, Ev::Reset { deadline, .. }) => {
                if deadline != to {
                    Err(format!("[deadline] {what}: deadline() {deadline} after reset"))
                } else {
                    never_early(&what, t, *to)
                }
            }
            (Step::Timeout { limit, .. }, Ev::Timeout { elapsed: true }) => {
                never_early(&what, t, after(start, *limit))
            }
            (Step::TimeoutAt { at, .. }, Ev::Timeout { elapsed: true }) => never_early(&what, t, *at),
            (Step::TimeoutAt { inner, .. }, Ev::Timeout { elapsed: false }) => match due(*inner, start) {
                Some(d) => never_early(&what, t, d),
                None => Err(format!("[never ready] {what}: a never-ready future completed")),
            },
            (Step::IsElapsed { first, .. }, Ev::Elapsed(true)) => never_early(&what, t, start + first),
            (Step::DetachAll, Ev::Done) => {
                members.clear();
                Ok(())
            }
            (Step::Timeout { inner, .. }, Ev::Timeout { elapsed: false }) => match due(*inner, start) {
                Some(d) => never_early(&what, t, d),
                None => Err(format!("[never ready] {what}: a never-ready future completed")),
            },
            (Step::Select(a, b), Ev::Select(w)) => {
                match due(if *w == 0 { *a } else { *b }, start) {
                    Some(d) => never_early(&what, t, d),
                    None => Err(format!("[never ready] {what}: a never-ready branch won")),
                }
            }
            (Step::Interval { .. }, _) => check_interval(step, start, &group).map_err(|m| format!("{what}: {m}")),
            (Step::Await(_), Ev::Join(Some(out), _)) => check_join(log, last_at, *out, &asked, &mut Vec::new()),
            (Step::JoinNext, Ev::Join(Some(out), _)) | (Step::TryJoinNext, Ev::TryJoin(Some(out), _)) => {
                check_join(log, last_at, *out, &asked, &mut joined)?;
                let c = out.task().unwrap();
                members.retain(|&m| m != c);
                let end = end_of(log, c);
                match members.iter().find(|&&m| end_of(log, m).is_some_and(|x| Some(x) < end)) {
                    Some(m) => Err(format!(
                        "[join order] {what}: joined task {c}, but task {m} finished before it and is still in the set"
                    )),
                    None => Ok(()),
                }
            }
            (Step::SetSpawn(c), Ev::Done) => {
                members.push(*c);
                Ok(())
            }
            (Step::IsFinished(_), Ev::Finished(c, f)) => {
                if end_of(log, *c).is_some_and(|x| x < last_at) == *f {
                    Ok(())
                } else {
                    Err(format!("[is_finished] {what}: is_finished() said {f} for task {c}"))
                }
            }
            (Step::Abort(_) | Step::AbortDetached(_) | Step::SetAbort(_) | Step::AbortAll | Step::DropSet, Ev::Aborted(ts)) => {
                asked.extend(ts);
                if *step == Step::DropSet {
                    members.clear();
                }
                aborted_never_run(log, last_at, ts)
            }
            (Step::Shutdown, Ev::Aborted(ts)) => {
                asked.extend(ts);
                members.clear();
                match ts.iter().find(|&&c| end_of(log, c).is_none_or(|x| x > last_at)) {
                    Some(c) => Err(format!("[shutdown] {what}: returned before task {c} finished")),
                    None => Ok(()),
                }
            }
            (_, Ev::Join(Some(JoinOut::Unknown), _)) => Err(format!("[join] {what}: an unknown join result")),
            _ => Ok(()),
        }
        .map_err(ctx)?;
        prev = t;
    }
    Ok(())
}

/// After an abort asked at log index `at`, every target not finished by
/// then logs nothing but its drop.
fn aborted_never_run(log: &[Entry], at: usize, targets: &[usize]) -> Result<(), String> {
    for &c in targets {
        let finished = end_of(log, c).is_some_and(|x| x < at);
        if finished {
            continue;
        }
        if let Some(e) = log[at..].iter().find(|e| e.task == c) {
            if e.ev != Ev::Dropped {
                return Err(format!("[abort] task {c} ran after its abort: {e:?}"));
            }
        }
    }
    Ok(())
}

fn check_join(
    log: &[Entry],
    at: usize,
    out: JoinOut,
    asked: &[usize],
    joined: &mut Vec<usize>,
) -> Result<(), String> {
    let Some(c) = out.task() else {
        return Err("[join] a join result of no known task".into());
    };
    if joined.contains(&c) {
        return Err(format!("[join] task {c} joined twice"));
    }
    joined.push(c);
    let end = end_of(log, c).filter(|&x| x < at).map(|x| &log[x].ev);
    let panicked = log[..at]
        .iter()
        .any(|e| e.task == c && e.ev == Ev::Panicking);
    let ok = match out {
        JoinOut::Ok(_) => end == Some(&Ev::End),
        JoinOut::Panicked(_) => panicked && end == Some(&Ev::Dropped),
        JoinOut::Cancelled(_) => asked.contains(&c) && !panicked && end == Some(&Ev::Dropped),
        JoinOut::Unknown => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "[join] joined {out:?}, but task {c} ended with {end:?} (abort asked: {})",
            asked.contains(&c)
        ))
    }
}

fn check_interval(step: &Step, start: Us, group: &[(usize, &Entry)]) -> Result<(), String> {
    let Step::Interval {
        start: first,
        period: p,
        behavior,
        work,
    } = step
    else {
        unreachable!()
    };
    let b = behavior.unwrap_or(Behavior::Burst);
    let mut x = match *first {
        Start::Plain => start,
        Start::In(d) => start + d,
        Start::Ago(d) => start.saturating_sub(d),
    };
    let ticks = group.iter().filter_map(|(_, e)| match e.ev {
        Ev::Tick(at) => Some((at, e.t.unwrap_or(u64::MAX))),
        _ => None,
    });
    for (j, (at, t)) in ticks.enumerate() {
        if at != x {
            return Err(format!(
                "[tick instant] tick {j} returned {at} us, expected {x} us"
            ));
        }
        never_early(&format!("tick {j}"), Some(t), x)?;
        x = match work[j] {
            Work::Reset => t + p,
            Work::ResetNow => t,
            Work::ResetAfter(d) => t + d,
            Work::ResetAt(a) => a,
            _ => next_tick(b, x, t, *p),
        };
    }
    Ok(())
}
