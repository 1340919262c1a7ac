//! Tasks from the outside: `JoinHandle`, `JoinError`, `AbortHandle`,
//! `JoinSet` and `spawn_blocking` results, on a current-thread runtime
//! (deterministic order) unless a scenario needs workers.

use crate::harness::{no_digits, payload_text};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

scenarios! {
    common {
        /// Logs `Drop` of its flag's owner, so a scenario sees when a
        /// task's future is dropped.
        pub struct OnDrop(pub Arc<AtomicBool>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }

        /// What a program can read off a `JoinError` by reference.
        fn join_error(e: &k::task::JoinError) -> String {
            format!(
                "cancelled {} panic {} display {:?} debug {:?}",
                e.is_cancelled(),
                e.is_panic(),
                no_digits(&e.to_string()),
                no_digits(&format!("{e:?}")),
            )
        }

        /// A `JoinError` as the `io::Error` it converts into.
        fn as_io(e: k::task::JoinError) -> String {
            let io = std::io::Error::from(e);
            format!("io {:?} {:?}", io.kind(), no_digits(&io.to_string()))
        }
    }

    fn join_errors(rec) {
        let rt = current();
        rt.block_on(async {
            let h = k::spawn(async { panic!("boom {}", 7) });
            let id = h.id();
            let e = h.await.unwrap_err();
            rec.log(join_error(&e));
            rec.log(format!("id matches {}", e.id() == id));
            match e.try_into_panic() {
                Ok(p) => rec.log(format!("payload {:?}", payload_text(&*p))),
                Err(e) => rec.log(format!("not a panic {}", e.is_cancelled())),
            }
            let h = k::spawn(std::future::pending::<()>());
            h.abort();
            let e = h.await.unwrap_err();
            rec.log(join_error(&e));
            match e.try_into_panic() {
                Ok(_) => rec.log("cancel had a payload"),
                Err(e) => rec.log(format!("cancel kept {}", e.is_cancelled())),
            }
            let h = k::spawn(async { std::panic::panic_any(42_u32) });
            let e = h.await.unwrap_err();
            rec.log(join_error(&e));
            rec.log(format!(
                "u32 payload {:?}",
                e.into_panic().downcast_ref::<u32>().copied()
            ));
            let e = k::spawn(async { panic!("as io") }).await.unwrap_err();
            rec.log(as_io(e));
            let h = k::spawn(std::future::pending::<()>());
            h.abort();
            rec.log(as_io(h.await.unwrap_err()));
            let e = k::spawn(async { panic!("again") }).await.unwrap_err();
            rec.catch("into_panic then resume_unwind", || {
                std::panic::resume_unwind(e.into_panic())
            });
            let e = k::spawn(std::future::pending::<()>());
            e.abort();
            let e = e.await.unwrap_err();
            rec.misuse("into_panic of a cancelled task", || drop(e.into_panic()));
        });
    }

    fn abort_timing(rec) {
        let rt = current();
        rt.block_on(async {
            // Aborted before its first poll: never runs.
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            let h = k::spawn(async move { r.store(true, Ordering::SeqCst) });
            h.abort();
            let res = h.await.map_err(|e| e.is_cancelled());
            rec.log(format!("abort before poll: {res:?} ran {}", ran.load(Ordering::SeqCst)));

            // Finished before the abort: the output stays.
            let h = k::spawn(async { 5 });
            while !h.is_finished() {
                k::task::yield_now().await;
            }
            h.abort();
            rec.log(format!("abort after finish: {:?}", h.await.map_err(|e| e.is_cancelled())));

            // Aborting itself: runs on to its next await.
            let steps = Arc::new(AtomicUsize::new(0));
            let s = steps.clone();
            let (tx, rx) = std::sync::mpsc::channel::<k::task::AbortHandle>();
            let h = k::spawn(async move {
                let me = rx.recv().unwrap();
                me.abort();
                s.fetch_add(1, Ordering::SeqCst);
                k::task::yield_now().await;
                s.fetch_add(1, Ordering::SeqCst);
            });
            tx.send(h.abort_handle()).unwrap();
            let res = h.await.map_err(|e| e.is_cancelled());
            rec.log(format!("self abort: {res:?} steps {}", steps.load(Ordering::SeqCst)));

            // The future is dropped at the abort's next chance, handles report.
            let dropped = Arc::new(AtomicBool::new(false));
            let guard = OnDrop(dropped.clone());
            let h = k::spawn(async move {
                let _g = guard;
                std::future::pending::<()>().await
            });
            k::task::yield_now().await;
            let ah = h.abort_handle();
            rec.log(format!(
                "before abort: finished {} {} dropped {}",
                h.is_finished(),
                ah.is_finished(),
                dropped.load(Ordering::SeqCst)
            ));
            ah.abort();
            ah.abort();
            rec.log(format!(
                "right after abort: finished {} dropped {}",
                h.is_finished(),
                dropped.load(Ordering::SeqCst)
            ));
            k::task::yield_now().await;
            rec.log(format!(
                "a yield later: finished {} {} dropped {}",
                h.is_finished(),
                ah.is_finished(),
                dropped.load(Ordering::SeqCst)
            ));
            rec.log(format!("join: {:?}", h.await.map_err(|e| e.is_cancelled())));
            rec.log(format!("abort handle after join: finished {}", ah.is_finished()));

            // Dropping a JoinHandle detaches; the task still runs.
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            drop(k::spawn(async move { r.store(true, Ordering::SeqCst) }));
            k::task::yield_now().await;
            rec.log(format!("detached ran {}", ran.load(Ordering::SeqCst)));
        });
    }

    fn join_set_lifecycle(rec) {
        let rt = current();
        rt.block_on(async {
            let mut set = k::task::JoinSet::new();
            rec.log(format!("empty: {} {} {:?}", set.len(), set.is_empty(), set.try_join_next().map(|r| r.is_ok())));
            rec.log(format!("join_next on empty: {:?}", set.join_next().await.map(|r| r.is_ok())));
            let mut flags = Vec::new();
            for i in 0..3 {
                let dropped = Arc::new(AtomicBool::new(false));
                let g = OnDrop(dropped.clone());
                flags.push(dropped);
                set.spawn(async move {
                    let _g = g;
                    if i == 1 {
                        return i;
                    }
                    std::future::pending::<usize>().await
                });
            }
            rec.log(format!("len after spawns {}", set.len()));
            let first = set.join_next().await.map(|r| r.map_err(|e| e.is_cancelled()));
            rec.log(format!("first {first:?} len {}", set.len()));
            set.abort_all();
            rec.log(format!("after abort_all len {}", set.len()));
            let mut rest = Vec::new();
            while let Some(r) = set.join_next().await {
                rest.push(r.map_err(|e| e.is_cancelled()));
            }
            rec.log(format!("rest {rest:?}"));
            rec.log(format!(
                "dropped {:?}",
                flags.iter().map(|f| f.load(Ordering::SeqCst)).collect::<Vec<_>>()
            ));

            // Dropping a set aborts its members.
            let dropped = Arc::new(AtomicBool::new(false));
            let g = OnDrop(dropped.clone());
            let mut set = k::task::JoinSet::new();
            set.spawn(async move {
                let _g = g;
                std::future::pending::<()>().await
            });
            k::task::yield_now().await;
            drop(set);
            rec.log(format!("set dropped: member dropped at once {}", dropped.load(Ordering::SeqCst)));
            k::task::yield_now().await;
            rec.log(format!("a yield later {}", dropped.load(Ordering::SeqCst)));

            // detach_all keeps them running.
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            let mut set = k::task::JoinSet::new();
            set.spawn(async move {
                k::task::yield_now().await;
                r.store(true, Ordering::SeqCst)
            });
            set.detach_all();
            rec.log(format!("detached len {}", set.len()));
            drop(set);
            for _ in 0..3 {
                k::task::yield_now().await;
            }
            rec.log(format!("detached member ran {}", ran.load(Ordering::SeqCst)));

            // shutdown: aborts and waits.
            let mut set = k::task::JoinSet::new();
            let dropped = Arc::new(AtomicBool::new(false));
            let g = OnDrop(dropped.clone());
            set.spawn(async move {
                let _g = g;
                std::future::pending::<()>().await
            });
            set.spawn(async {});
            set.shutdown().await;
            rec.log(format!("after shutdown len {} dropped {}", set.len(), dropped.load(Ordering::SeqCst)));

            // join_next_with_id and the ids of handles.
            let mut set = k::task::JoinSet::new();
            let ah = set.spawn(async { 9 });
            let (id, v) = set.join_next_with_id().await.unwrap().unwrap();
            rec.log(format!("with id: {v} same id {}", id == ah.id()));
            let ah = set.spawn(async { panic!("member") });
            let e = set.join_next_with_id().await.unwrap().unwrap_err();
            rec.log(format!("failed member id same {} {}", e.id() == ah.id(), join_error(&e)));

            // spawn_blocking into a set.
            let mut set = k::task::JoinSet::new();
            set.spawn_blocking(|| 3);
            rec.log(format!("blocking member {:?}", set.join_next().await.map(|r| r.ok())));
        });
    }

    fn join_all_and_collect(rec) {
        let rt = current();
        rec.catch("join_all order", || {
            rt.block_on(async {
                let mut set = k::task::JoinSet::new();
                for i in 0..4_usize {
                    set.spawn(async move {
                        for _ in 0..(4 - i) {
                            k::task::yield_now().await;
                        }
                        i
                    });
                }
                let mut got = set.join_all().await;
                got.sort();
                got
            })
        });
        rec.catch("join_all with a panicking member", || {
            rt.block_on(async {
                let mut set = k::task::JoinSet::new();
                set.spawn(async { 1 });
                set.spawn(async { panic!("member panicked") });
                set.join_all().await
            })
        });
        rec.catch("FromIterator", || {
            rt.block_on(async {
                let set: k::task::JoinSet<usize> = (0..3_usize).map(|i| async move { i * 2 }).collect();
                let mut got = set.join_all().await;
                got.sort();
                got
            })
        });
        rec.catch("Extend", || {
            rt.block_on(async {
                let mut set = k::task::JoinSet::new();
                set.extend((0..2_usize).map(|i| async move { i + 10 }));
                set.len()
            })
        });
    }

    fn spawn_blocking_results(rec) {
        let rt = multi(1);
        rt.block_on(async {
            let r = k::task::spawn_blocking(|| 11).await.map_err(|e| e.is_panic());
            rec.log(format!("value {r:?}"));
            let e = k::task::spawn_blocking(|| panic!("in a blocking job")).await.unwrap_err();
            rec.log(join_error(&e));
            // Aborting a running blocking job does nothing: it runs to the end.
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let h = k::task::spawn_blocking(move || {
                rx.recv_timeout(Duration::from_secs(5)).is_ok()
            });
            k::time::sleep(Duration::from_millis(20)).await;
            h.abort();
            tx.send(()).unwrap();
            rec.log(format!("aborted while running: {:?}", h.await.map_err(|e| e.is_cancelled())));
            let h = k::task::spawn_blocking(|| 1);
            let id = h.id();
            let ah = h.abort_handle();
            rec.log(format!("abort handle id same {}", ah.id() == id));
            let _ = h.await;
        });
    }

    fn budget(rec) {
        let rt = current();
        rt.block_on(async {
            // (The order tasks that yielded at one instant resume in is not
            // compared: Tokio resumes the last to yield first, and documents
            // no order.)
            // unconstrained: a loop over an always-ready channel never yields.
            let (tx, mut rx) = k::sync::mpsc::unbounded_channel::<u32>();
            for i in 0..1000 {
                tx.send(i).unwrap();
            }
            drop(tx);
            let n = k::task::unconstrained(async move {
                let mut n = 0;
                while rx.recv().await.is_some() {
                    n += 1;
                }
                n
            })
            .await;
            rec.log(format!("unconstrained received {n}"));
            // How many budget units one poll of a task has.
            let consumed = std::future::poll_fn(|cx| {
                let mut n = 0_u32;
                loop {
                    let mut f = std::pin::pin!(k::task::consume_budget());
                    match f.as_mut().poll(cx) {
                        std::task::Poll::Ready(()) if n < 100_000 => n += 1,
                        std::task::Poll::Ready(()) => return std::task::Poll::Ready(n),
                        std::task::Poll::Pending => return std::task::Poll::Ready(n),
                    }
                }
            })
            .await;
            rec.log(format!("consume_budget ready {consumed} times in one poll"));
        });
    }
}
