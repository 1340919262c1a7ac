//! The free functions that reach the current runtime: `spawn`,
//! `spawn_blocking`, `block_in_place`.

use super::{Id, JoinHandle};
use crate::runtime::context;
use std::future::Future;

const NO_RUNTIME: &str = "there is no reactor running, must be called from the context of a \
     Tokio 1.x runtime: there is no weft runtime on this thread: call this from inside \
     Runtime::block_on or a spawned task, or spawn through a Handle / Runtime directly \
     (Runtime::enter also makes a runtime current on this thread)";

/// Spawn a task on the current runtime. It starts running in the
/// background at once; the returned [`JoinHandle`] yields its output.
///
/// # Panics
/// Outside a runtime.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let handles: Vec<_> = (0..10u64).map(|i| weft::spawn(async move { i * i })).collect();
/// let mut sum = 0;
/// for h in handles {
///     sum += h.await.unwrap();
/// }
/// assert_eq!(sum, 285);
/// # });
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let id = Id::next();
    let spawned_at = std::panic::Location::caller();
    on_current("weft::spawn", move |handle| {
        handle.spawn(future, id, spawned_at)
    })
}

/// Run a blocking closure on the runtime's blocking pool, returning a
/// handle to its result. The pool grows on demand up to
/// `Builder::max_blocking_threads` and idle threads exit after
/// `Builder::thread_keep_alive`.
///
/// # Panics
/// Outside a runtime.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let n = weft::task::spawn_blocking(|| {
///     std::thread::sleep(std::time::Duration::from_millis(1));
///     5
/// })
/// .await
/// .unwrap();
/// assert_eq!(n, 5);
/// # });
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    on_current("weft::task::spawn_blocking", move |handle| {
        handle.spawn_blocking(f)
    })
}

/// [`spawn_blocking`], or `None` (`f` dropped unrun) once the current
/// runtime has shut down.
#[track_caller]
pub(crate) fn spawn_blocking_unless_shut_down<F, R>(f: F) -> Option<JoinHandle<R>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    on_current("weft::task::spawn_blocking", move |handle| {
        handle.spawn_blocking_unless_shut_down(f)
    })
}

/// `f` on the current runtime's handle; outside any runtime, a panic that
/// names `what` and the caller's line.
#[track_caller]
fn on_current<R>(what: &str, f: impl FnOnce(&crate::scheduler::Handle) -> R) -> R {
    match context::with_current(f) {
        Some(r) => r,
        None => panic!("{what} failed: {NO_RUNTIME}"),
    }
}

/// Run blocking code on a multi_thread worker without stalling the other
/// tasks: the worker's queue is handed to a new thread for the duration.
///
/// Outside any runtime, `f` simply runs.
///
/// # Panics
/// On a `current_thread` runtime, which has no other thread to hand its
/// tasks to, and inside a [`LocalSet`](crate::task::LocalSet) (its tasks
/// or the future of its `run_until`) driven by a `block_on`, whose tasks
/// cannot move to another thread; use [`spawn_blocking`] there. As in
/// Tokio, a `LocalSet` polled on a multi_thread worker (by one of its
/// tasks, or in a `Handle::block_on` inside a `block_in_place` closure)
/// does not forbid it: the worker's other tasks move, the set's stay.
///
/// ```
/// let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
/// rt.block_on(async {
///     weft::spawn(async {
///         let v = weft::task::block_in_place(|| 1 + 1);
///         assert_eq!(v, 2);
///     })
///     .await
///     .unwrap();
/// });
/// ```
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    crate::scheduler::multi_thread::block_in_place(f)
}
