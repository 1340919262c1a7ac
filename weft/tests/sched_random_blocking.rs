//! Tasks that block their threads at random, beside timers, channels,
//! spawns, `block_in_place` and `spawn_blocking`, on runtimes whose
//! long-poll threshold (2 ms) makes the monitor steal, rescue and retire
//! rescue threads all the time: every task ends, and a runtime dropped in
//! the middle of it all drops without hanging. Rounds with seeds drawn
//! from one fixed sequence run for a few seconds (`RANDOM_BLOCKING_SECS`,
//! default 3; `RANDOM_BLOCKING_SEED` starts another sequence); a failing
//! round names its seed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// xorshift64: the test's only randomness, reproducible from a seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Twenty random steps, some of which block the thread they run on.
async fn random_steps(seed: u64, tx: weft::sync::mpsc::Sender<u64>) {
    let mut rng = Rng(seed | 1);
    for _ in 0..20 {
        match rng.below(7) {
            0 => std::thread::sleep(Duration::from_micros(rng.below(4_000))),
            1 => weft::time::sleep(Duration::from_micros(rng.below(2_000))).await,
            2 => {
                let (block, tx) = (rng.below(3_000), tx.clone());
                weft::spawn(async move {
                    std::thread::sleep(Duration::from_micros(block));
                    let _ = tx.send(block).await;
                });
            }
            3 => weft::task::yield_now().await,
            4 => {
                let _ = tx.send(seed).await;
            }
            5 => {
                let block = Duration::from_micros(rng.below(2_000));
                weft::task::block_in_place(|| std::thread::sleep(block));
            }
            _ => {
                // Cancelled only when the runtime is dropped meanwhile.
                if let Ok(back) = weft::task::spawn_blocking(move || seed).await {
                    assert_eq!(back, seed);
                }
            }
        }
    }
}

/// One round: 60 tasks of random steps, and a receiver for what they send;
/// waited for, or (`drop_early`) dropped with the runtime a few
/// milliseconds in.
fn round(workers: usize, seed: u64, drop_early: bool) {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .long_poll_threshold(Duration::from_millis(2))
        .build()
        .unwrap();
    let finished = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = weft::sync::mpsc::channel::<u64>(16);
    let receiver = rt.spawn(async move { while rx.recv().await.is_some() {} });
    let tasks: Vec<_> = (0..60u64)
        .map(|i| {
            let (finished, tx) = (finished.clone(), tx.clone());
            rt.spawn(async move {
                random_steps(seed.wrapping_mul(31).wrapping_add(i), tx).await;
                finished.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    drop(tx);
    if drop_early {
        std::thread::sleep(Duration::from_millis(seed % 30));
        drop(rt);
        return;
    }
    rt.block_on(async move {
        for task in tasks {
            task.await.unwrap();
        }
        receiver.await.unwrap();
    });
    assert_eq!(finished.load(Ordering::Relaxed), 60);
}

#[test]
fn random_blocking_polls_on_1_2_and_4_workers() {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let end = Instant::now() + Duration::from_secs(env("RANDOM_BLOCKING_SECS").unwrap_or(3));
    let mut seed = env("RANDOM_BLOCKING_SEED").unwrap_or(12_345);
    let mut rounds = 0;
    while rounds == 0 || Instant::now() < end {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let workers = [1, 2, 4][(seed % 3) as usize];
        let drop_early = seed % 4 == 0;
        let (done, ended) = std::sync::mpsc::channel();
        let this = seed;
        std::thread::spawn(move || {
            round(workers, this, drop_early);
            let _ = done.send(());
        });
        match ended.recv_timeout(Duration::from_secs(60)) {
            Ok(()) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!(
                "round {rounds} (seed {this}, {workers} workers, drop_early {drop_early}) \
                 did not end in 60 s"
            ),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!(
                "round {rounds} (seed {this}, {workers} workers, drop_early {drop_early}) \
                 failed (its panic is above)"
            ),
        }
        rounds += 1;
    }
}
