//! A hang in a test body becomes a failure of that one test, naming the
//! test and the last step the body reported, instead of a suite that
//! stalls until CI's time runs out.
//!
//! The body runs on a thread of its own and the test's thread waits for it
//! with a limit. A body that hangs is left behind (its thread, and the
//! runtime it blocks, live until the test binary exits); the other tests
//! go on.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a watched body has got to: the step a hang reports.
#[derive(Clone, Default)]
pub struct Progress(Arc<Mutex<String>>);

#[allow(dead_code)] // not every test names its steps
impl Progress {
    /// Records `what` as the step the body is on now.
    pub fn step(&self, what: impl Into<String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = what.into();
    }

    fn last(&self) -> String {
        let last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_empty() {
            "(no step named)".to_string()
        } else {
            last.clone()
        }
    }
}

/// Runs `body` on its own thread and returns what it returns. A panic in
/// `body` is the test's panic. If `body` is still running after `limit`,
/// the test fails with its name, the limit and the body's last step.
///
/// Limits are generous: the suites run under CPU load, and only a real
/// hang should reach one.
#[allow(dead_code)] // not every test file watches a body
#[track_caller]
pub fn watchdog<T: Send + 'static>(
    limit: Duration,
    body: impl FnOnce(&Progress) -> T + Send + 'static,
) -> T {
    // The harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    let progress = Progress::default();
    let (done, finished) = mpsc::channel();
    let worker = {
        let progress = progress.clone();
        std::thread::Builder::new()
            .name(format!("{test} (watched)"))
            .spawn(move || {
                let _ = done.send(body(&progress));
            })
            .expect("spawn the watched body's thread")
    };
    match finished.recv_timeout(limit) {
        Ok(out) => {
            let _ = worker.join();
            out
        }
        // The body panicked before sending: its panic is the test's.
        Err(RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the body returned without sending its output"),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("{test}: hung for {limit:?} at: {}", progress.last())
        }
    }
}
