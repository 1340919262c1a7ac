//! The sync primitives (Semaphore, Mutex, RwLock, Barrier, OnceCell,
//! Notify) through the public API, on every runtime flavour (`rt_test!` in
//! `support/mod.rs`).

#[macro_use]
mod support;

rt_test! {
    use futures::FutureExt;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Mutex as StdMutex};
    use std::task::{Context, Poll, Wake, Waker};
    use weft::sync::{
        AcquireError, Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, TryAcquireError,
    };
    use weft::task::yield_now;

    /// Sets `polled` once the inner future has been polled at least once:
    /// lets the test know a spawned task has queued itself.
    struct Polled<F> {
        inner: Pin<Box<F>>,
        polled: Arc<AtomicBool>,
    }

    impl<F: Future> Future for Polled<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            let res = self.inner.as_mut().poll(cx);
            self.polled.store(true, SeqCst);
            res
        }
    }

    /// Spawns `fut` and waits until its first poll has returned.
    async fn spawn_queued<F>(fut: F) -> weft::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let polled = Arc::new(AtomicBool::new(false));
        let handle = weft::spawn(Polled {
            inner: Box::pin(fut),
            polled: polled.clone(),
        });
        while !polled.load(SeqCst) {
            yield_now().await;
        }
        handle
    }

    /// Yields until `cond` holds.
    async fn until(cond: impl Fn() -> bool) {
        while !cond() {
            yield_now().await;
        }
    }

    /// Yields a few times, letting other tasks run.
    async fn settle() {
        for _ in 0..50 {
            yield_now().await;
        }
    }

    #[derive(Default)]
    struct CountWaker(AtomicUsize);

    impl Wake for CountWaker {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    // ----- Semaphore ------------------------------------------------------

    #[test]
    fn semaphore_waiters_are_served_in_fifo_order() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(0));
            let order = Arc::new(StdMutex::new(Vec::new()));
            let mut handles = Vec::new();
            for i in 0..8 {
                let (sem, order) = (sem.clone(), order.clone());
                handles.push(
                    spawn_queued(async move {
                        sem.acquire().await.unwrap().forget();
                        order.lock().unwrap().push(i);
                    })
                    .await,
                );
            }
            for n in 1..=8 {
                sem.add_permits(1);
                until(|| order.lock().unwrap().len() == n).await;
            }
            for h in handles {
                h.await.unwrap();
            }
            assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
        });
    }

    #[test]
    fn semaphore_large_waiter_blocks_later_small_ones() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(1));
            let big_done = Arc::new(AtomicBool::new(false));
            let small_done = Arc::new(AtomicBool::new(false));
            let (s, d) = (sem.clone(), big_done.clone());
            let big = spawn_queued(async move {
                let p = s.acquire_many_owned(3).await.unwrap();
                d.store(true, SeqCst);
                p
            })
            .await;
            let (s, d) = (sem.clone(), small_done.clone());
            let small = spawn_queued(async move {
                let _p = s.acquire().await.unwrap();
                d.store(true, SeqCst);
            })
            .await;
            // The big request took the free permit; nothing can barge past.
            assert_eq!(sem.available_permits(), 0);
            assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
            sem.add_permits(1);
            settle().await;
            assert!(!big_done.load(SeqCst) && !small_done.load(SeqCst));
            sem.add_permits(1);
            let permit = big.await.unwrap();
            assert_eq!(permit.num_permits(), 3);
            settle().await;
            assert!(!small_done.load(SeqCst), "the small waiter barged");
            drop(permit);
            small.await.unwrap();
            assert_eq!(sem.available_permits(), 3);
        });
    }

    #[test]
    fn semaphore_cancelled_acquire_keeps_permits_and_wakes_next() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(2));
            let held = sem.clone().try_acquire_owned().unwrap();
            // Takes the one free permit and queues for two more.
            let s = sem.clone();
            let cancelled = spawn_queued(async move {
                drop(s.acquire_many(3).await);
            })
            .await;
            let s = sem.clone();
            let next = spawn_queued(async move { s.acquire_owned().await.unwrap() }).await;
            assert_eq!(sem.available_permits(), 0);
            cancelled.abort();
            assert!(cancelled.await.unwrap_err().is_cancelled());
            // The partially assigned permit went to the next waiter.
            let p = next.await.unwrap();
            drop((p, held));
            assert_eq!(sem.available_permits(), 2);
        });
    }

    #[test]
    fn semaphore_dropped_acquire_leaves_no_waker() {
        rt().block_on(async {
            let sem = Semaphore::new(0);
            let counter = Arc::new(CountWaker::default());
            let waker = Waker::from(counter.clone());
            let mut fut = Box::pin(sem.acquire());
            assert!(fut.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
            drop(waker);
            assert_eq!(Arc::strong_count(&counter), 2, "the queued acquire holds the waker");
            drop(fut);
            assert_eq!(Arc::strong_count(&counter), 1, "the waker was left behind");
            sem.add_permits(1);
            assert_eq!(counter.0.load(SeqCst), 0);
            assert_eq!(sem.available_permits(), 1);
        });
    }

    #[test]
    fn semaphore_close_wakes_waiters_with_error() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(0));
            let mut handles = Vec::new();
            for _ in 0..4 {
                let s = sem.clone();
                handles.push(spawn_queued(async move { s.acquire().await.map(|p| p.forget()) }).await);
            }
            sem.close();
            for h in handles {
                let err: AcquireError = h.await.unwrap().unwrap_err();
                assert_eq!(err.to_string(), "semaphore closed");
            }
            assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
        });
    }

    #[test]
    fn semaphore_add_permits_wakes_the_right_number() {
        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(0));
            let done = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            for _ in 0..5 {
                let (s, d) = (sem.clone(), done.clone());
                handles.push(
                    spawn_queued(async move {
                        s.acquire().await.unwrap().forget();
                        d.fetch_add(1, SeqCst);
                    })
                    .await,
                );
            }
            sem.add_permits(3);
            until(|| done.load(SeqCst) == 3).await;
            settle().await;
            assert_eq!(done.load(SeqCst), 3);
            sem.add_permits(2);
            for h in handles {
                h.await.unwrap();
            }
            assert_eq!(done.load(SeqCst), 5);
            assert_eq!(sem.available_permits(), 0);
        });
    }

    #[test]
    fn semaphore_acquire_loop_yields_to_the_budget() {
        struct CountPolls<F> {
            inner: Pin<Box<F>>,
            polls: Arc<AtomicUsize>,
        }
        impl<F: Future> Future for CountPolls<F> {
            type Output = F::Output;
            fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
                self.polls.fetch_add(1, SeqCst);
                self.inner.as_mut().poll(cx)
            }
        }

        rt().block_on(async {
            let sem = Arc::new(Semaphore::new(1));
            let polls = Arc::new(AtomicUsize::new(0));
            let s = sem.clone();
            weft::spawn(CountPolls {
                inner: Box::pin(async move {
                    for _ in 0..1_000 {
                        drop(s.acquire().await.unwrap());
                    }
                }),
                polls: polls.clone(),
            })
            .await
            .unwrap();
            let polls = polls.load(SeqCst);
            assert!(polls >= 7, "1,000 acquires took only {polls} polls");
        });
    }

    // ----- Mutex ----------------------------------------------------------

    #[test]
    fn mutex_mutual_exclusion() {
        rt().block_on(async {
            let mutex = Arc::new(Mutex::new(0u64));
            let inside = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            for _ in 0..8 {
                let (m, inside) = (mutex.clone(), inside.clone());
                handles.push(weft::spawn(async move {
                    for i in 0..1_000 {
                        let mut g = m.lock().await;
                        assert_eq!(inside.fetch_add(1, SeqCst), 0, "two tasks in the lock");
                        let v = *g;
                        if i % 100 == 0 {
                            yield_now().await;
                        }
                        *g = v + 1;
                        inside.fetch_sub(1, SeqCst);
                    }
                }));
            }
            for h in handles {
                h.await.unwrap();
            }
            assert_eq!(*mutex.lock().await, 8_000);
        });
    }

    #[test]
    fn mutex_try_lock_and_owned_guards() {
        rt().block_on(async {
            let mutex = Arc::new(Mutex::new(String::from("a")));
            let guard = mutex.clone().lock_owned().await;
            assert!(mutex.try_lock().is_err());
            assert!(mutex.clone().try_lock_owned().is_err());
            let m = mutex.clone();
            let waiter = spawn_queued(async move { m.lock().await.push('c') }).await;
            weft::spawn(async move {
                let mut guard = guard;
                guard.push('b');
            })
            .await
            .unwrap();
            waiter.await.unwrap();
            assert_eq!(*mutex.try_lock().unwrap(), "abc");
        });
    }

    #[test]
    #[should_panic(expected = "Mutex::blocking_lock was called on a thread that drives a weft runtime")]
    fn mutex_blocking_lock_in_runtime_panics() {
        rt().block_on(async {
            let m = Mutex::new(());
            drop(m.blocking_lock());
        });
    }

    #[test]
    fn mutex_blocking_lock_waits_for_task() {
        let rt = rt();
        let mutex = Arc::new(Mutex::new(0));
        let guard = rt.block_on(mutex.clone().lock_owned());
        let m = mutex.clone();
        let t = std::thread::spawn(move || *m.blocking_lock() += 1);
        rt.block_on(async move {
            settle().await;
            let mut guard = guard;
            *guard += 1;
        });
        t.join().unwrap();
        assert_eq!(*mutex.blocking_lock(), 2);
    }

    // ----- RwLock ---------------------------------------------------------

    #[test]
    fn rwlock_waiting_writer_blocks_new_readers() {
        rt().block_on(async {
            let lock = Arc::new(RwLock::new(0));
            let r1 = lock.clone().read_owned().await;
            let l = lock.clone();
            let writer = spawn_queued(async move { *l.write().await = 1 }).await;
            assert!(lock.try_read().is_err(), "a reader barged past the writer");
            let l = lock.clone();
            let reader = spawn_queued(async move { *l.read().await }).await;
            settle().await;
            assert!(!reader.is_finished());
            drop(r1);
            writer.await.unwrap();
            assert_eq!(reader.await.unwrap(), 1, "the later reader ran before the writer");
        });
    }

    #[test]
    fn rwlock_readers_share() {
        rt().block_on(async {
            let lock = Arc::new(RwLock::new(5));
            let r = lock.read().await;
            let l = lock.clone();
            assert_eq!(weft::spawn(async move { *l.read().await }).await.unwrap(), 5);
            assert!(lock.try_write().is_err());
            drop(r);
            *lock.write().await += 1;
            assert_eq!(*lock.read().await, 6);
        });
    }

    // ----- Barrier --------------------------------------------------------

    #[test]
    fn barrier_releases_all_with_one_leader() {
        rt().block_on(async {
            let n = 8;
            let barrier = Arc::new(Barrier::new(n));
            for _round in 0..2 {
                let mut handles = Vec::new();
                for _ in 0..n {
                    let b = barrier.clone();
                    handles.push(weft::spawn(async move { b.wait().await.is_leader() }));
                }
                let mut leaders = 0;
                for h in handles {
                    leaders += h.await.unwrap() as usize;
                }
                assert_eq!(leaders, 1);
            }
        });
    }

    #[test]
    fn barrier_holds_until_the_last_arrives() {
        rt().block_on(async {
            let barrier = Arc::new(Barrier::new(3));
            let b = barrier.clone();
            let first = spawn_queued(async move { b.wait().await.is_leader() }).await;
            let b = barrier.clone();
            let second = spawn_queued(async move { b.wait().await.is_leader() }).await;
            settle().await;
            assert!(!first.is_finished() && !second.is_finished());
            assert!(barrier.wait().await.is_leader());
            assert!(!first.await.unwrap());
            assert!(!second.await.unwrap());
        });
    }

    // ----- OnceCell -------------------------------------------------------

    #[test]
    fn once_cell_initialises_once_under_concurrency() {
        rt().block_on(async {
            let cell = Arc::new(OnceCell::new());
            let runs = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            for i in 0..16 {
                let (cell, runs) = (cell.clone(), runs.clone());
                handles.push(weft::spawn(async move {
                    *cell
                        .get_or_init(|| async {
                            runs.fetch_add(1, SeqCst);
                            for _ in 0..10 {
                                yield_now().await;
                            }
                            i
                        })
                        .await
                }));
            }
            let mut values = Vec::new();
            for h in handles {
                values.push(h.await.unwrap());
            }
            assert_eq!(runs.load(SeqCst), 1);
            assert!(values.iter().all(|v| *v == values[0]));
            assert_eq!(cell.get(), Some(&values[0]));
        });
    }

    #[test]
    fn once_cell_cancelled_initialiser_lets_another_proceed() {
        rt().block_on(async {
            let cell = Arc::new(OnceCell::new());
            let started = Arc::new(AtomicBool::new(false));
            let (c, s) = (cell.clone(), started.clone());
            let stuck = weft::spawn(async move {
                c.get_or_init(|| async move {
                    s.store(true, SeqCst);
                    std::future::pending::<u32>().await
                })
                .await;
            });
            until(|| started.load(SeqCst)).await;
            let c = cell.clone();
            let next = spawn_queued(async move { *c.get_or_init(|| async { 7 }).await }).await;
            assert!(!next.is_finished());
            stuck.abort();
            assert!(stuck.await.unwrap_err().is_cancelled());
            assert_eq!(next.await.unwrap(), 7);
            assert_eq!(cell.get(), Some(&7));
        });
    }

    // ----- Notify ---------------------------------------------------------

    #[test]
    fn notify_one_before_notified_completes_at_once() {
        rt().block_on(async {
            let notify = Notify::new();
            notify.notify_one();
            notify.notified().await;
        });
    }

    #[test]
    fn notify_one_twice_stores_one_permit() {
        rt().block_on(async {
            let notify = Notify::new();
            notify.notify_one();
            notify.notify_one();
            assert!(notify.notified().now_or_never().is_some());
            assert!(notify.notified().now_or_never().is_none());
        });
    }

    #[test]
    fn notify_waiters_wakes_all_and_stores_no_permit() {
        rt().block_on(async {
            let notify = Arc::new(Notify::new());
            let mut handles = Vec::new();
            for _ in 0..6 {
                let n = notify.clone();
                handles.push(spawn_queued(async move { n.notified().await }).await);
            }
            notify.notify_waiters();
            for h in handles {
                h.await.unwrap();
            }
            assert!(notify.notified().now_or_never().is_none());
        });
    }

    #[test]
    fn notify_one_wakes_waiters_in_order() {
        rt().block_on(async {
            let notify = Arc::new(Notify::new());
            let order = Arc::new(StdMutex::new(Vec::new()));
            for i in 0..4 {
                let (n, o) = (notify.clone(), order.clone());
                spawn_queued(async move {
                    n.notified().await;
                    o.lock().unwrap().push(i);
                })
                .await;
            }
            for n in 1..=4 {
                notify.notify_one();
                until(|| order.lock().unwrap().len() == n).await;
            }
            assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
        });
    }

    #[test]
    fn dropped_notified_passes_the_notification_on() {
        rt().block_on(async {
            let notify = Arc::new(Notify::new());
            let mut first = Box::pin(notify.notified());
            assert!(futures::poll!(first.as_mut()).is_pending());
            let n = notify.clone();
            let second = spawn_queued(async move { n.notified().await }).await;
            notify.notify_one(); // goes to `first`, the oldest waiter
            drop(first); // ... which passes it on
            second.await.unwrap();
            // Passed on, not duplicated into a stored permit.
            assert!(notify.notified().now_or_never().is_none());
        });
    }
}

