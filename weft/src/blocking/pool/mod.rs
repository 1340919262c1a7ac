//! The thread pool behind `spawn_blocking`.
//!
//! This file owns the pool's OS threads, the queue of jobs waiting for one,
//! and the bookkeeping that ties the two together. The runtime hands in jobs
//! of one concrete type through [`Spawner::spawn`] and tears the pool down
//! with [`BlockingPool::shutdown`] (or by dropping it).
//!
//! All state lives in one `Mutex<Shared>`; idle workers sleep on `work_cv`
//! and `shutdown` sleeps on `exit_cv`. The counts are mirrored into atomics
//! after every change so that metrics never take the lock. Invariants, all
//! read and written under the lock:
//!
//! - **Slots.** `num_threads` counts threads holding one of the
//!   `max_threads` slots. A worker gives its slot back in the same critical
//!   section in which it sees an empty queue and decides to leave, so a
//!   spawner that finds the pool full knows every counted thread will look at
//!   the queue again before it goes.
//! - **Claims.** `num_idle` counts workers waiting on `work_cv` that nobody
//!   has claimed yet. A spawner claims one by moving it from `num_idle` to
//!   `num_notify` before notifying; a waking worker only counts itself as
//!   woken for work if it can take one of those pending wakeups. That is what
//!   tells a notified thread from a timed-out or spuriously woken one, and it
//!   keeps `num_idle + num_notify` equal to the number of threads waiting.
//!   A spawner only starts a thread when `num_idle` is zero, so queued work
//!   never sits beside an unclaimed idle thread.
//! - **Liveness.** `live` counts threads whose body has not finished
//!   (including `before_stop` and the wrapper); it can exceed
//!   `num_threads` while leaving threads wind down. Shutdown waits on it.
//! - **Exactly once.** Jobs are only queued while `shutdown` is false, and
//!   a thread leaves only after seeing the queue empty (under the lock), so
//!   every accepted job runs exactly once, shutdown or not: a queued job has
//!   a thread that will look at the queue again (see "Slots"). Shutdown does
//!   not cancel queued work, as in Tokio, whose busy threads keep draining
//!   the queue: a closure handed to `spawn_blocking` before shutdown runs and
//!   its `JoinHandle` yields its value.
//! - **Handles.** `workers` holds the `JoinHandle` of every thread shutdown
//!   should join. Threads are started under the lock, so a handle is
//!   registered before its thread can leave; a thread leaving on keep-alive
//!   removes (detaches) its own handle, since nobody will join it.
//!
//! No user code (jobs, cancellation, start/stop callbacks, the wrapper) runs
//! under the lock, except `thread_name`, which is called while starting a
//! thread and so must not spawn blocking work itself.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A unit of blocking work, run once by one of the pool's threads.
pub(crate) trait Job: Send + 'static {
    fn run(self);
}

/// Called with the thread's whole life as a closure; must call it once.
type ThreadWrapper = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;
type Callback = Arc<dyn Fn() + Send + Sync>;

pub(crate) struct PoolConfig {
    /// Most threads alive at once; the builder guarantees it is non-zero.
    pub(crate) max_threads: usize,
    /// How long a thread waits for work before it exits.
    pub(crate) keep_alive: Duration,
    pub(crate) thread_name: Arc<dyn Fn() -> String + Send + Sync>,
    pub(crate) stack_size: Option<usize>,
    /// Run first on each new thread, inside `thread_wrapper`.
    pub(crate) after_start: Option<Callback>,
    /// Run last on each thread, inside `thread_wrapper`.
    pub(crate) before_stop: Option<Callback>,
    /// Wraps each pool thread's whole life; the runtime uses it to enter its
    /// thread-local context. The pool calls `wrap(&mut || the_thread_loop())`.
    pub(crate) thread_wrapper: Option<ThreadWrapper>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_threads: 512,
            keep_alive: Duration::from_secs(10),
            thread_name: Arc::new(|| "weft-blocking-worker".to_owned()),
            stack_size: None,
            after_start: None,
            before_stop: None,
            thread_wrapper: None,
        }
    }
}

