//! The machinery every primitive shares: the seeded generator scripts are
//! drawn from, futures polled by hand with counting wakers (`Slots`), the
//! log of what each step showed, and running a script on both crates,
//! comparing the logs, shrinking a mismatching script and reporting it
//! (`fuzz`, `assert_same`). Also `for_both!`, which expands an interpreter
//! group once for Tokio and once for weft.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// How many future slots a script works with.
const SLOTS: usize = 4;

// ---------------------------------------------------------------------------
// Randomness, wakers, slots, steps
// ---------------------------------------------------------------------------

pub use crate::seeded_rng::Rng;

impl Rng {
    pub fn slot(&mut self) -> usize {
        self.below(SLOTS as u64) as usize
    }

    /// An index into a list of held items (taken modulo the list's length).
    pub fn idx(&mut self) -> usize {
        self.below(4) as usize
    }

    pub fn len(&mut self) -> usize {
        4 + self.below(45) as usize
    }
}

#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A live future with its own counting waker.
pub struct Slot<F> {
    pub fut: F,
    count: Arc<Count>,
    waker: Waker,
    /// The wake count when the future was last polled.
    seen: usize,
}

impl<F: Future + Unpin> Slot<F> {
    fn new(fut: F) -> Slot<F> {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        Slot {
            fut,
            count,
            waker,
            seen: 0,
        }
    }

    /// Polls with the slot's waker, or with a new one if `fresh` (the old
    /// one is then dropped here, and its wakes no longer count).
    fn poll(&mut self, fresh: bool) -> Poll<F::Output> {
        if fresh {
            self.count = Arc::new(Count::default());
            self.waker = Waker::from(Arc::clone(&self.count));
        }
        self.seen = self.count.0.load(Ordering::SeqCst);
        Pin::new(&mut self.fut).poll(&mut Context::from_waker(&self.waker))
    }

    /// Woken since its last poll (or ever, if never polled).
    fn woken(&self) -> bool {
        self.count.0.load(Ordering::SeqCst) > self.seen
    }
}

pub struct Slots<F>(Vec<Option<Slot<F>>>);

impl<F: Future + Unpin> Slots<F> {
    pub fn new() -> Slots<F> {
        Slots((0..SLOTS).map(|_| None).collect())
    }

    /// Drops the future in slot `i` (if any), then puts `make()` there.
    pub fn create(&mut self, i: usize, make: impl FnOnce() -> F) -> String {
        let had = self.0[i].take().is_some();
        self.0[i] = Some(Slot::new(make()));
        if had {
            "created (old dropped)"
        } else {
            "created"
        }
        .to_string()
    }

    pub fn poll(&mut self, i: usize, fresh: bool, fmt: impl FnOnce(F::Output) -> String) -> String {
        let Some(slot) = self.0[i].as_mut() else {
            return "empty".into();
        };
        match slot.poll(fresh) {
            Poll::Pending => "Pending".into(),
            Poll::Ready(v) => {
                self.0[i] = None;
                format!("Ready({})", fmt(v))
            }
        }
    }

    pub fn drop_fut(&mut self, i: usize) -> String {
        if self.0[i].take().is_some() {
            "dropped"
        } else {
            "empty"
        }
        .into()
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut Slot<F>> {
        self.0[i].as_mut()
    }

    pub fn is_empty(&self, i: usize) -> bool {
        self.0[i].is_none()
    }

    fn woken(&self) -> Vec<(usize, bool)> {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.woken())))
            .collect()
    }

    pub fn clear(&mut self) {
        for s in &mut self.0 {
            *s = None;
        }
    }
}

/// What one step of a script showed.
#[derive(Clone, Debug)]
pub struct Step {
    op: String,
    /// The op's result, then ` | ` and the state line.
    out: String,
    /// For each live future: woken since its last poll.
    woken: Vec<(usize, bool)>,
}

pub fn record<F: Future + Unpin>(
    log: &mut Vec<Step>,
    op: &impl Debug,
    out: String,
    state: String,
    slots: &Slots<F>,
) {
    log.push(Step {
        op: format!("{op:?}"),
        out: format!("{out} | {state}"),
        woken: slots.woken(),
    });
}

/// Removes and returns held item `h` (modulo the number held).
pub fn take<T>(held: &mut Vec<T>, h: usize) -> Option<T> {
    if held.is_empty() {
        None
    } else {
        let i = h % held.len();
        Some(held.remove(i))
    }
}

/// A script: a configuration (initial permits, capacity, ...) and ops.
#[derive(Clone, Debug)]
pub struct Script<C, O> {
    pub cfg: C,
    pub ops: Vec<O>,
}

/// Ops that can poll a slot (used to check a wake Tokio gave and weft
/// did not).
pub trait PollOp: Clone + Debug {
    fn poll(slot: usize) -> Self;
}

