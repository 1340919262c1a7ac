//! How long a task spawned by a task that then blocks its worker waits,
//! weft against Tokio (issue #13, "a task stranded behind a blocking
//! parent").
//!
//! ```text
//! cargo run --release -p weft-bench --bin stranded [-- --trials N --workers W]
//! ```
//!
//! Per trial, on a multi_thread runtime with `W` workers (default 4, so
//! some are idle): a parent task spawns a child and then blocks its worker
//! for 20 ms (`std::thread::sleep`). The child records when it first runs.
//! Tokio keeps the child in the parent worker's LIFO slot, which nobody
//! may steal, so it waits for the block; weft's long-poll monitor steals
//! it (scheduler/multi_thread/lifo.rs). Prints the latency percentiles
//! over the trials, and how many of them ran within 1 ms.

use std::sync::mpsc;
use std::time::{Duration, Instant};

const BLOCK: Duration = Duration::from_millis(20);

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn weft_trial(rt: &weft::runtime::Runtime) -> Duration {
    let (tx, rx) = mpsc::channel();
    rt.block_on(async move {
        weft::spawn(async move {
            let spawned = Instant::now();
            weft::spawn(async move { tx.send(spawned.elapsed()).unwrap() });
            std::thread::sleep(BLOCK);
        })
        .await
        .unwrap();
    });
    rx.recv().unwrap()
}

fn tokio_trial(rt: &tokio::runtime::Runtime) -> Duration {
    let (tx, rx) = mpsc::channel();
    rt.block_on(async move {
        tokio::spawn(async move {
            let spawned = Instant::now();
            tokio::spawn(async move { tx.send(spawned.elapsed()).unwrap() });
            std::thread::sleep(BLOCK);
        })
        .await
        .unwrap();
    });
    rx.recv().unwrap()
}

fn summary(name: &str, mut lat: Vec<Duration>) {
    let slowest = (0..lat.len()).max_by_key(|&i| lat[i]).unwrap_or(0);
    lat.sort();
    let pick = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
    let within_1ms = lat
        .iter()
        .filter(|d| **d <= Duration::from_millis(1))
        .count();
    println!(
        "{name:6} p50 {:>9.1?}  p90 {:>9.1?}  max {:>9.1?} (trial {slowest})  within 1 ms: {within_1ms}/{}",
        pick(0.5),
        pick(0.9),
        pick(1.0),
        lat.len()
    );
}

fn main() {
    let trials = arg("--trials", 50);
    let workers = arg("--workers", 4);
    let weft_rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    let (mut weft_lat, mut tokio_lat) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        weft_lat.push(weft_trial(&weft_rt));
        tokio_lat.push(tokio_trial(&tokio_rt));
    }
    println!(
        "child of a parent blocking its worker {BLOCK:?}: {trials} trials, {workers} workers, \
         alternating"
    );
    summary("weft", weft_lat);
    summary("tokio", tokio_lat);
    println!(
        "weft monitor steals from the LIFO slot: {}",
        weft_rt.handle().metrics().lifo_steal_count()
    );
}
