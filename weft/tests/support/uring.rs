//! The io_uring suites' shared pieces (io_uring.rs, io_uring_accept.rs,
//! io_uring_sends.rs, io_uring_fs.rs): one runtime of each flavour on the
//! ring driver, connected pairs, a slow reader, and a byte pattern.

#![allow(dead_code)] // each suite uses its own part

use std::time::Duration;
use weft::io::AsyncReadExt;
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, IoDriver, Runtime};

/// One runtime of each flavour on the ring driver.
pub fn runtimes() -> Vec<(&'static str, Runtime)> {
    runtimes_with(|b| b)
}

/// [`runtimes`], each builder `configure`d further first.
pub fn runtimes_with(configure: fn(&mut Builder) -> &mut Builder) -> Vec<(&'static str, Runtime)> {
    let uring = |b: &mut Builder| {
        configure(b.enable_all().io_driver(IoDriver::Uring))
            .build()
            .unwrap()
    };
    vec![
        ("current_thread", uring(&mut Builder::new_current_thread())),
        (
            "multi_thread(1)",
            uring(Builder::new_multi_thread().worker_threads(1)),
        ),
        (
            "multi_thread(4)",
            uring(Builder::new_multi_thread().worker_threads(4)),
        ),
    ]
}

/// Run `fut` in a task, so that on a multi_thread runtime it runs on a
/// worker, which owns a ring: off a worker (the `block_on` future of a
/// multi_thread runtime) streams read and write on readiness, and file
/// calls go to the blocking pool, as on the epoll driver.
pub fn on_a_worker<F>(rt: &Runtime, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.block_on(async { weft::spawn(fut).await.unwrap() })
}

/// A multi-thread runtime of `workers` workers on the ring driver.
pub fn multi_thread(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .io_driver(IoDriver::Uring)
        .build()
        .unwrap()
}

/// A current-thread runtime on the ring driver.
pub fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .io_driver(IoDriver::Uring)
        .build()
        .unwrap()
}

/// Reads `stream` to its end after `delay` (a peer that is slow to read,
/// so the writer's sends wait in the kernel meanwhile).
pub fn read_all_later(mut stream: TcpStream, delay: Duration) -> weft::task::JoinHandle<Vec<u8>> {
    weft::spawn(async move {
        weft::time::sleep(delay).await;
        let mut got = Vec::new();
        stream.read_to_end(&mut got).await.unwrap();
        got
    })
}

pub async fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, server) = weft::join!(TcpStream::connect(addr), listener.accept());
    (client.unwrap(), server.unwrap().0)
}

/// A connected pair whose client has a small send buffer, so a large
/// write's sends go out short and must be continued.
pub async fn pair_small_sndbuf() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let socket = weft::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(8192).unwrap();
    let (client, server) = weft::join!(socket.connect(addr), listener.accept());
    (client.unwrap(), server.unwrap().0)
}

pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 253) as u8).collect()
}
