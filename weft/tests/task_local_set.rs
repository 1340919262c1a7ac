//! `LocalSet`, `spawn_local` and `LocalRuntime`: `!Send` futures as
//! first-class tasks (issue #11, item 3).

#[macro_use]
mod support;

rt_test! {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    use weft::task::{self, LocalSet};

    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn run_until_runs_local_tasks_with_rc_state() {
        let rt = rt();
        let local = LocalSet::new();
        let counter = Rc::new(Cell::new(0));
        let total = local.block_on(&rt, {
            let counter = counter.clone();
            async move {
                let handles: Vec<_> = (0..10)
                    .map(|i| {
                        let counter = counter.clone();
                        task::spawn_local(async move {
                            task::yield_now().await;
                            counter.set(counter.get() + i);
                            i
                        })
                    })
                    .collect();
                let mut total = 0;
                for h in handles {
                    total += h.await.unwrap();
                }
                total
            }
        });
        assert_eq!(total, 45);
        assert_eq!(counter.get(), 45);
    }

    #[test]
    fn awaiting_the_set_waits_for_every_task() {
        let rt = rt();
        rt.block_on(async {
            let local = LocalSet::new();
            let log = Rc::new(RefCell::new(Vec::new()));
            for i in 0..3 {
                let log = log.clone();
                local.spawn_local(async move {
                    weft::time::sleep(Duration::from_millis(5 * (3 - i))).await;
                    log.borrow_mut().push(i);
                });
            }
            local.await;
            let mut seen = log.borrow().clone();
            seen.sort();
            assert_eq!(seen, vec![0, 1, 2]);
        });
    }

    #[test]
    fn local_task_woken_from_another_thread() {
        let rt = rt();
        let local = LocalSet::new();
        local.block_on(&rt, async {
            let (tx, rx) = weft::sync::oneshot::channel();
            let state = Rc::new(Cell::new(0));
            let s = state.clone();
            let h = task::spawn_local(async move {
                s.set(rx.await.unwrap());
            });
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                tx.send(9).unwrap();
            });
            h.await.unwrap();
            assert_eq!(state.get(), 9);
        });
    }

    #[test]
    fn output_need_not_be_send() {
        let rt = rt();
        let local = LocalSet::new();
        let out: Rc<String> = local.block_on(&rt, async {
            task::spawn_local(async { Rc::new("local".to_string()) }).await.unwrap()
        });
        assert_eq!(&*out, "local");
    }

    #[test]
    fn dropping_the_set_cancels_its_tasks() {
        let rt = rt();
        let dropped = Arc::new(AtomicBool::new(false));
        let local = LocalSet::new();
        let handle = {
            let flag = DropFlag(dropped.clone());
            local.spawn_local(async move {
                let _flag = flag;
                std::future::pending::<()>().await;
            })
        };
        local.block_on(&rt, task::yield_now());
        assert!(!dropped.load(Ordering::SeqCst));
        drop(local);
        assert!(dropped.load(Ordering::SeqCst));
        let err = rt.block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
    }

    #[test]
    fn abort_from_another_thread() {
        let rt = rt();
        let local = LocalSet::new();
        local.block_on(&rt, async {
            let h = task::spawn_local(std::future::pending::<()>());
            let abort = h.abort_handle();
            std::thread::spawn(move || abort.abort()).join().unwrap();
            assert!(h.await.unwrap_err().is_cancelled());
        });
    }

    #[test]
    fn set_tasks_and_runtime_tasks_both_progress() {
        // A local task that always yields must not starve a runtime task
        // that run_until's future waits for.
        let rt = rt();
        let local = LocalSet::new();
        local.block_on(&rt, async {
            let stop = Rc::new(Cell::new(false));
            let s = stop.clone();
            let spinner = task::spawn_local(async move {
                while !s.get() {
                    task::yield_now().await;
                }
            });
            let remote = weft::spawn(async {
                for _ in 0..10 {
                    task::yield_now().await;
                }
                7
            });
            assert_eq!(remote.await.unwrap(), 7);
            stop.set(true);
            spinner.await.unwrap();
        });
    }

    #[test]
    fn enter_guard_lets_spawn_local_queue_work() {
        let rt = rt();
        let local = LocalSet::new();
        let hit = Rc::new(Cell::new(false));
        {
            let _guard = local.enter();
            let hit = hit.clone();
            drop(task::spawn_local(async move { hit.set(true) }));
        }
        assert!(!hit.get(), "local tasks run only while the set is polled");
        local.block_on(&rt, task::yield_now());
        assert!(hit.get());
    }
}

