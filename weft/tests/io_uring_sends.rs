//! The io_uring driver's stream sends: a write returns once its bytes are
//! in a send on the ring, and from there they go out whole and in order,
//! whoever waits (a writer, a task waiting for writability, nobody: the
//! stream dropped, `block_on` returned, the runtime ended), and an error
//! or a dead runtime reaches a later operation.
//!
//! Every runtime here asks for `IoDriver::Uring` explicitly (uring.rs).

#[path = "support/uring.rs"]
mod uring;

use std::time::Duration;
use uring::{pair, pair_small_sndbuf, pattern, read_all_later, runtimes};
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::TcpStream;
use weft::runtime::Builder;

/// A write that `block_on` returned from is on its way: the caller may
/// block on the peer next (a std socket), and nothing of the runtime runs
/// until its next `block_on`. On a current-thread runtime the send once
/// sat in the ring's queue until then.
#[test]
fn a_write_is_sent_when_block_on_returns() {
    use std::io::Read;
    for (name, rt) in runtimes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut stream = rt.block_on(TcpStream::connect(addr)).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        for round in 0..3 {
            rt.block_on(stream.write_all(b"sent")).unwrap();
            let mut got = [0u8; 4];
            peer.read_exact(&mut got)
                .unwrap_or_else(|e| panic!("{name}: round {round}: the write never left: {e}"));
            assert_eq!(&got, b"sent", "{name}");
        }
    }
}

/// A large write that `block_on` returned from goes out whole while the
/// caller blocks outside the runtime: the kernel finishes a short send by
/// itself (`MSG_WAITALL`), with no thread of the runtime to continue it.
#[test]
fn a_large_write_is_sent_whole_after_block_on_returns() {
    use std::io::Read;
    let rt = uring::current_thread();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let data = pattern(1 << 20);
    let len = data.len();
    let (done, finished) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let (mut peer, _) = listener.accept().unwrap();
        let mut got = vec![0u8; len];
        let read = peer.read_exact(&mut got).map(|()| got);
        let _ = done.send(());
        read
    });
    let mut stream = uring::on_a_worker(&rt, async move {
        let socket = weft::net::TcpSocket::new_v4().unwrap();
        socket.set_send_buffer_size(8192).unwrap();
        socket.connect(addr).await.unwrap()
    });
    rt.block_on(stream.write_all(&data)).unwrap();
    // Block outside the runtime until the peer has every byte.
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the rest of the write never left");
    assert!(reader.join().unwrap().unwrap() == data, "the bytes differ");
    drop(stream);
}

/// A writer waiting for its send and another task waiting for
/// writability (a read half's `ready`) are both woken when the send ends:
/// the second one's wait once took the writer's place on the send, took
/// its completion, and left the writer waiting for good.
#[test]
fn a_writability_wait_beside_a_waiting_writer_leaves_the_writer_woken() {
    use weft::io::Interest;
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (client, mut server) = pair_small_sndbuf().await;
            let (read_half, mut write_half) = client.into_split();
            let data = pattern(2 << 20);
            let len = data.len();
            let writer = weft::spawn(async move {
                write_half.write_all(&data).await.unwrap();
                write_half
            });
            // The writer waits on its send now (nobody reads yet).
            weft::time::sleep(Duration::from_millis(20)).await;
            let checker = weft::spawn(async move {
                let ready = read_half.ready(Interest::WRITABLE).await.unwrap();
                (read_half, ready)
            });
            weft::time::sleep(Duration::from_millis(20)).await;
            let mut got = vec![0u8; len];
            weft::time::timeout(Duration::from_secs(10), server.read_exact(&mut got))
                .await
                .unwrap_or_else(|_| panic!("{name}: the writer stalled: it was never woken"))
                .unwrap();
            weft::time::timeout(Duration::from_secs(10), writer)
                .await
                .unwrap_or_else(|_| panic!("{name}: the writer was never woken"))
                .unwrap();
            let (_, ready) = weft::time::timeout(Duration::from_secs(10), checker)
                .await
                .unwrap_or_else(|_| panic!("{name}: the writability wait was never woken"))
                .unwrap();
            assert!(ready.is_writable(), "{name}");
        });
    }
}

