//! The recorder each scenario writes to, the panic catcher, and the
//! comparison of the two records.
//!
//! A scenario is written once, in a `scenarios!` block, and expanded twice:
//! in `on_tokio` (with `k` = `tokio`) and in `on_weft` (with `k` = `weft`).
//! Each expansion gets a [`Rec`] and logs what a program could observe, as
//! text: values, error kinds, whether a call panicked. The test compares
//! the two texts line by line.
//!
//! Panics are caught with `catch_unwind` under a process-wide hook that
//! keeps quiet and remembers, per thread, where the last panic was raised
//! and what it said. Messages are not compared (weft's name the mistake
//! and the fix in its own words), but a misuse panic weft raises must
//! point at the scenario's line, not at weft's insides (`#[track_caller]`),
//! or, for an `async fn` (whose body cannot know its caller), name that
//! line in its message: [`Rec::misuse`] checks that on weft's side.
//! [`Rec::catch_where`] also logs the line, for a panic both crates must
//! raise at the caller's line (one a macro expands there).
//!
//! Other differential tests written the same way (`macros_differential`)
//! include this file too: "the scenario's file" is any `*_differential`
//! test file.

use std::cell::RefCell;
use std::fmt::Debug;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Once};

/// Which crate a scenario's expansion runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Tokio,
    Weft,
}

/// Where and why the last panic on this thread was raised.
#[derive(Clone, Debug, Default)]
pub struct PanicSeen {
    pub file: String,
    pub line: u32,
}

thread_local! {
    static LAST_PANIC: RefCell<Option<PanicSeen>> = const { RefCell::new(None) };
}

/// Installs the quiet, remembering panic hook once per process. Panics on
/// threads no scenario catches (a task's, on a worker) are remembered on
/// that thread and otherwise silent, as a runtime catches them anyway.
pub fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let (file, line) = info
                .location()
                .map_or((String::new(), 0), |l| (l.file().to_string(), l.line()));
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(PanicSeen { file, line }));
        }));
    });
}

/// The text a payload carries, if it is a string.
pub fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string payload>".to_string()
    }
}

/// What one expansion of a scenario observed, shareable with the tasks
/// and threads it starts.
#[derive(Clone)]
pub struct Rec {
    pub side: Side,
    lines: Arc<Mutex<Vec<String>>>,
    /// weft misuse panics that did not point at the scenario's file.
    misplaced: Arc<Mutex<Vec<String>>>,
    /// Messages of caught panics, shown (not compared) on a mismatch.
    messages: Arc<Mutex<Vec<String>>>,
}

impl Rec {
    pub fn new(side: Side) -> Rec {
        Rec {
            side,
            lines: Arc::default(),
            misplaced: Arc::default(),
            messages: Arc::default(),
        }
    }

    /// Logs one observation. Digits are kept: a scenario that logs
    /// something run-dependent (a task id) hides it with [`no_digits`].
    pub fn log(&self, line: impl Into<String>) {
        self.lines.lock().unwrap().push(line.into());
    }

    /// Runs `f`, logging `label: <value>` or `label: panicked`.
    pub fn catch<T: Debug>(&self, label: &str, f: impl FnOnce() -> T) -> Option<T> {
        self.catch_inner(label, f, false, false)
    }

    /// As [`Rec::catch`], and a panic is logged with where it was raised:
    /// its line if that is in the scenario's file (the same on both
    /// crates, which expand the same tokens), else its file.
    #[allow(dead_code)] // not every test including this file uses it
    pub fn catch_where<T: Debug>(&self, label: &str, f: impl FnOnce() -> T) -> Option<T> {
        self.catch_inner(label, f, false, true)
    }

    /// As [`Rec::catch`], for a call that is a caller's mistake on at least
    /// one runtime: if weft panics, the panic must name the scenario's line.
    pub fn misuse<T: Debug>(&self, label: &str, f: impl FnOnce() -> T) -> Option<T> {
        self.catch_inner(label, f, true, false)
    }

