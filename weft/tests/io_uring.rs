//! The io_uring driver's own cases: reads through the per-worker rings on
//! every flavour, what happens to a receive whose reader or stream goes
//! away, readiness-based reads mixed with ring reads, rings shared across
//! threads, back-pressure on a full submission queue, and shutdown.
//!
//! Every runtime here asks for `IoDriver::Uring` explicitly, so these tests
//! fail (rather than quietly test epoll) on a machine that refuses
//! io_uring. The rest of the suite runs on both drivers through
//! `WEFT_IO_DRIVER` (README, "Testing").

mod support;
#[path = "support/uring.rs"]
mod uring;

use uring::{pair, runtimes};

use std::time::Duration;
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, IoDriver};

#[test]
fn the_runtime_reports_the_uring_driver_and_echoes_through_it() {
    for (name, rt) in runtimes() {
        assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Uring), "{name}");
        uring::on_a_worker(&rt, async move {
            let (mut client, server) = pair().await;
            let echo = weft::spawn(async move {
                let (mut r, mut w) = server.into_split();
                weft::io::copy(&mut r, &mut w).await.unwrap()
            });
            let payload: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
            let (mut rd, mut wr) = client.split();
            let (sent, back) = weft::join!(
                async {
                    wr.write_all(&payload).await.unwrap();
                    wr.shutdown().await.unwrap();
                },
                async {
                    let mut back = Vec::new();
                    rd.read_to_end(&mut back).await.unwrap();
                    back
                }
            );
            let () = sent;
            assert!(back == payload, "{name}: echoed bytes differ");
            assert_eq!(echo.await.unwrap(), payload.len() as u64, "{name}");
            let _ = client.shutdown().await;
        });
    }
}

/// A read given up mid-flight (a `select!` timeout) loses nothing: the
/// receive belongs to the stream, and its bytes come back, in order, from
/// the next read, whether that is a ring read, `try_read`, or `peek`.
#[test]
fn a_cancelled_read_loses_no_bytes_whichever_way_the_next_read_goes() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            for next_read in ["read", "try_read", "peek"] {
                let (mut client, mut server) = pair().await;
                let mut buf = [0u8; 64];
                weft::select! {
                    _ = server.read(&mut buf) => panic!("{name}: nothing was sent yet"),
                    _ = weft::time::sleep(Duration::from_millis(20)) => {}
                }
                client.write_all(b"first").await.unwrap();
                // Let the abandoned receive complete into the stream.
                weft::time::sleep(Duration::from_millis(20)).await;
                client.write_all(b"-second").await.unwrap();
                let mut got = Vec::new();
                while got.len() < 12 {
                    let n = match next_read {
                        "read" => server.read(&mut buf).await.unwrap(),
                        "try_read" => {
                            server.readable().await.unwrap();
                            match server.try_read(&mut buf) {
                                Ok(n) => n,
                                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                                Err(e) => panic!("{name}: {e}"),
                            }
                        }
                        _ => {
                            let n = server.peek(&mut buf).await.unwrap();
                            // A peek does not consume: read what it saw.
                            let mut again = vec![0u8; n];
                            server.read_exact(&mut again).await.unwrap();
                            assert_eq!(&again[..], &buf[..n], "{name}: peek then read differ");
                            n
                        }
                    };
                    assert!(n > 0, "{name}/{next_read}: unexpected EOF");
                    got.extend_from_slice(&buf[..n]);
                }
                assert_eq!(&got[..], b"first-second", "{name}/{next_read}");
            }
        });
    }
}

