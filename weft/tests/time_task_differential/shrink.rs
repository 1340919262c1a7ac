//! Shrinking a failing script to a small one that fails the same way (same
//! [`Verdict::signature`](crate::compare::Verdict::signature)): steps are
//! removed, interval work is cut, durations are zeroed, rounded to whole
//! milliseconds and halved, while the failure remains; tasks no longer
//! spawned are then dropped and the rest renumbered.

use crate::compare;
use crate::script::{Fut, Root, Script, Start, Step, Us, Work, FAR};

/// A smaller script with the same failure signature as `script`.
pub fn shrink(script: &Script) -> Script {
    let Some(want) = compare::run(script).verdict.signature() else {
        return script.clone();
    };
    let fails = |s: &Script| compare::run(s).verdict.signature().as_ref() == Some(&want);
    let mut best = script.clone();
    while let Some(smaller) = candidates(&best).into_iter().find(|c| fails(c)) {
        best = smaller;
    }
    let compacted = compact(&best);
    if fails(&compacted) {
        compacted
    } else {
        best
    }
}

/// Every one-edit simplification of `s`, most drastic first.
fn candidates(s: &Script) -> Vec<Script> {
    let mut out = Vec::new();
    if s.root == Root::BlockOn {
        out.push(Script {
            root: Root::Spawned,
            ..s.clone()
        });
    }
    for t in 0..s.tasks.len() {
        for i in 0..s.tasks[t].len() {
            let mut c = s.clone();
            c.tasks[t].remove(i);
            out.push(c);
        }
    }
    for t in 0..s.tasks.len() {
        for i in 0..s.tasks[t].len() {
            for step in simpler(&s.tasks[t][i]) {
                let mut c = s.clone();
                c.tasks[t][i] = step;
                out.push(c);
            }
        }
    }
    out
}

/// Smaller values for a duration: 0, whole milliseconds, half (`FAR`
/// only to 0 and a second).
fn less(d: Us) -> Vec<Us> {
    if d == FAR {
        return vec![0, 1_000_000];
    }
    let mut v = vec![0, d / 1000 * 1000, d / 2 / 1000 * 1000, d / 2];
    // Whole milliseconds stay whole (a sub-millisecond `advance` would
    // bring in another difference).
    let whole = |x: Us| x / 1000 * 1000 == x;
    v.retain(|&x| x < d && (!whole(d) || whole(x)));
    v.dedup();
    v
}

fn less_fut(f: Fut) -> Vec<Fut> {
    match f {
        Fut::Sleep(d) => less(d).into_iter().map(Fut::Sleep).collect(),
        Fut::Until(a) => less(a).into_iter().map(Fut::Until).collect(),
        Fut::Yield | Fut::Never => Vec::new(),
    }
}

fn less_work(w: Work) -> Vec<Work> {
    let mut v: Vec<Work> = match w {
        Work::Advance(d) => less(d).into_iter().map(Work::Advance).collect(),
        Work::Sleep(d) => less(d).into_iter().map(Work::Sleep).collect(),
        Work::ResetAfter(d) => less(d).into_iter().map(Work::ResetAfter).collect(),
        Work::ResetAt(a) => less(a).into_iter().map(Work::ResetAt).collect(),
        _ => Vec::new(),
    };
    if w != Work::Nothing {
        v.insert(0, Work::Nothing);
    }
    v
}

