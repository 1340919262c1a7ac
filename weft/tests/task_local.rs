//! `task_local!`: scope, sync_scope, with, try_with, get, nesting,
//! restoring after a scope, following the task across polls and threads,
//! and never leaking into another task (issue #11, item 2).

#[macro_use]
mod support;

weft::task_local! {
    static NUMBER: u32;
    pub static NAME: String;
}

rt_test! {
    use super::{NAME, NUMBER};
    use std::time::Duration;

    #[test]
    fn scope_sets_the_value_across_suspensions() {
        rt().block_on(async {
            let seen = NUMBER
                .scope(5, async {
                    let before = NUMBER.get();
                    weft::time::sleep(Duration::from_millis(1)).await;
                    weft::task::yield_now().await;
                    (before, NUMBER.get())
                })
                .await;
            assert_eq!(seen, (5, 5));
            assert!(NUMBER.try_with(|_| ()).is_err(), "the value outlived its scope");
        });
    }

    #[test]
    fn scopes_nest_and_restore() {
        rt().block_on(async {
            NUMBER
                .scope(1, async {
                    assert_eq!(NUMBER.get(), 1);
                    NUMBER
                        .scope(2, async {
                            assert_eq!(NUMBER.get(), 2);
                            weft::task::yield_now().await;
                            assert_eq!(NUMBER.get(), 2);
                        })
                        .await;
                    assert_eq!(NUMBER.get(), 1);
                    NUMBER.sync_scope(3, || assert_eq!(NUMBER.get(), 3));
                    assert_eq!(NUMBER.get(), 1);
                })
                .await;
        });
    }

    #[test]
    fn value_does_not_leak_into_other_tasks() {
        rt().block_on(async {
            let (tx, rx) = weft::sync::oneshot::channel();
            let other = weft::spawn(async move {
                rx.await.unwrap();
                NUMBER.try_with(|n| *n).ok()
            });
            NUMBER
                .scope(9, async move {
                    tx.send(()).unwrap();
                    // While this scope is suspended, the other task runs.
                    weft::time::sleep(Duration::from_millis(5)).await;
                })
                .await;
            assert_eq!(other.await.unwrap(), None);
        });
    }

    #[test]
    fn with_borrows_and_take_value_returns_it() {
        rt().block_on(async {
            let mut fut = Box::pin(NAME.scope("weft".to_string(), async {
                NAME.with(|name| name.len())
            }));
            assert_eq!(fut.as_mut().await, 4);
            assert_eq!(fut.as_mut().take_value(), Some("weft".to_string()));
            assert_eq!(fut.as_mut().take_value(), None);
        });
    }
}

#[test]
#[should_panic(expected = "task-local value not set")]
fn with_outside_a_scope_panics() {
    NUMBER.with(|_| ());
}

#[test]
fn the_future_is_dropped_inside_its_scope() {
    struct SeesNumber(std::sync::Arc<std::sync::Mutex<Option<u32>>>);
    impl Drop for SeesNumber {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = NUMBER.try_with(|n| *n).ok();
        }
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let guard = SeesNumber(seen.clone());
    let fut = NUMBER.scope(4, async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    drop(fut);
    assert_eq!(*seen.lock().unwrap(), Some(4));
}