/// A readiness check on another thread than the reader's (a write half's
/// `ready(READABLE)`, a shared socket's `readable()`) ends the receive in
/// flight, and the reader waiting on it is still woken for the bytes that
/// come next. The check's own wait once replaced the reader's waker with a
/// no-op, and the reader slept for good.
#[test]
fn a_readiness_check_beside_a_waiting_reader_leaves_the_reader_woken() {
    use weft::io::Interest;
    use weft::net::UdpSocket;
    const ROUNDS: usize = 20;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            for round in 0..ROUNDS {
                let (mut client, server) = pair().await;
                let (mut read_half, write_half) = server.into_split();
                let reader = weft::spawn(async move {
                    let mut buf = [0u8; 16];
                    let n = read_half.read(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                });
                // The reader's receive is in the ring now.
                weft::time::sleep(Duration::from_millis(5)).await;
                let check = weft::time::timeout(
                    Duration::from_millis(5),
                    write_half.ready(Interest::READABLE),
                );
                assert!(check.await.is_err(), "{name}: nothing was sent yet");
                client.write_all(b"after").await.unwrap();
                let got = weft::time::timeout(Duration::from_secs(5), reader)
                    .await
                    .unwrap_or_else(|_| panic!("{name}: round {round}: the TCP reader slept on"))
                    .unwrap();
                assert_eq!(got, b"after", "{name}");
            }
            for round in 0..ROUNDS {
                let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let b = std::sync::Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
                let receiving = b.clone();
                let receiver = weft::spawn(async move {
                    let mut buf = [0u8; 16];
                    let n = receiving.recv(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                });
                weft::time::sleep(Duration::from_millis(5)).await;
                let check = weft::time::timeout(Duration::from_millis(5), b.readable());
                assert!(check.await.is_err(), "{name}: nothing was sent yet");
                a.send_to(b"datagram", b.local_addr().unwrap())
                    .await
                    .unwrap();
                let got = weft::time::timeout(Duration::from_secs(5), receiver)
                    .await
                    .unwrap_or_else(|_| panic!("{name}: round {round}: the UDP receiver slept on"))
                    .unwrap();
                assert_eq!(got, b"datagram", "{name}");
            }
        });
    }
}

/// A receive brought more than the next reader's buffer holds: the rest is
/// served by the following reads, in order.
#[test]
fn a_smaller_next_buffer_gets_the_rest_in_order() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, mut server) = pair().await;
            let mut big = [0u8; 4096];
            // Start a receive for up to 4 KiB, then abandon the reader.
            weft::select! {
                _ = server.read(&mut big) => panic!("{name}: nothing was sent yet"),
                _ = weft::time::sleep(Duration::from_millis(10)) => {}
            }
            let payload: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
            client.write_all(&payload).await.unwrap();
            let mut got = Vec::new();
            let mut small = [0u8; 7];
            while got.len() < payload.len() {
                let n = server.read(&mut small).await.unwrap();
                assert!(n > 0 && n <= 7, "{name}: read {n}");
                got.extend_from_slice(&small[..n]);
            }
            assert!(got == payload, "{name}: bytes out of order");
        });
    }
}

/// A receive that filled all it asked for leaves the stream assumed
/// readable: the next read is served from the socket at once, with no
/// ring op to wait for (a bulk transfer's reads); the first short read
/// clears the assumption, and the reads after it wait on the ring again.
/// Bytes stay in order across the switches.
#[test]
fn a_full_receive_lets_the_next_read_take_the_socket_at_once() {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::Poll;

    /// One poll of `fut`, in the calling task.
    async fn poll_once<F: Future>(mut fut: Pin<&mut F>) -> Poll<F::Output> {
        std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
    }

    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, mut server) = pair().await;
            // A receive in flight before the bytes come: the ring's.
            let mut buf = [0u8; 1000];
            let payload: Vec<u8> = (0..2500u32).map(|i| (i * 7 % 251) as u8).collect();
            let mut got = Vec::new();
            let mut read = std::pin::pin!(server.read(&mut buf));
            let polled = poll_once(read.as_mut()).await;
            assert!(polled.is_pending(), "{name}: nothing was sent yet");
            client.write_all(&payload).await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            let n = read.await.unwrap();
            assert_eq!(n, 1000, "{name}: the first receive is not full");
            got.extend_from_slice(&buf[..n]);
            let mut read = std::pin::pin!(server.read(&mut buf));
            let polled = poll_once(read.as_mut()).await;
            let Poll::Ready(Ok(1000)) = polled else {
                panic!("{name}: the read after a full receive waited: {polled:?}");
            };
            got.extend_from_slice(&buf);
            // Short: 500 left.
            let n = server.read(&mut buf).await.unwrap();
            assert_eq!(n, 500, "{name}");
            got.extend_from_slice(&buf[..n]);
            assert!(got == payload, "{name}: bytes out of order");

            // Drained: the next read waits for new bytes, and gets them.
            let mut read = std::pin::pin!(server.read(&mut buf));
            let polled = poll_once(read.as_mut()).await;
            assert!(
                polled.is_pending(),
                "{name}: a drained socket read {polled:?}"
            );
            client.write_all(b"more").await.unwrap();
            assert_eq!(read.await.unwrap(), 4, "{name}");
            assert_eq!(&buf[..4], b"more", "{name}");
        });
    }
}

