use super::*;
use std::hint::black_box;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;

/// Upper bound for anything that should happen "soon"; generous because
/// the machine is small and shared.
const LONG: Duration = Duration::from_secs(30);

struct TestJob {
    work: Box<dyn FnOnce() + Send>,
}

impl TestJob {
    fn new(work: impl FnOnce() + Send + 'static) -> Self {
        TestJob {
            work: Box::new(work),
        }
    }
}

impl Job for TestJob {
    fn run(self) {
        (self.work)();
    }
}

fn config(max_threads: usize) -> PoolConfig {
    PoolConfig {
        max_threads,
        keep_alive: LONG,
        ..PoolConfig::default()
    }
}

fn spawn(spawner: &Spawner<TestJob>, work: impl FnOnce() + Send + 'static) {
    spawner.spawn(TestJob::new(work)).expect("spawn refused");
}

/// Polls until `cond` holds, failing the test after `LONG`.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + LONG;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// A one-shot latch that jobs block on until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn wait(&self) {
        let guard = self.open.lock().unwrap();
        let (guard, _) = self
            .cv
            .wait_timeout_while(guard, LONG, |open| !*open)
            .unwrap();
        assert!(*guard, "gate never opened");
    }
}

#[test]
fn jobs_run_and_report_results() {
    let pool = BlockingPool::new(config(4));
    let (tx, rx) = mpsc::channel();
    for i in 0..20u64 {
        let tx = tx.clone();
        spawn(pool.spawner(), move || tx.send(i * i).unwrap());
    }
    let mut got: Vec<u64> = (0..20).map(|_| rx.recv_timeout(LONG).unwrap()).collect();
    got.sort_unstable();
    assert_eq!(got, (0..20).map(|i| i * i).collect::<Vec<_>>());
    assert!(pool.spawner().num_threads() <= 4);
}

