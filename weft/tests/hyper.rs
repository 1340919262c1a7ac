//! hyper 1.x on weft: HTTP/1 and HTTP/2 clients and servers built on
//! `weft::hyper`'s `WeftIo`, `WeftExecutor` and `WeftTimer`, talking to each
//! other over weft TCP, on every runtime flavour.
#![cfg(feature = "hyper")]

#[macro_use]
mod support;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use weft::hyper::{WeftExecutor, WeftIo, WeftSleep, WeftTimer};
use weft::net::{TcpListener, TcpStream};
use weft::time::timeout;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Everything a test does, bounded so a hang fails instead of stalling CI.
const LIMIT: Duration = Duration::from_secs(20);

/// GET answers `hello <path>`; POST echoes the request body.
async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    if req.method() == Method::POST {
        let body = req.into_body().collect().await?.to_bytes();
        return Ok(Response::new(Full::new(body)));
    }
    let text = format!("hello {}", req.uri().path());
    Ok(Response::new(Full::new(Bytes::from(text))))
}

#[derive(Clone, Copy)]
enum Proto {
    Http1,
    Http2,
}

/// Accept connections forever, one task each; returns the address and a
/// counter of accepted connections.
async fn start_server(proto: Proto) -> Result<(std::net::SocketAddr, Arc<AtomicUsize>), Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    weft::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            stream.set_nodelay(true).unwrap();
            // The server hands the stream to hyper as it is (TcpStream
            // implements hyper's traits, reading into hyper's uninitialized
            // buffer); the clients below go through `WeftIo`.
            let io = stream;
            let service = hyper::service::service_fn(handle);
            weft::spawn(async move {
                let res = match proto {
                    Proto::Http1 => {
                        hyper::server::conn::http1::Builder::new()
                            .timer(WeftTimer::new())
                            .keep_alive(true)
                            .serve_connection(io, service)
                            .await
                    }
                    Proto::Http2 => {
                        hyper::server::conn::http2::Builder::new(WeftExecutor::new())
                            .timer(WeftTimer::new())
                            .serve_connection(io, service)
                            .await
                    }
                };
                if let Err(e) = res {
                    panic!("server connection failed: {e}");
                }
            });
        }
    });
    Ok((addr, accepted))
}

async fn body_of(res: Response<Incoming>) -> Result<Bytes, Error> {
    assert_eq!(res.status(), 200);
    Ok(res.into_body().collect().await?.to_bytes())
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path).body(Full::new(Bytes::new())).unwrap()
}

fn post(body: Vec<u8>) -> Request<Full<Bytes>> {
    Request::post("/echo")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

/// A body big enough to take several reads and writes.
fn big_body() -> Vec<u8> {
    (0..200_000u32).map(|i| (i % 251) as u8).collect()
}

async fn http1_keep_alive() -> Result<(), Error> {
    let (addr, accepted) = start_server(Proto::Http1).await?;
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(WeftIo::new(stream)).await?;
    let conn = weft::spawn(conn);

    for i in 0..10 {
        sender.ready().await?;
        let res = sender.send_request(get(&format!("/req/{i}"))).await?;
        assert_eq!(body_of(res).await?, format!("hello /req/{i}"));
    }
    let body = big_body();
    sender.ready().await?;
    let res = sender.send_request(post(body.clone())).await?;
    assert_eq!(body_of(res).await?, body);

    // All of it on one keep-alive connection.
    assert_eq!(accepted.load(Ordering::SeqCst), 1);

    // Closing the client side ends the connection task cleanly.
    drop(sender);
    conn.await.unwrap()?;
    Ok(())
}

async fn http2_concurrent() -> Result<(), Error> {
    let (addr, accepted) = start_server(Proto::Http2).await?;
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http2::Builder::new(WeftExecutor::new())
        .timer(WeftTimer::new())
        // Pings on the timer while the test runs.
        .keep_alive_interval(Duration::from_millis(20))
        .keep_alive_while_idle(true)
        .handshake(WeftIo::new(stream))
        .await?;
    let conn = weft::spawn(conn);

    let mut tasks = Vec::new();
    for i in 0..32 {
        let mut sender = sender.clone();
        tasks.push(weft::spawn(async move {
            sender.ready().await?;
            if i % 4 == 0 {
                let body = vec![i as u8; 50_000];
                let res = sender.send_request(post(body.clone())).await?;
                assert_eq!(body_of(res).await?, body);
            } else {
                let res = sender.send_request(get(&format!("/h2/{i}"))).await?;
                assert_eq!(body_of(res).await?, format!("hello /h2/{i}"));
            }
            Ok::<(), Error>(())
        }));
    }
    for task in tasks {
        task.await.unwrap()?;
    }

    // Idle long enough for a few keep-alive pings, then use it again.
    weft::time::sleep(Duration::from_millis(100)).await;
    let mut sender2 = sender.clone();
    sender2.ready().await?;
    let res = sender2.send_request(get("/after-ping")).await?;
    assert_eq!(body_of(res).await?, "hello /after-ping");

    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    drop(sender);
    drop(sender2);
    conn.await.unwrap()?;
    Ok(())
}

/// `WeftTimer::reset` moves a `WeftSleep` in place (downcast), and replaces
/// a sleep that some other timer made.
async fn timer_reset() -> Result<(), Error> {
    use hyper::rt::Timer;
    let timer = WeftTimer::new();
    let start = std::time::Instant::now();
    let mut sleep = timer.sleep(Duration::from_secs(3600));
    assert!(sleep.is::<WeftSleep>());
    timer.reset(&mut sleep, timer.now() + Duration::from_millis(20));
    sleep.as_mut().await;
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(20), "{waited:?}");
    assert!(waited < Duration::from_secs(60), "{waited:?}");

    // Reset after completion: pending again until the new deadline.
    let again = timer.now() + Duration::from_millis(10);
    timer.reset(&mut sleep, again);
    sleep.as_mut().await;
    assert!(std::time::Instant::now() >= again);
    Ok(())
}

/// hyper's own I/O traits seen through weft's: `WeftIo` in the other
/// direction, over an in-memory `WeftIo<DuplexStream>` pair.
async fn reverse_direction() -> Result<(), Error> {
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    let (a, b) = weft::io::duplex(16);
    // weft -> hyper -> weft again.
    let mut a = WeftIo::new(WeftIo::new(a));
    let mut b = WeftIo::new(WeftIo::new(b));
    let writer = weft::spawn(async move {
        a.write_all(&[7u8; 1000]).await?;
        a.shutdown().await?;
        Ok::<_, std::io::Error>(())
    });
    let mut got = Vec::new();
    b.read_to_end(&mut got).await?;
    assert_eq!(got, vec![7u8; 1000]);
    writer.await.unwrap()?;
    Ok(())
}

fn run(rt: weft::runtime::Runtime, test: impl std::future::Future<Output = Result<(), Error>>) {
    rt.block_on(async { timeout(LIMIT, test).await.expect("test timed out").unwrap() });
}

rt_test! {
    #[test]
    fn http1_client_and_server_keep_alive() {
        crate::run(rt(), crate::http1_keep_alive());
    }

    #[test]
    fn http2_client_and_server_concurrent_streams() {
        crate::run(rt(), crate::http2_concurrent());
    }

    #[test]
    fn timer_reset_downcasts() {
        crate::run(rt(), crate::timer_reset());
    }

    #[test]
    fn weft_io_reverse_direction() {
        crate::run(rt(), crate::reverse_direction());
    }
}
