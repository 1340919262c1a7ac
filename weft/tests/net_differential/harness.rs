//! The machinery every family of network scripts shares: the generator's
//! extra draws, the per-step log, `for_both!` (an interpreter written once,
//! expanded for Tokio and for weft), fresh runtimes of either crate, port
//! and path normalisation, and running a script on both crates, comparing
//! the logs, shrinking a mismatching script and reporting it with its seed.
//!
//! A step logs only what a program observes and can rely on: results,
//! bytes as wholes, `io::ErrorKind`s, addresses with their ports replaced
//! by labels in order of first appearance (`p0`, `p1`, ...) and temporary
//! directories replaced by `$D`. The interpreters make every logged value
//! deterministic (see `streams.rs` on chunking), so any difference in a
//! log is a difference between the crates, not timing noise.

use std::collections::HashMap;
use std::fmt::Debug;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use crate::seeded_rng::Rng;

impl Rng {
    /// A length that is usually small, sometimes larger.
    pub fn len(&mut self) -> usize {
        match self.pick(&[6, 3, 1]) {
            0 => self.range(1, 8),
            1 => self.range(1, 64),
            _ => self.range(1, 2000),
        }
    }
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

/// Builds a fresh runtime of crate `k` (current_thread, or multi_thread
/// with two workers) with everything enabled and runs `$fut` on it.
macro_rules! block_on {
    ($multi:expr, $fut:expr) => {{
        let rt = if $multi {
            k::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
        } else {
            k::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        }
        .expect("runtime");
        rt.block_on($fut)
    }};
}
pub(crate) use block_on;

/// One step: the op (its `Debug`) and what it showed.
#[derive(Clone, Debug)]
pub struct Step {
    pub op: String,
    pub hard: String,
}

/// The log an interpreter builds, with the port labels it has handed out.
#[derive(Default)]
pub struct Log {
    pub steps: Vec<Step>,
    ports: HashMap<u16, usize>,
    /// The temporary directory to show as `$D`.
    pub dir: Option<String>,
}

impl Log {
    /// A log that shows `dir` as `$D`.
    pub fn in_dir(dir: &std::path::Path) -> Log {
        Log {
            dir: Some(dir.display().to_string()),
            ..Log::default()
        }
    }

    pub fn push(&mut self, op: impl Debug, hard: impl Into<String>) {
        let mut hard = hard.into();
        if let Some(d) = &self.dir {
            hard = hard.replace(d.as_str(), "$D");
        }
        self.steps.push(Step {
            op: format!("{op:?}"),
            hard,
        });
    }

    /// `addr` with its port replaced by a label (`p0` for the first port
    /// this script showed, ...): ephemeral ports differ between runs, the
    /// relations between addresses do not.
    pub fn addr(&mut self, addr: SocketAddr) -> String {
        let next = self.ports.len();
        let label = *self.ports.entry(addr.port()).or_insert(next);
        match addr {
            SocketAddr::V4(a) => format!("{}:p{label}", a.ip()),
            SocketAddr::V6(a) => format!("[{}]:p{label}", a.ip()),
        }
    }

