//! `LocalSet` and `spawn_local`: tasks whose futures are not `Send`.
//!
//! Owns: a set of tasks that all run on the thread that owns the `LocalSet`
//! (the set is `!Send`), inside whatever polls the set: `run_until`,
//! `block_on`, or awaiting the set itself. The runtime around it keeps
//! running its own tasks, timers and sockets meanwhile.
//!
//! Invariants:
//! - **One thread.** Every future of the set is polled, cancelled and
//!   dropped on the set's thread: tasks run only in [`LocalSet::tick`],
//!   called from the set's own futures, which borrow the `!Send` set; idle
//!   tasks are cancelled by the set's `Drop`; an abort from another thread
//!   only queues the task, and the set's thread then cancels it. This is the
//!   contract `OwnedTasks::spawn_local` asks for.
//! - **Run queue.** Wakers may travel to any thread, so the queue is behind a
//!   mutex and entries may arrive from anywhere. A wake that does not come
//!   from inside the set's own poll also wakes whoever polls the set; one
//!   from inside needs no wake, since the poll's tick will find it.
//! - **Locks.** No waker is woken or dropped while the queue or the waker
//!   slot is locked (a waker's code may schedule into this very set).
//! - **Shutdown.** The set's `Drop` closes the queue first, then cancels every
//!   task, then forgets whatever the cancellations queued (the order
//!   `OwnedTasks::close_and_shutdown_all` requires).

use super::{Id, JoinHandle, Notified, OwnedTasks, RawTask, Schedule, Task};
use crate::coop;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::marker::PhantomData;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// Tasks a set polls before it yields to the runtime polling it, so that the
/// runtime's own tasks and drivers get their turn (Tokio's number too).
const MAX_TASKS_PER_TICK: usize = 61;

/// A set of tasks that run on the current thread, so their futures need not
/// be `Send`.
///
/// Spawn into it with [`LocalSet::spawn_local`] or, from code running inside
/// it, [`spawn_local`]. Its tasks make progress only while the set is
/// polled: through [`LocalSet::run_until`], [`LocalSet::block_on`], or by
/// awaiting the set itself (which finishes when every task has). Dropping
/// the set cancels the tasks still in it.
///
/// ```
/// use std::rc::Rc;
///
/// let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// let local = weft::task::LocalSet::new();
/// let shared = Rc::new(5); // Rc is not Send: weft::spawn would refuse it
/// let out = local.block_on(&rt, async move {
///     let inner = shared.clone();
///     weft::task::spawn_local(async move { *inner * 2 }).await.unwrap()
/// });
/// assert_eq!(out, 10);
/// ```
pub struct LocalSet {
    shared: Arc<Shared>,
    /// Drawn from the runtimes' id counter, as Tokio's is.
    id: crate::runtime::Id,
    /// `!Send` and `!Sync`: the set's tasks belong to this thread.
    _not_send: PhantomData<Rc<()>>,
}

struct Shared {
    owned: OwnedTasks<Arc<Shared>>,
    queue: Mutex<Queue>,
    /// Whoever polls the set (a `run_until`, or a task awaiting the set).
    waker: Mutex<Option<Waker>>,
}

struct Queue {
    tasks: VecDeque<Notified<Arc<Shared>>>,
    closed: bool,
}

