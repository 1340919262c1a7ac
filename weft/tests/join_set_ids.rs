//! `JoinSet`'s `_with_id` joins and `spawn_blocking_on`, `LocalKey::try_get`
//! and `LocalSet::id` (issue 14), on every flavour.

#[macro_use]
mod support;

weft::task_local! {
    static REQUEST: u32;
}

#[test]
fn local_key_try_get_inside_and_outside_a_scope() {
    assert!(REQUEST.try_get().is_err(), "no scope yet");
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let got = rt.block_on(REQUEST.scope(7, async { REQUEST.try_get() }));
    assert_eq!(got.unwrap(), 7);
    assert_eq!(REQUEST.sync_scope(9, || REQUEST.try_get()).unwrap(), 9);
    assert!(REQUEST.try_get().is_err(), "the scope ended");
}

#[test]
fn local_set_ids_are_distinct_and_stable() {
    let a = weft::task::LocalSet::new();
    let b = weft::task::LocalSet::new();
    assert_ne!(a.id(), b.id());
    assert_eq!(a.id(), a.id());
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_ne!(
        a.id(),
        rt.handle().id(),
        "sets and runtimes share one counter"
    );
}

rt_test! {
    use std::collections::HashMap;
    use std::future::poll_fn;
    use weft::task::JoinSet;

    #[test]
    fn join_next_with_id_returns_the_spawned_id() {
        rt().block_on(async {
            let mut set = JoinSet::new();
            let mut ids = HashMap::new();
            for i in 0..8u32 {
                let abort = set.spawn(async move { i });
                ids.insert(abort.id(), i);
            }
            let mut seen = 0;
            while let Some(res) = set.join_next_with_id().await {
                let (id, value) = res.unwrap();
                assert_eq!(ids.remove(&id), Some(value), "id {id} belongs to task {value}");
                seen += 1;
            }
            assert_eq!(seen, 8);
            assert!(ids.is_empty());
        });
    }

    #[test]
    fn a_failed_task_reports_its_id_in_the_error() {
        rt().block_on(async {
            let mut set: JoinSet<()> = JoinSet::new();
            let abort = set.spawn(std::future::pending());
            abort.abort();
            let err = set.join_next_with_id().await.unwrap().unwrap_err();
            assert!(err.is_cancelled());
            assert_eq!(err.id(), abort.id());
        });
    }

    #[test]
    fn try_and_poll_with_id() {
        rt().block_on(async {
            let mut set = JoinSet::new();
            assert!(set.try_join_next_with_id().is_none(), "empty set");
            let first = set.spawn(async { "a" }).id();
            // Poll until it is done, then take it without waiting.
            let (id, v) = loop {
                if let Some(res) = set.try_join_next_with_id() {
                    break res.unwrap();
                }
                weft::task::yield_now().await;
            };
            assert_eq!((id, v), (first, "a"));

            let second = set.spawn(async { "b" }).id();
            let (id, v) = poll_fn(|cx| set.poll_join_next_with_id(cx))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((id, v), (second, "b"));
            assert!(poll_fn(|cx| set.poll_join_next_with_id(cx)).await.is_none());
        });
    }

    #[test]
    fn spawn_blocking_on_runs_on_the_given_runtime() {
        let rt = rt();
        let other = weft::runtime::Builder::new_current_thread()
            .thread_name("other-pool")
            .build()
            .unwrap();
        let mut set = JoinSet::new();
        let id = other.block_on(async {
            // Spawn onto `rt`'s pool from inside another runtime.
            set.spawn_blocking_on(
                || std::thread::current().name().map(str::to_owned),
                rt.handle(),
            )
            .id()
        });
        let (got_id, name) = rt.block_on(set.join_next_with_id()).unwrap().unwrap();
        assert_eq!(got_id, id);
        assert_eq!(name.as_deref(), Some("weft-rt-worker"), "not other-pool");
    }
}

/// A `JoinSet` is `Unpin` whatever its output (as Tokio's): crates poll it
/// through `Pin<&mut _>` of a wrapper (tokio-stream's `JoinSetStream`).
#[test]
fn a_join_set_is_unpin_whatever_its_output() {
    fn unpin<T: Unpin>() {}
    unpin::<weft::task::JoinSet<std::marker::PhantomPinned>>();
}
