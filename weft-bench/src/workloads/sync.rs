//! The sync suite: weft's `weft::sync` primitives against Tokio's
//! `tokio::sync`, modelled on Tokio's `benches/sync_mpsc.rs`,
//! `sync_notify.rs` and `sync_semaphore.rs`.
//!
//! Every runtime here is `Builder::new_multi_thread().worker_threads(6)
//! .build()`, as in Tokio's sync benches (their `rt()` uses 6 workers, not
//! the 4 of the scheduler benches). On a 2-core machine that oversubscribes
//! the CPU 3×, on both sides alike. The runtime is built once per workload,
//! outside the timed region, and reused by every sample; the channel, lock
//! or semaphore under test is created inside `run` (as Tokio's benches
//! create theirs inside `b.iter`), so its construction is timed.
//!
//! Shapes (one iteration = one `run`):
//! - `mpsc_*`: Tokio's `contention_*` and `uncontented_*` bodies with
//!   `tokio::` replaced by `$rt::`; messages are `usize`.
//! - `notify_ping`: not in Tokio's benches (its `sync_notify` measures
//!   `notify_waiters` fan-out); a strict ping-pong, so every round is a
//!   cross-task wake in each direction.
//! - `semaphore_contended`: Tokio's `contended_concurrent_multi` spawns 6
//!   tasks that each acquire one permit of `Semaphore::new(5)` once; here
//!   64 tasks do it 100 times each, so one iteration is long enough to time
//!   and the scheduler's share (spawning) is small.
//! - `mutex_contended`: the same shape around a `Mutex<u64>` (Tokio's
//!   `sync_mutex` bench is not in its tree; this follows the semaphore one).
//! - `watch_fanout`: not in Tokio's benches. One `watch::channel(0u64)`, 16
//!   spawned receiver tasks; `block_on` is the sender and runs 100 rounds in
//!   lockstep: `send(i)` for i = 1..=100, then wait on a `Notify` until all
//!   16 receivers have seen `i`. Each receiver loops `changed().await`,
//!   `borrow_and_update()`, and counts itself in a shared atomic; the 16th
//!   resets the count and calls `notify_one`. The lockstep makes the work
//!   identical on both runtimes (no value can be skipped or coalesced): per
//!   iteration 100 sends, 1,600 `changed()` completions, about 1,600
//!   receiver wakes and 100 `Notify` round trips, plus 16 spawns.
//!
//! - `broadcast_fanout`: not in this shape in Tokio's benches (its
//!   `sync_broadcast` sends one value at a time to N tasks in lockstep).
//!   8 spawned receivers subscribed to `broadcast::channel(1_024)`;
//!   `block_on` sends 1,000 values without waiting (the capacity is never
//!   exceeded, so no receiver lags), drops the sender, and awaits the
//!   receivers, each of which must have received all 1,000 in order.
//! - `rwlock_read_mostly`: the mutex shape around an `RwLock<u64>`: 64
//!   tasks × 100 rounds, of which one in ten takes the write lock and
//!   increments, the others take a read lock and read.
//!
//! In the semaphore, mutex and rwlock workloads nothing is held across an `.await`,
//! so a task only waits when another worker holds the permit or lock at that
//! instant: with 2 cores that is the fast path plus occasional real waits.