/// Expands the interpreter group `$group!` (written once, in terms of a
/// crate `k`) twice: in `on_tokio` (with `k` = `tokio`) and in `on_weft`
/// (with `k` = `weft`). The group sees its module's imports.
///
/// A future that uses a receiver keeps it mutably borrowed (a `RefCell`
/// borrow held across its awaits), as `&mut self` methods do: another op on
/// that receiver meanwhile finds it busy (and says so) instead of aliasing it.
macro_rules! for_both {
    ($group:ident) => {
        #[allow(clippy::await_holding_refcell_ref)]
        pub mod on_tokio {
            use super::*;
            use ::tokio as k;
            $group!();
        }

        #[allow(clippy::await_holding_refcell_ref)]
        pub mod on_weft {
            use super::*;
            use ::weft as k;
            $group!();
        }
    };
}
pub(crate) use for_both;

pub type Runner<C, O> = fn(&Script<C, O>, &mut Vec<Step>);

pub struct Prim<C, O> {
    pub name: &'static str,
    pub gen: fn(&mut Rng) -> Script<C, O>,
    pub tokio: Runner<C, O>,
    pub weft: Runner<C, O>,
}

fn run<C, O>(f: Runner<C, O>, s: &Script<C, O>) -> Vec<Step> {
    let mut log = Vec::new();
    if let Err(e) = catch_unwind(AssertUnwindSafe(|| f(s, &mut log))) {
        let msg = e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        log.push(Step {
            op: "(panic)".into(),
            out: format!("PANIC: {msg}"),
            woken: Vec::new(),
        });
    }
    log
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Different results or state after a step.
    Output,
    /// Tokio woke a future weft did not, and polling it then shows Tokio's
    /// wake mattered.
    LostWake,
}

#[derive(Clone, Debug)]
struct Finding {
    kind: Kind,
    step: usize,
    detail: String,
}

impl Finding {
    /// What a shrunk script must still show: the kind and the op's variant.
    fn signature<C, O: Debug>(&self, s: &Script<C, O>) -> String {
        let op = s.ops.get(self.step).map(variant).unwrap_or_default();
        format!("{:?} at {op}", self.kind)
    }
}

/// The name of an op's variant (`Poll` for `Poll { slot: 0, .. }`).
fn variant(op: &impl Debug) -> String {
    format!("{op:?}")
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect()
}

struct Outcome {
    finding: Option<Finding>,
    /// Wake-ups one side gave and the other did not, where that does not
    /// matter (counted only).
    spurious_weft: usize,
    spurious_tokio: usize,
}

fn compare<C: Clone, O: PollOp>(p: &Prim<C, O>, s: &Script<C, O>) -> Outcome {
    let t = run(p.tokio, s);
    let w = run(p.weft, s);
    let mut o = Outcome {
        finding: None,
        spurious_weft: 0,
        spurious_tokio: 0,
    };
    let mut prev_tokio_only = BTreeSet::new();
    let mut prev_weft_only = BTreeSet::new();
    for i in 0..t.len().max(w.len()) {
        let (Some(a), Some(b)) = (t.get(i), w.get(i)) else {
            o.finding = Some(Finding {
                kind: Kind::Output,
                step: i,
                detail: "one log is shorter".into(),
            });
            return o;
        };
        if a.out != b.out || a.woken.len() != b.woken.len() {
            o.finding = Some(Finding {
                kind: Kind::Output,
                step: i,
                detail: format!("tokio: {}\n  weft:  {}", a.out, b.out),
            });
            return o;
        }
        let mut tokio_only = BTreeSet::new();
        let mut weft_only = BTreeSet::new();
        for (&(slot, tw), &(_, ww)) in a.woken.iter().zip(&b.woken) {
            if tw && !ww {
                tokio_only.insert(slot);
                if prev_tokio_only.contains(&slot) {
                    continue;
                }
                // Does Tokio's wake matter? Poll the future right after
                // the step on both.
                let mut probe = s.clone();
                probe.ops.truncate(i + 1);
                probe.ops.push(O::poll(slot));
                let (t2, w2) = (run(p.tokio, &probe), run(p.weft, &probe));
                let (ta, wa) = (&t2[i + 1].out, &w2[i + 1].out);
                if ta.starts_with("Ready") || ta != wa {
                    o.finding = Some(Finding {
                        kind: Kind::LostWake,
                        step: i,
                        detail: format!(
                            "Tokio woke future {slot}, weft did not; polled right after: \
                             tokio {ta}, weft {wa}"
                        ),
                    });
                    return o;
                }
                o.spurious_tokio += 1;
            } else if ww && !tw {
                weft_only.insert(slot);
                if !prev_weft_only.contains(&slot) {
                    o.spurious_weft += 1;
                }
            }
        }
        prev_tokio_only = tokio_only;
        prev_weft_only = weft_only;
    }
    o
}

