//! The machinery every family of scripts shares: the seeded generator,
//! counting wakers, `drive` (polls one future by hand until it is ready,
//! firing the wake-ups the mocks deferred), the per-step log, and running a
//! script on both crates, comparing the logs, shrinking a mismatching script
//! and reporting it with its seed (`fuzz`, `assert_same`). Also `for_both!`,
//! which expands an interpreter once for Tokio and once for weft.
//!
//! Each step logs two strings: `hard`, what a program can observe and rely
//! on (results, data, error kinds, documented state), compared strictly;
//! and `info`, what is implementation detail (poll counts, how many calls
//! and in what chunks the inner reader or writer saw), only counted.

use std::cell::RefCell;
use std::fmt::Debug;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

// ---------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------

pub use crate::seeded_rng::Rng;

impl Rng {
    /// A size that is usually small, sometimes larger.
    pub fn size(&mut self) -> usize {
        match self.pick(&[6, 3, 1]) {
            0 => self.range(1, 8),
            1 => self.range(1, 40),
            _ => self.range(1, 300),
        }
    }
}

// ---------------------------------------------------------------------------
// Wakers and driving futures by hand
// ---------------------------------------------------------------------------

#[derive(Default)]
pub struct Count(AtomicUsize);

impl Count {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn counting_waker() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    let waker = Waker::from(Arc::clone(&count));
    (count, waker)
}

thread_local! {
    /// Wakers a mock was handed with a `Pending` that wakes "later": they
    /// are woken by `fire_deferred`, between polls.
    static DEFERRED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
}

pub fn defer_wake(w: &Waker) {
    DEFERRED.with(|d| d.borrow_mut().push(w.clone()));
}

pub fn fire_deferred() {
    let ws = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    for w in ws {
        w.wake();
    }
}

pub fn clear_deferred() {
    DEFERRED.with(|d| d.borrow_mut().clear());
}

/// How driving one future ended.
pub enum Driven<T> {
    Ready(T),
    /// Dropped after the given number of `Pending` polls (a cancellation).
    Cancelled,
    /// `Pending`, and nothing woke it (the program would hang).
    Stalled,
}

/// Polls `fut` until it is ready, firing deferred wakes between polls, the
/// way an executor would. With `cancel_after = Some(k)` it is dropped after
/// its `k`-th `Pending`. `polls` gets the number of polls (informational).
pub fn drive<F: Future>(
    fut: F,
    cancel_after: Option<usize>,
    polls: &mut usize,
) -> Driven<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let (count, waker) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut pendings = 0;
    loop {
        let seen = count.get();
        *polls += 1;
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return Driven::Ready(v);
        }
        pendings += 1;
        if cancel_after == Some(pendings) {
            return Driven::Cancelled;
        }
        fire_deferred();
        if count.get() == seen || pendings > 100_000 {
            return Driven::Stalled;
        }
    }
}

/// The result of an I/O op driven by `run_op`.
pub enum Res<T> {
    Ok(T),
    Err(std::io::ErrorKind),
    Cancelled,
    Stalled,
}

impl<T> Res<T> {
    /// `Ok(..)` (formatted with `ok`), `Err(Kind)`, `Cancelled`, `Stalled`.
    pub fn fmt(self, ok: impl FnOnce(T) -> String) -> String {
        match self {
            Res::Ok(v) => format!("Ok({})", ok(v)),
            Res::Err(k) => format!("Err({k:?})"),
            Res::Cancelled => "Cancelled".into(),
            Res::Stalled => "Stalled".into(),
        }
    }
}

/// `drive` for an I/O future.
pub fn run_op<T, F: Future<Output = std::io::Result<T>>>(
    fut: F,
    cancel_after: Option<usize>,
    polls: &mut usize,
) -> Res<T> {
    match drive(fut, cancel_after, polls) {
        Driven::Ready(Ok(v)) => Res::Ok(v),
        Driven::Ready(Err(e)) => Res::Err(e.kind()),
        Driven::Cancelled => Res::Cancelled,
        Driven::Stalled => Res::Stalled,
    }
}

/// `run_op`, formatted.
pub fn drive_fmt<T, F: Future<Output = std::io::Result<T>>>(
    fut: F,
    cancel_after: Option<usize>,
    polls: &mut usize,
    ok: impl FnOnce(T) -> String,
) -> String {
    run_op(fut, cancel_after, polls).fmt(ok)
}

/// Bytes as a short readable string: printable ASCII as is, others `\xNN`.
pub fn show(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            0x20..=0x7e if c != b'\\' => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    format!("\"{s}\"")
}

// ---------------------------------------------------------------------------
// Logs, comparison, shrinking, reporting
// ---------------------------------------------------------------------------

/// What one step of a script showed.
#[derive(Clone, Debug, Default)]
pub struct Step {
    pub op: String,
    /// Compared strictly.
    pub hard: String,
    /// Implementation detail: only counted when it differs.
    pub info: String,
    /// For each live future of a script that keeps some (by slot): woken
    /// since its last poll.
    pub woken: Vec<(usize, bool)>,
}

