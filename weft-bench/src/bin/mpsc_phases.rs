//! `sync_mpsc_contended_unbounded` alone, many short processes instead of
//! one long one: BENCHMARKS.md, round 11 (issue 13's 3% criterion).
//!
//! The row is the weft side of weft-bench's workload of that name: a
//! 6-worker runtime, 5 spawned producers sending 1,000 `usize`s each into an
//! unbounded channel, `block_on` receiving the 5,000. One process builds one
//! runtime and times `ITERS` iterations (default 3,000, about half a
//! second). Within a process the iteration time drifts between phases tens
//! of milliseconds long (about 100 and about 230 µs per iteration on the
//! 2-vCPU machine), so a comparison needs many processes, alternated: see
//! `weft-bench/experiments/monitor-vs-idle-thread.sh`.
//!
//! Environment:
//! - `MONITOR`: `on` (default threshold), `off` (`long_poll_threshold(None)`)
//!   or a threshold in milliseconds.
//! - `IDLE_WAKER_MS`: also start a thread that sleeps that many milliseconds
//!   in a loop and does nothing else, to compare the monitor with a thread
//!   that only wakes up.
//! - `ITERS`: iterations per process.
//!
//! Prints one line: the monitor setting, the waker period (or `-`), and the
//! mean and median iteration time in microseconds.

use std::hint::black_box;
use std::time::{Duration, Instant};

use weft::runtime::{Builder, Runtime};
use weft::sync::mpsc;

const PRODUCERS: usize = 5;
const PER_PRODUCER: usize = 1_000;

fn iteration(rt: &Runtime) {
    rt.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel::<usize>();
        for _ in 0..PRODUCERS {
            let tx = tx.clone();
            weft::spawn(async move {
                for i in 0..PER_PRODUCER {
                    tx.send(i).unwrap();
                }
            });
        }
        for _ in 0..PRODUCERS * PER_PRODUCER {
            black_box(rx.recv().await);
        }
    });
}

fn main() {
    let env = |name: &str| std::env::var(name).ok();
    let monitor = env("MONITOR").unwrap_or_else(|| "on".to_owned());
    let iters: usize = env("ITERS").map_or(3_000, |s| s.parse().expect("ITERS: a number"));

    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(6);
    match monitor.as_str() {
        "on" => {}
        "off" => {
            builder.long_poll_threshold(None);
        }
        ms => {
            let ms = ms.parse().expect("MONITOR: on, off or milliseconds");
            builder.long_poll_threshold(Some(Duration::from_millis(ms)));
        }
    }
    let rt = builder.build().expect("runtime");

    let waker = env("IDLE_WAKER_MS");
    if let Some(ms) = &waker {
        let period = Duration::from_millis(ms.parse().expect("IDLE_WAKER_MS: a number"));
        std::thread::spawn(move || loop {
            std::thread::sleep(period);
        });
    }

    let mut times: Vec<f64> = (0..iters)
        .map(|_| {
            let start = Instant::now();
            iteration(&rt);
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{monitor} {} {mean:.1} {median:.1}",
        waker.as_deref().unwrap_or("-")
    );
}
