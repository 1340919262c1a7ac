//! What the two hello-world HTTP servers share, so they differ only in the
//! runtime: the handler, the hyper settings, and the environment knobs.
//! Included by `src/bin/hello_http_weft.rs` and `src/bin/hello_http_tokio.rs`.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::rt::Timer;
use hyper::server::conn::http1;
use hyper::{Request, Response};
use std::convert::Infallible;

/// The handler: a static `Hello, World!`.
pub async fn hello(_req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(
        b"Hello, World!",
    ))))
}

/// The HTTP/1 settings both servers use: keep-alive on, the runtime's timer
/// (so hyper's default 30 s header-read timeout is armed per request on
/// both sides), everything else hyper's default.
pub fn http1_builder(timer: impl Timer + Send + Sync + 'static) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder.timer(timer).keep_alive(true);
    builder
}

/// `PORT`, default 3000.
pub fn port() -> u16 {
    std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(3000)
}

/// `WORKERS`: worker threads of the multi-thread runtime, default 1 (the
/// benchmark pins each server to one core).
pub fn workers() -> usize {
    std::env::var("WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|&w| w > 0)
        .unwrap_or(1)
}

/// The whole server, written once over the runtime crate `$rt` (as the
/// workloads are), so the two binaries cannot drift apart: `$timer` is the
/// runtime's hyper timer, `$io` wraps an accepted stream for hyper.
macro_rules! hello_server_main {
    ($rt:ident, $timer:expr, $io:expr) => {
        fn main() -> std::io::Result<()> {
            let rt = $rt::runtime::Builder::new_multi_thread()
                .worker_threads(http_hello::workers())
                .enable_all()
                .build()?;
            rt.block_on(async {
                let listener =
                    $rt::net::TcpListener::bind(("127.0.0.1", http_hello::port())).await?;
                println!(
                    "{}: listening on http://{}",
                    stringify!($rt),
                    listener.local_addr()?
                );
                // Accept on a worker too, so with WORKERS=1 all the work is
                // on one thread (block_on's thread only waits).
                $rt::spawn(async move {
                    loop {
                        let (stream, _) = match listener.accept().await {
                            Ok(conn) => conn,
                            Err(e) => {
                                eprintln!("accept failed: {e}");
                                continue;
                            }
                        };
                        stream.set_nodelay(true)?;
                        $rt::spawn(async move {
                            let service = hyper::service::service_fn(http_hello::hello);
                            let conn = http_hello::http1_builder($timer)
                                .serve_connection($io(stream), service);
                            if let Err(e) = conn.await {
                                eprintln!("connection error: {e}");
                            }
                        });
                    }
                })
                .await
                .expect("the accept loop panicked")
            })
        }
    };
}