impl fmt::Debug for PoolConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolConfig")
            .field("max_threads", &self.max_threads)
            .field("keep_alive", &self.keep_alive)
            .field("stack_size", &self.stack_size)
            .field("after_start", &self.after_start.is_some())
            .field("before_stop", &self.before_stop.is_some())
            .field("thread_wrapper", &self.thread_wrapper.is_some())
            .finish_non_exhaustive()
    }
}

/// Why [`Spawner::spawn`] refused a job; the job comes back untouched.
#[must_use]
pub(crate) enum SpawnError<J> {
    /// The pool has shut down.
    Shutdown(J),
    /// Starting a thread failed and the pool has no thread that could run it.
    NoThreads(J),
}

impl<J> fmt::Debug for SpawnError<J> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SpawnError::Shutdown(_) => "Shutdown",
            SpawnError::NoThreads(_) => "NoThreads",
        };
        f.debug_tuple(name).finish_non_exhaustive()
    }
}

/// The pool itself, owned by the runtime. Dropping it shuts it down.
pub(crate) struct BlockingPool<J: Job> {
    spawner: Spawner<J>,
}

/// A cheap, shareable way to hand jobs to the pool and read its metrics.
pub(crate) struct Spawner<J: Job> {
    inner: Arc<Inner<J>>,
}

struct Inner<J> {
    shared: Mutex<Shared<J>>,
    /// Idle workers wait here for a claim, shutdown, or keep-alive expiry.
    work_cv: Condvar,
    /// `shutdown` waits here for `live` to fall.
    exit_cv: Condvar,
    metrics: Metrics,
    config: PoolConfig,
    /// Tells this pool's threads apart from everyone else's (see `CURRENT_POOL`).
    pool_id: usize,
}

/// Lock-free copies of the counts in `Shared`, for metrics.
#[derive(Default)]
struct Metrics {
    num_threads: AtomicUsize,
    num_idle: AtomicUsize,
    queue_depth: AtomicUsize,
    shutdown: AtomicBool,
}

struct Shared<J> {
    queue: VecDeque<J>,
    num_threads: usize,
    num_idle: usize,
    /// Wakeups promised to idle threads and not yet taken.
    num_notify: usize,
    live: usize,
    shutdown: bool,
    workers: HashMap<usize, JoinHandle<()>>,
    next_worker_id: usize,
}

static NEXT_POOL_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The `pool_id` of the pool this thread works for, or 0. Lets `shutdown`
    /// called from a pool thread avoid waiting for (and joining) itself.
    static CURRENT_POOL: Cell<usize> = const { Cell::new(0) };
}

impl<J: Job> BlockingPool<J> {
    pub(crate) fn new(config: PoolConfig) -> Self {
        debug_assert!(
            config.max_threads > 0,
            "the builder rejects max_threads == 0"
        );
        let inner = Inner {
            shared: Mutex::new(Shared {
                queue: VecDeque::new(),
                num_threads: 0,
                num_idle: 0,
                num_notify: 0,
                live: 0,
                shutdown: false,
                workers: HashMap::new(),
                next_worker_id: 0,
            }),
            work_cv: Condvar::new(),
            exit_cv: Condvar::new(),
            metrics: Metrics::default(),
            config,
            pool_id: NEXT_POOL_ID.fetch_add(1, Relaxed),
        };
        BlockingPool {
            spawner: Spawner {
                inner: Arc::new(inner),
            },
        }
    }

    pub(crate) fn spawner(&self) -> &Spawner<J> {
        &self.spawner
    }

