//! `Builder`: configure and build a [`Runtime`](super::Runtime).

use super::Runtime;
use crate::blocking::{BlockingPool, PoolConfig};
use crate::runtime::driver::{Driver, DriverConfig};
use crate::scheduler::current_thread::CurrentThread;
use crate::scheduler::multi_thread::MultiThread;
use crate::scheduler::park::SharedDriver;
use crate::scheduler::{self, Config, Drivers};
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

type Callback = Arc<dyn Fn() + Send + Sync>;

/// Builds a runtime with custom settings. The names follow Tokio's, so a
/// Tokio builder chain ports by renaming the crate.
///
/// ```
/// let rt = weft::runtime::Builder::new_multi_thread()
///     .worker_threads(2)
///     .thread_name("my-worker")
///     .enable_all()
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { weft::spawn(async { 1 + 1 }).await.unwrap() }), 2);
/// ```
pub struct Builder {
    kind: Kind,
    worker_threads: Option<usize>,
    max_blocking_threads: usize,
    keep_alive: Duration,
    thread_name: Arc<dyn Fn() -> String + Send + Sync>,
    thread_stack_size: Option<usize>,
    on_thread_start: Option<Callback>,
    on_thread_stop: Option<Callback>,
    on_thread_park: Option<Callback>,
    on_thread_unpark: Option<Callback>,
    global_queue_interval: Option<u32>,
    event_interval: u32,
    disable_lifo_slot: bool,
    long_poll_threshold: Option<Duration>,
    on_long_poll: Option<super::LongPollHook>,
    enable_io: bool,
    enable_time: bool,
    start_paused: bool,
    name: Option<Arc<str>>,
    max_io_events: usize,
    /// `None`: the same as `max_io_events`.
    max_io_events_busy: Option<usize>,
    /// `None`: `WEFT_IO_DRIVER`'s choice, else `Auto`.
    io_driver: Option<super::IoDriver>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    CurrentThread,
    MultiThread,
}

/// The default of [`Builder::long_poll_threshold`].
const DEFAULT_LONG_POLL_THRESHOLD: Duration = Duration::from_millis(10);

/// Environment variable that overrides the default worker count (before
/// Tokio's `TOKIO_WORKER_THREADS`, which weft also reads).
pub const WORKER_THREADS_ENV: &str = "WEFT_WORKER_THREADS";

/// Tokio's name for [`WORKER_THREADS_ENV`], read when weft's is unset.
const TOKIO_WORKER_THREADS_ENV: &str = "TOKIO_WORKER_THREADS";

impl Builder {
    /// A runtime that runs every task on the thread calling `block_on`.
    pub fn new_current_thread() -> Builder {
        Builder::new(Kind::CurrentThread)
    }

    /// A work-stealing runtime with a pool of worker threads.
    pub fn new_multi_thread() -> Builder {
        Builder::new(Kind::MultiThread)
    }

    fn new(kind: Kind) -> Builder {
        Builder {
            kind,
            worker_threads: None,
            max_blocking_threads: 512,
            keep_alive: Duration::from_secs(10),
            thread_name: Arc::new(|| "weft-rt-worker".to_string()),
            thread_stack_size: None,
            on_thread_start: None,
            on_thread_stop: None,
            on_thread_park: None,
            on_thread_unpark: None,
            global_queue_interval: None,
            event_interval: 61,
            disable_lifo_slot: false,
            long_poll_threshold: Some(DEFAULT_LONG_POLL_THRESHOLD),
            on_long_poll: None,
            enable_io: false,
            enable_time: false,
            start_paused: false,
            name: None,
            max_io_events: 1024,
            max_io_events_busy: None,
            io_driver: None,
        }
    }

    /// Number of worker threads (multi_thread only). Default: the
    /// `WEFT_WORKER_THREADS` environment variable, else Tokio's
    /// `TOKIO_WORKER_THREADS`, else the number of CPUs.
    ///
    /// # Panics
    /// If `val` is 0.
    #[track_caller]
    pub fn worker_threads(&mut self, val: usize) -> &mut Self {
        assert!(
            val > 0,
            "Worker threads cannot be set to 0: a runtime with no workers cannot run tasks. \
             For a single-threaded runtime use Builder::new_current_thread()."
        );
        self.worker_threads = Some(val);
        self
    }