/// Something behind a lock as a trait object.
trait Counter: Send + Sync {
    fn bump(&mut self) -> u32;
    fn get(&self) -> u32;
}

struct Plain(u32);

impl Counter for Plain {
    fn bump(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
    fn get(&self) -> u32 {
        self.0
    }
}

#[test]
fn locks_hold_unsized_values_behind_an_arc_or_a_box() {
    use std::sync::Arc;
    use weft::sync::{Mutex, RwLock};
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        // A sized lock coerces to a trait-object lock, as with std's.
        let counter: Arc<Mutex<dyn Counter>> = Arc::new(Mutex::new(Plain(0)));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let c = Arc::clone(&counter);
            tasks.push(weft::spawn(async move {
                c.lock().await.bump();
                c.clone().lock_owned().await.bump();
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(counter.lock().await.get(), 16);
        assert_eq!(counter.try_lock().unwrap().get(), 16);
        // A guard of an unsized value maps to a part of it.
        let slice: Box<Mutex<[u8]>> = Box::new(Mutex::new([1, 2, 3]));
        {
            let mut last = weft::sync::MutexGuard::map(slice.lock().await, |s| &mut s[2]);
            *last = 9;
        }
        assert_eq!(&*slice.lock().await, &[1, 2, 9]);

        let shared: Arc<RwLock<dyn Counter>> = Arc::new(RwLock::new(Plain(5)));
        let (a, b) = (shared.read().await, shared.clone().read_owned().await);
        assert_eq!(a.get() + b.get(), 10);
        drop((a, b));
        shared.write().await.bump();
        shared.clone().write_owned().await.bump();
        assert_eq!(shared.read().await.get(), 7);
        let bytes: Arc<RwLock<[u8]>> = Arc::new(RwLock::new([0u8; 4]));
        weft::sync::RwLockWriteGuard::map(bytes.write().await, |s| &mut s[1..3]).fill(7);
        assert_eq!(&*bytes.read().await, &[0, 7, 7, 0]);
        assert_eq!(format!("{:?}", counter.lock().await.get()), "16");
    });
}