    /// Stop accepting jobs, let queued and running ones finish, and wait for
    /// the threads to exit — at most `timeout` (None = wait forever).
    /// Idempotent: later calls return at once. If the wait times out, the
    /// remaining threads are detached and finish on their own. Called from one
    /// of the pool's own threads, it waits for all the others.
    pub(crate) fn shutdown(&mut self, timeout: Option<Duration>) {
        // `None` also when the timeout is too large to represent: wait forever.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let inner = &*self.spawner.inner;

        let mut shared = inner.lock();
        if shared.shutdown {
            return;
        }
        shared.shutdown = true;
        inner.publish(&shared);
        drop(shared);
        inner.work_cv.notify_all();

        // `try_with` because the runtime may be dropped from a TLS destructor.
        let on_own_thread = CURRENT_POOL.try_with(Cell::get) == Ok(inner.pool_id);
        let others_live = usize::from(on_own_thread);
        let mut shared = inner.lock();
        let mut all_exited = true;
        while shared.live > others_live {
            shared = match deadline {
                None => inner
                    .exit_cv
                    .wait(shared)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        all_exited = false;
                        break;
                    }
                    inner
                        .exit_cv
                        .wait_timeout(shared, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        let workers = mem::take(&mut shared.workers);
        drop(shared);

        // On timeout, dropping the handles detaches the stragglers. Otherwise
        // every other thread has finished its body, so joining only waits for
        // its thread-local destructors.
        if all_exited {
            let me = on_own_thread.then(|| thread::current().id());
            for handle in workers.into_values() {
                if Some(handle.thread().id()) != me {
                    // A thread that panicked outside a job (in a callback) has
                    // already been accounted for by its exit guard.
                    let _ = handle.join();
                }
            }
        }
    }
}

impl<J: Job> Drop for BlockingPool<J> {
    fn drop(&mut self) {
        self.shutdown(None);
    }
}

impl<J: Job> fmt::Debug for BlockingPool<J> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingPool")
            .field("spawner", &self.spawner)
            .finish()
    }
}

impl<J: Job> Spawner<J> {
    /// Queue the job; wake an idle thread, or start a new one while below the
    /// cap; otherwise it waits in the queue. After shutdown: `Err(Shutdown)`.
    /// If a thread cannot be started, the job stays queued for the existing
    /// threads, or comes back as `NoThreads` when there are none.
    pub(crate) fn spawn(&self, job: J) -> Result<(), SpawnError<J>> {
        let inner = &*self.inner;
        let mut shared = inner.lock();
        if shared.shutdown {
            return Err(SpawnError::Shutdown(job));
        }

        if shared.num_idle > 0 {
            shared.num_idle -= 1;
            shared.num_notify += 1;
            shared.queue.push_back(job);
            inner.publish(&shared);
            drop(shared);
            inner.work_cv.notify_one();
            return Ok(());
        }

        if shared.num_threads < inner.config.max_threads {
            // Started under the lock: the new thread's first act is to take
            // the lock, so its handle is registered before it could possibly
            // leave and try to remove it.
            let id = shared.next_worker_id;
            match self.start_thread(id) {
                Ok(handle) => {
                    shared.next_worker_id += 1;
                    shared.num_threads += 1;
                    shared.live += 1;
                    shared.workers.insert(id, handle);
                }
                Err(_) if shared.num_threads == 0 => return Err(SpawnError::NoThreads(job)),
                // Every existing thread is busy and will take the job from the
                // queue when it next looks (see "Slots" above).
                Err(_) => {}
            }
        }

        shared.queue.push_back(job);
        inner.publish(&shared);
        Ok(())
    }

    /// Threads holding a slot: running a job, idle, or starting up.
    pub(crate) fn num_threads(&self) -> usize {
        self.inner.metrics.num_threads.load(Relaxed)
    }

    /// Threads waiting for work that no spawner has claimed yet.
    pub(crate) fn num_idle_threads(&self) -> usize {
        self.inner.metrics.num_idle.load(Relaxed)
    }

    /// Jobs accepted but not yet picked up by a thread.
    pub(crate) fn queue_depth(&self) -> usize {
        self.inner.metrics.queue_depth.load(Relaxed)
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.inner.metrics.shutdown.load(Relaxed)
    }

    fn start_thread(&self, id: usize) -> io::Result<JoinHandle<()>> {
        let config = &self.inner.config;
        let mut builder = thread::Builder::new().name((config.thread_name)());
        if let Some(size) = config.stack_size {
            builder = builder.stack_size(size);
        }
        let inner = Arc::clone(&self.inner);
        builder.spawn(move || inner.thread_main(id))
    }
}

impl<J: Job> Clone for Spawner<J> {
    fn clone(&self) -> Self {
        Spawner {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<J: Job> fmt::Debug for Spawner<J> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spawner")
            .field("num_threads", &self.num_threads())
            .field("num_idle_threads", &self.num_idle_threads())
            .field("queue_depth", &self.queue_depth())
            .field("is_shutdown", &self.is_shutdown())
            .finish()
    }
}

impl<J: Job> Inner<J> {
    fn lock(&self) -> MutexGuard<'_, Shared<J>> {
        // Poisoning can only come from `thread_name` or thread creation
        // panicking in `spawn`, both before any count is touched.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn publish(&self, shared: &Shared<J>) {
        let m = &self.metrics;
        m.num_threads.store(shared.num_threads, Relaxed);
        m.num_idle.store(shared.num_idle, Relaxed);
        m.queue_depth.store(shared.queue.len(), Relaxed);
        m.shutdown.store(shared.shutdown, Relaxed);
    }

