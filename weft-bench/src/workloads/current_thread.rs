//! The current_thread scheduler family: Tokio's `benches/rt_current_thread.rs`.
//!
//! Every runtime is `Builder::new_current_thread().build()` and every
//! iteration spawns 1,000 empty tasks. Tasks of a current_thread runtime run
//! only inside its `block_on`, so the "remote" workloads measure spawning
//! from outside plus draining the queue in one `block_on`.
//!
//! Difference from Tokio's file: the background chain of
//! `ct_spawn_many_remote_busy` is started in `setup` and stopped (and drained)
//! in `teardown` of every sample, both untimed, so every sample starts from
//! the same state; Tokio starts it once and never stops it.

macro_rules! current_thread_family {
    ($rt:ident) => {
        use crate::harness::Side;
        use std::sync::atomic::AtomicBool;
        use std::sync::atomic::Ordering::Relaxed;
        use std::sync::Arc;
        use $rt::runtime::{self, Runtime};
        use $rt::task::JoinHandle;

        const NUM_SPAWN: usize = 1_000;

        /// Tokio's `rt()` for this family.
        fn rt() -> Runtime {
            runtime::Builder::new_current_thread().build().unwrap()
        }

        // ---- ct_spawn_many_local ----------------------------------------

        pub struct SpawnManyLocal {
            rt: Runtime,
            handles: Vec<JoinHandle<()>>,
        }

        pub fn spawn_many_local() -> Box<dyn Side> {
            Box::new(SpawnManyLocal {
                rt: rt(),
                handles: Vec::with_capacity(NUM_SPAWN),
            })
        }

        impl Side for SpawnManyLocal {
            fn run(&mut self) {
                let Self { rt, handles } = self;

                rt.block_on(async {
                    for _ in 0..NUM_SPAWN {
                        handles.push($rt::spawn(async move {}));
                    }

                    for handle in handles.drain(..) {
                        handle.await.unwrap();
                    }
                });
            }
        }

        // ---- ct_spawn_many_remote_idle ----------------------------------

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
        }

        // ---- ct_spawn_many_remote_busy ----------------------------------

        /// Tokio's `iter`: a task whose only job is to spawn its successor.
        /// The flag check (not in Tokio's) lets `teardown` end the chain;
        /// `alive` tells it when the chain is gone.
        fn busy_chain(flag: Arc<AtomicBool>, alive: Arc<AtomicBool>) {
            $rt::spawn(async move {
                if flag.load(Relaxed) {
                    busy_chain(flag, alive)
                } else {
                    alive.store(false, Relaxed);
                }
            });
        }

        pub struct SpawnManyRemoteBusy {
            rt: Runtime,
            handles: Vec<JoinHandle<()>>,
            flag: Arc<AtomicBool>,
            alive: Arc<AtomicBool>,
        }

        pub fn spawn_many_remote_busy() -> Box<dyn Side> {
            Box::new(SpawnManyRemoteBusy {
                rt: rt(),
                handles: Vec::with_capacity(NUM_SPAWN),
                flag: Arc::new(AtomicBool::new(false)),
                alive: Arc::new(AtomicBool::new(false)),
            })
        }

        impl Side for SpawnManyRemoteBusy {
            fn setup(&mut self) {
                self.flag.store(true, Relaxed);
                self.alive.store(true, Relaxed);
                let flag = self.flag.clone();
                let alive = self.alive.clone();
                // Like Tokio's `rt.spawn(async { iter() })`: queued now, it
                // first runs inside the timed `block_on`, as in Tokio's.
                self.rt.spawn(async move { busy_chain(flag, alive) });
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
                self.flag.store(false, Relaxed);
                let alive = &self.alive;
                self.rt.block_on(async {
                    while alive.load(Relaxed) {
                        $rt::task::yield_now().await;
                    }
                });
            }
        }
    };
}

/// The family on Tokio.
pub mod tokio_side {
    current_thread_family!(tokio);
}

/// The family on weft.
pub mod weft_side {
    current_thread_family!(weft);
}
