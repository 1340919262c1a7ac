//! The public coop API (`task::coop::cooperative`) and `time::error::Error`'s
//! kinds, as Tokio exposes them (issue 14).

use std::future::Future;

#[test]
fn cooperative_spends_budget_and_time_error_kinds() {
    use std::future::poll_fn;
    use std::task::Poll;
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        // An always-ready future wrapped by `cooperative` runs out of budget
        // within a poll's worth of units and yields.
        let mut polls = 0u32;
        let mut yielded = false;
        let mut fut = std::pin::pin!(weft::task::coop::cooperative(std::future::ready(())));
        poll_fn(|cx| {
            for _ in 0..1000 {
                polls += 1;
                if fut.as_mut().poll(cx).is_pending() {
                    yielded = true;
                    return Poll::Ready(());
                }
                fut.set(weft::task::coop::cooperative(std::future::ready(())));
            }
            Poll::Ready(())
        })
        .await;
        assert!(
            yielded,
            "cooperative never ran out of budget in {polls} polls"
        );
        assert!(
            polls <= 200,
            "the budget is 128 units; it took {polls} polls"
        );
    });
    let e = weft::time::error::Error::at_capacity();
    assert!(e.is_at_capacity() && !e.is_shutdown() && !e.is_invalid());
    assert!(weft::time::error::Error::shutdown().is_shutdown());
    let _: Option<weft::sync::futures::Notified<'_>> = None;
}

/// `watch::Receiver::wait_for` spends a unit of budget even when the
/// current value already matches, so a loop of `send` and `wait_for` on
/// the same task yields (as on Tokio) instead of holding its worker.
#[test]
fn watch_wait_for_on_a_matching_value_spends_budget() {
    use std::future::poll_fn;
    use std::task::Poll;
    let rt = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let (tx, mut rx) = weft::sync::watch::channel(0);
        let mut ready = 0u32;
        let yielded = poll_fn(|cx| {
            for _ in 0..10_000 {
                tx.send(1).unwrap();
                let mut wait = std::pin::pin!(rx.wait_for(|v| *v == 1));
                if wait.as_mut().poll(cx).is_pending() {
                    return Poll::Ready(true);
                }
                ready += 1;
            }
            Poll::Ready(false)
        })
        .await;
        assert!(yielded, "wait_for never ran out of budget in {ready} calls");
        assert!(ready > 0);
    });
}