    /// The whole life of one pool thread.
    fn thread_main(&self, id: usize) {
        CURRENT_POOL.with(|c| c.set(self.pool_id));
        let slot_held = Cell::new(true);
        // Keeps the counts right even if a callback or the wrapper panics.
        let _exit = ExitGuard {
            inner: self,
            id,
            slot_held: &slot_held,
        };

        let mut started = false;
        let mut life = || {
            // A wrapper that called us twice would otherwise run a second
            // worker loop on a slot already given back.
            if mem::replace(&mut started, true) {
                return;
            }
            if let Some(after_start) = &self.config.after_start {
                after_start();
            }
            self.work(id, &slot_held);
            if let Some(before_stop) = &self.config.before_stop {
                before_stop();
            }
        };
        match &self.config.thread_wrapper {
            Some(wrap) => wrap(&mut life),
            None => life(),
        }
    }

    /// Runs queued jobs until shutdown or keep-alive expiry, then gives the
    /// slot back.
    fn work(&self, id: usize, slot_held: &Cell<bool>) {
        let mut shared = self.lock();
        let mut expired = false;
        loop {
            if let Some(job) = shared.queue.pop_front() {
                self.publish(&shared);
                drop(shared);
                // The runtime's jobs catch their own panics; this only keeps a
                // misbehaving one from unwinding through the bookkeeping.
                let _ = panic::catch_unwind(AssertUnwindSafe(|| job.run()));
                shared = self.lock();
                expired = false;
                continue;
            }
            if shared.shutdown || expired {
                break;
            }
            (shared, expired) = self.wait_idle(shared);
        }
        self.release_slot(&mut shared, id);
        slot_held.set(false);
    }

    /// Waits as an idle thread. Returns `true` if keep-alive ran out with no
    /// claim; `false` when claimed by a spawner or on shutdown.
    fn wait_idle<'a>(
        &'a self,
        mut shared: MutexGuard<'a, Shared<J>>,
    ) -> (MutexGuard<'a, Shared<J>>, bool) {
        shared.num_idle += 1;
        self.publish(&shared);
        // `None` when keep_alive is too large to represent: never expire.
        let deadline = Instant::now().checked_add(self.config.keep_alive);
        loop {
            shared = match deadline {
                None => self
                    .work_cv
                    .wait(shared)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    self.work_cv
                        .wait_timeout(shared, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            if shared.num_notify > 0 {
                // The spawner already took us out of `num_idle`. This may be a
                // claim meant for another waiter; it does not matter which of
                // the waiting threads honours it.
                shared.num_notify -= 1;
                return (shared, false);
            }
            let expired = deadline.is_some_and(|d| Instant::now() >= d);
            if shared.shutdown || expired {
                shared.num_idle -= 1;
                self.publish(&shared);
                return (shared, expired);
            }
            // Spurious wakeup, or our notification's claim was taken by
            // another waiter: keep waiting for the rest of keep-alive.
        }
    }

    fn release_slot(&self, shared: &mut Shared<J>, id: usize) {
        shared.num_threads -= 1;
        if !shared.shutdown {
            // Leaving on its own: nobody will join this thread, so detach it.
            shared.workers.remove(&id);
        }
        self.publish(shared);
    }
}

/// Drops last on a pool thread: gives back the slot if the thread died
/// before doing so itself, and tells a waiting `shutdown` it has gone.
struct ExitGuard<'a, J: Job> {
    inner: &'a Inner<J>,
    id: usize,
    slot_held: &'a Cell<bool>,
}

impl<J: Job> Drop for ExitGuard<'_, J> {
    fn drop(&mut self) {
        let mut shared = self.inner.lock();
        if self.slot_held.get() {
            self.inner.release_slot(&mut shared, self.id);
        }
        shared.live -= 1;
        let shutting_down = shared.shutdown;
        drop(shared);
        if shutting_down {
            self.inner.exit_cv.notify_all();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
