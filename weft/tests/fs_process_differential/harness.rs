//! The machinery the fs and process families share: draws on the seeded
//! generator, `for_both!` (an interpreter written once, expanded for Tokio
//! and for weft), per-step logs, and running a script on both crates,
//! comparing the logs, shrinking a mismatching script (removing ops) and
//! reporting it with its seed.
//!
//! A script is a `Vec` of ops; an interpreter turns it into one log line
//! per op (`Step`): what a program could observe and rely on after that op,
//! compared strictly. Interpreters keep timing out of the logs themselves
//! (they wait before they look), so a difference is a difference.

use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use crate::seeded_rng::Rng;

impl Rng {
    /// One of `items`.
    pub fn one<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

/// Expands the interpreter macro `$group!` twice: in `on_tokio` (with `k`
/// = `tokio`) and in `on_weft` (with `k` = `weft`); the group sees its
/// module's imports.
macro_rules! for_both {
    ($group:ident) => {
        pub mod on_tokio {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use ::tokio as k;
            $group!();
        }

        pub mod on_weft {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use ::weft as k;
            $group!();
        }
    };
}
pub(crate) use for_both;

/// What one op showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub op: String,
    pub seen: String,
}

/// A family of scripts: how to make one, and how each crate runs it.
pub struct Family<Op> {
    pub name: &'static str,
    pub gen: fn(&mut Rng) -> Vec<Op>,
    pub tokio: fn(&[Op]) -> Vec<Step>,
    pub weft: fn(&[Op]) -> Vec<Step>,
    /// Seeds run by default (`$env_SEEDS` overrides, `$env_SEED` replays one).
    pub seeds: u64,
    /// The prefix of the environment variables: `FS_DIFF`, `PROC_DIFF`.
    pub env: &'static str,
}

/// Runs `f`, turning a panic into its only step (so a crate that panics
/// where the other does not is a difference, not a crash of the test).
fn run<Op>(f: fn(&[Op]) -> Vec<Step>, s: &[Op]) -> Vec<Step> {
    match catch_unwind(AssertUnwindSafe(|| f(s))) {
        Ok(log) => log,
        // Only that it panicked: weft's misuse messages are its own
        // (README, "Differences from Tokio").
        Err(_) => vec![Step {
            op: "(interpreter panicked)".into(),
            seen: "PANIC".into(),
        }],
    }
}

/// The first step where the two logs differ, if any.
fn first_difference(t: &[Step], w: &[Step]) -> Option<usize> {
    (0..t.len().max(w.len())).find(|&i| t.get(i) != w.get(i))
}

/// What a shrunk script must still differ at: the op's name (up to the
/// first non-identifier character), so shrinking keeps the same kind.
fn signature(log: &[Step], at: usize) -> String {
    let op = log.get(at).map(|x| x.op.clone()).unwrap_or_default();
    op.chars().take_while(|c| c.is_alphanumeric()).collect()
}

