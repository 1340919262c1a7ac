//! A gRPC load generator for `tonic_unary`: `CONNS` channels (default 50,
//! as wrk's `-c50`), each with one call in flight at a time, calling `Add`
//! for `SECS` seconds (default 5) against `http://127.0.0.1:$PORT`. Prints
//! `calls <n>` and the p50/p99 latency in µs. Built on crates.io Tokio by
//! bench.sh, so the same client loads both servers.
use eco_bench::counter::counter_client::CounterClient;
use eco_bench::counter::AddRequest;
use std::time::{Duration, Instant};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let url = format!("http://127.0.0.1:{}", eco_bench::port(3202));
        let until = Instant::now() + Duration::from_secs(env("SECS", 5));
        let mut tasks = Vec::new();
        for _ in 0..env("CONNS", 50) {
            let mut client = CounterClient::connect(url.clone())
                .await
                .expect("server up");
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < until {
                    let start = Instant::now();
                    client
                        .add(AddRequest { by: 1 })
                        .await
                        .expect("call succeeds");
                    latencies.push(start.elapsed().as_micros() as u64);
                }
                latencies
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all.sort_unstable();
        let pct = |p: usize| all.get(all.len() * p / 100).copied().unwrap_or(0);
        println!("calls {} p50_us {} p99_us {}", all.len(), pct(50), pct(99));
    });
}
