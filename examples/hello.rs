//! A first weft program: fan work out to tasks, join it back, use the
//! blocking pool, and print what the scheduler did.
//!
//! Run it with `cargo run --release --example hello`.

use std::time::Instant;
use weft::task::JoinSet;

/// A deliberately CPU-bound function, so the workers have real work.
fn collatz_steps(mut n: u64) -> u32 {
    let mut steps = 0;
    while n != 1 {
        n = if n.is_multiple_of(2) {
            n / 2
        } else {
            3 * n + 1
        };
        steps += 1;
    }
    steps
}

#[weft::main]
async fn main() {
    let start = Instant::now();

    // Fan out: 64 tasks, each scanning a slice of numbers.
    let mut set = JoinSet::new();
    for chunk in 0..64u64 {
        set.spawn(async move {
            let lo = 1 + chunk * 20_000;
            let hi = lo + 20_000;
            (lo..hi)
                .map(|n| (collatz_steps(n), n))
                .max()
                .unwrap_or((0, 0))
        });
    }
    let mut best = (0, 0);
    while let Some(res) = set.join_next().await {
        best = best.max(res.expect("a task panicked"));
    }
    println!(
        "longest Collatz chain below {}: {} steps, starting at {}",
        64 * 20_000,
        best.0,
        best.1
    );

    // Blocking work goes to the blocking pool, not a worker.
    let hostname = weft::task::spawn_blocking(|| {
        std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "unknown".into())
    })
    .await
    .unwrap();
    println!("read on the blocking pool: hostname = {}", hostname.trim());

    let metrics = weft::runtime::Handle::current().metrics();
    println!(
        "{} workers, {} tasks spawned, {} still alive, {} blocking thread(s), {:?} elapsed",
        metrics.num_workers(),
        metrics.spawned_tasks_count(),
        metrics.num_alive_tasks(),
        metrics.num_blocking_threads(),
        start.elapsed()
    );
}
