//! Differential test of `weft::time` and `weft::task` against crates.io
//! Tokio: random scripts of timers, intervals, timeouts, `select!`, spawns,
//! joins and aborts run on a paused `current_thread` runtime of each crate
//! (`start_paused(true)`: virtual time, which jumps to the next timer when
//! every task waits), and the two logs are compared.
//!
//! The parts, one idea per file under `time_task_differential/`:
//! - `rng.rs`: the seeded xorshift generator;
//! - `script.rs`: the scripts (tasks, steps) and their generator;
//! - `log.rs`: what a run records (virtual µs, task, step, observation);
//! - `interp.rs`: the interpreter, written once, expanded for each crate;
//! - `facts.rs`: what Tokio documents, checked on each log by itself;
//! - `compare.rs`: the verdict on two logs (same, a real mismatch, or a
//!   difference that an ordering Tokio leaves open may explain);
//! - `shrink.rs`: making a failing script small.
//!
//! This file owns the entry points: the seeded random run and the
//! regressions for the differences it found (all fixed in weft).
//!
//! Environment:
//! - `TIME_DIFF_SEEDS=N`: N seeds (default 2,500, a few seconds in a debug
//!   build); `TIME_DIFF_FIRST=S`: start at seed S;
//! - `TIME_DIFF_SEED=S`: only seed S, printing both logs;
//! - `TIME_DIFF_SKIP=Kind,Kind`: leave those step kinds out (default:
//!   none);
//! - `TIME_DIFF_SUB_MS_TIMERS=0`: timers in whole milliseconds only
//!   (default: some have a sub-millisecond part);
//! - `TIME_DIFF_SUB_MS_CLOCK=0`: `advance` by whole milliseconds only
//!   (default: sub-millisecond amounts too);
//! - `TIME_DIFF_TRACE=1`: print each seed before running it.
//!
//! A failure prints, per kind of difference, how many seeds showed it, the
//! first seed, and that seed's script shrunk, with both logs. Differences
//! the verdict cannot pin on weft (see `compare.rs`) are counted and
//! printed as informational, never failed. One case it does not yet see
//! as such, beyond the default seeds: seed 17,108 fails on a `JoinSet`'s
//! join order that only follows from the order in which tasks that
//! yielded at the same instant resume (Tokio resumes the last-yielded
//! first; it documents no order); the default run passes.
#![cfg(not(loom))]

#[path = "time_task_differential/compare.rs"]
mod compare;
#[path = "time_task_differential/facts.rs"]
mod facts;
#[path = "time_task_differential/interp.rs"]
mod interp;
#[path = "time_task_differential/log.rs"]
mod log;
#[path = "time_task_differential/rng.rs"]
mod rng;
#[path = "time_task_differential/script.rs"]
mod script;
#[path = "support/seeded_rng.rs"]
mod seeded_rng;
#[path = "time_task_differential/shrink.rs"]
mod shrink;

use compare::Verdict;
use script::{GenCfg, Script};
use std::collections::BTreeMap;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
    )
}

fn cfg_from_env() -> GenCfg {
    let skip = match std::env::var("TIME_DIFF_SKIP") {
        Ok(v) => v
            .split(',')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        Err(_) => Vec::new(),
    };
    GenCfg {
        sub_ms_timers: env_u64("TIME_DIFF_SUB_MS_TIMERS").unwrap_or(1) != 0,
        sub_ms_clock: env_u64("TIME_DIFF_SUB_MS_CLOCK").unwrap_or(1) != 0,
        skip,
    }
}