/// A read that drained the socket makes the next receive expect to wait
/// (`IORING_RECVSEND_POLL_FIRST`: the kernel arms its poll before trying).
/// Both guesses must deliver: data that arrives later wakes the reader,
/// and data that is already there when the receive starts is read at once.
#[test]
fn receives_that_expect_to_wait_get_data_whether_it_is_late_or_already_there() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, mut server) = pair().await;
            let mut buf = [0u8; 5];
            for round in 0..20u8 {
                // Data already there: it sits in the socket before the read
                // (the last read got less than it asked for).
                client.write_all(&[round; 3]).await.unwrap();
                weft::time::sleep(Duration::from_millis(2)).await;
                weft::time::timeout(Duration::from_secs(5), server.read_exact(&mut buf[..3]))
                    .await
                    .unwrap_or_else(|_| panic!("{name}: data already there was not read"))
                    .unwrap();
                assert_eq!(buf[..3], [round; 3], "{name}");
                // Data that comes later.
                let late = round.wrapping_add(100);
                let writer = weft::spawn(async move {
                    weft::time::sleep(Duration::from_millis(2)).await;
                    client.write_all(&[late; 5]).await.unwrap();
                    client
                });
                weft::time::timeout(Duration::from_secs(5), server.read_exact(&mut buf))
                    .await
                    .unwrap_or_else(|_| panic!("{name}: late data never woke the reader"))
                    .unwrap();
                assert_eq!(buf, [late; 5], "{name}");
                client = writer.await.unwrap();
            }
        });
    }
}

/// A stream dropped with a receive in flight: its descriptor number is
/// reused at once by a new socket, whose bytes must all reach the new
/// socket's reader (the old receive was cancelled before the close).
#[test]
fn a_dropped_stream_with_a_receive_in_flight_does_not_steal_from_its_successor() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            for round in 0..50 {
                let (client, mut server) = pair().await;
                let mut buf = [0u8; 16];
                weft::select! {
                    _ = server.read(&mut buf) => panic!("{name}: nothing was sent yet"),
                    _ = weft::task::yield_now() => {}
                }
                drop(server);
                drop(client);
                let (mut c2, mut s2) = pair().await;
                c2.write_all(b"for the successor").await.unwrap();
                let mut got = [0u8; 17];
                s2.read_exact(&mut got).await.unwrap();
                assert_eq!(&got, b"for the successor", "{name}, round {round}");
            }
        });
    }
}

/// A receive started on a worker and given up (a `select!` timeout),
/// with the stream then read from `block_on`, which is off the workers:
/// the receive stays on the worker's ring and brings the first bytes; the
/// reads after it, on readiness, get the rest in order, and so does the
/// peer, from writes off the workers.
#[test]
fn a_read_started_on_a_worker_finishes_off_the_workers() {
    let rt = uring::multi_thread(2);
    rt.block_on(async {
        assert_eq!(weft::runtime::worker_index(), None);
        let (mut client, server) = pair().await;
        let mut server = weft::spawn(async move {
            assert!(weft::runtime::worker_index().is_some());
            let mut server = server;
            let mut buf = [0u8; 32];
            weft::select! {
                _ = server.read(&mut buf) => panic!("nothing was sent yet"),
                _ = weft::time::sleep(Duration::from_millis(10)) => {}
            }
            server
        })
        .await
        .unwrap();
        use std::os::fd::AsRawFd;
        const IN: u32 = libc::EPOLLIN as u32;
        let mut got = [0u8; 5];
        for (round, word) in [b"hello", b"world"].into_iter().enumerate() {
            client.write_all(word).await.unwrap();
            server.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, word);
            // The first read was the receive's, on the ring: the socket
            // is still out of epoll. The second went on readiness.
            let events = epoll_events_of(server.as_raw_fd());
            match round {
                0 => assert_eq!(events, None, "the receive in flight was lost"),
                _ => assert!(
                    events.is_some_and(|e| e & IN != 0),
                    "the second read was not on readiness ({events:?})"
                ),
            }
        }
        server.write_all(b"reply").await.unwrap();
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"reply");
    });
}

