//! `join!`, `try_join!` and `pin!` (issue #11, item 2): outputs in order,
//! concurrency in one task, `biased;` order against the default rotation,
//! `try_join!` stopping at the first error and dropping the rest, and a
//! `join!` loop over always-ready futures yielding to other tasks.

#[macro_use]
mod support;

rt_test! {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[test]
    fn join_returns_outputs_in_order_and_runs_concurrently() {
        rt().block_on(async {
            let (tx, rx) = weft::sync::oneshot::channel();
            // The second waits for the first: only concurrency completes it.
            let (a, b, c) = weft::join!(
                async move {
                    tx.send(5).unwrap();
                    "a"
                },
                async move { rx.await.unwrap() * 2 },
                async { weft::time::sleep(Duration::from_millis(1)).await },
            );
            assert_eq!((a, b, c), ("a", 10, ()));
            let borrowed = String::from("local");
            let (len, again) = weft::join!(async { borrowed.len() }, async { borrowed.len() });
            assert_eq!((len, again), (5, 5));
            #[allow(clippy::let_unit_value)]
            let () = weft::join!();
        });
    }

    #[test]
    fn biased_polls_in_order_and_default_rotates() {
        rt().block_on(async {
            // Two futures that each record when they are polled, pending
            // three times.
            fn recorder(
                name: char,
                log: Arc<Mutex<Vec<char>>>,
            ) -> impl std::future::Future<Output = ()> {
                let mut polls = 0;
                std::future::poll_fn(move |cx| {
                    log.lock().unwrap().push(name);
                    polls += 1;
                    if polls == 3 {
                        std::task::Poll::Ready(())
                    } else {
                        cx.waker().wake_by_ref();
                        std::task::Poll::Pending
                    }
                })
            }
            let log = Arc::new(Mutex::new(Vec::new()));
            weft::join!(biased; recorder('a', log.clone()), recorder('b', log.clone()));
            assert_eq!(*log.lock().unwrap(), vec!['a', 'b', 'a', 'b', 'a', 'b']);
            log.lock().unwrap().clear();
            weft::join!(recorder('a', log.clone()), recorder('b', log.clone()));
            let order = log.lock().unwrap().clone();
            assert_eq!(order.len(), 6);
            assert!(order.chunks(2).any(|pair| pair[0] == 'b'), "never started with b: {order:?}");
        });
    }

    #[test]
    fn try_join_stops_at_the_first_error_and_drops_the_rest() {
        rt().block_on(async {
            struct DropFlag(Arc<AtomicBool>);
            impl Drop for DropFlag {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
            let dropped = Arc::new(AtomicBool::new(false));
            let flag = DropFlag(dropped.clone());
            let res: Result<((), u32), &str> = weft::try_join!(
                async move {
                    let _flag = flag;
                    std::future::pending::<()>().await;
                    Ok(())
                },
                async { Err("failed") },
            );
            assert_eq!(res, Err("failed"));
            assert!(dropped.load(Ordering::SeqCst), "the pending future was not dropped");
            let ok: Result<(u8, u8, u8), ()> =
                weft::try_join!(biased; async { Ok(1) }, async { Ok(2) }, async { Ok(3) });
            assert_eq!(ok, Ok((1, 2, 3)));
        });
    }

    #[test]
    fn join_loop_over_ready_futures_yields() {
        rt().block_on(async {
            let ticks = Arc::new(AtomicUsize::new(0));
            let ticker = {
                let ticks = ticks.clone();
                weft::spawn(async move {
                    ticks.fetch_add(1, Ordering::SeqCst);
                })
            };
            // Never waits on anything: each round spends a unit of budget
            // and completes, so only the resource's budget check lets the
            // spawned task run on a current_thread runtime. As in Tokio,
            // join! itself neither spends nor checks the budget: branches
            // that spend none would spin here.
            use weft::io::AsyncReadExt;
            let mut empty = weft::io::empty();
            let mut buf = [0u8; 1];
            let mut rounds = 0u64;
            while ticks.load(Ordering::SeqCst) == 0 {
                let (n, ()) = weft::join!(empty.read(&mut buf), async {});
                assert_eq!(n.unwrap(), 0);
                rounds += 1;
                assert!(rounds < 10_000_000, "join! never yielded");
            }
            ticker.await.unwrap();
        });
    }
}

#[test]
fn pin_both_forms() {
    use std::future::Future;
    use std::pin::Pin;
    weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let a = async { 1 };
            let b = async { 2 };
            weft::pin!(a, b);
            // Both are pinned futures now.
            fn pinned(_: Pin<&mut dyn Future<Output = i32>>) {}
            pinned(a.as_mut());
            assert_eq!((&mut a).await + (&mut b).await, 3);
            weft::pin! {
                let c = async { 4 };
            }
            assert_eq!((&mut c).await, 4);
        });
}

/// A `join!` future holds its futures (each beside room for its output),
/// the poll closure (a pointer, and 4 bytes of rotation unless `biased;`)
/// and the async block's state: nothing per future beyond its slot, and
/// nothing that grows with the count (Tokio's sizes for the same code).
#[cfg(target_pointer_width = "64")]
#[test]
fn join_futures_hold_only_their_futures_and_a_small_fixed_part() {
    use std::future::ready;
    use std::mem::size_of_val;
    let one = async { weft::join!(ready(0u64)) };
    let two = async { weft::join!(ready(0u64), ready(0u64)) };
    let three = async { weft::join!(ready(0u64), ready(0u64), ready(0u64)) };
    let (one, two, three) = (size_of_val(&one), size_of_val(&two), size_of_val(&three));
    // A `Ready<u64>` (16 bytes) or its output, behind an 8-byte tag.
    assert_eq!(two - one, 24);
    assert_eq!(three - two, 24);
    assert!(one <= 24 + 16 + 8, "one future: {one} bytes");

    let biased = async { weft::join!(biased; ready(0u64)) };
    assert!(size_of_val(&biased) < one, "biased; keeps no rotation");
    let tried = async { weft::try_join!(ready(Ok::<u64, ()>(0)), ready(Ok::<u64, ()>(0))) };
    assert!(
        size_of_val(&tried) <= 2 * 24 + 16 + 8,
        "{}",
        size_of_val(&tried)
    );

    // The figures Tokio's own tests assert for one and two ready `i32`s.
    let tokio_one = async { weft::join!(ready(0i32)) };
    let tokio_two = async { weft::join!(ready(0i32), ready(0i32)) };
    assert_eq!((size_of_val(&tokio_one), size_of_val(&tokio_two)), (32, 48));
}