#[test]
fn grows_to_the_cap_and_no_further() {
    let pool = BlockingPool::new(config(3));
    let spawner = pool.spawner().clone();
    let gate = Arc::new(Gate::default());
    let started = Arc::new(AtomicUsize::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    let max_running = Arc::new(AtomicUsize::new(0));
    let max_threads = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    for i in 0..10 {
        let (gate, started, running, max_running, max_threads, tx, s) = (
            gate.clone(),
            started.clone(),
            running.clone(),
            max_running.clone(),
            max_threads.clone(),
            tx.clone(),
            spawner.clone(),
        );
        spawn(&spawner, move || {
            started.fetch_add(1, SeqCst);
            let now = running.fetch_add(1, SeqCst) + 1;
            max_running.fetch_max(now, SeqCst);
            max_threads.fetch_max(s.num_threads(), SeqCst);
            gate.wait();
            running.fetch_sub(1, SeqCst);
            tx.send(i).unwrap();
        });
        assert!(spawner.num_threads() <= 3);
    }
    // Every job blocks, so no thread is ever idle: the first three spawns
    // each start a thread and the rest queue.
    assert_eq!(spawner.num_threads(), 3);
    eventually("three jobs to start", || started.load(SeqCst) == 3);
    assert_eq!(spawner.queue_depth(), 7);
    assert_eq!(spawner.num_idle_threads(), 0);

    gate.open();
    let mut got: Vec<i32> = (0..10).map(|_| rx.recv_timeout(LONG).unwrap()).collect();
    got.sort_unstable();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
    assert_eq!(max_running.load(SeqCst), 3);
    assert!(max_threads.load(SeqCst) <= 3);
    assert!(spawner.num_threads() <= 3);
    assert_eq!(spawner.queue_depth(), 0);
}

#[test]
fn idle_thread_is_reused() {
    let pool = BlockingPool::new(config(4));
    let spawner = pool.spawner();
    for _ in 0..3 {
        let (tx, rx) = mpsc::channel();
        spawn(spawner, move || tx.send(()).unwrap());
        rx.recv_timeout(LONG).unwrap();
        eventually("the thread to go idle", || spawner.num_idle_threads() == 1);
        assert_eq!(spawner.num_threads(), 1);
    }
}

#[test]
fn idle_threads_exit_after_keep_alive() {
    let pool = BlockingPool::new(PoolConfig {
        keep_alive: Duration::from_millis(50),
        ..config(4)
    });
    let spawner = pool.spawner();
    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    for _ in 0..4 {
        let (gate, tx) = (gate.clone(), tx.clone());
        spawn(spawner, move || {
            gate.wait();
            tx.send(()).unwrap();
        });
    }
    assert_eq!(spawner.num_threads(), 4);
    gate.open();
    for _ in 0..4 {
        rx.recv_timeout(LONG).unwrap();
    }
    eventually("idle threads to exit", || {
        spawner.num_threads() == 0 && spawner.num_idle_threads() == 0
    });

    // The pool grows again from nothing.
    spawn(spawner, move || tx.send(()).unwrap());
    rx.recv_timeout(LONG).unwrap();
}

thread_local! {
    static IN_WRAPPER: Cell<bool> = const { Cell::new(false) };
}

/// Uses more stack than a default 2 MiB thread has.
#[inline(never)]
fn use_big_stack() -> u8 {
    let mut buf = [0u8; 6 << 20];
    black_box(&mut buf);
    buf[buf.len() - 1]
}

#[test]
fn thread_config_is_applied() {
    let names = Arc::new(AtomicUsize::new(0));
    let starts = Arc::new(Mutex::new(Vec::new()));
    let stops = Arc::new(AtomicUsize::new(0));
    let wraps = Arc::new(AtomicUsize::new(0));
    let unwraps = Arc::new(AtomicUsize::new(0));
    let (n, st, sp, w, uw) = (
        names.clone(),
        starts.clone(),
        stops.clone(),
        wraps.clone(),
        unwraps.clone(),
    );
    let mut pool = BlockingPool::new(PoolConfig {
        max_threads: 2,
        keep_alive: LONG,
        thread_name: Arc::new(move || format!("weft-test-{}", n.fetch_add(1, SeqCst))),
        stack_size: Some(16 << 20),
        after_start: Some(Arc::new(move || {
            let name = thread::current().name().unwrap().to_owned();
            st.lock().unwrap().push((name, IN_WRAPPER.get()));
        })),
        before_stop: Some(Arc::new(move || {
            assert!(IN_WRAPPER.get());
            sp.fetch_add(1, SeqCst);
        })),
        thread_wrapper: Some(Arc::new(move |life| {
            w.fetch_add(1, SeqCst);
            IN_WRAPPER.set(true);
            life();
            IN_WRAPPER.set(false);
            uw.fetch_add(1, SeqCst);
        })),
    });

    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    for _ in 0..2 {
        let (gate, tx) = (gate.clone(), tx.clone());
        spawn(pool.spawner(), move || {
            let name = thread::current().name().unwrap().to_owned();
            let byte = use_big_stack();
            tx.send((name, IN_WRAPPER.get(), byte)).unwrap();
            gate.wait();
        });
    }
    let mut seen: Vec<_> = (0..2).map(|_| rx.recv_timeout(LONG).unwrap()).collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("weft-test-0".to_owned(), true, 0),
            ("weft-test-1".to_owned(), true, 0)
        ]
    );
    gate.open();

    // Shutdown joins the threads, so every callback has finished.
    pool.shutdown(None);
    let mut starts = starts.lock().unwrap().clone();
    starts.sort();
    assert_eq!(
        starts,
        [
            ("weft-test-0".to_owned(), true),
            ("weft-test-1".to_owned(), true)
        ]
    );
    assert_eq!(names.load(SeqCst), 2);
    assert_eq!(stops.load(SeqCst), 2);
    assert_eq!(wraps.load(SeqCst), 2);
    assert_eq!(unwraps.load(SeqCst), 2);
}