/// Off the workers (a multi_thread runtime's `block_on`), a ring-backed
/// stream reads and writes on readiness, as on the epoll driver: a read
/// that has to wait puts the socket in epoll (on a worker it stays out:
/// `ring_backed_streams_enter_epoll_when_a_readiness_operation_asks`),
/// and bytes still flow both ways.
#[test]
fn off_the_workers_streams_read_and_write_on_readiness() {
    use std::os::fd::AsRawFd;
    const IN: u32 = libc::EPOLLIN as u32;
    for (name, rt) in runtimes() {
        if name == "current_thread" {
            // Its block_on thread holds the core: it is the worker.
            continue;
        }
        rt.block_on(async {
            let (mut client, mut server) = pair().await;
            let echo = weft::spawn(async move {
                let mut buf = [0u8; 4];
                server.read_exact(&mut buf).await.unwrap();
                server.write_all(&buf).await.unwrap();
                server
            });
            client.write_all(b"ping").await.unwrap();
            let mut got = [0u8; 4];
            client.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ping", "{name}");
            let events = epoll_events_of(client.as_raw_fd());
            assert!(
                events.is_some_and(|e| e & IN != 0),
                "{name}: a read from block_on did not wait on epoll ({events:?})"
            );
            drop(echo.await.unwrap());
        });
    }
}

/// More receives in flight than a ring's submission queue holds (256), all
/// started from one worker between two flushes: the queue is submitted to
/// make room, and every connection gets its bytes.
#[test]
fn more_receives_than_the_submission_queue_holds_all_complete() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            const CONNS: usize = 600;
            let server = weft::spawn(async move {
                let mut readers = Vec::new();
                for _ in 0..CONNS {
                    let (mut s, _) = listener.accept().await.unwrap();
                    readers.push(weft::spawn(async move {
                        let mut b = [0u8; 8];
                        s.read_exact(&mut b).await.unwrap();
                        u64::from_le_bytes(b)
                    }));
                }
                let mut sum = 0;
                for r in readers {
                    sum += r.await.unwrap();
                }
                sum
            });
            let mut clients = Vec::new();
            for _ in 0..CONNS {
                clients.push(TcpStream::connect(addr).await.unwrap());
            }
            // Give every reader time to start its receive.
            weft::time::sleep(Duration::from_millis(50)).await;
            for (i, c) in clients.iter_mut().enumerate() {
                c.write_all(&(i as u64).to_le_bytes()).await.unwrap();
            }
            let expected: u64 = (0..CONNS as u64).sum();
            assert_eq!(server.await.unwrap(), expected, "{name}");
        });
    }
}

/// A stream that outlives its runtime: a read then fails with the shutdown
/// error instead of waiting for a completion forever.
#[test]
fn a_read_after_the_runtime_is_gone_is_the_shutdown_error() {
    for (name, rt) in runtimes() {
        let (client, mut server) = uring::on_a_worker(&rt, async move {
            let (client, mut server) = pair().await;
            let mut buf = [0u8; 8];
            weft::select! {
                _ = server.read(&mut buf) => panic!("{name}: nothing was sent yet"),
                _ = weft::time::sleep(Duration::from_millis(10)) => {}
            }
            (client, server)
        });
        drop(rt);
        let other = Builder::new_current_thread().enable_all().build().unwrap();
        let err = other
            .block_on(async { server.read(&mut [0u8; 8]).await })
            .unwrap_err();
        assert!(weft::runtime::is_rt_shutdown_err(&err), "{name}: {err}");
        drop(client);
    }
}

/// End of stream and a reset peer come through the ring as they do through
/// epoll: 0, then `ConnectionReset`.
#[test]
fn eof_and_reset_through_the_ring() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, mut server) = pair().await;
            client.write_all(b"bye").await.unwrap();
            client.shutdown().await.unwrap();
            let mut got = Vec::new();
            server.read_to_end(&mut got).await.unwrap();
            assert_eq!(&got, b"bye", "{name}");

            let (client, mut server) = pair().await;
            client.set_zero_linger().unwrap();
            drop(client);
            let err = server.read(&mut [0u8; 8]).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{name}");
        });
    }
}

/// `Auto` (asked for explicitly, so `WEFT_IO_DRIVER` does not decide)
/// picks io_uring on a kernel that allows it, as this suite's machines do.
#[test]
fn auto_picks_uring_where_the_kernel_allows_it() {
    let rt = Builder::new_current_thread()
        .enable_all()
        .io_driver(IoDriver::Auto)
        .build()
        .unwrap();
    assert_eq!(rt.metrics().io_driver(), Some(IoDriver::Uring));
}

