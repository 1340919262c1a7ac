//! Task and sync primitives, built against weft or against Tokio (run.sh
//! renames the crate to `rt`), one task on a current_thread runtime, so
//! nothing waits on another thread: what is counted is each primitive's
//! own path. The first argument picks the workload, the second how many
//! times it runs (default 10); run.sh counts 1 and 3 runs and reports the
//! difference. Each run is 10,000 operations (1,000 for the spawning
//! ones):
//!
//! - `spawn_await`: `spawn` a task and await its `JoinHandle`;
//! - `joinset`: 1,000 `JoinSet::spawn`, then `join_next` until empty;
//! - `localset`: 1,000 `spawn_local` in a `LocalSet`, each awaited;
//! - `abort`: spawn a pending task, `abort` it, await the cancellation;
//! - `yield_now`;
//! - `select`: `select!` over two `mpsc` receivers, one with a message;
//! - `join`: `join!` of two ready futures;
//! - `oneshot`: a channel made, sent on, received;
//! - `mpsc`, `mpsc_bounded` (capacity 16): send, then receive it;
//! - `notify`: `notify_one`, then `notified().await` (a stored permit);
//! - `semaphore`, `mutex`: acquire and release, uncontended;
//! - `rwlock`: one write in four, reads otherwise, uncontended;
//! - `watch`: send, `changed().await`, `borrow_and_update`;
//! - `broadcast` (capacity 16): send, then receive it.

use std::hint::black_box;

const MODES: &[&str] = &[
    "spawn_await",
    "joinset",
    "localset",
    "abort",
    "yield_now",
    "select",
    "join",
    "oneshot",
    "mpsc",
    "mpsc_bounded",
    "notify",
    "semaphore",
    "mutex",
    "rwlock",
    "watch",
    "broadcast",
];

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "--list" {
        println!("{}", MODES.join(" "));
        return;
    }
    assert!(
        MODES.contains(&mode.as_str()),
        "usage: rt-util MODE [N]; MODE one of {MODES:?}"
    );
    let n: usize = std::env::args().nth(2).map_or(10, |s| s.parse().unwrap());
    let runtime = rt::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..n {
        match mode.as_str() {
            "localset" => {
                let local = rt::task::LocalSet::new();
                local.block_on(&runtime, async {
                    let mut hs = Vec::with_capacity(1000);
                    for i in 0..1000u32 {
                        hs.push(rt::task::spawn_local(async move { black_box(i) }));
                    }
                    for h in hs {
                        black_box(h.await.unwrap());
                    }
                });
            }
            _ => runtime.block_on(run(&mode)),
        }
    }
}

async fn run(mode: &str) {
    match mode {
        "joinset" => {
            let mut set = rt::task::JoinSet::new();
            for i in 0..1000u32 {
                set.spawn(async move { black_box(i) });
            }
            let mut sum = 0u64;
            while let Some(r) = set.join_next().await {
                sum += u64::from(r.unwrap());
            }
            black_box(sum);
        }
        "oneshot" => {
            for i in 0..10_000u32 {
                let (tx, rx) = rt::sync::oneshot::channel();
                tx.send(i).unwrap();
                black_box(rx.await.unwrap());
            }
        }
        "mpsc" => {
            let (tx, mut rx) = rt::sync::mpsc::unbounded_channel();
            for i in 0..10_000u32 {
                tx.send(i).unwrap();
                black_box(rx.recv().await.unwrap());
            }
        }
        "mpsc_bounded" => {
            let (tx, mut rx) = rt::sync::mpsc::channel(16);
            for i in 0..10_000u32 {
                tx.send(i).await.unwrap();
                black_box(rx.recv().await.unwrap());
            }
        }
        "notify" => {
            let n = rt::sync::Notify::new();
            for _ in 0..10_000 {
                n.notify_one();
                n.notified().await;
            }
        }
        "semaphore" => {
            let s = rt::sync::Semaphore::new(4);
            for _ in 0..10_000 {
                let p = s.acquire().await.unwrap();
                black_box(&p);
            }
        }
        "mutex" => {
            let m = rt::sync::Mutex::new(0u64);
            for _ in 0..10_000 {
                *m.lock().await += 1;
            }
            black_box(m.into_inner());
        }
        "rwlock" => {
            let m = rt::sync::RwLock::new(0u64);
            for i in 0..10_000 {
                if i % 4 == 0 {
                    *m.write().await += 1;
                } else {
                    black_box(*m.read().await);
                }
            }
        }
        "watch" => {
            let (tx, mut rx) = rt::sync::watch::channel(0u32);
            for i in 0..10_000u32 {
                tx.send(i).unwrap();
                rx.changed().await.unwrap();
                black_box(*rx.borrow_and_update());
            }
        }
        "broadcast" => {
            let (tx, mut rx) = rt::sync::broadcast::channel(16);
            for i in 0..10_000u32 {
                tx.send(i).unwrap();
                black_box(rx.recv().await.unwrap());
            }
        }
        "spawn_await" => {
            for i in 0..1000u32 {
                black_box(rt::spawn(async move { i }).await.unwrap());
            }
        }
        "yield_now" => {
            for _ in 0..10_000 {
                rt::task::yield_now().await;
            }
        }
        "select" => {
            let (tx, mut rx) = rt::sync::mpsc::unbounded_channel::<u32>();
            let (_tx2, mut rx2) = rt::sync::mpsc::unbounded_channel::<u32>();
            for i in 0..10_000u32 {
                tx.send(i).unwrap();
                rt::select! { v = rx.recv() => { black_box(v); } v = rx2.recv() => { black_box(v); } }
            }
        }
        "join" => {
            for i in 0..10_000u32 {
                let (a, b) = rt::join!(async { black_box(i) }, async { black_box(i + 1) });
                black_box(a + b);
            }
        }
        "abort" => {
            for _ in 0..1000 {
                let h = rt::spawn(std::future::pending::<()>());
                h.abort();
                black_box(h.await.is_err());
            }
        }
        _ => unreachable!(),
    }
}
