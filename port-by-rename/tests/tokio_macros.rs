//! Tokio's declarative macros with weft renamed to `tokio`: `select!` in a
//! loop with a cancelled branch, `join!`, `try_join!`, `pin!` and
//! `task_local!`, written exactly as Tokio code writes them.

use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::sleep;

tokio::task_local! {
    static REQUEST: u32;
}

#[tokio::test]
async fn select_loop_with_a_cancelled_branch() {
    let (tx, mut rx) = mpsc::channel::<u32>(4);
    let timeout = sleep(Duration::from_millis(50));
    tokio::pin!(timeout);
    tokio::spawn(async move {
        for i in 0..3 {
            tx.send(i).await.unwrap();
        }
        sleep(Duration::from_secs(10)).await;
    });
    let mut sum = 0;
    loop {
        tokio::select! {
            Some(v) = rx.recv() => sum += v,
            _ = &mut timeout => break,
            // Never wins: its future is cancelled (dropped) each round.
            _ = sleep(Duration::from_secs(3600)) => unreachable!(),
        }
    }
    assert_eq!(sum, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_and_try_join() {
    let (a, b) = tokio::join!(async { 1 }, async {
        sleep(Duration::from_millis(1)).await;
        2
    });
    assert_eq!(a + b, 3);
    let res: Result<(u8, u8), String> =
        tokio::try_join!(async { Ok(1) }, async { Err("bad".to_string()) });
    assert_eq!(res.unwrap_err(), "bad");
}

#[tokio::test]
async fn task_local_scope() {
    let seen = REQUEST
        .scope(42, async {
            tokio::task::yield_now().await;
            REQUEST.get()
        })
        .await;
    assert_eq!(seen, 42);
}