/// A UDP receive given up mid-way loses no datagram: it comes back, once
/// and in order, from the next receive, whether that is `recv_from`,
/// `try_recv_from`, a peek or `recv_buf_from`. (Written when datagram
/// receives went through the ring, where the dropped receive's op took
/// the datagram; they are readiness-based now, as on epoll.)
#[test]
fn a_dropped_udp_receive_loses_no_datagram_whichever_way_the_next_receive_goes() {
    use weft::net::UdpSocket;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
            let mut buf = [0u8; 64];
            // Each round: a receive starts, is dropped, then
            // two datagrams arrive; the first must be what the next
            // receive of each kind gets, the second what follows it.
            for round in 0..4u8 {
                let dropped = std::future::poll_fn(|cx| {
                    let mut read = weft::io::ReadBuf::new(&mut buf);
                    std::task::Poll::Ready(b.poll_recv_from(cx, &mut read).is_pending())
                })
                .await;
                assert!(dropped, "{name}: a datagram before any was sent");
                a.send_to(&[round, 1], b_addr).await.unwrap();
                a.send_to(&[round, 2], b_addr).await.unwrap();
                // Let both arrive.
                weft::time::sleep(Duration::from_millis(20)).await;
                let (first, from) = match round {
                    0 => b.recv_from(&mut buf).await.unwrap(),
                    1 => b.try_recv_from(&mut buf).unwrap(),
                    2 => {
                        let peeked = b.peek_from(&mut buf).await.unwrap();
                        assert_eq!(&buf[..peeked.0], &[round, 1], "{name}: peek");
                        b.recv_from(&mut buf).await.unwrap()
                    }
                    _ => {
                        let mut bytes = Vec::with_capacity(64);
                        let (n, from) = b.recv_buf_from(&mut bytes).await.unwrap();
                        buf[..n].copy_from_slice(&bytes);
                        (n, from)
                    }
                };
                assert_eq!(&buf[..first], &[round, 1], "{name}: round {round}");
                assert_eq!(from, a_addr, "{name}: round {round}");
                let n = weft::time::timeout(Duration::from_secs(5), b.recv(&mut buf))
                    .await
                    .unwrap_or_else(|_| panic!("{name}: round {round}: second datagram lost"))
                    .unwrap();
                assert_eq!(&buf[..n], &[round, 2], "{name}: round {round}");
            }
        });
    }
}

/// Many tasks receiving on one shared UDP socket: every datagram reaches
/// exactly one of them, and none is left asleep.
#[test]
fn concurrent_udp_receivers_each_get_one_datagram() {
    use weft::net::UdpSocket;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = std::sync::Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            let b_addr = b.local_addr().unwrap();
            let receivers: Vec<_> = (0..8)
                .map(|_| {
                    let b = b.clone();
                    weft::spawn(async move {
                        let mut buf = [0u8; 8];
                        let n = b.recv(&mut buf).await.unwrap();
                        assert_eq!(n, 1);
                        buf[0]
                    })
                })
                .collect();
            weft::time::sleep(Duration::from_millis(10)).await;
            for i in 0..8u8 {
                a.send_to(&[i], b_addr).await.unwrap();
            }
            let mut got = Vec::new();
            for receiver in receivers {
                got.push(
                    weft::time::timeout(Duration::from_secs(5), receiver)
                        .await
                        .unwrap_or_else(|_| panic!("{name}: a receiver was never woken"))
                        .unwrap(),
                );
            }
            got.sort();
            assert_eq!(got, (0..8).collect::<Vec<u8>>(), "{name}");
        });
    }
}