/// Writes, a shutdown and `writable()` on a stream whose runtime is gone,
/// with a send still in the kernel (the peer reads nothing): each is the
/// shutdown error, as a read is, instead of waiting for ever on a
/// completion that no thread of the dead runtime will reap.
#[test]
fn writes_after_the_runtime_is_gone_are_the_shutdown_error() {
    for (name, rt) in runtimes() {
        let (client, server) = uring::on_a_worker(&rt, async move {
            let (mut client, server) = pair_small_sndbuf().await;
            // More than the socket buffers take: the last send waits.
            let big = pattern(4 << 20);
            let _ = weft::time::timeout(Duration::from_millis(200), client.write_all(&big)).await;
            (client, server)
        });
        drop(rt);
        let other = Builder::new_current_thread().enable_all().build().unwrap();
        let mut client = client;
        let outcome = other.block_on(async {
            weft::time::timeout(Duration::from_secs(5), async {
                let write = client.write(b"more").await;
                let writable = client.writable().await;
                let shutdown = client.shutdown().await;
                (write, writable, shutdown)
            })
            .await
        });
        let (write, writable, shutdown) =
            outcome.unwrap_or_else(|_| panic!("{name}: a write waited on the dead runtime"));
        for (what, result) in [
            ("write", write.map(drop)),
            ("writable", writable),
            ("shutdown", shutdown),
        ] {
            let err = result.expect_err(what);
            assert!(
                weft::runtime::is_rt_shutdown_err(&err),
                "{name}: {what}: {err}"
            );
        }
        drop(server);
    }
}

/// A write larger than the socket's send buffer goes out whole while its
/// writer waits for something else (the reply the peer sends once it has
/// every byte). The kernel ends such a send short; its rest once waited
/// for the writer's next write, flush or shutdown, and both sides waited
/// for ever.
#[test]
fn a_short_send_is_finished_while_its_writer_waits_for_the_reply() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, mut server) = pair_small_sndbuf().await;
            let request = pattern(600_000);
            let len = request.len();
            let peer = weft::spawn(async move {
                let mut got = vec![0u8; len];
                server.read_exact(&mut got).await.unwrap();
                server.write_all(b"ok").await.unwrap();
                got
            });
            client.write_all(&request).await.unwrap();
            let mut reply = [0u8; 2];
            weft::time::timeout(Duration::from_secs(10), client.read_exact(&mut reply))
                .await
                .unwrap_or_else(|_| panic!("{name}: the rest of the request never left"))
                .unwrap();
            assert_eq!(&reply, b"ok", "{name}");
            assert!(peer.await.unwrap() == request, "{name}: the bytes differ");
        });
    }
}

/// A program that writes and then ends its runtime (the end of `main`)
/// gets its bytes to the peer, as on epoll, where they sat in the kernel's
/// socket buffer: the runtime's teardown lets a dropped stream's last send
/// run (for up to a second) instead of cancelling it.
#[test]
fn a_runtime_dropped_right_after_a_write_still_delivers_every_byte() {
    use std::io::Read;
    for (name, rt) in runtimes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            peer.set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            // Read nothing for a while: the last send waits in the kernel
            // while the runtime goes away.
            std::thread::sleep(Duration::from_millis(100));
            let mut got = Vec::new();
            peer.read_to_end(&mut got).map(|_| got)
        });
        let data = pattern(1 << 20);
        let sent = data.clone();
        rt.block_on(async move {
            let socket = weft::net::TcpSocket::new_v4().unwrap();
            socket.set_send_buffer_size(8192).unwrap();
            let mut stream = socket.connect(addr).await.unwrap();
            stream.write_all(&sent).await.unwrap();
        });
        drop(rt);
        let got = reader
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            got.len(),
            data.len(),
            "{name}: bytes lost at the runtime's end"
        );
        assert!(got == data, "{name}: the bytes differ");
    }
}