macro_rules! sync_family {
    ($rt:ident) => {
        use crate::harness::Side;
        use crate::workloads::SYNC_WORKERS;
        use std::hint::black_box;
        use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Relaxed};
        use std::sync::Arc;
        use $rt::runtime::{self, Runtime};
        use $rt::sync::{broadcast, mpsc, watch, Mutex, Notify, RwLock, Semaphore};

        /// Tokio's `rt()` in its sync benches.
        fn rt() -> Runtime {
            runtime::Builder::new_multi_thread()
                .worker_threads(SYNC_WORKERS)
                .build()
                .unwrap()
        }

        /// A workload whose whole iteration is one `block_on` of `body`.
        pub struct BlockOn {
            rt: Runtime,
            body: fn(&Runtime),
        }

        impl Side for BlockOn {
            fn run(&mut self) {
                (self.body)(&self.rt);
            }
        }

        fn side(body: fn(&Runtime)) -> Box<dyn Side> {
            Box::new(BlockOn { rt: rt(), body })
        }

        // ---- mpsc ---------------------------------------------------------

        const PRODUCERS: usize = 5;
        const PER_PRODUCER: usize = 1_000;
        const UNCONTENDED: usize = 5_000;

        /// 5 producer tasks × 1,000 sends into a bounded channel of
        /// `capacity`; `block_on` receives all 5,000.
        fn contended_bounded(rt: &Runtime, capacity: usize) {
            rt.block_on(async move {
                let (tx, mut rx) = mpsc::channel::<usize>(capacity);

                for _ in 0..PRODUCERS {
                    let tx = tx.clone();
                    $rt::spawn(async move {
                        for i in 0..PER_PRODUCER {
                            tx.send(i).await.unwrap();
                        }
                    });
                }

                for _ in 0..PER_PRODUCER * PRODUCERS {
                    black_box(rx.recv().await);
                }
            })
        }

        pub fn mpsc_contended_bounded() -> Box<dyn Side> {
            side(|rt| contended_bounded(rt, 1_000_000))
        }

        pub fn mpsc_bounded_full() -> Box<dyn Side> {
            side(|rt| contended_bounded(rt, 100))
        }

        pub fn mpsc_contended_unbounded() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let (tx, mut rx) = mpsc::unbounded_channel::<usize>();

                    for _ in 0..PRODUCERS {
                        let tx = tx.clone();
                        $rt::spawn(async move {
                            for i in 0..PER_PRODUCER {
                                tx.send(i).unwrap();
                            }
                        });
                    }

                    for _ in 0..PER_PRODUCER * PRODUCERS {
                        black_box(rx.recv().await);
                    }
                })
            })
        }

        pub fn mpsc_uncontended_bounded() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let (tx, mut rx) = mpsc::channel::<usize>(1_000_000);

                    for i in 0..UNCONTENDED {
                        tx.send(i).await.unwrap();
                    }

                    for _ in 0..UNCONTENDED {
                        black_box(rx.recv().await);
                    }
                })
            })
        }

        pub fn mpsc_uncontended_unbounded() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let (tx, mut rx) = mpsc::unbounded_channel::<usize>();

                    for i in 0..UNCONTENDED {
                        tx.send(i).unwrap();
                    }

                    for _ in 0..UNCONTENDED {
                        black_box(rx.recv().await);
                    }
                })
            })
        }

        // ---- Notify ping-pong ---------------------------------------------

        const PINGS: usize = 1_000;

        pub fn notify_ping() -> Box<dyn Side> {
            side(|rt| {
                let ping = Arc::new(Notify::new());
                let pong = Arc::new(Notify::new());
                rt.block_on(async move {
                    let ponger = {
                        let (ping, pong) = (ping.clone(), pong.clone());
                        $rt::spawn(async move {
                            for _ in 0..PINGS {
                                ping.notified().await;
                                pong.notify_one();
                            }
                        })
                    };
                    let pinger = $rt::spawn(async move {
                        for _ in 0..PINGS {
                            ping.notify_one();
                            pong.notified().await;
                        }
                    });
                    pinger.await.unwrap();
                    ponger.await.unwrap();
                })
            })
        }

        // ---- Semaphore and Mutex ------------------------------------------

        const LOCK_TASKS: usize = 64;
        const LOCK_ROUNDS: usize = 100;
        const PERMITS: usize = 5;

        pub fn semaphore_contended() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let sem = Arc::new(Semaphore::new(PERMITS));
                    let mut tasks = Vec::with_capacity(LOCK_TASKS);
                    for _ in 0..LOCK_TASKS {
                        let sem = sem.clone();
                        tasks.push($rt::spawn(async move {
                            for _ in 0..LOCK_ROUNDS {
                                let permit = sem.acquire().await.unwrap();
                                drop(black_box(permit));
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                    assert_eq!(sem.available_permits(), PERMITS);
                })
            })
        }

        pub fn mutex_contended() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let counter = Arc::new(Mutex::new(0u64));
                    let mut tasks = Vec::with_capacity(LOCK_TASKS);
                    for _ in 0..LOCK_TASKS {
                        let counter = counter.clone();
                        tasks.push($rt::spawn(async move {
                            for _ in 0..LOCK_ROUNDS {
                                *counter.lock().await += 1;
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                    assert_eq!(*counter.lock().await, (LOCK_TASKS * LOCK_ROUNDS) as u64);
                })
            })
        }

        pub fn rwlock_read_mostly() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let counter = Arc::new(RwLock::new(0u64));
                    let mut tasks = Vec::with_capacity(LOCK_TASKS);
                    for _ in 0..LOCK_TASKS {
                        let counter = counter.clone();
                        tasks.push($rt::spawn(async move {
                            for round in 0..LOCK_ROUNDS {
                                if round % 10 == 0 {
                                    *counter.write().await += 1;
                                } else {
                                    black_box(*counter.read().await);
                                }
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                    let writes = LOCK_TASKS * LOCK_ROUNDS.div_ceil(10);
                    assert_eq!(*counter.read().await, writes as u64);
                })
            })
        }

        // ---- broadcast fan-out --------------------------------------------

        const BROADCAST_RECEIVERS: usize = 8;
        const BROADCAST_SENDS: usize = 1_000;

        pub fn broadcast_fanout() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let (tx, _) = broadcast::channel::<usize>(1_024);
                    let mut tasks = Vec::with_capacity(BROADCAST_RECEIVERS);
                    for _ in 0..BROADCAST_RECEIVERS {
                        let mut rx = tx.subscribe();
                        tasks.push($rt::spawn(async move {
                            let mut next = 0;
                            while let Ok(value) = rx.recv().await {
                                assert_eq!(value, next, "no value lost or reordered");
                                next += 1;
                            }
                            next
                        }));
                    }
                    for i in 0..BROADCAST_SENDS {
                        tx.send(i).unwrap();
                    }
                    drop(tx);
                    for t in tasks {
                        assert_eq!(t.await.unwrap(), BROADCAST_SENDS);
                    }
                })
            })
        }

        // ---- watch fan-out ------------------------------------------------

        const WATCH_RECEIVERS: usize = 16;
        const WATCH_SENDS: u64 = 100;

        pub fn watch_fanout() -> Box<dyn Side> {
            side(|rt| {
                rt.block_on(async move {
                    let (tx, rx) = watch::channel(0u64);
                    let seen = Arc::new(AtomicUsize::new(0));
                    let all_seen = Arc::new(Notify::new());
                    let mut tasks = Vec::with_capacity(WATCH_RECEIVERS);
                    for _ in 0..WATCH_RECEIVERS {
                        let mut rx = rx.clone();
                        let (seen, all_seen) = (seen.clone(), all_seen.clone());
                        tasks.push($rt::spawn(async move {
                            let mut last = 0;
                            while last < WATCH_SENDS {
                                rx.changed().await.unwrap();
                                let value = *rx.borrow_and_update();
                                // Lockstep: each round's value, none skipped.
                                assert_eq!(value, last + 1);
                                last = value;
                                if seen.fetch_add(1, AcqRel) + 1 == WATCH_RECEIVERS {
                                    // No receiver counts again before the
                                    // next send, which waits for this.
                                    seen.store(0, Relaxed);
                                    all_seen.notify_one();
                                }
                            }
                        }));
                    }
                    drop(rx);
                    for i in 1..=WATCH_SENDS {
                        tx.send(i).unwrap();
                        all_seen.notified().await;
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                })
            })
        }
    };
}

/// The family on Tokio.
pub mod tokio_side {
    sync_family!(tokio);
}

/// The family on weft.
pub mod weft_side {
    sync_family!(weft);
}