thread_local! {
    /// The set that `spawn_local` spawns into on this thread.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    /// The set being polled on this thread right now (a wake from inside
    /// needs no outside wake-up). Only compared, never followed.
    static POLLING: Cell<*const Shared> = const { Cell::new(std::ptr::null()) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LocalSet {
    /// An empty set.
    pub fn new() -> LocalSet {
        LocalSet {
            shared: Arc::new(Shared {
                owned: OwnedTasks::new(1),
                queue: Mutex::new(Queue {
                    tasks: VecDeque::new(),
                    closed: false,
                }),
                waker: Mutex::new(None),
            }),
            id: crate::runtime::Id::next(),
            _not_send: PhantomData,
        }
    }

    /// This set's id: unique among the sets and runtimes this process has
    /// made (sets and runtimes draw from one counter, as in Tokio).
    ///
    /// ```
    /// let a = weft::task::LocalSet::new();
    /// let b = weft::task::LocalSet::new();
    /// assert_ne!(a.id(), b.id());
    /// ```
    pub fn id(&self) -> crate::runtime::Id {
        self.id
    }

    /// Spawn a `!Send` future into this set. It runs once the set is polled
    /// (it may be called before, or from outside, the set's futures).
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        spawn_into(&self.shared, future)
    }

    /// Run `future` to completion on `rt`, running this set's tasks beside
    /// it on this thread.
    ///
    /// # Panics
    /// As [`Runtime::block_on`](crate::runtime::Runtime::block_on): when
    /// called from inside a runtime.
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &crate::runtime::Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }

    /// Run `future` to completion, running this set's tasks while it waits.
    /// Must be polled inside a runtime if the tasks use its timers or I/O.
    pub async fn run_until<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        poll_fn(|cx| {
            self.polling(|| {
                self.register_waker(cx.waker());
                // The set's futures are polled as tasks are: with a budget.
                if let Poll::Ready(out) = coop::budget(|| future.as_mut().poll(cx)) {
                    return Poll::Ready(out);
                }
                if self.tick() {
                    // More queued than one tick runs: come back after the
                    // runtime's other work.
                    cx.waker().wake_by_ref();
                }
                Poll::Pending
            })
        })
        .await
    }

    /// Make this set the one [`spawn_local`] uses on this thread until the
    /// guard drops.
    pub fn enter(&self) -> LocalEnterGuard {
        LocalEnterGuard {
            prev: set_current(Some(self.shared.clone())),
            _not_send: PhantomData,
        }
    }

    /// Run up to [`MAX_TASKS_PER_TICK`] queued tasks. Returns whether tasks
    /// are still queued.
    fn tick(&self) -> bool {
        for _ in 0..MAX_TASKS_PER_TICK {
            let next = lock(&self.shared.queue).tasks.pop_front();
            let Some(task) = next else {
                return false;
            };
            coop::budget(|| task.run());
        }
        !lock(&self.shared.queue).tasks.is_empty()
    }

    fn register_waker(&self, waker: &Waker) {
        let replaced = {
            let mut slot = lock(&self.shared.waker);
            match &*slot {
                Some(current) if current.will_wake(waker) => None,
                _ => slot.replace(waker.clone()),
            }
        };
        // Dropped after the lock (module invariant).
        drop(replaced);
    }

    /// Run `f` with this set current and marked as being polled, and
    /// `block_in_place` forbidden off a multi_thread worker (the set's
    /// tasks could not move off this thread with the rest of its work; on
    /// a worker, as in Tokio, the worker's queue moves and the set stays).
    fn polling<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Arc<Shared>>, *const Shared);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = POLLING.try_with(|p| p.set(self.1));
                set_current(self.0.take());
            }
        }
        let prev_polling = POLLING
            .try_with(|p| p.replace(Arc::as_ptr(&self.shared)))
            .unwrap_or(std::ptr::null());
        let _restore = Restore(set_current(Some(self.shared.clone())), prev_polling);
        let _no_block_in_place = crate::runtime::context::disallow_block_in_place();
        f()
    }
}

/// Swap this thread's current set, returning the previous one.
fn set_current(shared: Option<Arc<Shared>>) -> Option<Arc<Shared>> {
    CURRENT
        .try_with(|c| std::mem::replace(&mut *c.borrow_mut(), shared))
        .ok()
        .flatten()
}

#[track_caller]
fn spawn_into<F>(shared: &Arc<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    // SAFETY: module invariant "one thread": this runs on the set's thread
    // (the set is `!Send` and `CURRENT` is thread-local), and the set only
    // polls, cancels and drops its tasks there.
    let (join, notified) = unsafe {
        shared.owned.spawn_local(
            future,
            shared.clone(),
            Id::next(),
            std::panic::Location::caller(),
        )
    };
    if let Some(notified) = notified {
        shared.schedule(notified);
    }
    join
}

