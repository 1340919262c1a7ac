//! Sequential calls from a multi_thread runtime's `block_on` future (what
//! `#[tokio::main]` runs `main` in) against the same calls from a spawned
//! task: one small `fs::read` after another, and one 100-byte TCP round
//! trip after another against an echo task. Tokio, weft on epoll and weft
//! on io_uring, each on a 2-worker runtime, interleaved round by round;
//! the figure is the median time per call.
//!
//! The `block_on` thread is not a worker, so it has no ring of its own: on
//! io_uring its calls went to the shared ring, which a worker reaps and
//! then wakes the caller, two thread hand-offs per step. File calls from
//! there now use the blocking pool instead, as on Tokio, and streams read
//! and write on readiness (BENCHMARKS.md, "One exchange at a time on
//! io_uring").
//!
//! `cargo run --release -p weft-bench --bin block_on_latency -- [ROUNDS] [CALLS] [WORKERS]`
//! (defaults 5, 2000 and 2).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The two workloads, written once for each runtime (`$rt` is the crate).
macro_rules! workloads {
    ($fs:ident, $tcp:ident, $rt:ident) => {
        async fn $fs(files: Vec<PathBuf>, calls: usize) -> Duration {
            let start = Instant::now();
            for i in 0..calls {
                let data = $rt::fs::read(&files[i % files.len()]).await.unwrap();
                assert_eq!(data.len(), FILE_BYTES);
            }
            start.elapsed() / calls as u32
        }

        async fn $tcp(calls: usize) -> Duration {
            use $rt::io::{AsyncReadExt, AsyncWriteExt};
            let listener = $rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let echo = $rt::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                s.set_nodelay(true).unwrap();
                let mut b = [0u8; 100];
                while s.read_exact(&mut b).await.is_ok() {
                    s.write_all(&b).await.unwrap();
                }
            });
            let mut c = $rt::net::TcpStream::connect(addr).await.unwrap();
            c.set_nodelay(true).unwrap();
            let mut b = [1u8; 100];
            let start = Instant::now();
            for _ in 0..calls {
                c.write_all(&b).await.unwrap();
                c.read_exact(&mut b).await.unwrap();
            }
            let took = start.elapsed() / calls as u32;
            drop(c);
            echo.await.unwrap();
            took
        }
    };
}

const FILE_BYTES: usize = 4096;

workloads!(fs_tokio, tcp_tokio, tokio);
workloads!(fs_weft, tcp_weft, weft);

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Where a workload's future runs.
#[derive(Clone, Copy)]
enum Place {
    BlockOn,
    Task,
}

/// One measurement on `side` (0 Tokio, 1 weft epoll, 2 weft io_uring);
/// `None` where io_uring is not available.
fn measure(
    side: usize,
    place: Place,
    tcp: bool,
    files: &[PathBuf],
    calls: usize,
    workers: usize,
) -> Option<Duration> {
    let files = files.to_vec();
    if side == 0 {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        let work = async move {
            if tcp {
                tcp_tokio(calls).await
            } else {
                fs_tokio(files, calls).await
            }
        };
        return Some(match place {
            Place::BlockOn => rt.block_on(work),
            Place::Task => rt.block_on(async { tokio::spawn(work).await.unwrap() }),
        });
    }
    let driver = if side == 1 {
        weft::runtime::IoDriver::Epoll
    } else {
        weft::runtime::IoDriver::Uring
    };
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .io_driver(driver)
        .build()
        .ok()?;
    let work = async move {
        if tcp {
            tcp_weft(calls).await
        } else {
            fs_weft(files, calls).await
        }
    };
    Some(match place {
        Place::BlockOn => rt.block_on(work),
        Place::Task => rt.block_on(async { weft::spawn(work).await.unwrap() }),
    })
}

fn make_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..100)
        .map(|i| {
            let path = dir.join(format!("f{i}"));
            std::fs::write(&path, [i as u8; FILE_BYTES]).unwrap();
            path
        })
        .collect()
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("a count"));
    let rounds = args.next().unwrap_or(5);
    let calls = args.next().unwrap_or(2000);
    let workers = args.next().unwrap_or(2);
    let dir = std::env::temp_dir().join(format!("weft-block-on-latency-{}", std::process::id()));
    let files = make_files(&dir);
    let names = ["tokio", "weft epoll", "weft io_uring"];
    println!(
        "median time per call over {rounds} rounds of {calls} calls ({workers}-worker runtimes)"
    );
    for (what, tcp) in [
        ("fs::read of 4 KiB", false),
        ("TCP round trip of 100 bytes", true),
    ] {
        for (place_name, place) in [("block_on", Place::BlockOn), ("a task", Place::Task)] {
            let mut results: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
            for _ in 0..rounds {
                for (side, result) in results.iter_mut().enumerate() {
                    if let Some(t) = measure(side, place, tcp, &files, calls, workers) {
                        result.push(t);
                    }
                }
            }
            let tokio = median(results[0].clone());
            let cells: Vec<String> = names
                .iter()
                .zip(results)
                .map(|(name, r)| {
                    if r.is_empty() {
                        return format!("{name} n/a");
                    }
                    let m = median(r);
                    format!(
                        "{name} {:.1} µs ({:.2})",
                        m.as_secs_f64() * 1e6,
                        tokio.as_secs_f64() / m.as_secs_f64()
                    )
                })
                .collect();
            println!("{what}, from {place_name}: {}", cells.join(", "));
        }
    }
    println!("(in parentheses: Tokio's time / this one)");
    let _ = std::fs::remove_dir_all(&dir);
}
