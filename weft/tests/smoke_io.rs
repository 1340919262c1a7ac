use std::time::Duration;
#[allow(unused_imports)]
use Duration as _D;
#[macro_use]
mod support;

rt_test! {
    use futures_io::{AsyncRead, AsyncWrite};
    use std::pin::Pin;
    use std::future::poll_fn;

    #[test]
    fn echo_and_sleep() {
        rt().block_on(async {
            let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = weft::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 5];
                let mut got = 0;
                while got < 5 {
                    got += poll_fn(|cx| Pin::new(&mut s).poll_read(cx, &mut buf[got..])).await.unwrap();
                }
                poll_fn(|cx| Pin::new(&mut s).poll_write(cx, &buf)).await.unwrap();
            });
            let mut c = weft::net::TcpStream::connect(addr).await.unwrap();
            poll_fn(|cx| Pin::new(&mut c).poll_write(cx, b"hello")).await.unwrap();
            let mut buf = [0u8; 5];
            let mut got = 0;
            while got < 5 {
                got += poll_fn(|cx| Pin::new(&mut c).poll_read(cx, &mut buf[got..])).await.unwrap();
            }
            assert_eq!(&buf, b"hello");
            server.await.unwrap();
            let t = std::time::Instant::now();
            weft::time::sleep(super::Duration::from_millis(20)).await;
            assert!(t.elapsed() >= super::Duration::from_millis(20));
        });
    }
}