    /// Most threads the blocking pool may start (default 512).
    ///
    /// # Panics
    /// If `val` is 0.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, val: usize) -> &mut Self {
        assert!(
            val > 0,
            "max_blocking_threads must be at least 1: spawn_blocking needs a thread to run on"
        );
        self.max_blocking_threads = val;
        self
    }

    /// How long an idle blocking thread lives (default 10 s).
    pub fn thread_keep_alive(&mut self, duration: Duration) -> &mut Self {
        self.keep_alive = duration;
        self
    }

    /// Name the runtime (read back with [`Handle::name`](super::Handle::name);
    /// it names the runtime, not its threads: see
    /// [`thread_name`](Self::thread_name)).
    ///
    /// # Panics
    /// If `name` is empty or only white space.
    #[track_caller]
    pub fn name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        assert!(
            !name.trim().is_empty(),
            "Builder::name got an empty runtime name: pass a name with at least one visible \
             character, or do not call name() to leave the runtime unnamed"
        );
        self.name = Some(name.into());
        self
    }

    /// Most I/O events the driver takes from the kernel in one turn
    /// (default 1024); the rest wait for the next turn.
    ///
    /// # Panics
    /// If `capacity` is 0.
    #[track_caller]
    pub fn max_io_events_per_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(
            capacity > 0,
            "max_io_events_per_tick must be non-zero: a driver turn that may take no event \
             never sees any I/O"
        );
        self.max_io_events = capacity;
        self
    }

    /// Most I/O events the driver takes in a turn that does not wait: a
    /// worker with tasks still queued polls the driver every
    /// [`event_interval`](Self::event_interval) polls, and a smaller batch
    /// there leaves the rest in the kernel instead of flooding its queue.
    /// A parked worker still takes up to
    /// [`max_io_events_per_tick`](Self::max_io_events_per_tick). Default:
    /// the same as `max_io_events_per_tick` (a larger value is capped by
    /// it).
    ///
    /// # Panics
    /// If `capacity` is 0.
    #[track_caller]
    pub fn max_io_events_per_busy_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(
            capacity > 0,
            "max_io_events_per_busy_tick must be non-zero: a busy driver turn that may take \
             no event never sees any I/O"
        );
        self.max_io_events_busy = Some(capacity);
        self
    }

    /// Name of the runtime's threads (default `weft-rt-worker`, shaped as
    /// Tokio's `tokio-rt-worker`: Linux keeps 15 bytes of a thread's name).
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        self.thread_name = Arc::new(move || name.clone());
        self
    }

    /// A function producing each new thread's name.
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.thread_name = Arc::new(f);
        self
    }

    /// Stack size of the runtime's threads, in bytes.
    pub fn thread_stack_size(&mut self, val: usize) -> &mut Self {
        self.thread_stack_size = Some(val);
        self
    }

    /// Run `f` on each runtime thread when it starts.
    pub fn on_thread_start<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_start = Some(Arc::new(f));
        self
    }

    /// Run `f` on each runtime thread before it stops.
    pub fn on_thread_stop<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_stop = Some(Arc::new(f));
        self
    }

    /// Run `f` on a worker just before it parks.
    pub fn on_thread_park<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_park = Some(Arc::new(f));
        self
    }

    /// Run `f` on a worker just after it wakes from parking.
    pub fn on_thread_unpark<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.on_thread_unpark = Some(Arc::new(f));
        self
    }

    /// Ticks between checks of the global queue ahead of the local one.
    ///
    /// Default: on multi_thread, tuned at run time so the global queue is
    /// checked about every 200 µs of task polling (between 2 and 127 ticks;
    /// 61 until the first measurement); on current_thread, 31. Setting it
    /// fixes the interval.
    ///
    /// # Panics
    /// If `val` is 0.
    #[track_caller]
    pub fn global_queue_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "global_queue_interval must be at least 1");
        self.global_queue_interval = Some(val);
        self
    }

    /// Ticks between polls of the event drivers and other maintenance
    /// (default 61).
    ///
    /// # Panics
    /// If `val` is 0.
    #[track_caller]
    pub fn event_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "event_interval must be at least 1");
        self.event_interval = val;
        self
    }

    /// Turn off the LIFO slot: woken tasks go to the back of the queue.
    pub fn disable_lifo_slot(&mut self) -> &mut Self {
        self.disable_lifo_slot = true;
        self
    }

    /// Turn on every driver (I/O and time). Accepted now; the drivers
    /// themselves arrive with weft's I/O and time support.
    pub fn enable_all(&mut self) -> &mut Self {
        self.enable_io = true;
        self.enable_time = true;
        self
    }

    /// Turn on the I/O driver (see [`Builder::enable_all`]).
    pub fn enable_io(&mut self) -> &mut Self {
        self.enable_io = true;
        self
    }

    /// Turn on the time driver (see [`Builder::enable_all`]).
    pub fn enable_time(&mut self) -> &mut Self {
        self.enable_time = true;
        self
    }

    /// Start the runtime's clock frozen (`current_thread` only, needs the
    /// time driver): time moves only through [`crate::time::advance`], or
    /// jumps to the next timer whenever every task is waiting. For
    /// deterministic tests of timeouts and intervals.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = weft::runtime::Builder::new_current_thread()
    ///     .enable_time()
    ///     .start_paused(true)
    ///     .build()
    ///     .unwrap();
    /// rt.block_on(async {
    ///     let real = std::time::Instant::now();
    ///     weft::time::sleep(Duration::from_secs(3600)).await; // returns at once
    ///     assert!(real.elapsed() < Duration::from_secs(60));
    /// });
    /// ```
    pub fn start_paused(&mut self, start_paused: bool) -> &mut Self {
        self.start_paused = start_paused;
        self
    }

    fn resolved_worker_threads(&self) -> io::Result<usize> {
        if let Some(n) = self.worker_threads {
            return Ok(n);
        }
        // Tokio's variable too, so a program ported from Tokio (or run
        // through the `tokio` stand-in) keeps its deployment's setting;
        // weft's own wins where both are set.
        for var in [WORKER_THREADS_ENV, TOKIO_WORKER_THREADS_ENV] {
            if let Ok(v) = std::env::var(var) {
                return match v.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "{var}={v:?} is not a worker count: set it to a whole number of at \
                             least 1, or unset it to use one worker per CPU"
                        ),
                    )),
                };
            }
        }
        Ok(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// Build a [`LocalRuntime`](super::LocalRuntime): a current_thread
    /// runtime on which `!Send` tasks can be spawned.
    ///
    /// # Panics
    /// On a builder made with `new_multi_thread`: local tasks need the one
    /// thread that runs everything.
    #[track_caller]
    pub fn build_local(&mut self, options: super::LocalOptions) -> io::Result<super::LocalRuntime> {
        let _ = options;
        if !matches!(self.kind, Kind::CurrentThread) {
            panic!(
                "Builder::build_local only builds current_thread runtimes: start from \
                 Builder::new_current_thread(), or use a LocalSet on a multi_thread runtime"
            );
        }
        let rt = self.build_owned_by(Some(std::thread::current().id()))?;
        Ok(super::LocalRuntime::from_runtime(rt))
    }

    /// A multi_thread worker stuck in one poll longer than `threshold`
    /// (a task that blocks, or computes without yielding) is noticed by a
    /// monitor thread: the work queued behind it moves to other workers (or,
    /// when every worker is stuck, to a rescue thread), the poll is counted
    /// in `RuntimeMetrics::long_poll_count`, and the `on_long_poll` hook is
    /// called. Default 10 ms; `None` turns the monitor off. Lower it to catch
    /// shorter stalls (the monitor samples every quarter of the threshold,
    /// at most every 250 µs, while workers are busy, and sleeps when all are
    /// idle); raise it for workloads whose polls are long by design.
    pub fn long_poll_threshold(&mut self, threshold: impl Into<Option<Duration>>) -> &mut Self {
        self.long_poll_threshold = threshold.into();
        self
    }

    /// Called by the monitor thread, once per poll that runs past the
    /// long-poll threshold, with the task's id, how long the poll has run,
    /// and where the task was spawned. Keep it short: it runs on the
    /// monitor thread.
    pub fn on_long_poll<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn(&super::LongPollInfo) + Send + Sync + 'static,
    {
        self.on_long_poll = Some(Arc::new(f));
        self
    }

    /// Which I/O driver to use. Default: [`IoDriver::Auto`](super::IoDriver::Auto) (io_uring where
    /// a probe at build time finds it usable, epoll elsewhere), unless the
    /// `WEFT_IO_DRIVER` environment variable (`auto`, `epoll`, `uring`)
    /// says otherwise; a driver set here wins over the variable.
    /// [`IoDriver::Uring`](super::IoDriver::Uring) makes [`build`](Self::build) fail, saying why,
    /// where the kernel refuses io_uring. `RuntimeMetrics::io_driver` tells
    /// which one runs.
    ///
    /// ```
    /// use weft::runtime::{Builder, IoDriver};
    ///
    /// let rt = Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .enable_all()
    ///     .io_driver(IoDriver::Epoll)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Epoll));
    /// ```
    pub fn io_driver(&mut self, driver: super::IoDriver) -> &mut Self {
        self.io_driver = Some(driver);
        self
    }

    /// Build the runtime.
    pub fn build(&mut self) -> io::Result<Runtime> {
        self.build_owned_by(None)
    }

    /// Build the runtime; `local_owner` is the thread of the
    /// `LocalRuntime` it is built for.
    fn build_owned_by(
        &mut self,
        local_owner: Option<std::thread::ThreadId>,
    ) -> io::Result<Runtime> {
        let workers = match self.kind {
            Kind::CurrentThread => 0,
            Kind::MultiThread => self.resolved_worker_threads()?,
        };
        let config = Config {
            id: super::Id::next(),
            name: self.name.clone(),
            adaptive_global_queue_interval: self.global_queue_interval.is_none()
                && matches!(self.kind, Kind::MultiThread),
            global_queue_interval: self.global_queue_interval.unwrap_or(match self.kind {
                Kind::CurrentThread => 31,
                Kind::MultiThread => 61,
            }),
            event_interval: self.event_interval,
            disable_lifo_slot: self.disable_lifo_slot,
            before_park: self.on_thread_park.clone(),
            long_poll: self.long_poll_threshold.map(|threshold| {
                crate::scheduler::multi_thread::MonitorConfig {
                    threshold,
                    hook: self.on_long_poll.clone(),
                }
            }),
            after_unpark: self.on_thread_unpark.clone(),
            local_owner,
        };
        // The handle is only known after the scheduler is built, but pool
        // threads must enter it: fill it in through this cell.
        // It holds a weak handle: the pool is owned by the handle's spawner,
        // and a strong one would keep the runtime alive forever.
        let handle_cell: Arc<std::sync::OnceLock<scheduler::WeakHandle>> =
            Arc::new(std::sync::OnceLock::new());
        let wrapper_cell = handle_cell.clone();
        let pool = BlockingPool::new(PoolConfig {
            // Worker threads run on the pool too, on top of the user's cap.
            max_threads: self.max_blocking_threads + workers,
            keep_alive: self.keep_alive,
            thread_name: self.thread_name.clone(),
            stack_size: self.thread_stack_size,
            after_start: self.on_thread_start.clone(),
            before_stop: self.on_thread_stop.clone(),
            thread_wrapper: Some(Arc::new(move |body: &mut dyn FnMut()| {
                let handle = wrapper_cell.get().and_then(scheduler::WeakHandle::upgrade);
                let _guard = handle.as_ref().map(crate::runtime::context::set_current);
                drop(handle);
                body();
            })),
        });
        let spawner = pool.spawner().clone();
        if self.start_paused {
            if matches!(self.kind, Kind::MultiThread) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "start_paused(true) requires the current_thread runtime: a paused clock \
                     needs one thread that knows when every task is idle. Use \
                     Builder::new_current_thread()",
                ));
            }
            if !self.enable_time {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "start_paused(true) needs the time driver: add .enable_time() (or \
                     .enable_all()) to the Builder",
                ));
            }
        }
        let (driver, driver_handle) = Driver::new(DriverConfig {
            enable_io: self.enable_io,
            enable_time: self.enable_time,
            start_paused: self.start_paused,
            max_io_events: self.max_io_events,
            max_io_events_busy: self.max_io_events_busy.unwrap_or(self.max_io_events),
            io_driver: self.io_driver,
            workers: workers.max(1),
        })?;
        let drivers = Drivers {
            shared: (self.enable_io || self.enable_time)
                .then(|| SharedDriver::new(driver, driver_handle.clone())),
            handle: driver_handle,
        };
        let (scheduler, handle) = match self.kind {
            Kind::CurrentThread => {
                let (sched, h) = CurrentThread::new(config, spawner, drivers);
                (
                    super::Scheduler::CurrentThread(sched),
                    scheduler::Handle::CurrentThread(h),
                )
            }
            Kind::MultiThread => {
                let (sched, h) = MultiThread::new(workers, config, spawner, drivers);
                (
                    super::Scheduler::MultiThread(sched),
                    scheduler::Handle::MultiThread(h),
                )
            }
        };
        let _ = handle_cell.set(handle.downgrade());
        Ok(Runtime::from_parts(scheduler, handle, pool))
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("kind", &self.kind)
            .field("worker_threads", &self.worker_threads)
            .field("max_blocking_threads", &self.max_blocking_threads)
            .field("thread_keep_alive", &self.keep_alive)
            .field("global_queue_interval", &self.global_queue_interval)
            .field("event_interval", &self.event_interval)
            .field("disable_lifo_slot", &self.disable_lifo_slot)
            .field("name", &self.name)
            .field("max_io_events_per_tick", &self.max_io_events)
            .field("max_io_events_per_busy_tick", &self.max_io_events_busy)
            .field("io_driver", &self.io_driver)
            .finish_non_exhaustive()
    }
}