    /// An address result, normalised.
    pub fn addr_res(&mut self, r: std::io::Result<SocketAddr>) -> String {
        match r {
            Ok(a) => format!("Ok({})", self.addr(a)),
            Err(e) => format!("Err({:?})", e.kind()),
        }
    }
}

/// `Ok(..)` with `ok`'s rendering, or the error's kind.
pub fn res<T>(r: std::io::Result<T>, ok: impl FnOnce(T) -> String) -> String {
    match r {
        Ok(v) => format!("Ok({})", ok(v)),
        Err(e) => format!("Err({:?})", e.kind()),
    }
}

/// Bytes as a short readable string: printable ASCII as is, others `\xNN`.
pub fn show(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            0x20..=0x7e if c != b'\\' => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    format!("\"{s}\"")
}

/// A fresh, empty temporary directory for one run of one script.
pub fn temp_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("weft-netdiff-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A script whose op list can be cut down.
pub trait Shrink: Clone + Debug {
    fn ops(&self) -> usize;
    fn without(&self, at: usize, n: usize) -> Self;
}

/// Removes `n` elements at `at` from a list (for `Shrink::without`).
pub fn cut<T: Clone>(v: &[T], at: usize, n: usize) -> Vec<T> {
    let mut v = v.to_vec();
    v.drain(at..at + n);
    v
}

/// A family of single cases: the case numbers to run (a mismatch shrinks
/// to one case) and the runtime flavour they run on.
#[derive(Clone, Debug)]
pub struct CaseScript {
    pub cases: Vec<usize>,
    pub multi: bool,
}

impl CaseScript {
    /// All `count` cases, on a flavour `rng` picks.
    pub fn every(count: usize, rng: &mut Rng) -> CaseScript {
        CaseScript {
            cases: (0..count).collect(),
            multi: rng.chance(50),
        }
    }
}

impl Shrink for CaseScript {
    fn ops(&self) -> usize {
        self.cases.len()
    }

    fn without(&self, at: usize, n: usize) -> Self {
        CaseScript {
            cases: cut(&self.cases, at, n),
            ..self.clone()
        }
    }
}

pub struct Family<S> {
    pub name: &'static str,
    pub gen: fn(&mut Rng) -> S,
    pub tokio: fn(&S) -> Vec<Step>,
    pub weft: fn(&S) -> Vec<Step>,
    /// Seeds run by default (`<env>_SEEDS` overrides).
    pub seeds: u64,
    /// The prefix of the knobs that steer this family's runs: `NET_DIFF`
    /// reads `NET_DIFF_SEEDS`, `NET_DIFF_SEED`, `NET_DIFF_OPS`,
    /// `NET_DIFF_TRACE` and `NET_DIFF_SELF` (another test that shares
    /// this harness has knobs of its own).
    pub env: &'static str,
}

impl<S> Family<S> {
    /// The knob `<env>_<name>`, if set.
    fn knob(&self, name: &str) -> Option<String> {
        std::env::var(format!("{}_{name}", self.env)).ok()
    }
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `catch_unwind`, without the panic hook's message for a panic caught here.
fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
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
    match quietly(|| f(s)) {
        Ok(log) => log,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            vec![Step {
                op: "(interpreter panicked)".into(),
                hard: format!("PANIC {msg}"),
            }]
        }
    }
}

/// The first step at which the logs differ, and how.
fn first_difference(t: &[Step], w: &[Step]) -> Option<(usize, String)> {
    for i in 0..t.len().max(w.len()) {
        match (t.get(i), w.get(i)) {
            (Some(a), Some(b)) if a.op == b.op && a.hard == b.hard => {}
            (a, b) => {
                let show = |x: Option<&Step>| x.map_or("(no step)".into(), |x| x.hard.clone());
                return Some((i, format!("tokio: {}\n  weft:  {}", show(a), show(b))));
            }
        }
    }
    None
}

/// With `<env>_SELF=1` the "weft" side runs Tokio again: every
/// difference found then is nondeterminism in the interpreter (a check of
/// the test itself).
fn other<S>(fam: &Family<S>) -> fn(&S) -> Vec<Step> {
    if fam.knob("SELF").is_some_and(|v| v == "1") {
        fam.tokio
    } else {
        fam.weft
    }
}

fn compare<S>(fam: &Family<S>, s: &S) -> Option<(usize, String, String)> {
    let t = run(fam.tokio, s);
    let w = run(other(fam), s);
    if fam.knob("TRACE").is_some_and(|v| v == "log") {
        for (a, b) in t.iter().zip(&w) {
            eprintln!("  {}\n    tokio: {}\n    weft:  {}", a.op, a.hard, b.hard);
        }
    }
    let (i, detail) = first_difference(&t, &w)?;
    let op = t
        .get(i)
        .or(w.get(i))
        .map(|x| x.op.clone())
        .unwrap_or_default();
    let sig: String = op.chars().take_while(|c| c.is_alphanumeric()).collect();
    Some((i, detail, sig))
}

fn shrink<S: Shrink>(s: &S, keep: impl Fn(&S) -> bool) -> S {
    let mut cur = s.clone();
    loop {
        let mut changed = false;
        let mut chunk = cur.ops().div_ceil(2).max(1);
        loop {
            let mut i = 0;
            while i + chunk <= cur.ops() {
                let cand = cur.without(i, chunk);
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
        if !changed {
            return cur;
        }
    }
}

fn report<S: Debug>(fam: &Family<S>, seed: Option<u64>, s: &S) -> String {
    let t = run(fam.tokio, s);
    let w = run(other(fam), s);
    let mut m = format!("\n=== {} ===\n", fam.name);
    match seed {
        Some(seed) => m += &format!("seed {seed} ({}_SEED={seed}), shrunk script:\n", fam.env),
        None => m += "script:\n",
    }
    m += &format!("{s:#?}\nlogs up to the first difference:\n");
    let Some((at, detail)) = first_difference(&t, &w) else {
        return m + "(no difference on this run: timing-dependent?)\n";
    };
    for i in 0..=at {
        let (a, b) = (t.get(i), w.get(i));
        let op = a.or(b).map(|x| x.op.clone()).unwrap_or_default();
        let show = |x: Option<&Step>| x.map_or("(no step)".into(), |x| x.hard.clone());
        m += &format!(
            "  #{i} {op}\n    tokio: {}\n    weft:  {}\n",
            show(a),
            show(b)
        );
    }
    m + &format!("difference at step {at}: {detail}\n")
}

fn seeds<S>(fam: &Family<S>) -> std::ops::Range<u64> {
    let var = |n: &str| fam.knob(n).and_then(|s| s.parse::<u64>().ok());
    if let Some(s) = var("SEED") {
        return s..s + 1;
    }
    0..var("SEEDS").unwrap_or(fam.seeds)
}

/// Runs the family's seeds; fails with one shrunk report per kind of
/// mismatch (kind: the op it happened at).
pub fn fuzz<S: Shrink>(fam: &Family<S>) {
    let mut found: Vec<(String, u64, S, usize, String)> = Vec::new();
    let mut runs = 0u64;
    let trace = fam.knob("TRACE").is_some();
    for seed in seeds(fam) {
        runs += 1;
        if trace {
            eprintln!("{}: seed {seed}", fam.name);
        }
        let mut s = (fam.gen)(&mut Rng::new(seed));
        if let Some(n) = fam.knob("OPS").and_then(|n| n.parse().ok()) {
            if n < s.ops() {
                s = s.without(n, s.ops() - n);
            }
        }
        if trace {
            eprintln!("{s:?}");
        }
        let t0 = std::time::Instant::now();
        let found_here = compare(fam, &s);
        if trace && t0.elapsed().as_millis() > 500 {
            eprintln!("slow seed {seed}: {:?}", t0.elapsed());
        }
        let Some((at, detail, sig)) = found_here else {
            continue;
        };
        if let Some(e) = found.iter_mut().find(|e| e.0 == sig) {
            e.3 += 1;
            continue;
        }
        let small = shrink(&s, |c| compare(fam, c).is_some_and(|(_, _, g)| g == sig));
        let first = format!("first seen at step {at} of the whole script: {detail}\n");
        found.push((sig, seed, small, 1, first));
    }
    eprintln!(
        "{}: {runs} seeds; {} kinds of mismatch",
        fam.name,
        found.len()
    );
    if !found.is_empty() {
        let mut m = String::new();
        for (_, seed, s, n, first) in &found {
            m += &report(fam, Some(*seed), s);
            m += first;
            m += &format!("({n} of the {runs} scripts showed this kind of mismatch)\n");
        }
        panic!("{} differs from Tokio:{m}", fam.name);
    }
}

/// Fails with a report if the script shows a mismatch.
pub fn assert_same<S: Debug>(fam: &Family<S>, s: S) {
    if compare(fam, &s).is_some() {
        panic!("{}", report(fam, None, &s));
    }
}
