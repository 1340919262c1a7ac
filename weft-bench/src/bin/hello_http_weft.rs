//! Hello-world HTTP/1 server, hyper on weft (the weft side of
//! `http_bench.sh`; `hello_http_tokio` is the same server on Tokio).
//!
//! `PORT` (default 3000) and `WORKERS` (default 1):
//! `cargo run --release -p weft-bench --bin hello_http_weft`, then
//! `curl http://127.0.0.1:3000/`.

#[path = "../http_hello.rs"]
mod http_hello;

use weft::hyper::WeftTimer;

fn main() -> std::io::Result<()> {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(http_hello::workers())
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = weft::net::TcpListener::bind(("127.0.0.1", http_hello::port())).await?;
        println!("weft: listening on http://{}", listener.local_addr()?);
        // Accept on a worker too, so with WORKERS=1 all the work is on one
        // thread (block_on's thread only waits).
        weft::spawn(async move {
            loop {
                let (stream, _) = match listener.accept().await {
                    Ok(conn) => conn,
                    Err(e) => {
                        eprintln!("accept failed: {e}");
                        continue;
                    }
                };
                stream.set_nodelay(true)?;
                weft::spawn(async move {
                    let service = hyper::service::service_fn(http_hello::hello);
                    let conn = http_hello::http1_builder(WeftTimer::new())
                        .serve_connection(stream, service);
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
