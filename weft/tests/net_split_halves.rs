//! The split halves' readiness, vectored, `try_read_buf` and (TCP) peek
//! methods Tokio has (issue 14), on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::future::poll_fn;
    use std::io::{ErrorKind, IoSlice, IoSliceMut};
    use weft::io::{AsyncReadExt, AsyncWriteExt, Interest, ReadBuf};
    use weft::net::{TcpListener, TcpStream, UnixStream};

    async fn tcp_pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (client, server)
    }

    /// Try `f` until it stops saying `WouldBlock` (readiness may lag).
    async fn until_ready<R>(mut f: impl FnMut() -> std::io::Result<R>) -> R {
        loop {
            match f() {
                Err(e) if e.kind() == ErrorKind::WouldBlock => weft::task::yield_now().await,
                other => return other.unwrap(),
            }
        }
    }

    #[test]
    fn tcp_borrowed_halves() {
        rt().block_on(async {
            let (mut a, mut b) = tcp_pair().await;
            let (ra, wa) = a.split();

            let ready = wa.ready(Interest::WRITABLE).await.unwrap();
            assert!(ready.is_writable());
            let n = wa
                .try_write_vectored(&[IoSlice::new(b"he"), IoSlice::new(b"llo")])
                .unwrap();
            assert_eq!(n, 5, "both slices go out, in order");
            let mut got = [0u8; 5];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"hello");

            b.write_all(b"abcdef").await.unwrap();
            let ready = ra.ready(Interest::READABLE).await.unwrap();
            assert!(ready.is_readable(), "readable once the peer wrote");

            let mut peeked = [0u8; 3];
            let mut peek_buf = ReadBuf::new(&mut peeked);
            let n = poll_fn(|cx| ra.poll_peek(cx, &mut peek_buf)).await.unwrap();
            assert_eq!(n, 3);
            assert_eq!(peek_buf.filled(), b"abc");
            let mut again = [0u8; 2];
            assert_eq!(ra.peek(&mut again).await.unwrap(), 2);
            assert_eq!(&again, b"ab", "peek leaves the bytes queued");

            let (mut x, mut y) = ([0u8; 2], [0u8; 4]);
            let n = until_ready(|| {
                ra.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            })
            .await;
            assert_eq!(n, 6);
            assert_eq!((&x, &y), (b"ab", b"cdef"), "fills the buffers in order");
        });
    }

    #[test]
    fn tcp_owned_halves() {
        rt().block_on(async {
            let (a, mut b) = tcp_pair().await;
            let (ra, wa) = a.into_split();
            let (r_stream, w_stream): (&TcpStream, &TcpStream) = (ra.as_ref(), wa.as_ref());
            assert_eq!(r_stream.local_addr().unwrap(), w_stream.local_addr().unwrap());
            assert_eq!(r_stream.peer_addr().unwrap(), b.local_addr().unwrap());

            assert!(wa.ready(Interest::WRITABLE).await.unwrap().is_writable());
            let n = wa
                .try_write_vectored(&[IoSlice::new(b"x"), IoSlice::new(b"yz")])
                .unwrap();
            assert_eq!(n, 3);
            let mut got = [0u8; 3];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"xyz");

            b.write_all(b"12345").await.unwrap();
            assert!(ra.ready(Interest::READABLE).await.unwrap().is_readable());
            let mut peeked = [0u8; 8];
            let mut peek_buf = ReadBuf::new(&mut peeked);
            let n = poll_fn(|cx| ra.poll_peek(cx, &mut peek_buf)).await.unwrap();
            assert_eq!(&peek_buf.filled()[..n], &b"12345"[..n]);
            assert_eq!(ra.peek(&mut [0u8; 1]).await.unwrap(), 1);

            let mut buf = Vec::with_capacity(16);
            let mut total = 0;
            while total < 5 {
                total += until_ready(|| ra.try_read_buf(&mut buf)).await;
            }
            assert_eq!(buf, b"12345", "try_read_buf appends to the spare capacity");

            b.write_all(b"pq").await.unwrap();
            // Wait until both bytes are queued, so one read sees both.
            while ra.peek(&mut [0u8; 2]).await.unwrap() < 2 {
                weft::task::yield_now().await;
            }
            let (mut x, mut y) = ([0u8; 1], [0u8; 1]);
            let n = until_ready(|| {
                ra.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            })
            .await;
            assert_eq!(n, 2);
            assert_eq!((&x, &y), (b"p", b"q"));
        });
    }

    #[test]
    fn unix_borrowed_halves() {
        rt().block_on(async {
            let (mut a, mut b) = UnixStream::pair().unwrap();
            let raw = std::os::fd::AsRawFd::as_raw_fd(&a);
            let (ra, wa) = a.split();
            let (r_stream, w_stream): (&UnixStream, &UnixStream) = (ra.as_ref(), wa.as_ref());
            assert_eq!(std::os::fd::AsRawFd::as_raw_fd(r_stream), raw);
            assert_eq!(std::os::fd::AsRawFd::as_raw_fd(w_stream), raw);
            assert!(wa.ready(Interest::WRITABLE).await.unwrap().is_writable());
            let n = wa
                .try_write_vectored(&[IoSlice::new(b"un"), IoSlice::new(b"ix")])
                .unwrap();
            assert_eq!(n, 4);
            let mut got = [0u8; 4];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"unix");

            b.write_all(b"abc").await.unwrap();
            assert!(ra.ready(Interest::READABLE).await.unwrap().is_readable());
            let (mut x, mut y) = ([0u8; 1], [0u8; 2]);
            let n = until_ready(|| {
                ra.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            })
            .await;
            assert_eq!(n, 3);
            assert_eq!((&x, &y), (b"a", b"bc"));

            b.write_all(b"zz").await.unwrap();
            let mut buf = Vec::with_capacity(4);
            buf.push(b'>');
            let n = until_ready(|| ra.try_read_buf(&mut buf)).await;
            assert_eq!(n, 2);
            assert_eq!(buf, b">zz");
        });
    }

    #[test]
    fn unix_owned_halves() {
        rt().block_on(async {
            let (a, mut b) = UnixStream::pair().unwrap();
            let (ra, wa) = a.into_split();
            assert!(wa.ready(Interest::WRITABLE).await.unwrap().is_writable());
            assert_eq!(
                wa.try_write_vectored(&[IoSlice::new(b"o"), IoSlice::new(b"k")])
                    .unwrap(),
                2
            );
            let mut got = [0u8; 2];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ok");

            // Nothing queued yet: the try_ forms say WouldBlock.
            let mut buf = Vec::with_capacity(8);
            assert_eq!(
                ra.try_read_buf(&mut buf).unwrap_err().kind(),
                ErrorKind::WouldBlock
            );
            b.write_all(b"data").await.unwrap();
            assert!(ra.ready(Interest::READABLE).await.unwrap().is_readable());
            let n = until_ready(|| ra.try_read_buf(&mut buf)).await;
            assert_eq!(&buf[..n], b"data");

            b.write_all(b"vw").await.unwrap();
            let (mut x, mut y) = ([0u8; 1], [0u8; 1]);
            let n = until_ready(|| {
                ra.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            })
            .await;
            assert_eq!(n, 2);
            assert_eq!((&x, &y), (b"v", b"w"));
        });
    }
}
