//! A worker whose io_uring ring gives it work leaves the other workers
//! asleep. Alone in its own test binary: with other tests running beside
//! it, the OS preempts the busy worker more often, and a task the other
//! worker then takes makes the exchange cross workers (parking on every
//! message) for a reason that is not the one counted here.

#[path = "support/uring.rs"]
mod uring;

use uring::pair;
use weft::io::{AsyncReadExt, AsyncWriteExt};

/// Both ends of a TCP ping-pong in one task, so on one worker of a
/// 2-worker runtime. The other worker is never woken for it: what the
/// busy worker's ring completes at its batch point is its own work, so it
/// does not hand its search on (the other was woken twice per round trip,
/// found nothing and slept again), and its ring's descriptor does not
/// report to epoll while it runs (the other, parked in epoll, was woken
/// by every completion). BENCHMARKS.md, "One exchange at a time on
/// io_uring". Counted with the idle worker's parks: each wake ends in one.
#[test]
fn a_ping_pong_on_one_worker_leaves_the_other_asleep() {
    const ROUND_TRIPS: u64 = 2000;
    let rt = uring::multi_thread(2);
    let parked = uring::on_a_worker(&rt, async move {
        let (mut client, mut server) = pair().await;
        client.set_nodelay(true).unwrap();
        server.set_nodelay(true).unwrap();
        let echo = async move {
            let mut buf = [0u8; 100];
            while server.read_exact(&mut buf).await.is_ok() {
                server.write_all(&buf).await.unwrap();
            }
        };
        let handle = weft::runtime::Handle::current();
        // Each worker's (polls, parks).
        let counts = move || {
            let m = handle.metrics();
            (0..m.num_workers())
                .map(|w| (m.worker_poll_count(w), m.worker_park_count(w)))
                .collect::<Vec<_>>()
        };
        let pings = async move {
            let mut buf = [1u8; 100];
            // Warm up, then count.
            for _ in 0..100 {
                client.write_all(&buf).await.unwrap();
                client.read_exact(&mut buf).await.unwrap();
            }
            let before = counts();
            for _ in 0..ROUND_TRIPS {
                client.write_all(&buf).await.unwrap();
                client.read_exact(&mut buf).await.unwrap();
            }
            let after = counts();
            // The worker that polled less is the idle one: how often it
            // was woken (each wake ends in a park).
            let (polls, parks): (Vec<u64>, Vec<u64>) = after
                .iter()
                .zip(&before)
                .map(|(a, b)| (a.0 - b.0, a.1 - b.1))
                .unzip();
            let idle = if polls[0] <= polls[1] { 0 } else { 1 };
            (polls, parks[idle])
        };
        weft::join!(echo, pings).1
    });
    let (polls, idle_parks) = parked;
    assert!(
        idle_parks < ROUND_TRIPS / 4,
        "the idle worker was woken {idle_parks} times in {ROUND_TRIPS} round trips (polls per worker: {polls:?})"
    );
}