impl Step {
    pub fn new(op: impl Debug, hard: String, info: String) -> Step {
        Step {
            op: format!("{op:?}"),
            hard,
            info,
            woken: Vec::new(),
        }
    }
}

/// A script that can be made smaller: it has some lists (`parts`) whose
/// elements can be removed.
pub trait Shrink: Clone + Debug {
    fn parts(&self) -> Vec<usize>;
    fn without(&self, part: usize, at: usize, n: usize) -> Self;
}

/// Expands the interpreter macro `$group!` (written once, in terms of a
/// crate `k`) twice: in `on_tokio` (`k` = `tokio`) and in `on_weft`
/// (`k` = `weft`). The group sees its module's imports.
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

pub struct Family<S> {
    pub name: &'static str,
    pub gen: fn(&mut Rng) -> S,
    pub tokio: fn(&S) -> Vec<Step>,
    pub weft: fn(&S) -> Vec<Step>,
    /// For scripts with live futures: the script cut after step `i`, then
    /// a poll of slot `slot` (to tell whether a wake-up Tokio gave and weft
    /// did not mattered).
    pub probe: Option<fn(&S, usize, usize) -> S>,
    /// Seeds run by default (`IO_DIFF_SEEDS` overrides).
    pub seeds: u64,
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `catch_unwind`, without the panic hook's message for a panic caught
/// here (other threads' and other code's panics still print).
pub fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                prev(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let out = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    out
}

fn run<S>(f: fn(&S) -> Vec<Step>, s: &S) -> Vec<Step> {
    clear_deferred();
    let out = quietly(|| f(s));
    clear_deferred();
    match out {
        Ok(log) => log,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            vec![Step {
                op: "(interpreter panicked)".into(),
                hard: "PANIC".into(),
                info: msg,
                woken: Vec::new(),
            }]
        }
    }
}

struct Finding {
    step: usize,
    detail: String,
}

struct Outcome {
    finding: Option<Finding>,
    /// Steps whose `info` differed (not failures).
    info_diffs: usize,
    first_info: Option<String>,
}

fn compare<S>(fam: &Family<S>, s: &S) -> Outcome {
    let t = run(fam.tokio, s);
    let w = run(fam.weft, s);
    let mut o = Outcome {
        finding: None,
        info_diffs: 0,
        first_info: None,
    };
    let mut prev_tokio_only = Vec::new();
    for i in 0..t.len().max(w.len()) {
        let (Some(a), Some(b)) = (t.get(i), w.get(i)) else {
            o.finding = Some(Finding {
                step: i,
                detail: "one log is shorter".into(),
            });
            return o;
        };
        if a.hard != b.hard || a.op != b.op || a.woken.len() != b.woken.len() {
            o.finding = Some(Finding {
                step: i,
                detail: format!("tokio: {}\n  weft:  {}", a.hard, b.hard),
            });
            return o;
        }
        let note = |o: &mut Outcome, what: String| {
            o.info_diffs += 1;
            if o.first_info.is_none() {
                o.first_info = Some(format!("step {i} {}: {what}", a.op));
            }
        };
        if a.info != b.info {
            note(&mut o, format!("tokio [{}] weft [{}]", a.info, b.info));
        }
        // Wake-ups: one weft gives and Tokio does not is allowed (a
        // spurious wake: counted); one Tokio gives and weft does not is a
        // lost wake-up if polling then shows it mattered.
        let mut tokio_only = Vec::new();
        for (&(slot, tw), &(_, ww)) in a.woken.iter().zip(&b.woken) {
            if tw && !ww {
                tokio_only.push(slot);
                if prev_tokio_only.contains(&slot) {
                    continue;
                }
                let probe = fam.probe.expect("a family with live futures has a probe");
                let p = probe(s, i, slot);
                let (t2, w2) = (run(fam.tokio, &p), run(fam.weft, &p));
                let ta = t2.get(i + 1).map(|x| x.hard.clone()).unwrap_or_default();
                let wa = w2.get(i + 1).map(|x| x.hard.clone()).unwrap_or_default();
                if ta != "Pending" || ta != wa {
                    o.finding = Some(Finding {
                        step: i,
                        detail: format!(
                            "Tokio woke future {slot}, weft did not; polled right after: \
                             tokio {ta}, weft {wa}"
                        ),
                    });
                    return o;
                }
                note(&mut o, format!("Tokio-only wake of slot {slot} (spurious)"));
            } else if ww && !tw {
                note(&mut o, format!("weft-only wake of slot {slot} (spurious)"));
            }
        }
        prev_tokio_only = tokio_only;
    }
    o
}