/// Unix datagram sockets receive with the sender's address.
#[test]
fn unix_datagrams_name_their_sender() {
    use weft::net::UnixDatagram;
    let dir = std::env::temp_dir().join(format!("weft-uring-dgram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (name, rt)) in runtimes().into_iter().enumerate() {
        let (a_path, b_path) = (dir.join(format!("a-{i}")), dir.join(format!("b-{i}")));
        uring::on_a_worker(&rt, async move {
            let a = UnixDatagram::bind(&a_path).unwrap();
            let b = UnixDatagram::bind(&b_path).unwrap();
            let mut buf = [0u8; 16];
            let (got, sent) = weft::join!(b.recv_from(&mut buf), a.send_to(b"hello", &b_path));
            sent.unwrap();
            let (n, from) = got.unwrap();
            assert_eq!(&buf[..n], b"hello", "{name}");
            assert_eq!(from.as_pathname(), Some(a_path.as_path()), "{name}");
        });
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The events epoll was asked to report for `fd` (from the fdinfo of the
/// epoll instance that holds it), or `None` if no epoll instance of this
/// process holds it.
fn epoll_events_of(fd: std::os::fd::RawFd) -> Option<u32> {
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_epoll = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy() == "anon_inode:[eventpoll]");
        if !is_epoll {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/self/fdinfo/{}",
            entry.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        for line in info.lines() {
            let mut words = line.split_whitespace();
            if words.next() == Some("tfd:") && words.next() == Some(&fd.to_string()) {
                let events = words.skip_while(|w| *w != "events:").nth(1)?;
                return u32::from_str_radix(events, 16).ok();
            }
        }
    }
    None
}

/// A ring-backed stream is out of epoll until a readiness operation asks
/// (an add and a removal per connection saved): reads and writes through
/// the ring leave it out; a first `try_write` adds writes and a first
/// `try_read` reads, each finding the readiness there is at once (as on a
/// stream registered when made); a read wait ends when bytes come; and a
/// fresh stream's `writable()` ends at once.
#[test]
fn ring_backed_streams_enter_epoll_when_a_readiness_operation_asks() {
    use std::os::fd::AsRawFd;
    use std::time::Duration;
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    use weft::net::{TcpListener, TcpStream};
    const IN: u32 = libc::EPOLLIN as u32;
    const OUT: u32 = libc::EPOLLOUT as u32;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (client, accepted) = weft::join!(TcpStream::connect(addr), listener.accept());
            let (mut client, mut server) = (client.unwrap(), accepted.unwrap().0);
            client.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            server.read_exact(&mut buf).await.unwrap();
            for (who, fd) in [
                ("client", client.as_raw_fd()),
                ("server", server.as_raw_fd()),
            ] {
                assert_eq!(epoll_events_of(fd), None, "{name}: the {who} is in epoll");
            }

            // A first try_write adds writes, and finds the room there is.
            assert_eq!(server.try_write(b"pong").unwrap(), 4, "{name}");
            let events = epoll_events_of(server.as_raw_fd()).expect("added by try_write");
            assert_eq!(events & (IN | OUT), OUT, "{name}: asked for {events:#x}");

            // A first try_read adds reads, and finds the bytes there are.
            client.write_all(b"data").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(server.try_read(&mut buf).unwrap(), 4, "{name}");
            assert_eq!(&buf, b"data", "{name}");
            let events = epoll_events_of(server.as_raw_fd()).unwrap();
            assert_eq!(
                events & (IN | OUT),
                IN | OUT,
                "{name}: asked for {events:#x}"
            );

            // A read wait ends when bytes come.
            let waited = weft::time::timeout(Duration::from_secs(5), server.readable());
            let (waited, _) = weft::join!(waited, async {
                weft::time::sleep(Duration::from_millis(10)).await;
                client.write_all(b"more").await.unwrap();
            });
            waited.expect("the read wait never ended").unwrap();

            // A fresh stream's first wait is for readiness it already has.
            let (fresh, _accepted) = weft::join!(TcpStream::connect(addr), listener.accept());
            let fresh = fresh.unwrap();
            weft::time::timeout(Duration::from_secs(5), fresh.writable())
                .await
                .expect("a fresh stream's writable() never ended")
                .unwrap();
        });
    }
}

/// An `AsyncFd` is registered with epoll for reads and writes on both
/// drivers, as on Tokio, and so is a UDP socket (which once received on
/// the rings). Only a descriptor registered for the rings (the Ruby
/// selector's `with_interest_on_rings`) is in epoll for nothing but errors
/// and hang-ups (not even `EPOLLPRI`, which every arrival's wake-up
/// carries): its readiness comes from poll requests on the rings.
#[test]
fn ring_backed_async_fds_ask_epoll_for_nothing() {
    use std::os::fd::AsRawFd;
    use weft::io::unix::AsyncFd;
    use weft::net::UdpSocket;
    const ASKED: u32 = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLPRI) as u32;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let events = epoll_events_of(udp.as_raw_fd()).expect("registered");
            let both = (libc::EPOLLIN | libc::EPOLLOUT) as u32;
            assert_eq!(events & both, both, "{name}: UDP asked for {events:#x}");

            let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            let fd = AsyncFd::new(a).unwrap();
            let events = epoll_events_of(fd.as_raw_fd()).expect("registered");
            assert_eq!(events & both, both, "{name}: AsyncFd asked for {events:#x}");

            let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            let both_ways = weft::io::Interest::READABLE | weft::io::Interest::WRITABLE;
            let fd = AsyncFd::with_interest_on_rings(a, both_ways).unwrap();
            let events = epoll_events_of(fd.as_raw_fd()).expect("registered");
            assert_eq!(events & ASKED, 0, "{name}: AsyncFd asked for {events:#x}");
            // Its readiness comes from the ring: epoll is still asked for
            // nothing after a wait.
            fd.writable().await.unwrap().retain_ready();
            let events = epoll_events_of(fd.as_raw_fd()).unwrap();
            assert_eq!(events & ASKED, 0, "{name}: AsyncFd asked for {events:#x}");
        });
    }
}