    fn catch_inner<T: Debug>(
        &self,
        label: &str,
        f: impl FnOnce() -> T,
        misuse: bool,
        site: bool,
    ) -> Option<T> {
        quiet_panics();
        LAST_PANIC.with(|p| p.borrow_mut().take());
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(v) => {
                self.log(format!("{label}: {v:?}"));
                Some(v)
            }
            Err(payload) => {
                let seen = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_default();
                let text = payload_text(&*payload);
                self.messages.lock().unwrap().push(format!(
                    "{label}: panicked at {}:{}: {text}",
                    seen.file, seen.line
                ));
                // An `async fn`'s panic is raised inside weft, so there
                // it is the message that must name the caller's line.
                let at_caller =
                    seen.file.contains("_differential") || text.contains("_differential");
                if misuse && self.side == Side::Weft && !at_caller {
                    self.misplaced.lock().unwrap().push(format!(
                        "{label}: panicked at {}:{} (not the caller's line): {text}",
                        seen.file, seen.line
                    ));
                }
                if !site {
                    self.log(format!("{label}: panicked"));
                } else if seen.file.contains("_differential") {
                    self.log(format!("{label}: panicked at line {}", seen.line));
                } else {
                    self.log(format!("{label}: panicked in {}", seen.file));
                }
                None
            }
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

/// `s` with every run of digits shown as `#` (task ids, addresses).
pub fn no_digits(s: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Runs a scenario on both crates and fails with both records side by side
/// if they differ, or if a weft misuse panic points into weft.
pub fn compare(name: &str, on_tokio: fn(&Rec), on_weft: fn(&Rec)) {
    let tokio = Rec::new(Side::Tokio);
    on_tokio(&tokio);
    let weft = Rec::new(Side::Weft);
    on_weft(&weft);
    let (t, w) = (tokio.lines(), weft.lines());
    let misplaced = weft.misplaced.lock().unwrap().clone();
    if t == w && misplaced.is_empty() {
        return;
    }
    let mut report = format!("scenario `{name}`: weft differs from Tokio\n");
    for i in 0..t.len().max(w.len()) {
        let a = t.get(i).map_or("<none>", String::as_str);
        let b = w.get(i).map_or("<none>", String::as_str);
        let mark = if a == b { "  " } else { "!!" };
        report.push_str(&format!("{mark} tokio: {a}\n   weft:  {b}\n"));
    }
    for m in &misplaced {
        report.push_str(&format!("!! weft misuse panic not at the caller: {m}\n"));
    }
    report.push_str("panic messages (not compared):\n");
    for (side, rec) in [("tokio", &tokio), ("weft", &weft)] {
        for m in rec.messages.lock().unwrap().iter() {
            report.push_str(&format!("   {side}: {m}\n"));
        }
    }
    // The panic hook here is quiet, so the report goes to stderr (which
    // the test harness shows for a failed test) before the panic.
    eprintln!("{report}");
    panic!("scenario `{name}`: weft differs from Tokio (report above)");
}

/// Writes each scenario once and runs it on both crates: `scenarios! {
/// common { items using k:: } fn name(rec) { body using k:: } ... }`
/// expands the common items and every body in a module `on_tokio` (`k` =
/// `tokio`) and one `on_weft` (`k` = `weft`), and a `#[test]` per scenario
/// comparing the two. Both modules also get `current()` and `multi(n)`,
/// runtimes with every driver enabled.
macro_rules! scenarios {
    ($(fn $name:ident($rec:ident) $body:block)*) => {
        scenarios! { common {} $(fn $name($rec) $body)* }
    };
    (common { $($common:item)* } $(fn $name:ident($rec:ident) $body:block)*) => {
        scenarios! { @module on_tokio tokio { $($common)* } $(fn $name($rec) $body)* }
        scenarios! { @module on_weft weft { $($common)* } $(fn $name($rec) $body)* }
        $(
            #[test]
            fn $name() {
                $crate::harness::compare(stringify!($name), on_tokio::$name, on_weft::$name);
            }
        )*
    };
    // One crate's module: `k` is `$krate`.
    (@module $module:ident $krate:ident { $($common:item)* }
        $(fn $name:ident($rec:ident) $body:block)*) => {
        #[allow(unused_imports, dead_code, clippy::redundant_clone, clippy::type_complexity)]
        mod $module {
            use $krate as k;
            use super::*;

            /// A current-thread runtime with every driver.
            fn current() -> k::runtime::Runtime {
                k::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap()
            }
            /// A multi-thread runtime of `workers` workers with every driver.
            fn multi(workers: usize) -> k::runtime::Runtime {
                k::runtime::Builder::new_multi_thread()
                    .worker_threads(workers)
                    .enable_all()
                    .build()
                    .unwrap()
            }
            $($common)*
            $(pub fn $name($rec: &$crate::harness::Rec) $body)*
        }
    };
}
