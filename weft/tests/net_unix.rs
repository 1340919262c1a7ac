//! Unix-domain sockets on every runtime flavour: listener echo on a
//! temporary path, pairs, split halves, datagrams, credentials, std
//! round trips.

#[macro_use]
mod support;

rt_test! {
    use crate::support::TempPath;
    use std::io;
    use std::time::Duration;
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    use weft::net::{UnixDatagram, UnixListener, UnixStream};
    use weft::time::timeout;

    const LIMIT: Duration = Duration::from_secs(30);

    #[test]
    fn listener_echo_on_a_temp_path() {
        let path = TempPath::new("echo");
        rt().block_on(async {
            let listener = UnixListener::bind(&path.0).unwrap();
            assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(path.0.as_path()));
            weft::spawn(async move {
                while let Ok((mut socket, _)) = listener.accept().await {
                    weft::spawn(async move {
                        let (mut rd, mut wr) = socket.split();
                        let _ = weft::io::copy(&mut rd, &mut wr).await;
                    });
                }
            });
            let clients: Vec<_> = (0..20u32)
                .map(|id| {
                    let path = path.0.clone();
                    weft::spawn(async move {
                        let mut s = UnixStream::connect(&path).await.unwrap();
                        assert_eq!(s.peer_addr().unwrap().as_pathname(), Some(path.as_path()));
                        for round in 0..5u32 {
                            let msg = format!("{id}:{round};").repeat(50);
                            s.write_all(msg.as_bytes()).await.unwrap();
                            let mut back = vec![0; msg.len()];
                            s.read_exact(&mut back).await.unwrap();
                            assert_eq!(back, msg.as_bytes());
                        }
                    })
                })
                .collect();
            timeout(LIMIT, async {
                for c in clients {
                    c.await.unwrap();
                }
            })
            .await
            .expect("unix echo hung");
        });
        assert!(path.0.exists(), "the socket file stays until removed");
    }

    /// Several tasks accepting on one shared listener at once each get a
    /// connection (net_tcp.rs has the TCP twin).
    #[test]
    fn many_tasks_accepting_on_one_listener_each_get_a_connection() {
        let path = TempPath::new("acceptors");
        rt().block_on(async {
            let listener = std::sync::Arc::new(UnixListener::bind(&path.0).unwrap());
            let acceptors: Vec<_> = (0..6)
                .map(|_| {
                    let listener = listener.clone();
                    weft::spawn(async move { listener.accept().await.map(drop) })
                })
                .collect();
            weft::time::sleep(Duration::from_millis(20)).await;
            let mut clients = Vec::new();
            for _ in 0..6 {
                clients.push(UnixStream::connect(&path.0).await.unwrap());
            }
            for acceptor in acceptors {
                timeout(Duration::from_secs(5), acceptor)
                    .await
                    .expect("an acceptor was never woken")
                    .unwrap()
                    .unwrap();
            }
        });
    }

    #[test]
    fn connect_to_a_missing_path_fails() {
        let path = TempPath::new("missing");
        rt().block_on(async {
            let err = UnixStream::connect(&path.0).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::NotFound);
        });
    }

    #[test]
    fn pair_shutdown_gives_eof_and_reply_still_flows() {
        rt().block_on(async {
            let (mut a, mut b) = UnixStream::pair().unwrap();
            a.write_all(b"request").await.unwrap();
            a.shutdown().await.unwrap();
            let mut got = Vec::new();
            timeout(LIMIT, b.read_to_end(&mut got)).await.unwrap().unwrap();
            assert_eq!(got, b"request");
            b.write_all(b"reply").await.unwrap();
            drop(b);
            let mut reply = Vec::new();
            timeout(LIMIT, a.read_to_end(&mut reply)).await.unwrap().unwrap();
            assert_eq!(reply, b"reply");
        });
    }

    #[test]
    fn try_read_and_readiness() {
        rt().block_on(async {
            let (a, b) = UnixStream::pair().unwrap();
            let mut buf = [0u8; 64];
            assert_eq!(b.try_read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
            a.writable().await.unwrap();
            let mut sent = 0;
            for _ in 0..100 {
                sent += a.try_write(b"0123456789").unwrap();
                weft::task::yield_now().await;
            }
            let mut received = 0;
            timeout(LIMIT, async {
                while received < sent {
                    b.readable().await.unwrap();
                    match b.try_read(&mut buf) {
                        Ok(n) => received += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            })
            .await
            .expect("a readiness edge was missed");
            assert_eq!(received, 1000);
            let ready = a.ready(weft::io::Interest::WRITABLE).await.unwrap();
            assert!(ready.is_writable());
        });
    }

    #[test]
    fn into_split_reunite_and_write_half_drop() {
        rt().block_on(async {
            let (a, mut b) = UnixStream::pair().unwrap();
            let (rd, mut wr) = a.into_split();
            let writer = weft::spawn(async move {
                wr.write_all(b"from a task").await.unwrap();
                wr
            });
            let wr = writer.await.unwrap();
            let mut buf = [0u8; 11];
            timeout(LIMIT, b.read_exact(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf, b"from a task");

            let (c, _d) = UnixStream::pair().unwrap();
            let (c_rd, c_wr) = c.into_split();
            let err = rd.reunite(c_wr).unwrap_err();
            let weft::net::unix::ReuniteError(rd, c_wr) = err;
            drop(weft::net::unix::ReuniteError(c_rd, c_wr));
            let a = rd.reunite(wr).unwrap();

            // Split again; dropping the owned write half sends EOF while
            // the read half keeps working.
            let (mut rd, wr) = a.into_split();
            drop(wr);
            let mut rest = Vec::new();
            timeout(LIMIT, b.read_to_end(&mut rest)).await.unwrap().unwrap();
            assert!(rest.is_empty());
            b.write_all(b"still readable").await.unwrap();
            drop(b);
            let mut got = Vec::new();
            timeout(LIMIT, rd.read_to_end(&mut got)).await.unwrap().unwrap();
            assert_eq!(got, b"still readable");
        });
    }

    #[test]
    fn peer_cred_is_our_own_process() {
        rt().block_on(async {
            let (a, _b) = UnixStream::pair().unwrap();
            let cred = a.peer_cred().unwrap();
            // SAFETY: getuid/getgid cannot fail and touch no memory.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            assert_eq!((cred.uid(), cred.gid()), (uid, gid));
            if cfg!(target_os = "linux") {
                assert_eq!(cred.pid(), Some(std::process::id() as libc::pid_t));
            }
        });
    }

    #[test]
    fn datagram_pair_and_bound_round_trips() {
        let (pa, pb) = (TempPath::new("dga"), TempPath::new("dgb"));
        rt().block_on(async {
            let (x, y) = UnixDatagram::pair().unwrap();
            let mut buf = [0u8; 32];
            assert_eq!(y.try_recv(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
            // All queued before the first read: one readiness edge for all.
            for i in 0..50u8 {
                x.send(&[i; 5]).await.unwrap();
            }
            for i in 0..50u8 {
                let n = timeout(LIMIT, y.recv(&mut buf)).await.expect("datagram missed").unwrap();
                assert_eq!(&buf[..n], &[i; 5]);
            }

            let a = UnixDatagram::bind(&pa.0).unwrap();
            let b = UnixDatagram::bind(&pb.0).unwrap();
            a.send_to(b"hi b", &pb.0).await.unwrap();
            let (n, from) = timeout(LIMIT, b.recv_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"hi b");
            assert_eq!(from.as_pathname(), Some(pa.0.as_path()));
            b.connect(&pa.0).unwrap();
            assert_eq!(b.peer_addr().unwrap().as_pathname(), Some(pa.0.as_path()));
            b.writable().await.unwrap();
            b.try_send(b"hi a").unwrap();
            a.readable().await.unwrap();
            let (n, _) = a.try_recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"hi a");

            // An unbound socket can send; the receiver sees no path.
            let u = UnixDatagram::unbound().unwrap();
            // No readiness is known before the driver reports it.
            u.writable().await.unwrap();
            u.try_send_to(b"anon", &pa.0).unwrap();
            let (n, from) = timeout(LIMIT, a.recv_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"anon");
            assert!(from.is_unnamed());
        });
    }

    #[test]
    fn from_std_into_std_round_trips() {
        let path = TempPath::new("std");
        let rt = rt();
        let metrics = rt.metrics();
        let reg = metrics.io_driver_fd_registered_count();
        let dereg = metrics.io_driver_fd_deregistered_count();
        rt.block_on(async {
            let std_listener = std::os::unix::net::UnixListener::bind(&path.0).unwrap();
            let listener = UnixListener::from_std(std_listener).unwrap();
            let std_client = std::os::unix::net::UnixStream::connect(&path.0).unwrap();
            let mut client = UnixStream::from_std(std_client).unwrap();
            let (mut server, _) = timeout(LIMIT, listener.accept()).await.unwrap().unwrap();
            client.write_all(b"abc").await.unwrap();
            let mut buf = [0u8; 3];
            server.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"abc");
            let std_server = server.into_std().unwrap();
            let std_client = client.into_std().unwrap();
            let std_listener = listener.into_std().unwrap();
            assert_eq!(
                std_listener.local_addr().unwrap().as_pathname(),
                Some(path.0.as_path())
            );
            // Still connected in std hands.
            std_server.set_nonblocking(false).unwrap();
            std::io::Write::write_all(&mut &std_client, b"z").unwrap();
            let mut one = [0u8; 1];
            std::io::Read::read_exact(&mut &std_server, &mut one).unwrap();
            assert_eq!(&one, b"z");

            let (d1, d2) = std::os::unix::net::UnixDatagram::pair().unwrap();
            let (d1, d2) = (UnixDatagram::from_std(d1).unwrap(), UnixDatagram::from_std(d2).unwrap());
            d1.send(b"d").await.unwrap();
            let d2 = d2.into_std().unwrap();
            d2.set_nonblocking(false).unwrap();
            assert_eq!(d2.recv(&mut one).unwrap(), 1);
            drop(d1);
        });
        assert_eq!(metrics.io_driver_fd_registered_count() - reg, 5);
        assert_eq!(metrics.io_driver_fd_deregistered_count() - dereg, 5);
    }

    /// Both ends of a fresh pair can send at once, before the poller's
    /// first event (as on Tokio 1.54): `try_send`/`try_write` succeed and
    /// a write-readiness poll is ready straight away.
    #[test]
    fn fresh_pairs_start_writable() {
        use std::task::{Context, Poll};
        rt().block_on(async {
            let mut cx = Context::from_waker(futures::task::noop_waker_ref());
            let (a, b) = UnixDatagram::pair().unwrap();
            assert!(matches!(a.poll_send_ready(&mut cx), Poll::Ready(Ok(()))));
            assert_eq!(a.try_send(b"hi").unwrap(), 2);
            assert_eq!(b.try_send(b"yo").unwrap(), 2);
            let (c, d) = UnixStream::pair().unwrap();
            assert!(matches!(c.poll_write_ready(&mut cx), Poll::Ready(Ok(()))));
            assert_eq!(c.try_write(b"hi").unwrap(), 2);
            assert_eq!(d.try_write(b"yo").unwrap(), 2);
        });
    }
}
