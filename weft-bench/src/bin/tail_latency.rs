//! Tail latency under an always-ready socket, weft against Tokio.
//!
//! ```text
//! cargo run --release -p weft-bench --bin tail_latency [-- --secs N --rounds R]
//! ```
//!
//! Per run: a multi_thread runtime with one worker (so the two tasks below
//! share a thread, as they would on a busy server). A "firehose" thread
//! writes 64 KiB chunks into a TCP connection as fast as the kernel takes
//! them; a streaming task reads it 1 KiB at a time, so the socket always
//! has data and every read succeeds. A ticker thread sends its
//! `Instant::now()` every millisecond through the runtime's unbounded mpsc
//! channel; a probe task receives it and records how long the wake-up took
//! (receive time minus send time). With the coop budget the streamer yields
//! every 128 reads and the probe gets its turn; wrapped in `unconstrained`
//! it never yields while data keeps coming, and the probe waits.
//!
//! Runs alternate weft/Tokio and budget/unconstrained; percentiles are
//! computed per run and the table shows the median over rounds.

use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Budget,
    Unconstrained,
}

struct Run {
    /// Wake-up latencies in µs, sorted.
    lat: Vec<f64>,
    /// Bytes the streamer read.
    bytes: u64,
}

fn firehose() -> (
    std::net::SocketAddr,
    Arc<AtomicBool>,
    thread::JoinHandle<()>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let t = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let chunk = vec![0x5a_u8; 64 * 1024];
        while !stop2.load(Ordering::Relaxed) {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    (addr, stop, t)
}

fn ticker(secs: f64, send: impl Fn(Instant) + Send + 'static) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let mut next = Instant::now();
        while Instant::now() < end {
            next += Duration::from_millis(1);
            let now = Instant::now();
            if next > now {
                thread::sleep(next - now);
            }
            send(Instant::now());
        }
    })
}

macro_rules! run_on {
    ($rt:ident, $mode:expr, $secs:expr) => {{
        use $rt::io::AsyncReadExt as _;
        let rt = $rt::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (addr, stop_hose, hose) = firehose();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = $rt::sync::mpsc::unbounded_channel::<Instant>();
        let streamer = {
            let stop = stop.clone();
            rt.spawn(async move {
                let mut s = $rt::net::TcpStream::connect(addr).await.unwrap();
                let mut buf = [0u8; 1024];
                let mut bytes = 0u64;
                let read_loop = async {
                    while !stop.load(Ordering::Relaxed) {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => bytes += n as u64,
                        }
                    }
                };
                match $mode {
                    Mode::Budget => read_loop.await,
                    Mode::Unconstrained => $rt::task::unconstrained(read_loop).await,
                }
                bytes
            })
        };
        let probe = rt.spawn(async move {
            let mut lat = Vec::new();
            while let Some(sent) = rx.recv().await {
                lat.push(sent.elapsed().as_secs_f64() * 1e6);
            }
            lat
        });
        // Let the stream get going before measuring.
        thread::sleep(Duration::from_millis(100));
        let tick = ticker($secs, move |t| {
            let _ = tx.send(t);
        });
        tick.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        let bytes = rt.block_on(streamer).unwrap();
        let mut lat = rt.block_on(probe).unwrap();
        stop_hose.store(true, Ordering::Relaxed);
        drop(rt);
        let _ = hose.join();
        lat.sort_by(f64::total_cmp);
        Run { lat, bytes }
    }};
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mut secs = 2.0;
    let mut rounds = 3;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--secs" => {
                secs = args[i + 1].parse().expect("--secs takes a number");
                i += 1;
            }
            "--rounds" => {
                rounds = args[i + 1].parse().expect("--rounds takes a number");
                i += 1;
            }
            other => {
                panic!("unknown argument {other}; usage: tail_latency [--secs N] [--rounds R]")
            }
        }
        i += 1;
    }
    let configs = [
        ("weft", Mode::Budget),
        ("tokio", Mode::Budget),
        ("weft", Mode::Unconstrained),
        ("tokio", Mode::Unconstrained),
    ];
    let mut results: Vec<Vec<Run>> = configs.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (k, &(rt, mode)) in configs.iter().enumerate() {
            let run = match rt {
                "weft" => run_on!(weft, mode, secs),
                _ => run_on!(tokio, mode, secs),
            };
            eprintln!(
                "round {round} {rt:5} {mode:?}: {} samples, p50 {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs, {:.0} MB streamed",
                run.lat.len(),
                pct(&run.lat, 0.5),
                pct(&run.lat, 0.99),
                pct(&run.lat, 0.999),
                run.bytes as f64 / 1e6
            );
            results[k].push(run);
        }
    }
    println!("| runtime | mode | samples | p50 µs | p99 µs | p99.9 µs | max µs | MB/s streamed |");
    println!("|---|---|---|---|---|---|---|---|");
    for (k, (rt, mode)) in configs.iter().enumerate() {
        let runs = &results[k];
        let m = |f: &dyn Fn(&Run) -> f64| median(runs.iter().map(f).collect());
        println!(
            "| {rt} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            match mode {
                Mode::Budget => "budget",
                Mode::Unconstrained => "unconstrained",
            },
            m(&|r| r.lat.len() as f64),
            m(&|r| pct(&r.lat, 0.5)),
            m(&|r| pct(&r.lat, 0.99)),
            m(&|r| pct(&r.lat, 0.999)),
            m(&|r| *r.lat.last().unwrap_or(&f64::NAN)),
            m(&|r| r.bytes as f64 / 1e6 / secs),
        );
    }
}