/// A `block_on` future that writes and then blocks its thread (here on a
/// std channel the peer answers only once it has the bytes) does not hold
/// the bytes back on a current_thread runtime: its write is submitted at
/// once, not at the worker's next batch point, which the blocked thread
/// would never reach.
#[test]
fn a_block_on_write_reaches_the_peer_while_the_thread_blocks() {
    use std::io::Read;
    use weft::io::AsyncWriteExt;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (got_tx, got_rx) = std::sync::mpsc::channel();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            got_tx.send(buf).unwrap();
        });
        let rt = uring::current_thread();
        let got = rt.block_on(async {
            let mut stream = weft::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"hello").await.unwrap();
            // Blocks this (the runtime's only) thread until the peer read.
            let got = got_rx.recv().unwrap();
            drop(stream);
            got
        });
        peer.join().unwrap();
        done_tx.send(got).unwrap();
    });
    let got = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the write never reached the peer while block_on's thread was blocked");
    assert_eq!(&got, b"hello");
}

/// A receive in flight on the ring of a worker that then sleeps on its
/// condvar (the other worker holds the driver) completes with nobody but
/// the driver's holder to take it: the sleeping worker's departure armed
/// its ring's one-shot registration in epoll (runtime/io/uring/watch.rs).
/// Each trial leaves the reader's worker asleep in the driver or on its
/// condvar, whichever it found; twenty trials make the second case all
/// but certain. Without the arm, that trial's read never ends.
#[test]
fn a_completion_on_a_sleeping_workers_ring_wakes_its_task() {
    use std::io::Write;
    let rt = uring::multi_thread(2);
    for trial in 0..20 {
        let (mut peers, mut accepted) = std_pairs(1);
        let (mut peer, accepted) = (peers.pop().unwrap(), accepted.pop().unwrap());
        rt.block_on(async move {
            let mut stream = TcpStream::from_std(accepted).unwrap();
            let reader = weft::spawn(async move {
                let mut got = [0u8; 5];
                stream.read_exact(&mut got).await.unwrap();
                got
            });
            // Both workers go idle, the reader's receive in flight.
            weft::time::sleep(Duration::from_millis(10)).await;
            peer.write_all(b"hello").unwrap();
            let got = weft::time::timeout(Duration::from_secs(10), reader)
                .await
                .unwrap_or_else(|_| panic!("trial {trial}: the read never ended"))
                .unwrap();
            assert_eq!(&got, b"hello");
        });
    }
}

/// `n` connected pairs: (the peers' std sockets, the accepted ends,
/// non-blocking, for `TcpStream::from_std`).
fn std_pairs(n: usize) -> (Vec<std::net::TcpStream>, Vec<std::net::TcpStream>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    (0..n)
        .map(|_| {
            let peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (stream, _) = listener.accept().unwrap();
            stream.set_nonblocking(true).unwrap();
            (peer, stream)
        })
        .unzip()
}

/// Spawn a task that makes streams of `accepted`, starts a receive on each
/// on its worker's ring (a read polled once, then dropped: the receive
/// stays the stream's), lets the worker's next batch point submit them,
/// hands the streams over, and then runs `then` (which blocks its thread).
async fn receives_started_on_a_worker(
    accepted: Vec<std::net::TcpStream>,
    then: impl FnOnce() + Send + 'static,
) -> Vec<TcpStream> {
    let (streams_tx, streams_rx) = weft::sync::oneshot::channel();
    weft::spawn(async move {
        let mut streams: Vec<TcpStream> = accepted
            .into_iter()
            .map(|s| TcpStream::from_std(s).unwrap())
            .collect();
        for stream in streams.iter_mut() {
            let mut buf = [0u8; 5];
            let mut read = std::pin::pin!(stream.read(&mut buf));
            let pending = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::future::Future::poll(read.as_mut(), cx).is_pending())
            });
            assert!(pending.await, "nothing was sent yet");
        }
        weft::task::yield_now().await;
        streams_tx.send(streams).ok().unwrap();
        then();
    });
    streams_rx.await.unwrap()
}