#[test]
fn shutdown_runs_queued_jobs_and_waits_for_them() {
    let mut pool = BlockingPool::new(config(1));
    let spawner = pool.spawner().clone();
    let gate = Arc::new(Gate::default());
    let started = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    {
        let (gate, started, finished) = (gate.clone(), started.clone(), finished.clone());
        spawn(&spawner, move || {
            started.store(true, SeqCst);
            gate.wait();
            // Still running well after shutdown began.
            thread::sleep(Duration::from_millis(50));
            finished.store(true, SeqCst);
        });
    }
    eventually("the first job to start", || started.load(SeqCst));

    // Queued behind the running job on the pool's only thread.
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..5 {
        let ran = ran.clone();
        spawn(&spawner, move || {
            ran.fetch_add(1, SeqCst);
        });
    }
    assert_eq!(spawner.queue_depth(), 5);

    // Release the running job only once shutdown has begun, so the queued
    // jobs can only start after it.
    let opener = {
        let (spawner, gate) = (spawner.clone(), gate.clone());
        thread::spawn(move || {
            eventually("shutdown to begin", || spawner.is_shutdown());
            gate.open();
        })
    };
    pool.shutdown(None);
    assert!(
        finished.load(SeqCst),
        "shutdown returned before the running job ended"
    );
    assert_eq!(
        ran.load(SeqCst),
        5,
        "a job queued before shutdown did not run"
    );
    assert_eq!(spawner.num_threads(), 0);
    assert_eq!(spawner.queue_depth(), 0);

    pool.shutdown(None);
    drop(pool);
    assert_eq!(ran.load(SeqCst), 5);
    opener.join().unwrap();
}

#[test]
fn shutdown_timeout_returns_despite_a_stuck_job() {
    let mut pool = BlockingPool::new(config(2));
    let spawner = pool.spawner().clone();
    let started = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let (started, release) = (started.clone(), release.clone());
        spawn(&spawner, move || {
            started.store(true, SeqCst);
            let begun = Instant::now();
            while !release.load(SeqCst) && begun.elapsed() < Duration::from_secs(60) {
                thread::sleep(Duration::from_millis(5));
            }
            done_tx.send(()).unwrap();
        });
    }
    eventually("the job to start", || started.load(SeqCst));

    let begun = Instant::now();
    pool.shutdown(Some(Duration::from_millis(100)));
    let took = begun.elapsed();
    assert!(
        took >= Duration::from_millis(100),
        "gave up early: {took:?}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(spawner.is_shutdown());

    // Later calls, including the one in drop, return at once.
    let begun = Instant::now();
    drop(pool);
    assert!(begun.elapsed() < Duration::from_secs(5));

    // Let the detached thread finish so the process ends clean.
    release.store(true, SeqCst);
    done_rx.recv_timeout(LONG).unwrap();
    eventually("the detached thread to exit", || spawner.num_threads() == 0);
}

#[test]
fn spawn_after_shutdown_is_refused() {
    let mut pool = BlockingPool::new(config(2));
    let spawner = pool.spawner().clone();
    pool.shutdown(None);
    assert!(spawner.is_shutdown());

    let (tx, rx) = mpsc::channel();
    match spawner.spawn(TestJob::new(move || tx.send(()).unwrap())) {
        Err(SpawnError::Shutdown(job)) => {
            // The job comes back whole, not run.
            assert!(rx.try_recv().is_err());
            job.run();
            rx.try_recv().unwrap();
        }
        other => panic!("expected Shutdown, got {other:?}"),
    }
    assert_eq!(spawner.num_threads(), 0);
}

#[test]
fn thread_creation_failure_with_no_threads_returns_the_job() {
    // No system can map a stack this large, so thread creation fails.
    let pool = BlockingPool::new(PoolConfig {
        stack_size: Some(1 << 50),
        ..config(2)
    });
    let spawner = pool.spawner();
    match spawner.spawn(TestJob::new(|| {})) {
        Err(SpawnError::NoThreads(_job)) => {}
        other => panic!("expected NoThreads, got {other:?}"),
    }
    assert_eq!(spawner.num_threads(), 0);
    assert_eq!(spawner.queue_depth(), 0);
    assert!(!spawner.is_shutdown());
}