/// Spawn a `!Send` future onto the [`LocalSet`] (or
/// [`LocalRuntime`](crate::runtime::LocalRuntime)) this code runs in.
///
/// # Panics
/// Outside a `LocalSet` or `LocalRuntime`.
///
/// ```
/// let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
/// let local = weft::task::LocalSet::new();
/// local.block_on(&rt, async {
///     let cell = std::rc::Rc::new(std::cell::Cell::new(1));
///     let c = cell.clone();
///     weft::task::spawn_local(async move { c.set(2) }).await.unwrap();
///     assert_eq!(cell.get(), 2);
/// });
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let current = CURRENT.try_with(|c| c.borrow().clone()).ok().flatten();
    match current {
        Some(shared) => spawn_into(&shared, future),
        None if entered_local_runtime_of_another_thread() => panic!(
            "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was \
             created on: this thread entered a LocalRuntime's handle, but its local tasks run on \
             the thread that built it; spawn from that thread, or use weft::spawn (or \
             Handle::spawn) for Send futures"
        ),
        None => panic!(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`: \
             weft::task::spawn_local needs a LocalSet: run this code inside \
             LocalSet::run_until / LocalSet::block_on (or a task spawned into the set), inside \
             a LocalRuntime, or use weft::spawn for Send futures"
        ),
    }
}

/// Whether the current runtime is a `LocalRuntime` built on another
/// thread (entered here through its `Handle`).
fn entered_local_runtime_of_another_thread() -> bool {
    crate::runtime::context::with_current(|h| h.config().local_owner)
        .flatten()
        .is_some_and(|owner| owner != std::thread::current().id())
}

impl Default for LocalSet {
    fn default() -> Self {
        LocalSet::new()
    }
}

impl Future for LocalSet {
    type Output = ();

    /// Runs the set's tasks; ready once every task has finished.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &*self;
        this.polling(|| {
            this.register_waker(cx.waker());
            if this.tick() {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else if this.shared.owned.len() == 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

impl Drop for LocalSet {
    fn drop(&mut self) {
        // Current while the futures drop, as in Tokio, so a destructor that
        // calls spawn_local finds the (closed) set instead of panicking.
        let prev = set_current(Some(self.shared.clone()));
        // And, as while it is polled, `block_in_place` in those drops is
        // refused off a worker (Tokio's rule too).
        let no_block_in_place = crate::runtime::context::disallow_block_in_place();
        let queued = {
            let mut queue = lock(&self.shared.queue);
            queue.closed = true;
            std::mem::take(&mut queue.tasks)
        };
        // Entries hold no reference (task/mod.rs): forgetting them is enough.
        drop(queued);
        self.shared.owned.close_and_shutdown_all();
        drop(std::mem::take(&mut lock(&self.shared.queue).tasks));
        drop(no_block_in_place);
        set_current(prev);
        let waker = lock(&self.shared.waker).take();
        drop(waker);
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet").finish_non_exhaustive()
    }
}

impl Schedule for Arc<Shared> {
    fn release(&self, task: RawTask) -> Option<Task<Self>> {
        self.owned.remove(task)
    }

    fn schedule(&self, task: Notified<Self>) {
        {
            let mut queue = lock(&self.queue);
            if queue.closed {
                // Shutting down: the entry holds no reference; forget it.
                return;
            }
            queue.tasks.push_back(task);
        }
        let from_inside = POLLING
            .try_with(|p| std::ptr::eq(p.get(), Arc::as_ptr(self)))
            .unwrap_or(false);
        if !from_inside {
            let waker = lock(&self.waker).clone();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

/// Returned by [`LocalSet::enter`]; restores the previous set on drop.
#[must_use = "the set is current only while the guard lives"]
pub struct LocalEnterGuard {
    prev: Option<Arc<Shared>>,
    _not_send: PhantomData<Rc<()>>,
}

impl Drop for LocalEnterGuard {
    fn drop(&mut self) {
        set_current(self.prev.take());
    }
}

impl fmt::Debug for LocalEnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEnterGuard").finish_non_exhaustive()
    }
}
