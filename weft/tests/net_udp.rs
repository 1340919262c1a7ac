//! UDP on every runtime flavour: round trips, connected sockets, the
//! `try_` and `poll_` forms, datagram readiness, sharing, options.

#[macro_use]
mod support;

rt_test! {
    use std::future::poll_fn;
    use std::io;
    use std::net::{Ipv4Addr, SocketAddr};
    use std::sync::Arc;
    use std::time::Duration;
    use weft::net::UdpSocket;
    use weft::time::timeout;

    const LIMIT: Duration = Duration::from_secs(30);

    async fn bound() -> UdpSocket {
        UdpSocket::bind("127.0.0.1:0").await.unwrap()
    }

    /// A datagram longer than the receiver's buffer is cut to it and the
    /// rest dropped (as recv(2) does); the next one is whole.
    #[test]
    fn a_long_datagram_is_truncated_and_the_next_is_whole() {
        rt().block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b_addr = b.local_addr().unwrap();
            let long: Vec<u8> = (0..100u8).collect();
            a.send_to(&long, b_addr).await.unwrap();
            a.send_to(b"next", b_addr).await.unwrap();
            let mut small = [0u8; 10];
            assert_eq!(b.recv(&mut small).await.unwrap(), 10);
            assert_eq!(&small[..], &long[..10]);
            let mut buf = [0u8; 16];
            let n = b.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"next");
        });
    }

    /// On a connected socket, an ICMP "port unreachable" ends the `async`
    /// receives and peeks with `ConnectionRefused`, whether they were
    /// already waiting when it came or start after: as on Tokio, whose
    /// `UdpSocket` waits for readability or an error. (Before, weft's
    /// waited for readability only, and such a wait never ended.)
    #[test]
    fn an_icmp_error_ends_a_waiting_receive() {
        rt().block_on(async {
            // A port nobody listens on, on an address only this test
            // binds (each flavour binds and drops it at once).
            let gone = UdpSocket::bind("127.77.0.6:0").await.unwrap();
            let gone_addr = gone.local_addr().unwrap();
            drop(gone);
            let a = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            a.connect(gone_addr).await.unwrap();
            let refused = |r: Result<io::Result<usize>, weft::time::error::Elapsed>, what: &str| {
                let e = r
                    .unwrap_or_else(|_| panic!("{what}: the error never came"))
                    .unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{what}");
            };

            // Already waiting.
            let waiting = {
                let a = a.clone();
                weft::spawn(async move {
                    let mut buf = [0u8; 16];
                    timeout(Duration::from_secs(5), a.recv(&mut buf)).await
                })
            };
            weft::time::sleep(Duration::from_millis(20)).await;
            a.send(b"anyone?").await.unwrap();
            refused(waiting.await.unwrap(), "a waiting recv");

            // Queued before the wait starts, for each async receive.
            let mut buf = [0u8; 16];
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            refused(timeout(Duration::from_secs(5), a.peek(&mut buf)).await, "peek");
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            let r = timeout(Duration::from_secs(5), a.recv_from(&mut buf)).await;
            refused(r.map(|r| r.map(|(n, _)| n)), "recv_from");
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            let r = timeout(Duration::from_secs(5), a.peek_from(&mut buf)).await;
            refused(r.map(|r| r.map(|(n, _)| n)), "peek_from");
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            let r = timeout(Duration::from_secs(5), a.peek_sender()).await;
            refused(r.map(|r| r.map(|_| 0)), "peek_sender");
            let mut vec = Vec::with_capacity(16);
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            refused(timeout(Duration::from_secs(5), a.recv_buf(&mut vec)).await, "recv_buf");
            a.send(b"anyone?").await.unwrap();
            weft::time::sleep(Duration::from_millis(20)).await;
            let r = timeout(Duration::from_secs(5), a.recv_buf_from(&mut vec)).await;
            refused(r.map(|r| r.map(|(n, _)| n)), "recv_buf_from");
            // The error was taken: nothing is left to report.
            assert!(a.take_error().unwrap().is_none());
            // And the socket still receives: a peer on the same address.
            let peer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            a.connect(peer.local_addr().unwrap()).await.unwrap();
            peer.send_to(b"back", a.local_addr().unwrap()).await.unwrap();
            let n = timeout(Duration::from_secs(5), a.recv(&mut buf))
                .await
                .expect("a datagram after the errors")
                .unwrap();
            assert_eq!(&buf[..n], b"back");
        });
    }

    #[test]
    fn send_to_recv_from_round_trip() {
        rt().block_on(async {
            let (a, b) = (bound().await, bound().await);
            let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
            assert_eq!(a.send_to(b"ping", b_addr).await.unwrap(), 4);
            let mut buf = [0u8; 32];
            let (n, from) = timeout(LIMIT, b.recv_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!((&buf[..n], from), (&b"ping"[..], a_addr));
            // Reply through a string address (resolved like `bind`'s).
            b.send_to(b"pong!", a_addr.to_string()).await.unwrap();
            let (n, from) = timeout(LIMIT, a.recv_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!((&buf[..n], from), (&b"pong!"[..], b_addr));
        });
    }

    #[test]
    fn connect_then_send_and_recv() {
        rt().block_on(async {
            let (a, b, stranger) = (bound().await, bound().await, bound().await);
            let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
            assert_eq!(a.peer_addr().unwrap_err().kind(), io::ErrorKind::NotConnected);
            a.connect(b_addr).await.unwrap();
            b.connect(a_addr).await.unwrap();
            assert_eq!(a.peer_addr().unwrap(), b_addr);
            // A connected socket only receives from its peer.
            stranger.send_to(b"noise", a_addr).await.unwrap();
            b.send(b"hello").await.unwrap();
            let mut buf = [0u8; 16];
            let n = timeout(LIMIT, a.recv(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"hello");
            a.send(b"back").await.unwrap();
            let n = timeout(LIMIT, b.recv(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"back");
        });
    }

    #[test]
    fn try_recv_would_block_until_a_datagram_arrives() {
        rt().block_on(async {
            let (a, b) = (bound().await, bound().await);
            let mut buf = [0u8; 16];
            assert_eq!(b.try_recv_from(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
            b.connect(a.local_addr().unwrap()).await.unwrap();
            assert_eq!(b.try_recv(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
            a.writable().await.unwrap();
            assert_eq!(a.try_send_to(b"now", b.local_addr().unwrap()).unwrap(), 3);
            let n = timeout(LIMIT, async {
                loop {
                    b.readable().await.unwrap();
                    match b.try_recv(&mut buf) {
                        Ok(n) => return n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
            })
            .await
            .unwrap();
            assert_eq!(&buf[..n], b"now");
            // Drained again.
            assert_eq!(b.try_recv(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        });
    }

    /// Every datagram is queued before the first read, so there is one
    /// readiness edge for all of them: a receive that cleared readiness after
    /// a "short" read (the stream shortcut) would hang on the second one.
    #[test]
    fn queued_datagrams_are_all_received() {
        rt().block_on(async {
            let (a, b) = (bound().await, bound().await);
            let b_addr = b.local_addr().unwrap();
            for i in 0..100u8 {
                a.send_to(&[i; 10], b_addr).await.unwrap();
            }
            let mut buf = [0u8; 1500];
            for i in 0..100u8 {
                let (n, _) = timeout(LIMIT, b.recv_from(&mut buf))
                    .await
                    .expect("a queued datagram was missed")
                    .unwrap();
                assert_eq!(&buf[..n], &[i; 10]);
            }
        });
    }

    #[test]
    fn poll_forms_and_peek() {
        rt().block_on(async {
            let (a, b) = (bound().await, bound().await);
            let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
            let n = poll_fn(|cx| a.poll_send_to(cx, b"abc", b_addr)).await.unwrap();
            assert_eq!(n, 3);
            let mut buf = [0u8; 8];
            let (n, from) = timeout(LIMIT, b.peek_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!((&buf[..n], from), (&b"abc"[..], a_addr));
            // Peeking left it queued; a short buffer truncates the datagram.
            // Tokio's shape: the datagram lands in a ReadBuf's unfilled,
            // uninitialised part.
            let mut short = [std::mem::MaybeUninit::<u8>::uninit(); 2];
            let mut short = weft::io::ReadBuf::uninit(&mut short);
            let from = poll_fn(|cx| b.poll_recv_from(cx, &mut short)).await.unwrap();
            assert_eq!((short.filled(), from), (&b"ab"[..], a_addr));

            a.connect(b_addr).await.unwrap();
            b.connect(a_addr).await.unwrap();
            poll_fn(|cx| b.poll_send_ready(cx)).await.unwrap();
            assert_eq!(poll_fn(|cx| b.poll_send(cx, b"xyz")).await.unwrap(), 3);
            poll_fn(|cx| a.poll_recv_ready(cx)).await.unwrap();
            b.send(b"xyz").await.unwrap();
            let mut peeked = weft::io::ReadBuf::new(&mut buf);
            poll_fn(|cx| a.poll_peek(cx, &mut peeked)).await.unwrap();
            assert_eq!(peeked.filled(), b"xyz", "poll_peek leaves it queued");
            let mut buf = [0u8; 8];
            let mut got = weft::io::ReadBuf::new(&mut buf);
            timeout(LIMIT, poll_fn(|cx| a.poll_recv(cx, &mut got))).await.unwrap().unwrap();
            assert_eq!(got.filled(), b"xyz");
            let mut got = weft::io::ReadBuf::new(&mut buf);
            poll_fn(|cx| a.poll_recv(cx, &mut got)).await.unwrap();
            assert_eq!(got.filled(), b"xyz", "the second datagram");
        });
    }

    #[test]
    fn shared_socket_with_concurrent_receivers() {
        rt().block_on(async {
            let server = Arc::new(bound().await);
            let addr = server.local_addr().unwrap();
            // Two tasks wait on the same socket at once (multi-waiter
            // readiness): both must be woken, each gets one datagram.
            let receivers: Vec<_> = (0..2)
                .map(|_| {
                    let server = server.clone();
                    weft::spawn(async move {
                        let mut buf = [0u8; 8];
                        let (n, _) = server.recv_from(&mut buf).await.unwrap();
                        buf[..n].to_vec()
                    })
                })
                .collect();
            weft::time::sleep(Duration::from_millis(10)).await;
            let client = bound().await;
            client.send_to(b"one", addr).await.unwrap();
            client.send_to(b"two", addr).await.unwrap();
            let mut got = Vec::new();
            for r in receivers {
                got.push(timeout(LIMIT, r).await.expect("a receiver was not woken").unwrap());
            }
            got.sort();
            assert_eq!(got, [b"one".to_vec(), b"two".to_vec()]);
        });
    }

    #[test]
    fn socket_options() {
        rt().block_on(async {
            let s = bound().await;
            s.set_broadcast(true).unwrap();
            assert!(s.broadcast().unwrap());
            s.set_ttl(17).unwrap();
            assert_eq!(s.ttl().unwrap(), 17);
            s.set_multicast_ttl_v4(3).unwrap();
            assert_eq!(s.multicast_ttl_v4().unwrap(), 3);
            s.set_multicast_loop_v4(false).unwrap();
            assert!(!s.multicast_loop_v4().unwrap());
            assert!(s.take_error().unwrap().is_none());

            let m = UdpSocket::bind("0.0.0.0:0").await.unwrap();
            let group = Ipv4Addr::new(239, 255, 43, 21);
            // Joining can fail where the sandbox has no multicast-capable
            // interface; when it works, leaving twice must fail the second
            // time (the membership really was recorded and removed).
            if m.join_multicast_v4(group, Ipv4Addr::LOCALHOST).is_ok() {
                m.leave_multicast_v4(group, Ipv4Addr::LOCALHOST).unwrap();
                assert!(m.leave_multicast_v4(group, Ipv4Addr::LOCALHOST).is_err());
            }
            let v6 = UdpSocket::bind("[::1]:0").await;
            if let Ok(v6) = v6 {
                let group6 = "ff02::1:3".parse().unwrap();
                if v6.join_multicast_v6(&group6, 0).is_ok() {
                    v6.leave_multicast_v6(&group6, 0).unwrap();
                }
                v6.set_multicast_loop_v6(true).unwrap();
                assert!(v6.multicast_loop_v6().unwrap());
            }
        });
    }

    #[test]
    fn from_std_into_std_and_deregistration() {
        let rt = rt();
        let metrics = rt.metrics();
        let (reg, dereg) = (
            metrics.io_driver_fd_registered_count(),
            metrics.io_driver_fd_deregistered_count(),
        );
        rt.block_on(async {
            let std = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let addr: SocketAddr = std.local_addr().unwrap();
            let sock = UdpSocket::from_std(std).unwrap();
            let peer = bound().await;
            peer.send_to(b"q", addr).await.unwrap();
            let mut buf = [0u8; 4];
            let (n, _) = timeout(LIMIT, sock.recv_from(&mut buf)).await.unwrap().unwrap();
            assert_eq!(&buf[..n], b"q");
            let std = sock.into_std().unwrap();
            assert_eq!(std.local_addr().unwrap(), addr);
            drop(peer);
        });
        assert_eq!(metrics.io_driver_fd_registered_count() - reg, 2);
        assert_eq!(metrics.io_driver_fd_deregistered_count() - dereg, 2);
    }
}
