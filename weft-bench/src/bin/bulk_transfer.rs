//! One large transfer over loopback TCP on a current_thread runtime: a
//! task writes 10 MiB with one `write_all` while another, on the same
//! runtime, reads it in 64 KiB reads and answers 4 bytes. Tokio, weft on
//! epoll and weft on io_uring, interleaved round by round; the figure is
//! the median time per transfer. Every read through the ring (an op, a
//! completion, a copy out of the stream's buffer) made io_uring 30% slower
//! than Tokio here; a full receive now leaves the socket assumed readable,
//! so bulk reads go straight from the socket (BENCHMARKS.md).
//!
//! `cargo run --release -p weft-bench --bin bulk_transfer -- [ROUNDS] [TRANSFERS]`
//! (defaults 5 and 20).

use std::time::{Duration, Instant};

const BYTES: usize = 10 * 1024 * 1024;

/// The transfer, written once for each runtime (`$rt` is the crate).
macro_rules! transfer {
    ($name:ident, $rt:ident) => {
        async fn $name(body: &[u8]) -> Duration {
            use $rt::io::{AsyncReadExt, AsyncWriteExt};
            let listener = $rt::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = $rt::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = vec![0u8; 64 * 1024];
                let mut total = 0;
                while total < BYTES {
                    let n = s.read(&mut buf).await.unwrap();
                    assert!(n > 0, "EOF after {total} bytes");
                    total += n;
                }
                s.write_all(b"done").await.unwrap();
            });
            let mut c = $rt::net::TcpStream::connect(addr).await.unwrap();
            let start = Instant::now();
            c.write_all(body).await.unwrap();
            let mut done = [0u8; 4];
            c.read_exact(&mut done).await.unwrap();
            let took = start.elapsed();
            server.await.unwrap();
            took
        }
    };
}

transfer!(on_tokio, tokio);
transfer!(on_weft, weft);

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("a count"));
    let rounds = args.next().unwrap_or(5);
    let transfers = args.next().unwrap_or(20);
    let body = vec![7u8; BYTES];
    let names = ["tokio", "weft epoll", "weft io_uring"];
    let mut results: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for (i, result) in results.iter_mut().enumerate() {
            let times: Vec<Duration> = if i == 0 {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    let mut t = Vec::new();
                    for _ in 0..transfers {
                        t.push(on_tokio(&body).await);
                    }
                    t
                })
            } else {
                let driver = if i == 1 {
                    weft::runtime::IoDriver::Epoll
                } else {
                    weft::runtime::IoDriver::Uring
                };
                let Ok(rt) = weft::runtime::Builder::new_current_thread()
                    .enable_all()
                    .io_driver(driver)
                    .build()
                else {
                    continue;
                };
                rt.block_on(async {
                    let mut t = Vec::new();
                    for _ in 0..transfers {
                        t.push(on_weft(&body).await);
                    }
                    t
                })
            };
            result.push(median(times));
        }
    }
    let tokio = median(results[0].clone());
    println!("10 MiB over loopback, median of {rounds} rounds x {transfers} transfers");
    for (name, r) in names.iter().zip(results) {
        if r.is_empty() {
            println!("{name:>14}: not available here");
            continue;
        }
        let m = median(r);
        println!(
            "{name:>14}: {:>8.2} ms ({:.2} GB/s), Tokio / this {:.2}",
            m.as_secs_f64() * 1e3,
            BYTES as f64 / m.as_secs_f64() / 1e9,
            tokio.as_secs_f64() / m.as_secs_f64()
        );
    }
}
