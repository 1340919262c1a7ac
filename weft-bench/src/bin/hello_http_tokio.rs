//! Hello-world HTTP/1 server, hyper on Tokio (the Tokio side of
//! `http_bench.sh`; `hello_http_weft` is the same server on weft).
//!
//! `PORT` (default 3000) and `WORKERS` (default 1):
//! `cargo run --release -p weft-bench --bin hello_http_tokio`, then
//! `curl http://127.0.0.1:3000/`.

#[path = "../http_hello.rs"]
#[macro_use]
mod http_hello;

hello_server_main!(
    tokio,
    hyper_util::rt::TokioTimer::new(),
    hyper_util::rt::TokioIo::new
);
