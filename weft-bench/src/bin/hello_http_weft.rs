//! Hello-world HTTP/1 server, hyper on weft (the weft side of
//! `http_bench.sh`; `hello_http_tokio` is the same server on Tokio).
//!
//! `PORT` (default 3000) and `WORKERS` (default 1):
//! `cargo run --release -p weft-bench --bin hello_http_weft`, then
//! `curl http://127.0.0.1:3000/`.

#[path = "../http_hello.rs"]
#[macro_use]
mod http_hello;

// weft's TcpStream implements hyper's I/O traits itself.
hello_server_main!(weft, weft::hyper::WeftTimer::new(), std::convert::identity);
