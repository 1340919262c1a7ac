//! An HTTP/1 hello-world server: hyper on weft.
//!
//! Run it with `cargo run --release --example hello_http` (port 3000, or
//! set `PORT`), then try `curl http://127.0.0.1:3000/` or load it with
//! `wrk -t1 -c50 -d10 http://127.0.0.1:3000/`.
//!
//! Tuned for throughput: one task per connection, `TCP_NODELAY`, HTTP/1
//! keep-alive, and the handler answers from a static buffer.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use std::convert::Infallible;
use weft::hyper::WeftTimer;
use weft::net::TcpListener;

async fn hello(_req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(
        b"Hello, World!",
    ))))
}

#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(3000);
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);

    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            // E.g. out of file descriptors: keep serving the others.
            Err(e) => {
                eprintln!("accept failed: {e}");
                continue;
            }
        };
        stream.set_nodelay(true)?;
        weft::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(WeftTimer::new())
                .keep_alive(true)
                .serve_connection(stream, hyper::service::service_fn(hello));
            if let Err(e) = conn.await {
                eprintln!("connection error: {e}");
            }
        });
    }
}
