//! Calls made in the wrong place: outside a runtime, inside one where
//! blocking is not allowed, on the wrong flavour, with a builder setting
//! out of range. What panics on Tokio must panic on weft (pointing at the
//! caller's line), and what works on Tokio must work on weft.

use crate::harness::no_digits;
use std::time::Duration;

scenarios! {
    fn no_runtime_context(rec) {
        rec.misuse("spawn", || drop(k::spawn(async {})));
        rec.misuse("spawn_blocking", || drop(k::task::spawn_blocking(|| ())));
        rec.misuse("Handle::current", || drop(k::runtime::Handle::current()));
        let e = k::runtime::Handle::try_current().err();
        rec.log(format!(
            "try_current: err {} missing context {:?} shutting down {:?}",
            e.is_some(),
            e.as_ref().map(|e| e.is_missing_context()),
            e.as_ref().map(|e| e.is_thread_local_destroyed()),
        ));
        rec.misuse("task::id", || k::task::id());
        rec.catch("task::try_id", || k::task::try_id().is_some());
        rec.misuse("spawn_local", || drop(k::task::spawn_local(async {})));
        rec.misuse("JoinSet::spawn", || {
            let mut set = k::task::JoinSet::new();
            set.spawn(async {});
        });
        rec.misuse("sleep", || drop(k::time::sleep(Duration::from_millis(1))));
        rec.misuse("interval", || drop(k::time::interval(Duration::from_millis(1))));
        rec.misuse("timeout", || {
            drop(k::time::timeout(Duration::from_millis(1), async {}))
        });
        rec.catch("block_in_place outside a runtime runs f", || {
            k::task::block_in_place(|| 7)
        });
        rec.catch("Instant::now", || {
            let a = k::time::Instant::now();
            k::time::Instant::now() >= a
        });
    }

    fn runtime_inside_runtime(rec) {
        let outer = current();
        let inner = current();
        rec.misuse("Runtime::block_on inside block_on", || {
            outer.block_on(async { inner.block_on(async { 1 }) })
        });
        let handle = inner.handle().clone();
        rec.misuse("Handle::block_on inside block_on", || {
            outer.block_on(async { handle.block_on(async { 2 }) })
        });
        let m = multi(2);
        let mh = m.handle().clone();
        rec.misuse("block_on inside a multi-thread task", || {
            m.block_on(async move {
                k::spawn(async move { mh.block_on(async { 3 }) }).await
                    .map_err(|e| e.is_panic())
            })
        });
        let mh = m.handle().clone();
        rec.catch("Handle::block_on inside block_in_place", || {
            m.block_on(async move {
                k::spawn(async move {
                    k::task::block_in_place(|| mh.block_on(async { 4 }))
                })
                .await
                .map_err(|e| e.is_panic())
            })
        });
        let ih = inner.handle().clone();
        rec.catch("block_on another runtime inside spawn_blocking", || {
            outer.block_on(async move {
                k::task::spawn_blocking(move || ih.block_on(async { 5 }))
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
        drop(m);
    }

    fn dropping_a_runtime_in_async_code(rec) {
        let outer = current();
        let mut victim = Some(current());
        // A drop (here and below) cannot name its caller's line: compared only.
        rec.catch("drop a runtime inside block_on", || {
            outer.block_on(async { drop(victim.take()) })
        });
        // The victim was dropped (or leaked) by the panic; nothing else to see.
        rec.log(format!("victim taken: {}", victim.is_none()));
        let victim = multi(1);
        rec.catch("drop a runtime inside spawn_blocking", || {
            outer.block_on(async move {
                k::task::spawn_blocking(move || drop(victim))
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
        let victim = multi(1);
        rec.catch("shutdown_background inside block_on", || {
            outer.block_on(async move { victim.shutdown_background() })
        });
        let victim = multi(1);
        rec.catch("shutdown_timeout(0) inside block_on", || {
            outer.block_on(async move { victim.shutdown_timeout(Duration::ZERO) })
        });
        let victim = multi(1);
        rec.catch("shutdown_timeout(10 ms) inside block_on", || {
            outer.block_on(async move { victim.shutdown_timeout(Duration::from_millis(10)) })
        });
        let m = multi(1);
        rec.catch("drop a runtime inside a multi-thread task", || {
            m.block_on(async {
                let victim = current();
                k::spawn(async move { drop(victim) })
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
        rec.catch("drop a runtime inside block_in_place", || {
            m.block_on(async {
                let victim = current();
                k::spawn(async move { k::task::block_in_place(move || drop(victim)) })
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
    }

    fn block_in_place_by_flavour(rec) {
        let rt = current();
        rec.misuse("block_in_place on current_thread", || {
            rt.block_on(async { k::task::block_in_place(|| 1) })
        });
        let rt = multi(1);
        rec.catch("block_in_place in multi-thread block_on", || {
            rt.block_on(async { k::task::block_in_place(|| 2) })
        });
        rec.catch("block_in_place in a multi-thread task", || {
            rt.block_on(async {
                k::spawn(async { k::task::block_in_place(|| 3) })
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
        rec.catch("block_in_place in spawn_blocking", || {
            rt.block_on(async {
                k::task::spawn_blocking(|| k::task::block_in_place(|| 4))
                    .await
                    .map_err(|e| e.is_panic())
            })
        });
        let local = k::task::LocalSet::new();
        rec.misuse("block_in_place in a LocalSet on multi-thread", || {
            local.block_on(&rt, async { k::task::block_in_place(|| 5) })
        });
        // On a worker the LocalSet's flag does not count (Tokio looks at
        // the worker's context first): a set polled by a task, and one run
        // by a Handle::block_on inside a block_in_place closure.
        rec.catch("block_in_place in a LocalSet polled by a worker's task", || {
            rt.block_on(async {
                k::spawn(async {
                    let local = k::task::LocalSet::new();
                    let run = local.run_until(async { k::task::block_in_place(|| 6) });
                    let run = std::pin::pin!(run);
                    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    std::future::Future::poll(run, &mut cx).is_ready()
                })
                .await
                .map_err(|e| e.is_panic())
            })
        });
        rec.catch("block_in_place in a LocalSet inside block_in_place", || {
            rt.block_on(async {
                k::spawn(async {
                    k::task::block_in_place(|| {
                        let local = k::task::LocalSet::new();
                        k::runtime::Handle::current()
                            .block_on(local.run_until(async { k::task::block_in_place(|| 7) }))
                    })
                })
                .await
                .map_err(|e| e.is_panic())
            })
        });
    }

    fn builder_settings_out_of_range(rec) {
        rec.misuse("worker_threads(0)", || {
            k::runtime::Builder::new_multi_thread().worker_threads(0);
        });
        rec.misuse("max_blocking_threads(0)", || {
            k::runtime::Builder::new_multi_thread().max_blocking_threads(0);
        });
        rec.misuse("global_queue_interval(0)", || {
            k::runtime::Builder::new_multi_thread().global_queue_interval(0);
        });
        rec.catch("event_interval(0) then build", || {
            k::runtime::Builder::new_current_thread()
                .event_interval(0)
                .build()
                .is_ok()
        });
        rec.catch("thread_stack_size(64 KiB) then build", || {
            let rt = k::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_stack_size(64 * 1024)
                .build()
                .unwrap();
            rt.block_on(async { k::spawn(async { 1 }).await.is_ok() })
        });
        rec.catch("flavours", || {
            let a = current().handle().runtime_flavor();
            let b = multi(1).handle().runtime_flavor();
            format!("{a:?} {b:?}")
        });
    }

    fn drivers_not_enabled(rec) {
        let bare = k::runtime::Builder::new_current_thread().build().unwrap();
        rec.misuse("sleep without enable_time", || {
            bare.block_on(async { k::time::sleep(Duration::from_millis(1)).await })
        });
        rec.misuse("timeout without enable_time", || {
            bare.block_on(async {
                k::time::timeout(Duration::from_millis(1), std::future::pending::<()>())
                    .await
                    .is_err()
            })
        });
        // An `async fn`'s panic cannot name its caller's line: compared only.
        rec.catch("TcpListener::bind without enable_io", || {
            bare.block_on(async { k::net::TcpListener::bind("127.0.0.1:0").await.is_ok() })
        });
        rec.catch("plain futures without drivers", || {
            bare.block_on(async { k::spawn(async { 6 }).await.unwrap() })
        });
        let timers_only = k::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rec.catch("sleep with enable_time only", || {
            timers_only.block_on(async { k::time::sleep(Duration::from_millis(1)).await })
        });
    }

    fn enter_guards(rec) {
        let a = current();
        let b = current();
        rec.catch("spawn under an enter guard, outside async", || {
            let _g = a.enter();
            let h = k::spawn(async { 8 });
            drop(_g);
            a.block_on(h).unwrap()
        });
        rec.catch("nested guards dropped in order", || {
            let ga = a.enter();
            let gb = b.enter();
            let flavour = k::runtime::Handle::current().runtime_flavor();
            drop(gb);
            drop(ga);
            format!("{flavour:?}")
        });
        rec.catch("nested guards dropped out of order", || {
            let ga = a.enter();
            let gb = b.enter();
            drop(ga);
            drop(gb);
        });
        rec.catch("try_current after the guards", || {
            k::runtime::Handle::try_current().is_ok()
        });
    }

    fn task_ids_and_names(rec) {
        let rt = current();
        rec.catch("try_id in block_on", || rt.block_on(async { k::task::try_id().is_some() }));
        rec.catch("id in a task is its handle's", || {
            rt.block_on(async {
                let h = k::spawn(async { k::task::id() });
                let want = h.id();
                h.await.unwrap() == want
            })
        });
        rec.catch("id in spawn_blocking", || {
            rt.block_on(async {
                let h = k::task::spawn_blocking(k::task::try_id);
                let want = h.id();
                h.await.unwrap() == Some(want)
            })
        });
        rec.catch("id Display is a number", || {
            rt.block_on(async {
                let h = k::spawn(async {});
                no_digits(&format!("{} / {:?}", h.id(), h.id()))
            })
        });
    }

    fn time_control_misuse(rec) {
        rec.misuse("pause outside a runtime", || k::time::pause());
        let rt = multi(1);
        rec.misuse("pause on multi_thread", || rt.block_on(async { k::time::pause() }));
        let rt = current();
        rec.misuse("resume when not paused", || rt.block_on(async { k::time::resume() }));
        rec.misuse("pause twice", || {
            rt.block_on(async {
                k::time::pause();
                k::time::pause();
            })
        });
        rec.catch("paused after the panic", || {
            rt.block_on(async {
                let t = k::time::Instant::now();
                k::time::sleep(Duration::from_secs(3600)).await;
                t.elapsed() >= Duration::from_secs(3600)
            })
        });
        rec.catch("resume then pause again", || {
            rt.block_on(async {
                k::time::resume();
                k::time::pause();
            })
        });
        let rt = current();
        rec.misuse("advance when not paused", || {
            rt.block_on(async { k::time::advance(Duration::from_millis(1)).await })
        });
        rec.misuse("interval of zero", || {
            rt.block_on(async { drop(k::time::interval(Duration::ZERO)) })
        });
        rec.misuse("interval_at of zero", || {
            rt.block_on(async {
                drop(k::time::interval_at(k::time::Instant::now(), Duration::ZERO))
            })
        });
        rec.catch("far sleeps and timeouts are accepted", || {
            rt.block_on(async {
                let s = k::time::sleep(Duration::MAX);
                let d = s.deadline() > k::time::Instant::now() + Duration::from_secs(86400 * 365);
                let t = k::time::timeout(Duration::MAX, async { 1 }).await;
                let u = k::time::timeout(Duration::ZERO, async { 2 }).await;
                let v = k::time::timeout(Duration::ZERO, std::future::pending::<()>()).await;
                (d, t.ok(), u.ok(), v.is_err())
            })
        });
    }

    fn sync_construction_misuse(rec) {
        rec.misuse("mpsc::channel(0)", || drop(k::sync::mpsc::channel::<u8>(0)));
        rec.misuse("broadcast::channel(0)", || drop(k::sync::broadcast::channel::<u8>(0)));
        rec.misuse("broadcast::channel(usize::MAX)", || {
            drop(k::sync::broadcast::channel::<u8>(usize::MAX))
        });
        rec.misuse("Semaphore above MAX_PERMITS", || {
            let _ = k::sync::Semaphore::new(k::sync::Semaphore::MAX_PERMITS + 1);
        });
        rec.catch("Semaphore at MAX_PERMITS", || {
            k::sync::Semaphore::new(k::sync::Semaphore::MAX_PERMITS).available_permits()
                == k::sync::Semaphore::MAX_PERMITS
        });
        rec.misuse("add_permits past MAX_PERMITS", || {
            let s = k::sync::Semaphore::new(k::sync::Semaphore::MAX_PERMITS);
            s.add_permits(1);
        });
        rec.catch("Barrier::new(0) lets one through", || {
            current().block_on(async {
                let b = k::sync::Barrier::new(0);
                b.wait().await.is_leader()
            })
        });
        rec.catch("try_acquire_many above the count", || {
            let s = k::sync::Semaphore::new(3);
            s.try_acquire_many(4).map(|_| ()).map_err(|e| e.to_string())
        });
        rec.catch("forget and split permits", || {
            let s = k::sync::Semaphore::new(5);
            let mut p = s.try_acquire_many(4).unwrap();
            let q = p.split(1).map(|q| q.num_permits());
            let r = p.split(10).is_none();
            p.forget();
            (q, r, s.available_permits())
        });
        rec.catch("watch send with no receiver", || {
            let (tx, rx) = k::sync::watch::channel(1);
            drop(rx);
            let sent = tx.send(2).is_err();
            let replaced = tx.send_replace(3);
            let now = *tx.borrow();
            (sent, replaced, now)
        });
        rec.catch("oneshot send after the receiver's drop", || {
            let (tx, rx) = k::sync::oneshot::channel::<u8>();
            drop(rx);
            (tx.is_closed(), tx.send(4))
        });
        rec.catch("Notify before any waiter stores one permit", || {
            current().block_on(async {
                let n = k::sync::Notify::new();
                n.notify_one();
                n.notify_one();
                n.notified().await;
                k::time::timeout(Duration::from_millis(5), n.notified()).await.is_err()
            })
        });
    }
}
