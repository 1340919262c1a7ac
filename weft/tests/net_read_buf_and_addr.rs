//! `try_read_buf` on the streams and the `SocketAddr` forms of Unix bind and
//! connect (abstract names), which Tokio has (issue 14), on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::io::ErrorKind;
    use weft::io::AsyncWriteExt;
    use weft::net::{TcpListener, TcpStream, UnixListener, UnixStream};

    #[test]
    fn stream_try_read_buf_fills_spare_capacity() {
        rt().block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            let mut buf = Vec::with_capacity(16);
            assert_eq!(server.try_read_buf(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
            client.write_all(b"bytes").await.unwrap();
            server.readable().await.unwrap();
            assert_eq!(server.try_read_buf(&mut buf).unwrap(), 5);
            assert_eq!(buf, b"bytes");

            let (a, mut b) = UnixStream::pair().unwrap();
            b.write_all(b"unix").await.unwrap();
            a.readable().await.unwrap();
            let mut buf = Vec::with_capacity(8);
            assert_eq!(a.try_read_buf(&mut buf).unwrap(), 4);
            assert_eq!(buf, b"unix");
        });
    }

    #[test]
    fn unix_bind_addr_and_connect_addr_with_an_abstract_name() {
        use std::os::linux::net::SocketAddrExt;
        rt().block_on(async {
            let name = format!("weft-abstract-{}-{:?}", std::process::id(), FLAVOR);
            // As with Tokio: std makes the abstract address, `From` turns it
            // into the `net::unix::SocketAddr` that bind_addr/connect_addr take.
            let addr: weft::net::unix::SocketAddr =
                std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap().into();
            let listener = UnixListener::bind_addr(&addr).unwrap();
            let (client, server) = tokio_like_join(UnixStream::connect_addr(&addr), listener.accept()).await;
            let mut client = client.unwrap();
            let (server, _) = server.unwrap();
            client.write_all(b"hi").await.unwrap();
            server.readable().await.unwrap();
            let mut buf = [0u8; 2];
            assert_eq!(server.try_read(&mut buf).unwrap(), 2);
            assert_eq!(
                listener.local_addr().unwrap().as_abstract_name(),
                Some(name.as_bytes())
            );
        });
    }

    async fn tokio_like_join<A: std::future::Future, B: std::future::Future>(a: A, b: B) -> (A::Output, B::Output) {
        weft::join!(a, b)
    }
}