#[test]
fn shutdown_from_a_pool_thread_does_not_deadlock() {
    let pool = Arc::new(Mutex::new(Some(BlockingPool::new(config(4)))));
    let spawner = pool.lock().unwrap().as_ref().unwrap().spawner().clone();

    // Another thread's job, which shutdown must wait for.
    let gate = Arc::new(Gate::default());
    let other_started = Arc::new(AtomicBool::new(false));
    let other_finished = Arc::new(AtomicBool::new(false));
    {
        let (gate, started, finished) =
            (gate.clone(), other_started.clone(), other_finished.clone());
        spawn(&spawner, move || {
            started.store(true, SeqCst);
            gate.wait();
            finished.store(true, SeqCst);
        });
    }
    eventually("the other job to start", || other_started.load(SeqCst));

    let (tx, rx) = mpsc::channel();
    {
        let (pool, finished) = (pool.clone(), other_finished.clone());
        spawn(&spawner, move || {
            let owned = pool.lock().unwrap().take();
            drop(owned); // shutdown(None), on one of the pool's own threads
            tx.send(finished.load(SeqCst)).unwrap();
        });
    }
    eventually("shutdown to begin", || spawner.is_shutdown());
    gate.open();
    let other_done_first = rx
        .recv_timeout(LONG)
        .expect("shutdown from a pool thread deadlocked");
    assert!(
        other_done_first,
        "shutdown did not wait for the other thread"
    );
    eventually("the last thread to exit", || spawner.num_threads() == 0);
}

#[test]
fn panicking_job_keeps_its_thread() {
    let pool = BlockingPool::new(config(1));
    let spawner = pool.spawner();
    spawn(spawner, || panic!("deliberate panic in a blocking job"));
    let (tx, rx) = mpsc::channel();
    spawn(spawner, move || tx.send(()).unwrap());
    rx.recv_timeout(LONG).unwrap();
    assert_eq!(spawner.num_threads(), 1);
    eventually("the thread to go idle", || spawner.num_idle_threads() == 1);
}

#[test]
fn concurrent_spawns_with_churning_threads() {
    // A tiny keep-alive makes threads exit and restart constantly while
    // several threads spawn, shaking out races in the counts.
    let mut pool = BlockingPool::new(PoolConfig {
        keep_alive: Duration::from_micros(200),
        ..config(3)
    });
    let spawner = pool.spawner().clone();
    let ran = Arc::new(AtomicUsize::new(0));
    let max_threads = Arc::new(AtomicUsize::new(0));
    let spawners: Vec<_> = (0..4)
        .map(|_| {
            let (spawner, ran, max_threads) = (spawner.clone(), ran.clone(), max_threads.clone());
            thread::spawn(move || {
                for i in 0..200 {
                    let (ran, s, max_threads) = (ran.clone(), spawner.clone(), max_threads.clone());
                    spawn(&spawner, move || {
                        max_threads.fetch_max(s.num_threads(), SeqCst);
                        ran.fetch_add(1, SeqCst);
                    });
                    if i % 8 == 0 {
                        thread::sleep(Duration::from_millis(1));
                    }
                }
            })
        })
        .collect();
    for s in spawners {
        s.join().unwrap();
    }
    eventually("all jobs to run", || ran.load(SeqCst) == 800);
    assert!(max_threads.load(SeqCst) <= 3);
    eventually("threads to go idle or exit", || {
        spawner.num_idle_threads() == spawner.num_threads()
    });
    pool.shutdown(None);
    assert_eq!(ran.load(SeqCst), 800);
    assert_eq!(spawner.num_threads(), 0);
    assert_eq!(spawner.num_idle_threads(), 0);
    assert_eq!(spawner.queue_depth(), 0);
}
