//! Small items of Tokio's surface (issue #14): `watch::Sender::new`,
//! `broadcast::Sender::new`, `Handle::runtime_flavor`, `JoinSet`'s
//! `FromIterator`/`Extend` and `spawn_local`.

#[macro_use]
mod support;

rt_test! {
    use crate::support::Flavor;
    use weft::runtime::RuntimeFlavor;

    #[test]
    fn runtime_flavor_names_the_scheduler() {
        let rt = rt();
        let expected = match FLAVOR {
            Flavor::CurrentThread => RuntimeFlavor::CurrentThread,
            Flavor::MultiThread(_) => RuntimeFlavor::MultiThread,
        };
        assert_eq!(rt.handle().runtime_flavor(), expected);
        let inside = rt.block_on(async { weft::runtime::Handle::current().runtime_flavor() });
        assert_eq!(inside, expected);
    }

    #[test]
    fn senders_without_receivers_then_subscribe() {
        rt().block_on(async {
            let tx = weft::sync::watch::Sender::new(0u32);
            assert!(tx.send(1).is_err(), "a send with no receiver must fail");
            let mut rx = tx.subscribe();
            tx.send(2).unwrap();
            rx.changed().await.unwrap();
            assert_eq!(*rx.borrow(), 2);

            let tx = weft::sync::broadcast::Sender::new(2);
            assert!(tx.send(1u32).is_err());
            let mut rx = tx.subscribe();
            tx.send(3).unwrap();
            assert_eq!(rx.recv().await.unwrap(), 3);
        });
    }

    #[test]
    fn join_set_from_iter_and_extend() {
        rt().block_on(async {
            let mut set: weft::task::JoinSet<u32> = (0..4u32).map(|i| async move { i }).collect();
            set.extend((4..6u32).map(|i| async move { i }));
            assert_eq!(set.len(), 6);
            let mut all = set.join_all().await;
            all.sort();
            assert_eq!(all, vec![0, 1, 2, 3, 4, 5]);
        });
    }

    #[test]
    fn join_set_spawn_local() {
        let rt = rt();
        let local = weft::task::LocalSet::new();
        local.block_on(&rt, async {
            let shared = std::rc::Rc::new(5u32);
            let mut set = weft::task::JoinSet::new();
            for _ in 0..3 {
                let shared = shared.clone();
                set.spawn_local(async move { *shared });
            }
            assert_eq!(set.join_all().await, vec![5, 5, 5]);
        });
    }
}