/// Removes ops (halves, quarters, ... single ops) while `keep` holds.
fn shrink<C: Clone, O: Clone>(
    s: &Script<C, O>,
    keep: impl Fn(&Script<C, O>) -> bool,
) -> Script<C, O> {
    let mut cur = s.clone();
    let mut chunk = cur.ops.len().div_ceil(2).max(1);
    loop {
        let mut changed = false;
        let mut i = 0;
        while i + chunk <= cur.ops.len() {
            let mut cand = cur.clone();
            cand.ops.drain(i..i + chunk);
            if keep(&cand) {
                cur = cand;
                changed = true;
            } else {
                i += chunk;
            }
        }
        if !changed {
            if chunk == 1 {
                return cur;
            }
            chunk /= 2;
        }
    }
}

fn report<C: Clone + Debug, O: PollOp>(
    p: &Prim<C, O>,
    seed: Option<u64>,
    s: &Script<C, O>,
    f: &Finding,
) -> String {
    let t = run(p.tokio, s);
    let w = run(p.weft, s);
    let mut m = String::new();
    m += &format!("\n=== {}: {} ===\n", p.name, f.signature(s));
    if let Some(seed) = seed {
        m += &format!(
            "seed {seed} (SYNC_DIFF_SEED={seed}), shrunk script:\n  cfg: {:?}\n",
            s.cfg
        );
    } else {
        m += &format!("script:\n  cfg: {:?}\n", s.cfg);
    }
    for (i, op) in s.ops.iter().enumerate() {
        m += &format!("  {i:>2}: {op:?}\n");
    }
    m += "logs up to the first difference:\n";
    for i in 0..=f.step {
        let (a, b) = (t.get(i), w.get(i));
        let op = a.or(b).map(|x| x.op.clone()).unwrap_or_default();
        m += &format!("  #{i} {op}\n");
        let show = |x: Option<&Step>| match x {
            None => "(no step)".to_string(),
            Some(x) => format!("{}  woken={:?}", x.out, x.woken),
        };
        m += &format!("    tokio: {}\n    weft:  {}\n", show(a), show(b));
    }
    m += &format!("difference: {}\n", f.detail);
    m
}

fn seeds() -> std::ops::Range<u64> {
    if let Some(s) = std::env::var("SYNC_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return s..s + 1;
    }
    let n = std::env::var("SYNC_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000);
    0..n
}

pub fn fuzz<C: Clone + Debug, O: PollOp>(p: &Prim<C, O>) {
    let mut found: BTreeMap<String, (u64, Script<C, O>, Finding, usize)> = BTreeMap::new();
    let (mut runs, mut sw, mut st, mut sw_runs) = (0u64, 0, 0, 0);
    let mut spurious_example = None;
    let skip = std::env::var("SYNC_DIFF_SKIP").unwrap_or_default();
    let skip: Vec<&str> = skip.split(',').filter(|s| !s.is_empty()).collect();
    for seed in seeds() {
        runs += 1;
        let mut s = (p.gen)(&mut Rng::new(seed));
        if !skip.is_empty() {
            s.ops.retain(|op| !skip.contains(&variant(op).as_str()));
        }
        let o = compare(p, &s);
        sw += o.spurious_weft;
        st += o.spurious_tokio;
        sw_runs += usize::from(o.spurious_weft > 0);
        if o.spurious_weft > 0 && spurious_example.is_none() {
            spurious_example = Some(seed);
        }
        let Some(f) = o.finding else { continue };
        let sig = f.signature(&s);
        if let Some(e) = found.get_mut(&sig) {
            e.3 += 1;
            continue;
        }
        let small = shrink(&s, |c| {
            compare(p, c).finding.map(|g| g.signature(c)).as_ref() == Some(&sig)
        });
        let f = compare(p, &small)
            .finding
            .expect("shrunk script still differs");
        found.insert(sig, (seed, small, f, 1));
    }
    eprintln!(
        "{}: {runs} seeds; spurious wake differences (not failures): weft-only {sw} \
         (in {sw_runs} scripts, first: seed {spurious_example:?}), Tokio-only {st}; \
         {} kinds of mismatch",
        p.name,
        found.len()
    );
    if !found.is_empty() {
        let mut m = String::new();
        for (seed, s, f, n) in found.values() {
            m += &report(p, Some(*seed), s, f);
            m += &format!("({n} of the {runs} scripts showed this kind of mismatch)\n");
        }
        panic!("{} differs from Tokio:{m}", p.name);
    }
}

/// Fails with a report if `ops` shows any mismatch.
pub fn assert_same<C: Clone + Debug, O: PollOp>(p: &Prim<C, O>, cfg: C, ops: Vec<O>) {
    let s = Script { cfg, ops };
    if let Some(f) = compare(p, &s).finding {
        panic!("{}", report(p, None, &s, &f));
    }
}
