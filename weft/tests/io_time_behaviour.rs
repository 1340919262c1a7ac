//! I/O and time behaviours a Tokio program can observe (issue #10, items 3,
//! 17, 19, 20): always-ready in-memory streams spend the budget, so a
//! `timeout` around them fires; readiness checks do not spend it, so a
//! `writable()` / `try_write` loop sees a writable socket as writable;
//! abstract Unix socket names work; `Duration::MAX` means "never".

#[macro_use]
mod support;

rt_test! {
    use std::io::ErrorKind;
    use std::time::Duration;
    use weft::io::{AsyncReadExt, AsyncWriteExt, Interest};
    use weft::time::{timeout, Instant};

    // Item 3: each of these loops never waits on anything; only the budget
    // lets the timer in.
    #[test]
    fn timeout_fires_around_an_empty_reader_loop() {
        rt().block_on(async {
            let looped = timeout(Duration::from_millis(20), async {
                let mut empty = weft::io::empty();
                let mut buf = [0u8; 8];
                loop {
                    assert_eq!(empty.read(&mut buf).await.unwrap(), 0);
                }
            })
            .await;
            assert!(looped.is_err());
        });
    }

    #[test]
    fn timeout_fires_around_repeat_and_sink_loops() {
        rt().block_on(async {
            let looped = timeout(Duration::from_millis(20), async {
                let mut ones = weft::io::repeat(1);
                let mut buf = [0u8; 8];
                loop {
                    ones.read_exact(&mut buf).await.unwrap();
                    assert_eq!(buf, [1; 8]);
                }
            })
            .await;
            assert!(looped.is_err());
            let looped = timeout(Duration::from_millis(20), async {
                let mut sink = weft::io::sink();
                loop {
                    sink.write_all(b"into the void").await.unwrap();
                }
            })
            .await;
            assert!(looped.is_err());
        });
    }

    #[test]
    fn empty_reader_loop_lets_another_task_run() {
        rt().block_on(async {
            let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let spinner = {
                let flag = flag.clone();
                weft::spawn(async move {
                    let mut empty = weft::io::empty();
                    let mut buf = [0u8; 1];
                    let mut spins = 0u64;
                    while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                        let _ = empty.read(&mut buf).await;
                        spins += 1;
                        assert!(spins < 50_000_000, "the other task never ran");
                    }
                })
            };
            weft::spawn(async move { flag.store(true, std::sync::atomic::Ordering::SeqCst) })
                .await
                .unwrap();
            spinner.await.unwrap();
        });
    }

    // Item 17: readiness checks never spend the budget.
    #[test]
    fn writable_stays_ready_however_often_it_is_asked_in_one_poll() {
        rt().block_on(async {
            let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = weft::net::TcpStream::connect(listener.local_addr().unwrap())
                .await
                .unwrap();
            let (_server, _) = listener.accept().await.unwrap();
            client.writable().await.unwrap();
            // Far more checks than the 128-unit budget, all in one poll.
            for i in 0..1000 {
                let mut writable = std::pin::pin!(client.writable());
                assert!(
                    futures::poll!(writable.as_mut()).is_ready(),
                    "a writable socket reported pending on check {i}"
                );
            }
            let ready = client.ready(Interest::WRITABLE).await.unwrap();
            assert!(ready.is_writable());
        });
    }

    #[test]
    fn try_write_and_try_read_loops_around_readiness() {
        rt().block_on(async {
            let (a, b) = weft::net::UnixStream::pair().unwrap();
            let data = [7u8; 4096];
            let mut sent = 0usize;
            // Fill the socket buffer: writable/try_write until WouldBlock.
            loop {
                a.writable().await.unwrap();
                match a.try_write(&data) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            assert!(sent > 0);
            // Drain it: readable/try_read until everything arrived.
            let mut got = 0usize;
            let mut buf = [0u8; 8192];
            while got < sent {
                b.readable().await.unwrap();
                match b.try_read(&mut buf) {
                    Ok(n) => got += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                    Err(e) => panic!("{e}"),
                }
            }
            assert_eq!(got, sent);
        });
    }

    // Item 19: abstract names (Linux).
    #[test]
    fn abstract_unix_names_bind_and_connect() {
        use std::os::linux::net::SocketAddrExt;
        rt().block_on(async {
            let name = format!("\0weft-test-{}-{}", std::process::id(), line!());
            let listener = weft::net::UnixListener::bind(&name).unwrap();
            assert_eq!(
                listener.local_addr().unwrap().as_abstract_name(),
                Some(&name.as_bytes()[1..])
            );
            let mut client = weft::net::UnixStream::connect(&name).await.unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            client.write_all(b"hi").await.unwrap();
            let mut buf = [0u8; 2];
            server.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"hi");

            let dgram_name = format!("{name}-dgram");
            let receiver = weft::net::UnixDatagram::bind(&dgram_name).unwrap();
            let sender = weft::net::UnixDatagram::unbound().unwrap();
            sender.send_to(b"to", &dgram_name).await.unwrap();
            sender.connect(&dgram_name).unwrap();
            sender.send(b"connected").await.unwrap();
            let mut buf = [0u8; 16];
            let n = receiver.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"to");
            let n = receiver.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"connected");
        });
    }

    // Item 20: a deadline past the clock's range means "never".
    #[test]
    fn duration_max_means_never() {
        rt().block_on(async {
            let never = timeout(Duration::from_millis(5), weft::time::sleep(Duration::MAX)).await;
            assert!(never.is_err());
            assert_eq!(timeout(Duration::MAX, async { 3 }).await, Ok(3));
            let inner = timeout(Duration::MAX, std::future::pending::<()>());
            assert!(timeout(Duration::from_millis(5), inner).await.is_err());

            let mut ticks = weft::time::interval(Duration::MAX);
            ticks.tick().await; // the first tick is immediate
            assert!(timeout(Duration::from_millis(5), ticks.tick()).await.is_err());
            ticks.reset();
            ticks.reset_after(Duration::MAX);
            let mut at = weft::time::interval_at(Instant::now(), Duration::MAX);
            at.tick().await;
            assert!(timeout(Duration::from_millis(5), at.tick()).await.is_err());
        });
    }
}

#[test]
fn duration_max_on_a_paused_clock() {
    use std::time::Duration;
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let sleeper = weft::spawn(weft::time::sleep(Duration::MAX));
        let mut ticks = weft::time::interval(Duration::MAX);
        ticks.tick().await;
        // "Never" is the timers' far future (30 years, as in Tokio): ten
        // years pass, nothing fires and nothing overflows.
        weft::time::advance(Duration::from_secs(10 * 365 * 86_400)).await;
        assert!(!sleeper.is_finished());
        let waited = weft::time::timeout(Duration::from_secs(1), ticks.tick()).await;
        assert!(waited.is_err());
        sleeper.abort();
    });
}