/// Scripts whose replays all differed at a step marked `~` (timing).
static TIMING_DIVERGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Where a run of `s` differed: the step, its signature, and what the
/// step showed on each (kept, as a flaky difference may not replay).
///
/// A step whose log starts with `~` is one whose outcome an interpreter
/// knows may depend on timing on either crate (a future polled once,
/// which a blocking-pool thread may or may not have finished by then): a
/// difference first seen there is only a difference if it shows on every
/// one of several replays. If every replay differs there, the script is
/// counted (`TIMING_DIVERGED`) and not compared further.
fn differs_at<Op>(fam: &Family<Op>, s: &[Op]) -> Option<(usize, String, String)> {
    let mut attempts = 0;
    let (t, w, i) = loop {
        let t = run(fam.tokio, s);
        let w = run(fam.weft, s);
        let i = first_difference(&t, &w)?;
        let racy = |x: &[Step]| x.get(i).is_some_and(|x| x.seen.starts_with('~'));
        if !(racy(&t) || racy(&w)) {
            break (t, w, i);
        }
        attempts += 1;
        if attempts == 8 {
            // Timing won on every replay (a loaded machine): the rest of
            // this script cannot be compared.
            TIMING_DIVERGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
    };
    Some(i).map(|i| {
        let show = |x: Option<&Step>| x.map_or("(no step)".to_string(), |x| x.seen.clone());
        let op = t
            .get(i)
            .or(w.get(i))
            .map(|x| x.op.clone())
            .unwrap_or_default();
        let seen = format!(
            "#{i} {op}\n    tokio: {}\n    weft:  {}",
            show(t.get(i)),
            show(w.get(i))
        );
        (i, signature(&t, i), seen)
    })
}

/// Removes ops (halves, quarters, ... single ones) while the same kind of
/// difference remains.
fn shrink<Op: Clone>(fam: &Family<Op>, s: &[Op], sig: &str) -> Vec<Op> {
    let mut cur = s.to_vec();
    let mut chunk = cur.len().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        while i + chunk <= cur.len() {
            let mut cand = cur.clone();
            cand.drain(i..i + chunk);
            if differs_at(fam, &cand).is_some_and(|(_, g, _)| g == sig) {
                cur = cand;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 {
            return cur;
        }
        chunk /= 2;
    }
}

/// The script and both logs up to the first difference (steps where
/// both only said a slot was empty are left out).
fn report<Op: Debug>(fam: &Family<Op>, seed: Option<u64>, s: &[Op], seen: &str) -> String {
    let t = run(fam.tokio, s);
    let w = run(fam.weft, s);
    let mut m = format!("\n=== {} ===\n", fam.name);
    let at = first_difference(&t, &w).unwrap_or_else(|| {
        m += "(the replay below did not differ: a flaky difference; whole logs)\n";
        t.len().max(w.len()) - 1
    });
    match seed {
        Some(seed) => m += &format!("seed {seed} ({}_SEED={seed}), shrunk script:\n", fam.env),
        None => m += "script:\n",
    }
    m += &format!("{s:#?}\nlogs up to the first difference:\n");
    for i in 0..=at {
        let (a, b) = (t.get(i), w.get(i));
        let op = a.or(b).map(|x| x.op.clone()).unwrap_or_default();
        let show = |x: Option<&Step>| x.map_or("(no step)".to_string(), |x| x.seen.clone());
        let (sa, sb) = (show(a), show(b));
        if sa == sb && sa.starts_with("(no ") {
            continue;
        }
        m += &format!("  #{i} {op}\n    tokio: {sa}\n    weft:  {sb}\n");
    }
    m += &format!("the difference as first seen:\n  {seen}\n");
    m
}

fn seeds(env: &str, default: u64) -> std::ops::Range<u64> {
    let var = |name: &str| std::env::var(format!("{env}_{name}")).ok()?.parse().ok();
    if let Some(s) = var("SEED") {
        return s..s + 1;
    }
    0..var("SEEDS").unwrap_or(default)
}

/// Runs the family's seeds; fails with one shrunk report per kind of
/// mismatch.
pub fn fuzz<Op: Clone + Debug>(fam: &Family<Op>) {
    let mut found: Vec<(String, u64, Vec<Op>, String, usize)> = Vec::new();
    let mut runs = 0u64;
    for seed in seeds(fam.env, fam.seeds) {
        runs += 1;
        let s = (fam.gen)(&mut Rng::new(seed));
        let Some((_, sig, seen)) = differs_at(fam, &s) else {
            continue;
        };
        if let Some(e) = found.iter_mut().find(|e| e.0 == sig) {
            e.4 += 1;
            continue;
        }
        let small = shrink(fam, &s, &sig);
        let seen = differs_at(fam, &small).map_or(seen, |d| d.2);
        found.push((sig, seed, small, seen, 1));
    }
    eprintln!(
        "{}: {runs} seeds, {} kinds of mismatch; {} scripts (this test, all families so far) \
         left uncompared after timing won at a `~` step on every replay",
        fam.name,
        found.len(),
        TIMING_DIVERGED.load(std::sync::atomic::Ordering::Relaxed)
    );
    if !found.is_empty() {
        let mut m = String::new();
        for (_, seed, s, seen, n) in &found {
            m += &report(fam, Some(*seed), s, seen);
            m += &format!("({n} of the {runs} scripts showed this kind of mismatch)\n");
        }
        panic!("{} differs from Tokio:{m}", fam.name);
    }
}

/// Fails with a report if the script shows a mismatch (the regression
/// tests' check).
pub fn assert_same<Op: Clone + Debug>(fam: &Family<Op>, s: Vec<Op>) {
    if let Some((_, _, seen)) = differs_at(fam, &s) {
        panic!("{}", report(fam, None, &s, &seen));
    }
}
