//! Futures that follow a script and say what happens to them: each poll
//! and the drop are logged to the scenario's record, so the log shows the
//! order in which a macro polls its branches and when it drops them.
//! Nothing here depends on the runtime: the same types serve both crates.

use crate::harness::Rec;
use std::collections::VecDeque;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A future whose `n`-th poll returns the `n`-th step: `None` is `Pending`
/// (and wakes the task at once, so it is polled again), `Some(v)` is
/// `Ready(v)`. Past its script it stays `Pending` without waking. Logs
/// `"<name> poll"` on each poll and `"<name> drop"` when dropped.
pub struct Script<T> {
    name: &'static str,
    rec: Rec,
    steps: VecDeque<Option<T>>,
}

impl<T: Unpin> Script<T> {
    pub fn new(rec: &Rec, name: &'static str, steps: impl IntoIterator<Item = Option<T>>) -> Self {
        Script {
            name,
            rec: rec.clone(),
            steps: steps.into_iter().collect(),
        }
    }

    /// `Pending` `pending` times, then `Ready(value)`.
    pub fn after(rec: &Rec, name: &'static str, pending: usize, value: T) -> Self {
        let steps = std::iter::repeat_with(|| None)
            .take(pending)
            .chain([Some(value)]);
        Script::new(rec, name, steps)
    }

    /// `Ready(value)` at the first poll.
    pub fn ready(rec: &Rec, name: &'static str, value: T) -> Self {
        Script::after(rec, name, 0, value)
    }

    /// `Pending` for ever (woken never).
    pub fn never(rec: &Rec, name: &'static str) -> Self {
        Script::new(rec, name, [])
    }
}

impl<T: Unpin> Future for Script<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.rec.log(format!("{} poll", self.name));
        match self.steps.pop_front() {
            Some(Some(v)) => Poll::Ready(v),
            Some(None) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for Script<T> {
    fn drop(&mut self) {
        self.rec.log(format!("{} drop", self.name));
    }
}

/// A value that logs its drop: shows when a branch's output is dropped.
pub struct Noisy(pub &'static str, pub Rec);

impl Drop for Noisy {
    fn drop(&mut self) {
        self.1.log(format!("{} drop", self.0));
    }
}

/// An `IntoFuture` (not a `Future`) that logs when it is turned into its
/// future, which is ready with `value` at once.
pub struct Later {
    pub name: &'static str,
    pub rec: Rec,
    pub value: u32,
}

impl IntoFuture for Later {
    type Output = u32;
    type IntoFuture = Script<u32>;

    fn into_future(self) -> Script<u32> {
        self.rec.log(format!("{} into_future", self.name));
        Script::ready(&self.rec, self.name, self.value)
    }
}

/// Logs `what` and returns `value`: marks when an expression is evaluated.
pub fn eval<T>(rec: &Rec, what: &str, value: T) -> T {
    rec.log(format!("eval {what}"));
    value
}

/// Runs `fut` to completion on this thread without any runtime: a waker
/// that unparks the thread, and `park` while pending. The macros must work
/// under any executor.
pub fn block_on_plain<F: Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// Polls `fut` once with a waker that does nothing, and says whether it
/// was ready.
pub fn poll_once<F: Future>(fut: Pin<&mut F>) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    fut.poll(&mut cx).is_ready()
}