#[test]
#[should_panic(expected = "weft::task::spawn_local needs a LocalSet")]
fn spawn_local_outside_a_set_panics() {
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        drop(weft::task::spawn_local(async {}));
    });
}

#[test]
fn local_runtime_runs_local_and_send_tasks() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build_local(Default::default())
        .unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let early = rt.spawn_local(async move { l.borrow_mut().push("early") });
    let send = rt.spawn(async { 3 });
    let out = rt.block_on(async {
        early.await.unwrap();
        let l = log.clone();
        weft::task::spawn_local(async move {
            weft::time::sleep(std::time::Duration::from_millis(1)).await;
            l.borrow_mut().push("inside");
        })
        .await
        .unwrap();
        send.await.unwrap()
    });
    assert_eq!(out, 3);
    assert_eq!(*log.borrow(), vec!["early", "inside"]);
}

#[test]
fn local_runtime_drop_cancels_local_tasks() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build_local(Default::default())
        .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    let rc = std::rc::Rc::new(());
    drop(rt.spawn_local(async move {
        let _keep = (flag, rc);
        std::future::pending::<()>().await;
    }));
    rt.block_on(weft::task::yield_now());
    assert!(!dropped.load(Ordering::SeqCst));
    rt.shutdown_background();
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
#[should_panic(expected = "build_local only builds current_thread runtimes")]
fn build_local_on_multi_thread_panics() {
    let _ = weft::runtime::Builder::new_multi_thread().build_local(Default::default());
}

#[test]
fn spawn_local_under_a_local_runtimes_handle_on_another_thread_names_the_thread() {
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::thread::spawn(move || {
        let rt = weft::runtime::Builder::new_current_thread()
            .build_local(Default::default())
            .unwrap();
        tx.send(rt.handle().clone()).unwrap();
        // The runtime lives until the other thread has tried.
        std::thread::park();
    });
    let handle = rx.recv().unwrap();
    let panic = std::panic::catch_unwind(|| {
        let _entered = handle.enter();
        drop(weft::task::spawn_local(async {}));
    })
    .unwrap_err();
    let msg = panic_text(&*panic);
    assert!(
        msg.starts_with(
            "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was \
             created on"
        ),
        "{msg}"
    );
    assert!(msg.contains("weft::spawn"), "names the fix: {msg}");
    owner.thread().unpark();
    owner.join().unwrap();

    // A plain current_thread runtime's handle, entered on another thread,
    // still gets the "no LocalSet" message.
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let panic = std::thread::spawn(move || {
        let _entered = handle.enter();
        drop(weft::task::spawn_local(async {}));
    })
    .join()
    .unwrap_err();
    let msg = panic_text(&*panic);
    assert!(msg.contains("needs a LocalSet"), "{msg}");
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a text payload")
}

/// A local task whose drop blocks in place.
struct BlocksInPlaceOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl std::future::Future for BlocksInPlaceOnDrop {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::Poll::Pending
    }
}

impl Drop for BlocksInPlaceOnDrop {
    fn drop(&mut self) {
        weft::task::block_in_place(|| {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

#[test]
fn block_in_place_in_a_local_tasks_drop_is_refused_off_a_worker_and_runs_on_one() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();

    // Dropped in the runtime's block_on: its tasks could not move with a
    // worker, so the drop refuses (Tokio's rule and message).
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let refused = rt.block_on(async move {
        let local = weft::task::LocalSet::new();
        let task = local.spawn_local(BlocksInPlaceOnDrop(flag));
        local.run_until(weft::task::yield_now()).await;
        drop(local);
        // The drop's panic is the task's outcome.
        task.await.unwrap_err().into_panic()
    });
    assert!(
        panic_text(&*refused)
            .starts_with("can call blocking only when running on the multi-threaded runtime"),
        "{}",
        panic_text(&*refused)
    );
    assert!(!ran.load(Ordering::SeqCst));

    // Dropped by a worker's task: the worker's queue moves, the closure runs.
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    // The worker's task hands back the local task's handle, to be awaited
    // after the set is gone.
    #[allow(clippy::async_yields_async)]
    let task = rt
        .block_on(rt.spawn(async move {
            // Never polled (the set is `!Send`: no await while it lives);
            // its task's future still drops with the set.
            let local = weft::task::LocalSet::new();
            let task = local.spawn_local(BlocksInPlaceOnDrop(flag));
            drop(local);
            task
        }))
        .unwrap();
    assert!(rt.block_on(task).unwrap_err().is_cancelled());
    assert!(ran.load(Ordering::SeqCst));
}
