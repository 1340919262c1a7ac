//! `LocalSet` (when its tasks run, what its drop does, its handles) and
//! `task_local!` (scopes, access outside them, what spawned tasks see).

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

scenarios! {
    common {
        k::task_local! {
            static NUMBER: u32;
            static NAME: String;
        }

        /// Sets its flag when dropped.
        pub struct OnDrop(pub Arc<AtomicBool>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
    }

    fn local_set_runs_tasks_only_while_driven(rec) {
        let rt = current();
        let local = k::task::LocalSet::new();
        let ran = Rc::new(Cell::new(0));
        let r = ran.clone();
        let early = local.spawn_local(async move { r.set(r.get() + 1) });
        rec.log(format!("spawned before running: ran {}", ran.get()));
        // A plain block_on does not run the set's tasks.
        rt.block_on(k::task::yield_now());
        rec.log(format!("after a plain block_on: ran {}", ran.get()));
        let out = local.block_on(&rt, async { 3 });
        rec.log(format!("ready future through the set: {out} ran {}", ran.get()));
        local.block_on(&rt, k::task::yield_now());
        rec.log(format!("after a yield in the set: ran {} finished {}", ran.get(), early.is_finished()));
        let v = local.block_on(&rt, early);
        rec.log(format!("joined {v:?}"));
        // run_until returns with tasks still queued; they run later.
        let r = ran.clone();
        let out = local.block_on(&rt, async move {
            k::task::spawn_local(async move {
                k::task::yield_now().await;
                k::task::yield_now().await;
                r.set(r.get() + 10);
            });
            "done"
        });
        rec.log(format!("run_until returned {out} ran {}", ran.get()));
        rt.block_on(local);
        rec.log(format!("set awaited to the end: ran {}", ran.get()));
    }

    fn local_set_drop(rec) {
        let rt = current();
        let local = k::task::LocalSet::new();
        let dropped = Arc::new(AtomicBool::new(false));
        let g = OnDrop(dropped.clone());
        let pending = local.spawn_local(async move {
            let _g = g;
            std::future::pending::<()>().await
        });
        let never = local.spawn_local(async { 1 });
        local.block_on(&rt, k::task::yield_now());
        rec.log(format!("before drop: dropped {} finished {}", dropped.load(Ordering::SeqCst), never.is_finished()));
        drop(local);
        rec.log(format!("after drop: dropped {}", dropped.load(Ordering::SeqCst)));
        rec.log(format!(
            "handles: {:?} {:?}",
            rt.block_on(pending).map_err(|e| e.is_cancelled()),
            rt.block_on(never).map_err(|e| e.is_cancelled())
        ));
        // A set dropped before it ever ran: the queued task is dropped, not run.
        let local = k::task::LocalSet::new();
        let ran = Rc::new(Cell::new(false));
        let r = ran.clone();
        let h = local.spawn_local(async move { r.set(true) });
        drop(local);
        rec.log(format!(
            "unrun set dropped: ran {} join {:?}",
            ran.get(),
            rt.block_on(h).map_err(|e| e.is_cancelled())
        ));
    }

    fn local_set_enter_and_nesting(rec) {
        let rt = current();
        let local = k::task::LocalSet::new();
        let ran = Rc::new(Cell::new(false));
        let r = ran.clone();
        let h = {
            let _g = local.enter();
            k::task::spawn_local(async move { r.set(true) })
        };
        rec.log(format!("spawned under enter: ran {}", ran.get()));
        rec.catch("spawn_local after the guard", || {
            drop(k::task::spawn_local(async {}))
        });
        let v = local.block_on(&rt, async {
            // A local task spawning another from inside the set.
            let inner = k::task::spawn_local(async { k::task::spawn_local(async { 4 }).await.unwrap() });
            inner.await.unwrap()
        });
        rec.log(format!("nested spawn_local {v} ran {}", ran.get()));
        rec.log(format!("joined {:?}", local.block_on(&rt, h).is_ok()));
        // A panicking local task does not take the set down.
        let v = local.block_on(&rt, async {
            let bad = k::task::spawn_local(async { panic!("local boom") });
            let good = k::task::spawn_local(async { 5 });
            (bad.await.map_err(|e| e.is_panic()), good.await.unwrap())
        });
        rec.log(format!("panicking local task {v:?}"));
        // spawn (Send) from inside the set goes to the runtime.
        let v = local.block_on(&rt, async { k::spawn(async { 6 }).await.unwrap() });
        rec.log(format!("spawn inside the set {v}"));
        // Two sets, one inside the other.
        let outer = k::task::LocalSet::new();
        let v = outer.block_on(&rt, async {
            let inner = k::task::LocalSet::new();
            inner.run_until(async { k::task::spawn_local(async { 7 }).await.unwrap() }).await
        });
        rec.log(format!("set in a set {v}"));
    }

    fn task_local_scopes(rec) {
        let rt = current();
        // weft's message goes on to say where the value is set: the start
        // is compared.
        let e = NUMBER.try_with(|n| *n).map_err(|e| e.to_string().starts_with("task-local value not set"));
        rec.log(format!("outside: try_with {e:?}"));
        rec.misuse("get outside a scope", || NUMBER.get());
        rec.misuse("with outside a scope", || NUMBER.with(|n| *n));
        let v = NUMBER.sync_scope(1, || NUMBER.get());
        rec.log(format!("sync_scope {v}"));
        let v = rt.block_on(NUMBER.scope(2, async {
            let before = NUMBER.get();
            let nested = NUMBER.scope(3, async { NUMBER.get() }).await;
            let after = NUMBER.get();
            let spawned = k::spawn(async { NUMBER.try_with(|n| *n).is_ok() }).await.unwrap();
            let blocking = k::task::spawn_blocking(|| NUMBER.try_with(|n| *n).is_ok()).await.unwrap();
            (before, nested, after, spawned, blocking)
        }));
        rec.log(format!("scope: {v:?}"));
        let v = rt.block_on(NAME.scope("a".to_string(), async {
            NAME.with(|n| n.len()) + NUMBER.try_with(|n| *n as usize).unwrap_or(100)
        }));
        rec.log(format!("two keys {v}"));
        // The value lives as long as the scope future; take_value after it.
        let mut fut = Box::pin(NAME.scope("kept".to_string(), async { NAME.get().len() }));
        rec.log(format!("take_value before polling {:?}", fut.as_mut().take_value()));
        let mut fut = Box::pin(NAME.scope("kept".to_string(), async { NAME.get().len() }));
        let n = rt.block_on(fut.as_mut());
        rec.log(format!("take_value after completion {:?} {n}", fut.as_mut().take_value()));
        rec.catch("nested sync_scope, then the outer again", || {
            NUMBER.sync_scope(9, || NUMBER.sync_scope(10, || NUMBER.get()) + NUMBER.get())
        });
    }
}
