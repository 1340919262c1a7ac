//! A runtime's end and its edges: what a task's destructor sees during the
//! shutdown, what spawning then does, what handles report after it; how
//! `block_on` polls its future against the spawned tasks; the stable
//! metrics.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

scenarios! {
    common {
        /// What a task's destructor saw and did during the shutdown.
        pub struct Witness {
            pub log: Arc<Mutex<Vec<String>>>,
            pub spawned: Arc<Mutex<Option<k::task::JoinHandle<()>>>>,
            pub spawned_ran: Arc<AtomicBool>,
        }
        impl Drop for Witness {
            fn drop(&mut self) {
                let mut log = self.log.lock().unwrap();
                log.push(format!(
                    "in drop: try_current ok {} try_id some {}",
                    k::runtime::Handle::try_current().is_ok(),
                    k::task::try_id().is_some()
                ));
                let ran = self.spawned_ran.clone();
                let spawned = std::panic::catch_unwind(|| {
                    k::spawn(async move { ran.store(true, Ordering::SeqCst) })
                });
                log.push(format!("in drop: spawn panicked {}", spawned.is_err()));
                *self.spawned.lock().unwrap() = spawned.ok();
            }
        }

        fn witness() -> (Witness, Arc<Mutex<Vec<String>>>, Arc<Mutex<Option<k::task::JoinHandle<()>>>>, Arc<AtomicBool>) {
            let w = Witness {
                log: Arc::default(),
                spawned: Arc::default(),
                spawned_ran: Arc::default(),
            };
            let (l, s, r) = (w.log.clone(), w.spawned.clone(), w.spawned_ran.clone());
            (w, l, s, r)
        }
    }

    fn destructors_during_shutdown(rec) {
        for flavour in ["current", "multi"] {
            let rt = if flavour == "current" { current() } else { multi(2) };
            let (w, log, spawned, ran) = witness();
            let h = rt.spawn(async move {
                let _w = w;
                std::future::pending::<()>().await
            });
            rt.block_on(k::task::yield_now());
            drop(rt);
            for line in log.lock().unwrap().iter() {
                rec.log(format!("{flavour}: {line}"));
            }
            let other = current();
            rec.log(format!(
                "{flavour}: pending task's handle {:?}",
                other.block_on(h).map_err(|e| e.is_cancelled())
            ));
            let s = spawned.lock().unwrap().take();
            if let Some(s) = s {
                rec.log(format!(
                    "{flavour}: spawned-in-drop handle {:?} ran {}",
                    other.block_on(s).map_err(|e| e.is_cancelled()),
                    ran.load(Ordering::SeqCst)
                ));
            }
        }
    }

    fn handles_after_shutdown(rec) {
        let rt = multi(1);
        let handle = rt.handle().clone();
        drop(rt);
        let other = current();
        rec.catch("spawn on a dead runtime's handle", || {
            other.block_on(handle.spawn(async { 1 })).map_err(|e| e.is_cancelled())
        });
        rec.catch("spawn_blocking on a dead runtime's handle", || {
            other.block_on(handle.spawn_blocking(|| 2)).map_err(|e| e.is_cancelled())
        });
        rec.catch("block_on a plain future on a dead runtime's handle", || {
            handle.block_on(async { 3 })
        });
        rec.catch("sleep on a dead runtime's handle", || {
            handle.block_on(async { k::time::sleep(Duration::from_millis(1)).await })
        });
        let rt = current();
        let handle = rt.handle().clone();
        drop(rt);
        rec.catch("spawn on a dead current_thread handle", || {
            other.block_on(handle.spawn(async { 4 })).map_err(|e| e.is_cancelled())
        });
    }

    fn blocking_work_at_shutdown(rec) {
        // Drop waits for a running blocking job; a queued one is dropped or run?
        let rt = multi(1);
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        let (started_tx, started_rx) = mpsc::channel();
        let h = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            d.fetch_add(1, Ordering::SeqCst);
        });
        started_rx.recv().unwrap();
        drop(rt);
        rec.log(format!("drop waited for the running job: {}", done.load(Ordering::SeqCst) == 1));
        let other = current();
        rec.log(format!("its handle {:?}", other.block_on(h).map_err(|e| e.is_cancelled())));
        // shutdown_timeout returns before a job that outlasts it.
        let rt = multi(1);
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let _h = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(Duration::from_secs(10));
        });
        started_rx.recv().unwrap();
        let t = Instant::now();
        rt.shutdown_timeout(Duration::from_millis(50));
        let waited = t.elapsed();
        release_tx.send(()).unwrap();
        rec.log(format!(
            "shutdown_timeout(50 ms) returned within 5 s: {} after 40 ms: {}",
            waited < Duration::from_secs(5),
            waited >= Duration::from_millis(40)
        ));
    }

    fn block_on_polling(rec) {
        // current_thread: a ready future returns before spawned tasks run.
        let rt = current();
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let _h = rt.spawn(async move { r.store(true, Ordering::SeqCst) });
        rt.block_on(async {});
        rec.log(format!("ready block_on ran the spawned task: {}", ran.load(Ordering::SeqCst)));
        rt.block_on(k::task::yield_now());
        rec.log(format!("after a yield: {}", ran.load(Ordering::SeqCst)));
        // Tasks spawned before any block_on are not run by a later drop.
        let rt = current();
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let _h = rt.spawn(async move { r.store(true, Ordering::SeqCst) });
        drop(rt);
        rec.log(format!("never-driven task ran at drop: {}", ran.load(Ordering::SeqCst)));
        // multi_thread: spawned tasks run with nobody in block_on.
        let rt = multi(1);
        let (tx, rx) = mpsc::channel();
        let _h = rt.spawn(async move { tx.send(5).unwrap() });
        rec.log(format!("multi ran without block_on: {:?}", rx.recv_timeout(Duration::from_secs(10))));
        // A panic in block_on's future propagates; the runtime still works.
        let rt = current();
        rec.catch("panicking block_on future", || rt.block_on(async { panic!("in block_on") }));
        rec.catch("block_on after that", || rt.block_on(async { k::spawn(async { 6 }).await.unwrap() }));
    }

    fn metrics(rec) {
        let rt = current();
        let m = rt.metrics();
        rec.log(format!("current: workers {} alive {} global depth {}", m.num_workers(), m.num_alive_tasks(), m.global_queue_depth()));
        let hs: Vec<_> = (0..3).map(|_| rt.spawn(std::future::pending::<()>())).collect();
        rec.log(format!("3 spawned from outside: alive {} global depth {}", m.num_alive_tasks(), m.global_queue_depth()));
        rt.block_on(async {
            let m = k::runtime::Handle::current().metrics();
            let inner: Vec<_> = (0..2).map(|_| k::spawn(async {})).collect();
            rec.log(format!("2 more from inside: alive {} global depth {}", m.num_alive_tasks(), m.global_queue_depth()));
            for h in inner {
                h.await.unwrap();
            }
            rec.log(format!("after joining those: alive {}", m.num_alive_tasks()));
        });
        for h in &hs {
            h.abort();
        }
        rt.block_on(async {
            for h in hs {
                let _ = h.await;
            }
        });
        rec.log(format!("after aborting the rest: alive {}", m.num_alive_tasks()));
        let rt = multi(3);
        rec.log(format!("multi(3): workers {}", rt.metrics().num_workers()));
    }

    fn threads_names_and_callbacks(rec) {
        let started = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicUsize::new(0));
        let (s1, s2) = (started.clone(), stopped.clone());
        let rt = k::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("named")
            .on_thread_start(move || {
                s1.fetch_add(1, Ordering::SeqCst);
            })
            .on_thread_stop(move || {
                s2.fetch_add(1, Ordering::SeqCst);
            })
            .enable_all()
            .build()
            .unwrap();
        let names = rt.block_on(async {
            let on_block_on = std::thread::current().name().map(str::to_string);
            let in_task = k::spawn(async { std::thread::current().name().map(str::to_string) })
                .await
                .unwrap();
            let in_blocking =
                k::task::spawn_blocking(|| std::thread::current().name().map(str::to_string))
                    .await
                    .unwrap();
            (on_block_on.map(|n| n.contains("rt_differential") || n.contains("threads_names")), in_task, in_blocking)
        });
        rec.log(format!("names (block_on thread is the test's: {:?}) task {:?} blocking {:?}", names.0, names.1, names.2));
        // Two workers and one blocking thread, each started once.
        rec.log(format!("started {}", started.load(Ordering::SeqCst)));
        drop(rt);
        rec.log(format!("stopped after drop {}", stopped.load(Ordering::SeqCst)));
        // The default name, with the crate's own name taken out.
        let rt = multi(1);
        let name = rt.block_on(async {
            k::spawn(async { std::thread::current().name().map(str::to_string) }).await.unwrap()
        });
        rec.log(format!(
            "default name {:?}",
            name.map(|n| n.replace("tokio", "<crate>").replace("weft", "<crate>"))
        ));
    }
}