/// The op at the finding's step (its name up to the first non-identifier
/// character): what a shrunk script must still differ at.
fn signature<S>(fam: &Family<S>, s: &S, f: &Finding) -> String {
    let t = run(fam.tokio, s);
    let op = t.get(f.step).map(|x| x.op.clone()).unwrap_or_default();
    op.chars().take_while(|c| c.is_alphanumeric()).collect()
}

/// Removes elements of the script's lists (halves, quarters, ... single
/// ones) while `keep` holds.
fn shrink<S: Shrink>(s: &S, keep: impl Fn(&S) -> bool) -> S {
    let mut cur = s.clone();
    loop {
        let mut changed = false;
        for part in 0..cur.parts().len() {
            let mut chunk = cur.parts()[part].div_ceil(2).max(1);
            loop {
                let mut i = 0;
                while i + chunk <= cur.parts()[part] {
                    let cand = cur.without(part, i, chunk);
                    if keep(&cand) {
                        cur = cand;
                        changed = true;
                    } else {
                        i += chunk;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk /= 2;
            }
        }
        if !changed {
            return cur;
        }
    }
}

fn report<S: Debug>(fam: &Family<S>, seed: Option<u64>, s: &S, f: &Finding) -> String {
    let t = run(fam.tokio, s);
    let w = run(fam.weft, s);
    let mut m = format!("\n=== {} ===\n", fam.name);
    match seed {
        Some(seed) => m += &format!("seed {seed} (IO_DIFF_SEED={seed}), shrunk script:\n"),
        None => m += "script:\n",
    }
    m += &format!("{s:#?}\n");
    m += "logs up to the first difference:\n";
    for i in 0..=f.step {
        let (a, b) = (t.get(i), w.get(i));
        let op = a.or(b).map(|x| x.op.clone()).unwrap_or_default();
        m += &format!("  #{i} {op}\n");
        let show = |x: Option<&Step>| match x {
            None => "(no step)".to_string(),
            Some(x) if x.woken.is_empty() => format!("{}   [info: {}]", x.hard, x.info),
            Some(x) => format!("{}  woken={:?}   [info: {}]", x.hard, x.woken, x.info),
        };
        m += &format!("    tokio: {}\n    weft:  {}\n", show(a), show(b));
    }
    m += &format!("difference at step {}: {}\n", f.step, f.detail);
    m
}

fn seeds(default: u64) -> std::ops::Range<u64> {
    if let Some(s) = std::env::var("IO_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return s..s + 1;
    }
    let n = std::env::var("IO_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    0..n
}

/// Runs the family's seeds; fails with a report of every kind of mismatch
/// (one shrunk example each).
pub fn fuzz<S: Shrink>(fam: &Family<S>) {
    let mut found: Vec<(String, u64, S, Finding, usize)> = Vec::new();
    let (mut runs, mut info_steps, mut info_runs) = (0u64, 0usize, 0usize);
    let mut first_info = None;
    for seed in seeds(fam.seeds) {
        runs += 1;
        let s = (fam.gen)(&mut Rng::new(seed));
        let o = compare(fam, &s);
        info_steps += o.info_diffs;
        info_runs += usize::from(o.info_diffs > 0);
        if first_info.is_none() {
            first_info = o.first_info.map(|x| format!("seed {seed}: {x}"));
        }
        let Some(f) = o.finding else { continue };
        let sig = signature(fam, &s, &f);
        if let Some(e) = found.iter_mut().find(|e| e.0 == sig) {
            e.4 += 1;
            continue;
        }
        let small = shrink(&s, |c| {
            compare(fam, c)
                .finding
                .is_some_and(|g| signature(fam, c, &g) == sig)
        });
        let f = compare(fam, &small)
            .finding
            .expect("a shrunk script still differs");
        found.push((sig, seed, small, f, 1));
    }
    eprintln!(
        "{}: {runs} seeds; informational differences: {info_steps} steps in {info_runs} \
         scripts{}; {} kinds of mismatch",
        fam.name,
        first_info
            .map(|x| format!(" (first: {x})"))
            .unwrap_or_default(),
        found.len()
    );
    if !found.is_empty() {
        let mut m = String::new();
        for (_, seed, s, f, n) in &found {
            m += &report(fam, Some(*seed), s, f);
            m += &format!("({n} of the {runs} scripts showed this kind of mismatch)\n");
        }
        panic!("{} differs from Tokio:{m}", fam.name);
    }
}

/// Fails with a report if the script shows a mismatch.
pub fn assert_same<S: Debug>(fam: &Family<S>, s: S) {
    if let Some(f) = compare(fam, &s).finding {
        panic!("{}", report(fam, None, &s, &f));
    }
}

/// Removes `n` elements at `at` from a list (for `Shrink::without`).
pub fn cut<T: Clone>(v: &[T], at: usize, n: usize) -> Vec<T> {
    let mut v = v.to_vec();
    v.drain(at..at + n);
    v
}

/// A boxed, type-erased future (the slots of the pipe scripts).
pub type BoxFut = Pin<Box<dyn Future<Output = String>>>;
