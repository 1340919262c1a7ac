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
