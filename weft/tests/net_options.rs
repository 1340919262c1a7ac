//! Socket options and the datagram `peek`/`recv_buf` family Tokio has
//! (issue 14), on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::io::ErrorKind;
    use std::time::Duration;
    use weft::io::AsyncReadExt;
    use weft::net::{TcpListener, TcpSocket, TcpStream, UdpSocket, UnixDatagram};

    #[test]
    fn tcp_socket_options_read_back() {
        rt().block_on(async {
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_keepalive(true).unwrap();
            assert!(socket.keepalive().unwrap());
            socket.set_keepalive(false).unwrap();
            assert!(!socket.keepalive().unwrap());
            socket.set_linger(Some(Duration::from_secs(3))).unwrap();
            assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
            socket.set_zero_linger().unwrap();
            assert_eq!(socket.linger().unwrap(), Some(Duration::ZERO));
            socket.set_tos(0x10).unwrap();
            assert_eq!(socket.tos().unwrap(), 0x10);
            socket.set_tos_v4(0x08).unwrap();
            assert_eq!(socket.tos_v4().unwrap(), 0x08);
            assert_eq!(socket.device().unwrap(), None);
            // Unbinding needs no privilege.
            socket.bind_device(None).unwrap();

            let v6 = TcpSocket::new_v6().unwrap();
            v6.set_tclass_v6(0x20).unwrap();
            assert_eq!(v6.tclass_v6().unwrap(), 0x20);
        });
    }

    #[test]
    fn zero_linger_resets_the_connection_on_drop() {
        rt().block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let client = TcpStream::connect(addr).await.unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            client.set_zero_linger().unwrap();
            assert_eq!(client.linger().unwrap(), Some(Duration::ZERO));
            drop(client);
            let mut buf = [0u8; 8];
            let err = server.read(&mut buf).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ConnectionReset);
        });
    }

    #[test]
    fn quickack_can_be_set() {
        rt().block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            client.set_quickack(true).unwrap();
            assert!(client.quickack().unwrap());
            client.set_quickack(false).unwrap();
            assert!(!client.quickack().unwrap());
        });
    }

    #[test]
    fn udp_peek_and_peek_sender_leave_the_datagram_queued() {
        rt().block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            a.connect(b.local_addr().unwrap()).await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();
            a.send(b"first").await.unwrap();
            assert_eq!(b.peek_sender().await.unwrap(), a.local_addr().unwrap());
            let mut buf = [0u8; 16];
            let n = b.peek(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"first");
            // Still queued: recv sees the same datagram.
            let n = b.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"first");
            assert_eq!(b.try_peek(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
            assert_eq!(b.try_peek_sender().unwrap_err().kind(), ErrorKind::WouldBlock);
        });
    }

    #[test]
    fn udp_recv_buf_fills_spare_capacity() {
        rt().block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();
            let mut buf = Vec::with_capacity(64);
            assert_eq!(b.try_recv_buf(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
            a.send_to(b"one", b.local_addr().unwrap()).await.unwrap();
            a.send_to(b"two", b.local_addr().unwrap()).await.unwrap();
            assert_eq!(b.recv_buf(&mut buf).await.unwrap(), 3);
            let (n, from) = b.recv_buf_from(&mut buf).await.unwrap();
            assert_eq!((n, from), (3, a.local_addr().unwrap()));
            assert_eq!(buf, b"onetwo");
        });
    }

    #[test]
    fn udp_ip_options_read_back() {
        rt().block_on(async {
            let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            socket.set_tos(0x10).unwrap();
            assert_eq!(socket.tos().unwrap(), 0x10);
            assert_eq!(socket.device().unwrap(), None);
        });
    }

    #[test]
    fn unix_datagram_recv_buf_from_names_the_sender() {
        rt().block_on(async {
            let (a, b) = UnixDatagram::pair().unwrap();
            a.send(b"over unix").await.unwrap();
            let mut buf = Vec::with_capacity(32);
            let (n, from) = b.recv_buf_from(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"over unix");
            assert!(from.is_unnamed(), "one end of a pair has no name: {from:?}");
            a.send(b"again").await.unwrap();
            b.readable().await.unwrap();
            assert_eq!(b.try_recv_buf(&mut buf).unwrap(), 5);
            assert_eq!(buf, b"over unixagain");
        });
    }
}