/// Drop a stream right after `write_all` of more than the socket buffers
/// hold: the last send is still in flight (or went out short), and the
/// ring finishes it on the stream's behalf; the peer, reading late, gets
/// every byte, then end-of-stream.
#[test]
fn a_dropped_streams_last_send_still_delivers_every_byte() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, server) = pair_small_sndbuf().await;
            let payload = pattern(1 << 20);
            let reader = read_all_later(server, Duration::from_millis(50));
            client.write_all(&payload).await.unwrap();
            drop(client);
            let got = reader.await.unwrap();
            assert_eq!(got.len(), payload.len(), "{name}");
            assert!(got == payload, "{name}: bytes differ");
        });
    }
}

/// An owned write half dropped right after its last write shuts the write
/// direction down only after the ring sent everything; the stream's read
/// half keeps working meanwhile.
#[test]
fn a_dropped_write_half_shuts_down_after_its_sends() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (client, mut server) = pair_small_sndbuf().await;
            let (mut rd, mut wr) = client.into_split();
            let payload = pattern(1 << 20);
            let reader = weft::spawn(async move {
                weft::time::sleep(Duration::from_millis(30)).await;
                let mut got = Vec::new();
                server.read_to_end(&mut got).await.unwrap();
                server.write_all(b"done").await.unwrap();
                got
            });
            wr.write_all(&payload).await.unwrap();
            drop(wr);
            let got = reader.await.unwrap();
            assert!(
                got == payload,
                "{name}: {} of {} bytes",
                got.len(),
                payload.len()
            );
            let mut done = [0u8; 4];
            rd.read_exact(&mut done).await.unwrap();
            assert_eq!(&done, b"done", "{name}");
        });
    }
}

/// A readiness-based write while a ring send is in flight would overtake
/// it: `try_write` says `WouldBlock` until `writable()` saw the send end,
/// and the bytes arrive in write order.
#[test]
fn try_write_does_not_overtake_a_send_in_flight() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, server) = pair_small_sndbuf().await;
            let payload = pattern(1 << 20);
            let reader = read_all_later(server, Duration::from_millis(30));
            client.write_all(&payload).await.unwrap();
            let mut tail: &[u8] = b"-tail";
            // First try at once, with the last send surely still going
            // (the reader sleeps, the send buffer is small), then wait.
            while !tail.is_empty() {
                match client.try_write(tail) {
                    Ok(n) => tail = &tail[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        client.writable().await.unwrap()
                    }
                    Err(e) => panic!("{name}: {e}"),
                }
            }
            client.shutdown().await.unwrap();
            let got = reader.await.unwrap();
            assert_eq!(got.len(), payload.len() + 5, "{name}");
            assert!(
                got[..payload.len()] == payload[..],
                "{name}: payload differs"
            );
            assert_eq!(&got[payload.len()..], b"-tail", "{name}");
        });
    }
}

/// A peer that resets the connection: a write's error is not lost. It may
/// come from a later write, flush or shutdown (sends complete after their
/// write returned), but it comes.
#[test]
fn a_send_error_reaches_a_later_operation() {
    for (name, rt) in runtimes() {
        uring::on_a_worker(&rt, async move {
            let (mut client, server) = pair().await;
            server.set_zero_linger().unwrap();
            drop(server);
            weft::time::sleep(Duration::from_millis(10)).await;
            let chunk = [7u8; 1024];
            let mut failed = None;
            for _ in 0..1000 {
                let r = match client.write_all(&chunk).await {
                    Ok(()) => client.flush().await,
                    Err(e) => Err(e),
                };
                if let Err(e) = r {
                    failed = Some(e);
                    break;
                }
                weft::task::yield_now().await;
            }
            let err = match failed {
                Some(e) => e,
                None => client
                    .shutdown()
                    .await
                    .expect_err("the reset was never reported"),
            };
            assert!(
                matches!(
                    err.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ),
                "{name}: {err}"
            );
        });
    }
}