/// Each peer sends 5 bytes and each stream must get them within 10 s
/// (from `block_on`, off the workers: the receives are on a worker's ring).
async fn each_receive_completes(streams: &mut [TcpStream], peers: &mut [std::net::TcpStream]) {
    use std::io::Write;
    for (i, (stream, peer)) in streams.iter_mut().zip(peers).enumerate() {
        peer.write_all(b"hello").unwrap();
        let mut got = [0u8; 5];
        weft::time::timeout(Duration::from_secs(10), stream.read_exact(&mut got))
            .await
            .unwrap_or_else(|_| panic!("receive {i} on the worker's ring never completed"))
            .unwrap();
        assert_eq!(&got, b"hello");
    }
}

/// Sends on drop: frees a thread blocked on the channel however a test
/// ends.
struct Release(std::sync::mpsc::Sender<()>);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Without the long-poll monitor (`long_poll_threshold(None)`), nothing
/// marks a worker stuck in a poll as away, so worker rings stay in epoll
/// for good: two receives started on a worker that then blocks its thread
/// both complete for a `block_on` reading them (the worker in the driver
/// reaps the blocked worker's ring). With one-shot registrations the
/// second completion waited for the blocked poll to end (the first may
/// use up the registration's initial arm).
#[test]
fn without_the_monitor_a_blocked_workers_ring_is_still_reaped() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .io_driver(IoDriver::Uring)
        .long_poll_threshold(None)
        .build()
        .unwrap();
    let (mut peers, accepted) = std_pairs(2);
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let release = Release(release);
    rt.block_on(async move {
        // The task blocks its worker's thread until the test is done.
        let mut streams = receives_started_on_a_worker(accepted, move || {
            let _ = blocked.recv();
        })
        .await;
        each_receive_completes(&mut streams, &mut peers).await;
        drop(release);
    });
}

/// A worker whose task calls `block_in_place` hands its core to a new
/// thread, which the blocking pool cannot start while its one thread is
/// held: meanwhile the core's ring is reaped by the worker in the driver,
/// so receives started on it complete for a `block_on` reading them.
#[test]
fn a_ring_handed_off_by_block_in_place_is_reaped_meanwhile() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .io_driver(IoDriver::Uring)
        .build()
        .unwrap();
    let (mut peers, accepted) = std_pairs(2);
    let (release_hog, hog_held) = std::sync::mpsc::channel::<()>();
    let release_hog = Release(release_hog);
    let (release, blocked) = std::sync::mpsc::channel::<()>();
    let release = Release(release);
    rt.block_on(async move {
        let (hog_started, hog_running) = weft::sync::oneshot::channel();
        let hog = weft::task::spawn_blocking(move || {
            hog_started.send(()).unwrap();
            let _ = hog_held.recv();
        });
        hog_running.await.unwrap();
        let mut streams = receives_started_on_a_worker(accepted, move || {
            weft::task::block_in_place(|| {
                let _ = blocked.recv();
            })
        })
        .await;
        each_receive_completes(&mut streams, &mut peers).await;
        drop(release);
        drop(release_hog);
        hog.await.unwrap();
    });
}

/// A send on a worker's ring fails after its write returned (the peer
/// reset the connection); the stream then moves off the workers. Its next
/// write reports that failure first (the reset), as the next write on a
/// worker would, instead of going to the socket on readiness with the
/// error left behind for a later flush.
#[test]
fn a_kept_send_error_comes_first_off_the_workers() {
    let rt = uring::multi_thread(2);
    let (mut peers, accepted) = std_pairs(1);
    let peer = peers.pop().unwrap();
    rt.block_on(async move {
        let mut stream = weft::spawn(async move {
            let mut stream = TcpStream::from_std(accepted.into_iter().next().unwrap()).unwrap();
            // The peer resets the connection: a zero linger, then close.
            socket2::SockRef::from(&peer)
                .set_linger(Some(Duration::ZERO))
                .unwrap();
            drop(peer);
            weft::time::sleep(Duration::from_millis(50)).await;
            // Accepted at once; the send fails at the worker's batch point.
            stream.write_all(b"lost").await.unwrap();
            weft::time::sleep(Duration::from_millis(50)).await;
            stream
        })
        .await
        .unwrap();
        let err = stream.write_all(b"next").await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}");
        stream.flush().await.unwrap();
    });
}
