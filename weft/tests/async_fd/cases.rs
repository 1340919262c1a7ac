// The cases of io_async_fd.rs and io_async_fd_on_rings.rs (included by
// both; `crate::registered::AsyncFd` is how each registers a descriptor).

rt_test! {
    use std::io::{ErrorKind, Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::Duration;
    use crate::registered::AsyncFd;
    use weft::io::Interest;
    use weft::time::timeout;

    const LONG: Duration = Duration::from_secs(10);
    const SHORT: Duration = Duration::from_millis(50);

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        (a, b)
    }

    /// Write into `socket` until its buffer is full (a write would block).
    fn fill(socket: &UnixStream) {
        let filler = vec![7u8; 64 * 1024];
        while (&*socket).write(&filler).is_ok() {}
    }

    /// Read everything `fd` holds, until a read would block (which clears
    /// the readiness through the guard) or the end.
    async fn drain(fd: &weft::io::unix::AsyncFd<UnixStream>) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            let mut guard = timeout(LONG, fd.readable()).await.expect("never readable").unwrap();
            match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
                Ok(Ok(0)) => return got,
                Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                Ok(Err(e)) => panic!("read failed: {e}"),
                Err(_would_block) => {
                    if !got.is_empty() {
                        return got;
                    }
                }
            }
        }
    }

    #[test]
    fn readable_waits_for_data_and_again_after_a_read_would_block() {
        rt().block_on(async {
            let (a, mut b) = pair();
            let fd = AsyncFd::new(a).unwrap();
            assert!(
                timeout(SHORT, fd.readable()).await.is_err(),
                "readable with nothing to read"
            );
            b.write_all(b"one").unwrap();
            assert_eq!(drain(&fd).await, b"one");
            // The read that would block cleared it: the next wait waits.
            assert!(timeout(SHORT, fd.readable()).await.is_err(), "stale readiness");
            b.write_all(b"two").unwrap();
            assert_eq!(drain(&fd).await, b"two");
        });
    }

    #[test]
    fn data_written_later_by_another_thread_wakes_the_waiter() {
        rt().block_on(async {
            let (a, b) = pair();
            let fd = AsyncFd::new(a).unwrap();
            let writer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                (&b).write_all(b"late").unwrap();
                b
            });
            assert_eq!(drain(&fd).await, b"late");
            drop(writer.join().unwrap());
        });
    }

    /// A full socket: one task waits to write, another to read, on the same
    /// `AsyncFd`; each is woken by its own direction only.
    #[test]
    fn a_reader_and_a_writer_wait_at_once_and_wake_separately() {
        rt().block_on(async {
            let (a, mut b) = pair();
            fill(&a);
            let fd = Arc::new(AsyncFd::new(a).unwrap());
            let writer = weft::spawn({
                let fd = fd.clone();
                async move {
                    let mut guard = fd.writable().await.unwrap();
                    assert!(guard.ready().is_writable());
                    guard.clear_ready();
                }
            });
            let reader = weft::spawn({
                let fd = fd.clone();
                async move { drain(&fd).await }
            });
            weft::time::sleep(SHORT).await;
            assert!(!writer.is_finished() && !reader.is_finished(), "woken with nothing ready");
            b.write_all(b"hello").unwrap();
            assert_eq!(timeout(LONG, reader).await.unwrap().unwrap(), b"hello");
            weft::time::sleep(SHORT).await;
            assert!(!writer.is_finished(), "the write side woke for a read");
            // Make room: the peer reads what filled the buffer.
            let mut sink = vec![0u8; 64 * 1024];
            let mut freed = 0;
            while freed < 256 * 1024 {
                match b.read(&mut sink) {
                    Ok(n) => freed += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            timeout(LONG, writer).await.expect("never writable").unwrap();
        });
    }

    #[test]
    fn every_task_waiting_on_one_descriptor_is_woken() {
        rt().block_on(async {
            let (a, mut b) = pair();
            let fd = Arc::new(AsyncFd::with_interest(a, Interest::READABLE).unwrap());
            let waiters: Vec<_> = (0..8)
                .map(|_| {
                    let fd = fd.clone();
                    weft::spawn(async move {
                        let guard = fd.ready(Interest::READABLE).await.unwrap();
                        guard.ready()
                    })
                })
                .collect();
            weft::time::sleep(SHORT).await;
            assert!(waiters.iter().all(|w| !w.is_finished()));
            b.write_all(b"x").unwrap();
            for waiter in waiters {
                let ready = timeout(LONG, waiter).await.expect("a waiter never woke").unwrap();
                assert!(ready.is_readable());
            }
        });
    }

    #[test]
    fn a_peer_that_hangs_up_wakes_the_reader_read_closed() {
        rt().block_on(async {
            let (a, b) = pair();
            let fd = Arc::new(AsyncFd::new(a).unwrap());
            let waiting = weft::spawn({
                let fd = fd.clone();
                async move { fd.readable().await.map(|guard| guard.ready()) }
            });
            weft::time::sleep(SHORT).await;
            assert!(!waiting.is_finished(), "woken before the hang-up");
            drop(b);
            let ready = timeout(LONG, waiting)
                .await
                .expect("never woken by the hang-up")
                .unwrap()
                .unwrap();
            assert!(ready.is_read_closed(), "{ready:?}");
        });
    }

    /// The peer shut its sending side down, and ours is full: a writer
    /// waits, and is woken when the peer reads (on io_uring every write
    /// request there completes at once with only `POLLRDHUP`, so the
    /// driver must not take that for an answer).
    #[test]
    fn a_writer_on_a_half_closed_socket_waits_for_room_and_gets_it() {
        rt().block_on(async {
            let (a, mut b) = pair();
            fill(&a);
            b.shutdown(std::net::Shutdown::Write).unwrap();
            let fd = Arc::new(AsyncFd::new(a).unwrap());
            let writer = weft::spawn({
                let fd = fd.clone();
                async move {
                    loop {
                        let mut guard = fd.writable().await.unwrap();
                        match guard.try_io(|inner| inner.get_ref().write(b"more")) {
                            Ok(result) => return result.unwrap(),
                            Err(_would_block) => continue,
                        }
                    }
                }
            });
            weft::time::sleep(SHORT).await;
            assert!(!writer.is_finished(), "wrote into a full socket");
            let mut sink = vec![0u8; 64 * 1024];
            while let Ok(n) = b.read(&mut sink) {
                if n == 0 {
                    break;
                }
            }
            let n = timeout(LONG, writer).await.expect("the writer never woke").unwrap();
            assert_eq!(n, 4);
            // The read side saw the hang-up.
            let guard = timeout(LONG, fd.readable()).await.unwrap().unwrap();
            assert!(guard.ready().is_read_closed(), "{:?}", guard.ready());
        });
    }

    #[test]
    fn out_of_band_data_is_priority() {
        rt().block_on(async {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            server.set_nonblocking(true).unwrap();
            let fd = AsyncFd::with_interest(server, Interest::READABLE | Interest::PRIORITY)
                .unwrap();
            assert!(timeout(SHORT, fd.ready(Interest::PRIORITY)).await.is_err());
            // SAFETY: a valid socket and a one-byte buffer.
            let sent = unsafe {
                libc::send(client.as_raw_fd(), b"!".as_ptr().cast(), 1, libc::MSG_OOB)
            };
            assert_eq!(sent, 1);
            let guard = timeout(LONG, fd.ready(Interest::PRIORITY))
                .await
                .expect("urgent data never reported")
                .unwrap();
            assert!(guard.ready().is_priority(), "{:?}", guard.ready());
        });
    }

    /// A connected UDP socket whose datagram was refused (ICMP port
    /// unreachable on loopback) has an error pending.
    #[test]
    fn a_pending_socket_error_is_error_readiness() {
        rt().block_on(async {
            // A port freed on an address no concurrent test binds, so
            // nobody takes it before the datagram arrives.
            let closed = std::net::UdpSocket::bind("127.77.0.4:0").unwrap();
            let port = closed.local_addr().unwrap();
            drop(closed);
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            socket.connect(port).unwrap();
            socket.set_nonblocking(true).unwrap();
            let fd = AsyncFd::with_interest(socket, Interest::ERROR).unwrap();
            fd.get_ref().send(b"anyone?").unwrap();
            let guard = timeout(LONG, fd.ready(Interest::ERROR))
                .await
                .expect("the error was never reported")
                .unwrap();
            assert!(guard.ready().is_error(), "{:?}", guard.ready());
            let err = fd.get_ref().take_error().unwrap().expect("an error was pending");
            assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
        });
    }

    #[test]
    fn an_eventfd_written_from_another_thread_wakes_its_reader() {
        rt().block_on(async {
            // SAFETY: eventfd takes no pointers; a result >= 0 is ours.
            let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            assert!(raw >= 0);
            // SAFETY: as above.
            let owned = unsafe { OwnedFd::from_raw_fd(raw) };
            let fd = AsyncFd::with_interest(owned, Interest::READABLE).unwrap();
            for round in 1..=3u64 {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(5));
                    // SAFETY: 8 bytes from a u64 to a live eventfd.
                    unsafe { libc::write(raw, (&round as *const u64).cast(), 8) };
                });
                let mut guard = timeout(LONG, fd.readable()).await.expect("never woken").unwrap();
                let mut value = 0u64;
                // SAFETY: 8 bytes into a u64.
                let n = unsafe { libc::read(raw, (&mut value as *mut u64).cast(), 8) };
                assert_eq!((n, value), (8, round));
                guard.clear_ready();
            }
        });
    }

    /// An `AsyncFd` dropped while a task waits on it: the wait ends with
    /// the task, and once the socket is closed the peer sees it closed
    /// (nothing the runtime holds keeps the socket open).
    #[test]
    fn closing_a_socket_after_its_waiting_asyncfd_is_gone_reaches_the_peer() {
        rt().block_on(async {
            let (a, mut b) = pair();
            let fd = Arc::new(AsyncFd::new(a).unwrap());
            let waiting = weft::spawn({
                let fd = fd.clone();
                async move {
                    let _ = fd.readable().await;
                }
            });
            weft::time::sleep(SHORT).await;
            waiting.abort();
            let _ = waiting.await;
            let socket = Arc::into_inner(fd).unwrap().into_inner();
            drop(socket);
            b.set_nonblocking(false).unwrap();
            b.set_read_timeout(Some(LONG)).unwrap();
            let closed = weft::task::spawn_blocking(move || {
                let mut buf = [0u8; 1];
                b.read(&mut buf)
            });
            let n = timeout(LONG, closed).await.unwrap().unwrap();
            assert_eq!(n.expect("the peer never saw the close"), 0);
        });
    }

    #[test]
    fn a_regular_file_is_refused_as_epoll_refuses_it() {
        rt().block_on(async {
            let file = std::fs::File::open("/proc/self/exe").unwrap();
            let err = AsyncFd::new(file).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        });
    }

    #[test]
    fn a_wait_outlived_by_its_runtime_ends_with_the_shutdown_error() {
        let rt = rt();
        let (a, _b) = pair();
        let fd = rt.block_on(async { AsyncFd::new(a).unwrap() });
        drop(rt);
        let other = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let err = other.block_on(async { fd.readable().await.map(|_| ()) }).unwrap_err();
        assert!(weft::runtime::is_rt_shutdown_err(&err), "{err}");
    }

    /// A connected UDP socket whose send was refused (an ICMP "port
    /// unreachable" leaves an error pending, and nothing to read): a
    /// reader waiting meanwhile must still learn of a datagram that comes
    /// later. (On io_uring a read poll completed with `POLLERR` alone,
    /// which wakes no read wait, until such completions moved reads to
    /// epoll, uring/poll.rs "error alone"; datagram sockets wait on epoll
    /// there now.)
    #[test]
    fn a_reader_sees_data_arriving_after_an_error_alone() {
        rt().block_on(async {
            use std::net::UdpSocket;
            let freed = UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = freed.local_addr().unwrap();
            drop(freed);
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            socket.set_nonblocking(true).unwrap();
            socket.connect(port).unwrap();
            let fd = Arc::new(AsyncFd::new(socket).unwrap());
            let readable = weft::spawn({
                let fd = fd.clone();
                async move {
                    let mut guard = fd.readable().await.unwrap();
                    let mut buf = [0u8; 16];
                    loop {
                        // Peeks, so that both waiters see the datagram.
                        match guard.try_io(|s| s.get_ref().peek(&mut buf)) {
                            Ok(Ok(n)) => return buf[..n].to_vec(),
                            // The refusal, taken by whichever looks first.
                            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                            Ok(Err(e)) => panic!("peek: {e}"),
                            Err(_would_block) => {}
                        }
                        guard = fd.readable().await.unwrap();
                    }
                }
            });
            let polled = weft::spawn({
                let fd = fd.clone();
                async move {
                    let mut buf = [0u8; 16];
                    loop {
                        let mut guard = std::future::poll_fn(|cx| fd.poll_read_ready(cx))
                            .await
                            .unwrap();
                        match guard.try_io(|s| s.get_ref().peek(&mut buf)) {
                            Ok(Ok(n)) => return buf[..n].to_vec(),
                            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                            Ok(Err(e)) => panic!("peek: {e}"),
                            Err(_would_block) => {}
                        }
                    }
                }
            });
            weft::time::sleep(SHORT).await;
            fd.get_ref().send(b"refused").unwrap();
            weft::time::sleep(SHORT).await;
            // The port is served now: a datagram from it arrives.
            let peer = UdpSocket::bind(port).unwrap();
            peer.send_to(b"late", fd.get_ref().local_addr().unwrap()).unwrap();
            let got = timeout(LONG, readable).await.expect("readable() never woke").unwrap();
            assert_eq!(got, b"late");
            let got = timeout(LONG, polled).await.expect("poll_read_ready never woke").unwrap();
            assert_eq!(got, b"late");
        });
    }
}
