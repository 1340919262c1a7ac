//! The multi_thread scheduler family: Tokio's `benches/rt_multi_threaded.rs`.
//!
//! Every runtime here is `Builder::new_multi_thread().worker_threads(4)
//! .enable_all().build()`, as in Tokio's `rt()`. (weft-bench builds Tokio
//! without its `time`/`net` features, so `enable_all` starts no I/O or timer
//! driver on either side: both park idle workers on a condvar, and the
//! comparison is scheduler against scheduler.)
//!
//! The bodies of `run` are Tokio's bench bodies with `tokio::` replaced by
//! `$rt::`. Differences from Tokio's file, all outside the timed region:
//! - the busy workloads start their background load in `setup` and stop it
//!   in `teardown`, instead of once for the whole bench, so that the other
//!   runtime's samples (taken in between) run on an otherwise quiet machine;
//! - `yield_many` and `chained_spawn` build a runtime per sample in `setup`
//!   and drop it in `teardown`: Tokio's bench builds it in the
//!   `bench_function` closure, which Criterion calls once per sample, outside
//!   the `b.iter` loop that is timed.

macro_rules! multi_thread_family {
    ($rt:ident) => {
        use crate::harness::Side;
        use crate::workloads::{stall, NUM_SPAWN, NUM_WORKERS};
        use std::sync::atomic::Ordering::Relaxed;
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        use std::sync::{mpsc, Arc};
        use $rt::runtime::{self, Runtime};
        use $rt::sync::oneshot;
        use $rt::task::JoinHandle;

        /// Tokio's `rt()`.
        fn rt() -> Runtime {
            runtime::Builder::new_multi_thread()
                .worker_threads(NUM_WORKERS)
                .enable_all()
                .build()
                .unwrap()
        }

        // ---- spawn_many_local -------------------------------------------

        pub struct SpawnManyLocal {
            rt: Runtime,
            tx: mpsc::SyncSender<()>,
            rx: mpsc::Receiver<()>,
            rem: Arc<AtomicUsize>,
        }

        pub fn spawn_many_local() -> Box<dyn Side> {
            let (tx, rx) = mpsc::sync_channel(1000);
            Box::new(SpawnManyLocal {
                rt: rt(),
                tx,
                rx,
                rem: Arc::new(AtomicUsize::new(0)),
            })
        }

        impl Side for SpawnManyLocal {
            fn run(&mut self) {
                let Self { rt, tx, rx, rem } = &*self;
                rem.store(NUM_SPAWN, Relaxed);

                rt.block_on(async {
                    for _ in 0..NUM_SPAWN {
                        let tx = tx.clone();
                        let rem = rem.clone();

                        $rt::spawn(async move {
                            if 1 == rem.fetch_sub(1, Relaxed) {
                                tx.send(()).unwrap();
                            }
                        });
                    }

                    rx.recv().unwrap();
                });
            }
        }

        // ---- spawn_many_remote_idle -------------------------------------

        pub struct SpawnManyRemoteIdle {
            rt: Runtime,
            handles: Vec<JoinHandle<()>>,
        }

        pub fn spawn_many_remote_idle() -> Box<dyn Side> {
            Box::new(SpawnManyRemoteIdle {
                rt: rt(),
                handles: Vec::with_capacity(NUM_SPAWN),
            })
        }

        impl Side for SpawnManyRemoteIdle {
            fn run(&mut self) {
                let Self { rt, handles } = self;

                for _ in 0..NUM_SPAWN {
                    handles.push(rt.spawn(async {}));
                }

                rt.block_on(async {
                    for handle in handles.drain(..) {
                        handle.await.unwrap();
                    }
                });
            }
        }

        // ---- spawn_many_remote_busy1 ------------------------------------
        // The runtime is busy with tasks that consume CPU time and yield.
        // Yielding is a lower notification priority than spawning.

        pub struct SpawnManyRemoteBusy1 {
            rt: Runtime,
            handles: Vec<JoinHandle<()>>,
            flag: Arc<AtomicBool>,
            started: Arc<AtomicUsize>,
            background: Vec<JoinHandle<()>>,
        }

        pub fn spawn_many_remote_busy1() -> Box<dyn Side> {
            Box::new(SpawnManyRemoteBusy1 {
                rt: rt(),
                handles: Vec::with_capacity(NUM_SPAWN),
                flag: Arc::new(AtomicBool::new(false)),
                started: Arc::new(AtomicUsize::new(0)),
                background: Vec::with_capacity(2 * NUM_WORKERS),
            })
        }

        impl Side for SpawnManyRemoteBusy1 {
            fn setup(&mut self) {
                self.flag.store(true, Relaxed);
                self.started.store(0, Relaxed);
                // Spawn some tasks to keep the runtime busy (Tokio's loop).
                for _ in 0..(2 * NUM_WORKERS) {
                    let flag = self.flag.clone();
                    let started = self.started.clone();
                    self.background.push(self.rt.spawn(async move {
                        started.fetch_add(1, Relaxed);
                        while flag.load(Relaxed) {
                            $rt::task::yield_now().await;
                            stall();
                        }
                    }));
                }
                // Start the clock only once every background task runs, as
                // in Tokio's bench where they run for the whole benchmark.
                while self.started.load(Relaxed) < 2 * NUM_WORKERS {
                    std::thread::yield_now();
                }
            }

            fn run(&mut self) {
                let Self { rt, handles, .. } = self;
                let rt_handle = rt.handle();

                for _ in 0..NUM_SPAWN {
                    handles.push(rt_handle.spawn(async {}));
                }

                rt.block_on(async {
                    for handle in handles.drain(..) {
                        handle.await.unwrap();
                    }
                });
            }

            fn teardown(&mut self) {
                // Stop the load so the other runtime's next sample does not
                // share two cores with eight spinning tasks.
                self.flag.store(false, Relaxed);
                let background = &mut self.background;
                self.rt.block_on(async {
                    for handle in background.drain(..) {
                        handle.await.unwrap();
                    }
                });
            }
        }

        // ---- spawn_many_remote_busy2 ------------------------------------
        // The runtime is busy with tasks that consume CPU time and spawn new
        // high-CPU tasks. Spawning goes via a higher notification priority
        // than yielding.

        const BUSY2_NUM_SPAWN: usize = 1_000;

        /// Tokio's `iter`: stall, then spawn the successor. The `else` arm
        /// (not in Tokio's) counts finished chains so `teardown` can wait
        /// for them; it runs only after the timed region.
        fn busy_chain(flag: Arc<AtomicBool>, live: Arc<AtomicUsize>) {
            $rt::spawn(async {
                if flag.load(Relaxed) {
                    stall();
                    busy_chain(flag, live);
                } else {
                    live.fetch_sub(1, Relaxed);
                }
            });
        }

        pub struct SpawnManyRemoteBusy2 {
            rt: Runtime,
            handles: Vec<JoinHandle<()>>,
            flag: Arc<AtomicBool>,
            started: Arc<AtomicUsize>,
            live: Arc<AtomicUsize>,
        }

        pub fn spawn_many_remote_busy2() -> Box<dyn Side> {
            Box::new(SpawnManyRemoteBusy2 {
                rt: rt(),
                handles: Vec::with_capacity(BUSY2_NUM_SPAWN),
                flag: Arc::new(AtomicBool::new(false)),
                started: Arc::new(AtomicUsize::new(0)),
                live: Arc::new(AtomicUsize::new(0)),
            })
        }

        impl Side for SpawnManyRemoteBusy2 {
            fn setup(&mut self) {
                self.flag.store(true, Relaxed);
                self.started.store(0, Relaxed);
                self.live.store(NUM_WORKERS, Relaxed);
                for _ in 0..NUM_WORKERS {
                    let flag = self.flag.clone();
                    let live = self.live.clone();
                    let started = self.started.clone();
                    self.rt.spawn(async move {
                        started.fetch_add(1, Relaxed);
                        busy_chain(flag, live);
                    });
                }
                while self.started.load(Relaxed) < NUM_WORKERS {
                    std::thread::yield_now();
                }
            }

            fn run(&mut self) {
                let Self { rt, handles, .. } = self;
                let rt_handle = rt.handle();

                for _ in 0..BUSY2_NUM_SPAWN {
                    handles.push(rt_handle.spawn(async {}));
                }

                rt.block_on(async {
                    for handle in handles.drain(..) {
                        handle.await.unwrap();
                    }
                });
            }

            fn teardown(&mut self) {
                self.flag.store(false, Relaxed);
                while self.live.load(Relaxed) > 0 {
                    std::thread::yield_now();
                }
            }
        }

        // ---- yield_many -------------------------------------------------

        const NUM_YIELD: usize = 1_000;
        const TASKS: usize = 200;

        pub struct YieldMany {
            /// Built per sample in `setup`, dropped in `teardown`.
            state: Option<(Runtime, mpsc::SyncSender<()>, mpsc::Receiver<()>)>,
        }

        pub fn yield_many() -> Box<dyn Side> {
            Box::new(YieldMany { state: None })
        }

        impl Side for YieldMany {
            fn setup(&mut self) {
                let (tx, rx) = mpsc::sync_channel(TASKS);
                self.state = Some((rt(), tx, rx));
            }

            fn run(&mut self) {
                let (rt, tx, rx) = self.state.as_ref().expect("setup builds the runtime");

                for _ in 0..TASKS {
                    let tx = tx.clone();

                    rt.spawn(async move {
                        for _ in 0..NUM_YIELD {
                            $rt::task::yield_now().await;
                        }

                        tx.send(()).unwrap();
                    });
                }

                for _ in 0..TASKS {
                    rx.recv().unwrap();
                }
            }

            fn teardown(&mut self) {
                self.state = None;
            }
        }

        // ---- ping_pong --------------------------------------------------

        const NUM_PINGS: usize = 1_000;

        pub struct PingPong {
            rt: Runtime,
            done_tx: mpsc::SyncSender<()>,
            done_rx: mpsc::Receiver<()>,
            rem: Arc<AtomicUsize>,
        }

        pub fn ping_pong() -> Box<dyn Side> {
            let (done_tx, done_rx) = mpsc::sync_channel(1000);
            Box::new(PingPong {
                rt: rt(),
                done_tx,
                done_rx,
                rem: Arc::new(AtomicUsize::new(0)),
            })
        }

        impl Side for PingPong {
            fn run(&mut self) {
                let done_tx = self.done_tx.clone();
                let rem = self.rem.clone();
                rem.store(NUM_PINGS, Relaxed);
                let done_rx = &self.done_rx;

                self.rt.block_on(async {
                    $rt::spawn(async move {
                        for _ in 0..NUM_PINGS {
                            let rem = rem.clone();
                            let done_tx = done_tx.clone();

                            $rt::spawn(async move {
                                let (tx1, rx1) = oneshot::channel();
                                let (tx2, rx2) = oneshot::channel();

                                $rt::spawn(async move {
                                    rx1.await.unwrap();
                                    tx2.send(()).unwrap();
                                });

                                tx1.send(()).unwrap();
                                rx2.await.unwrap();

                                if 1 == rem.fetch_sub(1, Relaxed) {
                                    done_tx.send(()).unwrap();
                                }
                            });
                        }
                    });

                    done_rx.recv().unwrap();
                });
            }
        }

        // ---- chained_spawn ----------------------------------------------

        const ITER: usize = 1_000;

        fn iter(done_tx: mpsc::SyncSender<()>, n: usize) {
            if n == 0 {
                done_tx.send(()).unwrap();
            } else {
                $rt::spawn(async move {
                    iter(done_tx, n - 1);
                });
            }
        }

        pub struct ChainedSpawn {
            /// Built per sample in `setup`, dropped in `teardown`.
            state: Option<(Runtime, mpsc::SyncSender<()>, mpsc::Receiver<()>)>,
        }

        pub fn chained_spawn() -> Box<dyn Side> {
            Box::new(ChainedSpawn { state: None })
        }

        impl Side for ChainedSpawn {
            fn setup(&mut self) {
                let (done_tx, done_rx) = mpsc::sync_channel(1000);
                self.state = Some((rt(), done_tx, done_rx));
            }

            fn run(&mut self) {
                let (rt, done_tx, done_rx) = self.state.as_ref().expect("setup builds the runtime");
                let done_tx = done_tx.clone();

                rt.block_on(async {
                    $rt::spawn(async move {
                        iter(done_tx, ITER);
                    });

                    done_rx.recv().unwrap();
                });
            }

            fn teardown(&mut self) {
                self.state = None;
            }
        }
    };
}

/// The family on Tokio.
pub mod tokio_side {
    multi_thread_family!(tokio);
}

/// The family on weft.
pub mod weft_side {
    multi_thread_family!(weft);
}
