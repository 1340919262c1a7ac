//! Behaviour shared with Tokio that weft once got wrong (issue #10): the
//! always-ready I/O utilities spend the coop budget (so `timeout` around
//! them fires), socket readiness checks report writability and spend no
//! budget, `DuplexStream` writes every buffer of a vectored write, Unix
//! sockets accept abstract names, and huge durations mean "never" instead
//! of panicking.

#[macro_use]
mod support;

use std::sync::mpsc;
use std::time::Duration;

/// How long a body may run before it counts as hung. Generous: the suite
/// runs under CPU load, and only a real hang should reach it.
const HANG: Duration = Duration::from_secs(20);

rt_test! {
    use crate::support::watchdog;
    use crate::HANG;
    use std::time::Duration;
    use weft::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    use weft::time::{self, timeout};

    const SHORT: Duration = Duration::from_millis(10);

    // ---- item 3: always-ready utilities spend the budget ----

    #[test]
    fn timeout_fires_around_an_endless_empty_read() {
        watchdog(HANG, |_| {
            rt().block_on(async {
                let mut empty = weft::io::empty();
                let mut buf = [0u8; 8];
                let looped = timeout(SHORT, async {
                    loop {
                        assert_eq!(empty.read(&mut buf).await.unwrap(), 0);
                    }
                });
                assert!(looped.await.is_err());
            })
        });
    }

    #[test]
    fn timeout_fires_around_an_endless_empty_read_line() {
        watchdog(HANG, |_| {
            rt().block_on(async {
                let mut empty = weft::io::empty();
                let mut line = String::new();
                let looped = timeout(SHORT, async {
                    loop {
                        assert_eq!(empty.read_line(&mut line).await.unwrap(), 0);
                    }
                });
                assert!(looped.await.is_err());
            })
        });
    }

    #[test]
    fn timeout_fires_around_endless_writes_to_empty_and_sink() {
        watchdog(HANG, |_| {
            rt().block_on(async {
                let mut empty = weft::io::empty();
                let looped = timeout(SHORT, async {
                    loop {
                        assert_eq!(empty.write(b"abc").await.unwrap(), 3);
                        empty.flush().await.unwrap();
                    }
                });
                assert!(looped.await.is_err());

                let mut sink = weft::io::sink();
                let looped = timeout(SHORT, async {
                    loop {
                        assert_eq!(sink.write(b"abc").await.unwrap(), 3);
                        sink.flush().await.unwrap();
                    }
                });
                assert!(looped.await.is_err());
            })
        });
    }

    #[test]
    fn timeout_fires_around_an_endless_repeat_read() {
        watchdog(HANG, |_| {
            rt().block_on(async {
                let mut repeat = weft::io::repeat(7);
                let mut buf = [0u8; 16];
                let looped = timeout(SHORT, async {
                    loop {
                        assert_eq!(repeat.read(&mut buf).await.unwrap(), 16);
                    }
                });
                assert!(looped.await.is_err());
                assert_eq!(buf, [7u8; 16]);
            })
        });
    }

    #[test]
    fn timeout_fires_around_an_endless_duplex_ping_pong() {
        // A pipe that always has data (written and read by the same task)
        // is always ready.
        watchdog(HANG, |_| {
            rt().block_on(async {
                let (mut a, mut b) = weft::io::duplex(64);
                let mut buf = [0u8; 4];
                let looped = timeout(SHORT, async {
                    loop {
                        a.write_all(b"ping").await.unwrap();
                        b.read_exact(&mut buf).await.unwrap();
                    }
                });
                assert!(looped.await.is_err());
            })
        });
    }

    #[test]
    fn always_ready_utilities_give_other_tasks_a_turn() {
        // A task that only copies `repeat` into `sink` must still let a
        // second task on the same worker run.
        watchdog(HANG, |_| {
            rt().block_on(async {
                let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let seen = flag.clone();
                let spinner = weft::spawn(async move {
                    let mut repeat = weft::io::repeat(1);
                    let mut sink = weft::io::sink();
                    let mut buf = [0u8; 64];
                    while !seen.load(std::sync::atomic::Ordering::Acquire) {
                        let n = repeat.read(&mut buf).await.unwrap();
                        sink.write_all(&buf[..n]).await.unwrap();
                    }
                });
                weft::spawn(async move {
                    flag.store(true, std::sync::atomic::Ordering::Release);
                })
                .await
                .unwrap();
                spinner.await.unwrap();
            })
        });
    }

    // ---- item 18: vectored duplex writes ----

    #[test]
    fn duplex_vectored_write_takes_from_every_buffer() {
        rt().block_on(async {
            let (mut a, mut b) = weft::io::duplex(10);
            let bufs = [
                std::io::IoSlice::new(b"abc"),
                std::io::IoSlice::new(b""),
                std::io::IoSlice::new(b"defg"),
                std::io::IoSlice::new(b"hijkl"),
            ];
            // 10 bytes of room: all of the first two buffers and part of
            // the third.
            let n = a.write_vectored(&bufs).await.unwrap();
            assert_eq!(n, 10);
            let mut out = [0u8; 16];
            let got = b.read(&mut out).await.unwrap();
            assert_eq!(&out[..got], b"abcdefghij");

            // With room for everything, everything goes.
            let n = a.write_vectored(&bufs[..2]).await.unwrap();
            assert_eq!(n, 3);
            let got = b.read(&mut out).await.unwrap();
            assert_eq!(&out[..got], b"abc");
        });
    }

    // ---- item 20: huge durations and deadlines ----

    #[test]
    fn sleep_for_duration_max_never_fires_and_does_not_panic() {
        rt().block_on(async {
            assert!(timeout(SHORT, time::sleep(Duration::MAX)).await.is_err());
            let mut far = Box::pin(time::sleep(Duration::MAX));
            assert!(timeout(SHORT, far.as_mut()).await.is_err());
            // Reset from "never" to now: it completes.
            far.as_mut().reset(time::Instant::now());
            timeout(Duration::from_secs(30), far).await.unwrap();
        });
    }

    #[test]
    fn timeout_of_duration_max_behaves_as_no_timeout() {
        rt().block_on(async {
            assert_eq!(timeout(Duration::MAX, async { 5 }).await, Ok(5));
            let never = timeout(Duration::MAX, std::future::pending::<()>());
            assert!(timeout(SHORT, never).await.is_err());
        });
    }

    #[test]
    fn far_deadlines_for_sleep_until_and_reset_do_not_panic() {
        rt().block_on(async {
            let now = time::Instant::now();
            // Far beyond what the timer wheel represents, still a valid
            // instant.
            for secs in [86_400 * 365 * 1000, 1 << 40, 1 << 60] {
                let Some(deadline) = now.checked_add(Duration::from_secs(secs)) else {
                    continue;
                };
                assert!(timeout(SHORT, time::sleep_until(deadline)).await.is_err());
                let mut sleep = Box::pin(time::sleep(SHORT));
                sleep.as_mut().reset(deadline);
                assert!(timeout(SHORT, sleep.as_mut()).await.is_err());
                sleep.as_mut().reset(time::Instant::now());
                sleep.await;
            }
        });
    }

    #[test]
    fn interval_of_duration_max_ticks_once() {
        rt().block_on(async {
            let mut every = time::interval(Duration::MAX);
            every.tick().await;
            assert!(timeout(SHORT, every.tick()).await.is_err());
            every.reset();
            assert!(timeout(SHORT, every.tick()).await.is_err());
            for behavior in [
                time::MissedTickBehavior::Burst,
                time::MissedTickBehavior::Delay,
                time::MissedTickBehavior::Skip,
            ] {
                every.set_missed_tick_behavior(behavior);
                every.reset_immediately();
                every.tick().await;
                assert!(timeout(SHORT, every.tick()).await.is_err());
            }
            every.reset_after(Duration::MAX);
            assert!(timeout(SHORT, every.tick()).await.is_err());
        });
    }

    #[test]
    fn interval_at_a_far_start_never_ticks() {
        rt().block_on(async {
            let far = time::Instant::now() + Duration::from_secs(1 << 40);
            let mut every = time::interval_at(far, Duration::from_secs(1));
            assert!(timeout(SHORT, every.tick()).await.is_err());
            let mut late = time::interval_at(time::Instant::now(), Duration::MAX / 2);
            late.tick().await;
            assert!(timeout(SHORT, late.tick()).await.is_err());
        });
    }
    // ---- item 17: socket readiness ----

    async fn tcp_pair() -> (weft::net::TcpStream, weft::net::TcpStream) {
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, accepted) =
            futures::join!(weft::net::TcpStream::connect(addr), listener.accept());
        (client.unwrap(), accepted.unwrap().0)
    }

    const LIMIT: Duration = Duration::from_secs(20);

    #[test]
    fn fresh_tcp_streams_are_writable() {
        rt().block_on(async {
            let (client, server) = tcp_pair().await;
            for s in [&client, &server] {
                timeout(LIMIT, s.writable()).await.expect("writable() hung").unwrap();
                let ready = timeout(LIMIT, s.ready(weft::io::Interest::WRITABLE))
                    .await
                    .expect("ready(WRITABLE) hung")
                    .unwrap();
                assert!(ready.is_writable(), "{ready:?}");
                let both = weft::io::Interest::READABLE | weft::io::Interest::WRITABLE;
                let ready = timeout(LIMIT, s.ready(both)).await.unwrap().unwrap();
                assert!(ready.is_writable(), "{ready:?}");
            }
        });
    }

    #[test]
    fn fresh_unix_streams_and_datagram_sockets_are_writable() {
        rt().block_on(async {
            let (a, b) = weft::net::UnixStream::pair().unwrap();
            for s in [&a, &b] {
                timeout(LIMIT, s.writable()).await.expect("writable() hung").unwrap();
                let ready = s.ready(weft::io::Interest::WRITABLE).await.unwrap();
                assert!(ready.is_writable(), "{ready:?}");
            }
            let (c, d) = weft::net::UnixDatagram::pair().unwrap();
            for s in [&c, &d] {
                timeout(LIMIT, s.writable()).await.expect("writable() hung").unwrap();
            }
            let udp = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            timeout(LIMIT, udp.writable()).await.expect("writable() hung").unwrap();
            let ready = udp.ready(weft::io::Interest::WRITABLE).await.unwrap();
            assert!(ready.is_writable(), "{ready:?}");
        });
    }

    #[test]
    fn readiness_checks_spend_no_budget() {
        rt().block_on(async {
            let (mut client, mut server) = tcp_pair().await;
            timeout(LIMIT, client.writable()).await.unwrap().unwrap();
            server.write_all(b"x").await.unwrap();
            timeout(LIMIT, client.readable()).await.unwrap().unwrap();
            // Far more waits than the budget has units, all in one poll.
            let budget_left = std::future::poll_fn(|cx| {
                use std::future::Future;
                let waits = async {
                    for _ in 0..1000 {
                        client.writable().await.unwrap();
                        client.readable().await.unwrap();
                        client.ready(weft::io::Interest::WRITABLE).await.unwrap();
                    }
                };
                let waits = std::pin::pin!(waits);
                match waits.poll(cx) {
                    std::task::Poll::Ready(()) => {
                        std::task::Poll::Ready(weft::task::coop::has_budget_remaining())
                    }
                    std::task::Poll::Pending => std::task::Poll::Ready(false),
                }
            })
            .await;
            assert!(budget_left, "a readiness wait spent budget or did not complete");
            // With the budget gone, a writable socket still reports
            // writable.
            while weft::task::coop::has_budget_remaining() {
                weft::task::coop::consume_budget().await;
            }
            let now = futures::FutureExt::now_or_never(client.writable());
            assert!(matches!(now, Some(Ok(()))), "writable socket reported {now:?}");
            let now = futures::FutureExt::now_or_never(
                client.ready(weft::io::Interest::READABLE | weft::io::Interest::WRITABLE),
            );
            assert!(
                matches!(&now, Some(Ok(r)) if r.is_writable() && r.is_readable()),
                "{now:?}"
            );
            weft::task::yield_now().await;
            {
                let (rd, wr) = client.split();
                for _ in 0..1000 {
                    wr.writable().await.unwrap();
                    rd.readable().await.unwrap();
                }
                assert!(weft::task::coop::has_budget_remaining());
            }
            let mut byte = [0u8; 1];
            client.read_exact(&mut byte).await.unwrap();
            let (rd, wr) = client.into_split();
            for _ in 0..1000 {
                wr.writable().await.unwrap();
            }
            assert!(weft::task::coop::has_budget_remaining());
            drop((rd, wr));
            server.shutdown().await.unwrap();
        });
    }

    #[test]
    fn writable_try_write_and_readable_try_read_loops_move_everything() {
        const TOTAL: usize = 8 << 20;
        watchdog(HANG, |_| {
            rt().block_on(async {
                let (client, server) = tcp_pair().await;
                let writer = weft::spawn(async move {
                    let chunk = vec![0xA5u8; 64 * 1024];
                    let mut sent = 0;
                    while sent < TOTAL {
                        client.writable().await.unwrap();
                        let end = chunk.len().min(TOTAL - sent);
                        match client.try_write(&chunk[..end]) {
                            Ok(n) => sent += n,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    client
                });
                let mut got = 0;
                let mut buf = vec![0u8; 32 * 1024];
                while got < TOTAL {
                    server.readable().await.unwrap();
                    match server.try_read(&mut buf) {
                        Ok(0) => panic!("early end of stream after {got} bytes"),
                        Ok(n) => {
                            assert!(buf[..n].iter().all(|&b| b == 0xA5));
                            got += n;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
                let _client = writer.await.unwrap();
                assert_eq!(got, TOTAL);
            })
        });
    }

    #[test]
    fn unix_writable_try_write_loop_moves_everything() {
        const TOTAL: usize = 4 << 20;
        watchdog(HANG, |_| {
            rt().block_on(async {
                let (a, b) = weft::net::UnixStream::pair().unwrap();
                let writer = weft::spawn(async move {
                    let chunk = vec![1u8; 16 * 1024];
                    let mut sent = 0;
                    while sent < TOTAL {
                        a.writable().await.unwrap();
                        let end = chunk.len().min(TOTAL - sent);
                        match a.try_write(&chunk[..end]) {
                            Ok(n) => sent += n,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    a
                });
                let mut got = 0;
                let mut buf = vec![0u8; 8 * 1024];
                while got < TOTAL {
                    b.readable().await.unwrap();
                    match b.try_read(&mut buf) {
                        Ok(0) => panic!("early end of stream after {got} bytes"),
                        Ok(n) => got += n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
                let _a = writer.await.unwrap();
                assert_eq!(got, TOTAL);
            })
        });
    }

    // ---- item 19: abstract Unix socket names ----

    fn abstract_name(tag: &str) -> String {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("\0weft-parity-{}-{tag}-{n}", std::process::id())
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn unix_listener_and_stream_use_abstract_names() {
        let name = abstract_name("stream");
        rt().block_on(async {
            let listener = weft::net::UnixListener::bind(&name).unwrap();
            let local = listener.local_addr().unwrap();
            assert_eq!(local.as_abstract_name(), Some(&name.as_bytes()[1..]));
            assert!(local.as_pathname().is_none());
            let (client, accepted) =
                futures::join!(weft::net::UnixStream::connect(&name), listener.accept());
            let mut client = client.unwrap();
            let (mut server, _) = accepted.unwrap();
            let peer = client.peer_addr().unwrap();
            assert_eq!(peer.as_abstract_name(), Some(&name.as_bytes()[1..]));
            client.write_all(b"hi").await.unwrap();
            let mut buf = [0u8; 2];
            server.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"hi");
            // No socket file was created for the name.
            assert!(!std::path::Path::new(&name[1..]).exists());
        });
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn unix_datagrams_use_abstract_names() {
        let a_name = abstract_name("dgram-a");
        let b_name = abstract_name("dgram-b");
        rt().block_on(async {
            let a = weft::net::UnixDatagram::bind(&a_name).unwrap();
            let b = weft::net::UnixDatagram::bind(&b_name).unwrap();
            assert_eq!(
                a.local_addr().unwrap().as_abstract_name(),
                Some(&a_name.as_bytes()[1..])
            );
            assert_eq!(b.send_to(b"one", &a_name).await.unwrap(), 3);
            let mut buf = [0u8; 8];
            let (n, from) = a.recv_from(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"one");
            assert_eq!(from.as_abstract_name(), Some(&b_name.as_bytes()[1..]));
            assert_eq!(b.try_send_to(b"two", &a_name).unwrap(), 3);
            let n = a.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"two");
            // The `BufMut` receive names an abstract sender too.
            assert_eq!(b.send_to(b"three", &a_name).await.unwrap(), 5);
            let mut bytes = Vec::with_capacity(8);
            let (n, from) = a.recv_buf_from(&mut bytes).await.unwrap();
            assert_eq!(&bytes[..n], b"three");
            assert_eq!(from.as_abstract_name(), Some(&b_name.as_bytes()[1..]));
            a.connect(&b_name).unwrap();
            assert_eq!(
                a.peer_addr().unwrap().as_abstract_name(),
                Some(&b_name.as_bytes()[1..])
            );
            a.send(b"three").await.unwrap();
            let n = b.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"three");
        });
    }
}

// ---- item 3: the deadline check when the inner future spent the budget ----

#[test]
fn timeout_checks_its_deadline_after_the_future_exhausts_the_budget() {
    // The inner future returns `Pending` only when it has spent the whole
    // budget. The timeout must still check its deadline then (its sleep
    // would otherwise find no budget left either), or it never fires. Real
    // time: the task is never idle, so a paused clock would never move
    // (`advance`, as Tokio's, moves it only when awaited, which yields).
    support::watchdog(HANG, |_| {
        let rt = weft::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let hungry = async {
                loop {
                    weft::task::coop::consume_budget().await;
                }
            };
            let res = weft::time::timeout(Duration::from_millis(5), hungry).await;
            assert!(res.is_err());
        })
    });
}

// ---- item 20: paused time with huge timers ----

fn paused_rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn paused_advance_with_never_timers_does_not_panic() {
    support::watchdog(HANG, |_| {
        paused_rt().block_on(async {
            use weft::time::{self, Instant};
            let start = Instant::now();
            let mut never = Box::pin(time::sleep(Duration::MAX));
            let mut far = Box::pin(time::sleep_until(start + Duration::from_secs(1 << 40)));
            let mut every = time::interval(Duration::MAX);
            every.tick().await;
            let waker = std::task::Waker::noop();
            let mut cx = std::task::Context::from_waker(waker);
            use std::future::Future;
            assert!(never.as_mut().poll(&mut cx).is_pending());
            assert!(far.as_mut().poll(&mut cx).is_pending());
            for _ in 0..3 {
                time::advance(Duration::from_secs(86_400 * 365)).await;
                assert!(never.as_mut().poll(&mut cx).is_pending());
                assert!(far.as_mut().poll(&mut cx).is_pending());
                assert!(every.poll_tick(&mut cx).is_pending());
            }
            // Auto-advance: with only far timers left, a short sleep still
            // completes at its own deadline.
            let before = Instant::now();
            time::sleep(Duration::from_secs(5)).await;
            assert_eq!(before.elapsed(), Duration::from_secs(5));
            assert!(never.as_mut().poll(&mut cx).is_pending());
        })
    });
}

#[test]
fn paused_timeout_of_duration_max_on_a_pending_future() {
    support::watchdog(HANG, |_| {
        paused_rt().block_on(async {
            use weft::time::{self, timeout};
            let never = timeout(Duration::MAX, std::future::pending::<()>());
            // The outer timeout comes first; the clock jumps to it.
            assert!(timeout(Duration::from_secs(3600), never).await.is_err());
            let mut every =
                time::interval_at(time::Instant::now() + Duration::from_secs(1), Duration::MAX);
            every.tick().await;
            assert!(timeout(Duration::from_secs(3600), every.tick())
                .await
                .is_err());
        })
    });
}

#[test]
fn paused_idle_runtime_does_not_jump_to_a_deadline_past_the_wheel() {
    // The only timer is past what the wheel can represent: jumping the
    // frozen clock to the wheel's last tick would complete the sleep long
    // before its deadline. It must stay pending (the runtime idles, like
    // `block_on(pending())`); the thread is leaked, parked.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        paused_rt().block_on(async {
            let deadline = weft::time::Instant::now() + Duration::from_secs(1 << 60);
            weft::time::sleep_until(deadline).await;
            let _ = tx.send(weft::time::Instant::now() >= deadline);
        })
    });
    match rx.recv_timeout(Duration::from_millis(500)) {
        Err(mpsc::RecvTimeoutError::Timeout) => {}
        other => panic!("the never-timer completed: {other:?} (true: clock reached it)"),
    }
}