#[test]
fn time_and_tasks_match_tokio() {
    let cfg = cfg_from_env();
    if let Some(seed) = env_u64("TIME_DIFF_SEED") {
        let s = script::generate(seed, &cfg);
        let o = compare::run(&s);
        eprintln!("seed {seed}\n{}", compare::describe(&s, &o));
        assert!(
            matches!(o.verdict, Verdict::Same | Verdict::Tie(_)),
            "seed {seed}: {:?}",
            o.verdict
        );
        return;
    }
    let first = env_u64("TIME_DIFF_FIRST").unwrap_or(0);
    let n = env_u64("TIME_DIFF_SEEDS").unwrap_or(2_500);
    let trace = env_u64("TIME_DIFF_TRACE").is_some();
    let mut same = 0u64;
    // Per kind or signature: (first seed, count).
    let mut ties: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut failures: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for seed in first..first + n {
        if trace {
            eprintln!("seed {seed}");
        }
        let s = script::generate(seed, &cfg);
        let v = compare::run(&s).verdict;
        let sig = v.signature();
        match (&v, sig) {
            (Verdict::Same, _) => same += 1,
            (Verdict::Tie(d), _) => ties.entry(d.kind.clone()).or_insert((seed, 0)).1 += 1,
            (Verdict::CheckerBug(m), _) => panic!(
                "seed {seed}: Tokio's run breaks a checked fact, so the test is wrong: {m}\n{s:?}"
            ),
            (_, sig) => failures.entry(sig.unwrap()).or_insert((seed, 0)).1 += 1,
        }
    }
    let total = |m: &BTreeMap<String, (u64, u64)>| m.values().map(|v| v.1).sum::<u64>();
    eprintln!(
        "time_task_differential: seeds {first}..{}: {same} same, {} informational \
         (ordering or post-`advance` latitude Tokio leaves open), {} mismatches ({cfg:?})",
        first + n,
        total(&ties),
        total(&failures),
    );
    for (kind, (seed, count)) in &ties {
        eprintln!("  informational: {count} first differ at a {kind} step (e.g. seed {seed})");
    }
    if failures.is_empty() {
        return;
    }
    let mut report = String::new();
    for (sig, (seed, count)) in &failures {
        let small = shrink::shrink(&script::generate(*seed, &cfg));
        let o = compare::run(&small);
        report += &format!(
            "\n=== {sig}: {count} seeds, first {seed}; shrunk:\n{}",
            compare::describe(&small, &o)
        );
    }
    panic!("weft differs from Tokio:{report}");
}

/// Runs `script` on both runtimes; panics with both logs unless they are
/// the same task by task.
fn assert_same(script: Script) {
    let o = compare::run(&script);
    if o.verdict != Verdict::Same {
        panic!("{}", compare::describe(&script, &o));
    }
}

// ---------------------------------------------------------------------------
// Differences from Tokio this test found, fixed in weft: each a minimal
// script that pins Tokio's behaviour down.
// ---------------------------------------------------------------------------

/// A `JoinSet` returns its tasks "in the order they complete" (Tokio's
/// `JoinSet` docs). Two members that both finished before `join_next`:
/// the first to finish (task 1) is joined first (weft joined the last,
/// also through `try_join_next`).
#[test]
fn join_set_joins_tasks_in_the_order_they_finished() {
    use script::{Root, Step::*};
    assert_same(Script {
        root: Root::BlockOn,
        tasks: vec![
            vec![SetSpawn(1), SetSpawn(2), Sleep(1000), JoinNext],
            vec![],
            vec![],
        ],
    });
}

/// The same with members that finished before the set's first join: the
/// task that finished first (task 2, at once) is joined before the one
/// that finished at 1 ms (weft registered a member's waker at its first
/// join, so such members came out in insertion order).
#[test]
fn join_set_joins_members_that_finished_before_any_join_in_finishing_order() {
    use script::{Root, Step::*};
    assert_same(Script {
        root: Root::Spawned,
        tasks: vec![
            vec![SetSpawn(1), SetSpawn(2), SleepUntil(3000), TryJoinNext],
            vec![Sleep(1000)],
            vec![],
        ],
    });
}

/// A `Sleep` polled once (its timer armed), then left while the task
/// sleeps past its deadline on another timer: `is_elapsed()` is true (its
/// timer fired; "a Sleep instance is elapsed when the requested duration
/// has elapsed"). weft's was false until the `Sleep` itself was polled to
/// completion.
#[test]
fn sleep_is_elapsed_once_its_timer_fired() {
    use script::{Root, Step::*};
    assert_same(Script {
        root: Root::BlockOn,
        tasks: vec![vec![IsElapsed {
            first: 1000,
            poll: true,
            wait: 2000,
        }]],
    });
}

/// Tokio's `advance` is an `async fn`: the clock moves when the future is
/// first polled, so `let f = advance(d); Instant::now()` does not see the
/// new time yet (weft's moved it when `advance(d)` was called).
#[test]
fn advance_moves_the_clock_when_awaited() {
    use script::{Root, Step::*};
    assert_same(Script {
        root: Root::BlockOn,
        tasks: vec![vec![AdvanceLazy(3000)]],
    });
}

/// Auto-advance from a clock off a millisecond boundary: after
/// `advance(500 µs)`, `sleep(1 ms)` (due at 1.5 ms, so at tick 2) wakes at
/// 2.5 ms (Tokio's driver advances the clock by the whole milliseconds
/// between the current tick and the timer's: 2 ms; weft's moved it to the
/// timer's tick, 2.0 ms).
#[test]
fn auto_advance_from_a_sub_millisecond_clock_keeps_the_offset() {
    use script::{Root, Step::*};
    assert_same(Script {
        root: Root::BlockOn,
        tasks: vec![vec![Advance(500), Sleep(1000)]],
    });
}