/// One-field simplifications of a step.
fn simpler(step: &Step) -> Vec<Step> {
    match step {
        Step::Sleep(d) => less(*d).into_iter().map(Step::Sleep).collect(),
        Step::SleepUntil(a) => less(*a).into_iter().map(Step::SleepUntil).collect(),
        Step::Advance(d) => less(*d).into_iter().map(Step::Advance).collect(),
        Step::AdvanceLazy(d) => less(*d).into_iter().map(Step::AdvanceLazy).collect(),
        &Step::Reset { first, when, to } => {
            let mut v: Vec<Step> = less(first)
                .into_iter()
                .map(|first| Step::Reset { first, when, to })
                .collect();
            v.extend(
                less(to)
                    .into_iter()
                    .map(|to| Step::Reset { first, when, to }),
            );
            v
        }
        &Step::IsElapsed { first, poll, wait } => {
            let mut v: Vec<Step> = less(first)
                .into_iter()
                .map(|first| Step::IsElapsed { first, poll, wait })
                .collect();
            v.extend(
                less(wait)
                    .into_iter()
                    .map(|wait| Step::IsElapsed { first, poll, wait }),
            );
            if poll {
                v.push(Step::IsElapsed {
                    first,
                    poll: false,
                    wait,
                });
            }
            v
        }
        &Step::Timeout { limit, inner } => {
            let mut v: Vec<Step> = less(limit)
                .into_iter()
                .map(|limit| Step::Timeout { limit, inner })
                .collect();
            v.extend(
                less_fut(inner)
                    .into_iter()
                    .map(|inner| Step::Timeout { limit, inner }),
            );
            v
        }
        &Step::TimeoutAt { at, inner } => {
            let mut v: Vec<Step> = less(at)
                .into_iter()
                .map(|at| Step::TimeoutAt { at, inner })
                .collect();
            v.extend(
                less_fut(inner)
                    .into_iter()
                    .map(|inner| Step::TimeoutAt { at, inner }),
            );
            v
        }
        &Step::Select(a, b) => {
            let mut v: Vec<Step> = less_fut(a)
                .into_iter()
                .map(|a| Step::Select(a, b))
                .collect();
            v.extend(less_fut(b).into_iter().map(|b| Step::Select(a, b)));
            v
        }
        Step::Interval {
            start,
            period,
            behavior,
            work,
        } => {
            let with = |start: Start, period: Us, behavior, work: Vec<Work>| Step::Interval {
                start,
                period,
                behavior,
                work,
            };
            let mut v = Vec::new();
            for j in 0..work.len() {
                if work.len() > 1 {
                    let mut w = work.clone();
                    w.remove(j);
                    v.push(with(*start, *period, *behavior, w));
                }
                for x in less_work(work[j]) {
                    let mut w = work.clone();
                    w[j] = x;
                    v.push(with(*start, *period, *behavior, w));
                }
            }
            if behavior.is_some() {
                v.push(with(*start, *period, None, work.clone()));
            }
            match *start {
                Start::Plain => {}
                Start::In(d) | Start::Ago(d) => {
                    v.push(with(Start::Plain, *period, *behavior, work.clone()));
                    for d in less(d) {
                        let s = if matches!(start, Start::In(_)) {
                            Start::In(d)
                        } else {
                            Start::Ago(d)
                        };
                        v.push(with(s, *period, *behavior, work.clone()));
                    }
                }
            }
            for p in less(*period).into_iter().filter(|&p| p > 0) {
                v.push(with(*start, p, *behavior, work.clone()));
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Drops the tasks no step spawns any more, renumbering the rest in
/// depth-first order from the root.
pub fn compact(s: &Script) -> Script {
    fn visit(s: &Script, t: usize, order: &mut Vec<usize>) {
        order.push(t);
        for step in &s.tasks[t] {
            if let Some(c) = step.child() {
                visit(s, c, order);
            }
        }
    }
    let mut order = Vec::new();
    visit(s, 0, &mut order);
    let new_id = |old: usize| order.iter().position(|&o| o == old).unwrap();
    let tasks = order
        .iter()
        .map(|&old| {
            s.tasks[old]
                .iter()
                .map(|step| match *step {
                    Step::Spawn(c) => Step::Spawn(new_id(c)),
                    Step::SetSpawn(c) => Step::SetSpawn(new_id(c)),
                    ref other => other.clone(),
                })
                .collect()
        })
        .collect();
    Script {
        root: s.root,
        tasks,
    }
}
