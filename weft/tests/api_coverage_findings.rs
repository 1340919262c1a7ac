//! What the trait and signature passes of `tools/api-coverage`
//! (`traits.py`, `sigs.py`) found weft lacking against Tokio: trait impls
//! Tokio's types have, and calls Tokio's signatures allow. Each is used
//! here the way a program would use it.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd};
use weft::io::{AsyncReadExt, AsyncWriteExt};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn standard_streams_lend_the_process_descriptors() {
    assert_eq!(weft::io::stdin().as_raw_fd(), 0);
    assert_eq!(weft::io::stdout().as_raw_fd(), 1);
    assert_eq!(weft::io::stderr().as_raw_fd(), 2);
    let out = weft::io::stdout();
    assert_eq!(out.as_fd().as_raw_fd(), 1);
    // A borrowed descriptor works as one: its status flags can be read.
    // SAFETY: fcntl(F_GETFL) only reads the open descriptor's flags.
    let flags = unsafe { libc::fcntl(weft::io::stderr().as_fd().as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0, "stderr's descriptor is open");
}

#[test]
fn a_tcp_socket_goes_out_as_a_raw_descriptor_and_comes_back() {
    rt().block_on(async {
        let socket = weft::net::TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let bound = socket.local_addr().unwrap();
        let fd = socket.into_raw_fd();
        // SAFETY: `fd` is the socket just given up, owned by nobody else.
        let socket = unsafe { weft::net::TcpSocket::from_raw_fd(fd) };
        assert_eq!(socket.as_raw_fd(), fd);
        assert_eq!(socket.local_addr().unwrap(), bound);
        let listener = socket.listen(8).unwrap();
        let (mut client, (mut server, _)) = tokio_like_pair(&listener, bound).await;
        client.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
    });
}

async fn tokio_like_pair(
    listener: &weft::net::TcpListener,
    addr: std::net::SocketAddr,
) -> (
    weft::net::TcpStream,
    (weft::net::TcpStream, std::net::SocketAddr),
) {
    let (client, accepted) = weft::join!(weft::net::TcpStream::connect(addr), listener.accept());
    (client.unwrap(), accepted.unwrap())
}

/// What a program generic over "a TCP stream or one of its halves" reads.
fn peer_of(stream: &impl AsRef<weft::net::TcpStream>) -> std::net::SocketAddr {
    stream.as_ref().peer_addr().unwrap()
}

#[test]
fn streams_are_as_ref_of_themselves_like_their_halves() {
    rt().block_on(async {
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (mut client, _server) = tokio_like_pair(&listener, addr).await;
        assert_eq!(peer_of(&client), addr);
        let (read, _write) = client.split();
        assert_eq!(peer_of(&read), addr);

        let dir = std::env::temp_dir().join(format!("weft-as-ref-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let unix = weft::net::UnixListener::bind(&dir).unwrap();
        let stream = weft::net::UnixStream::connect(&dir).await.unwrap();
        let _accepted = unix.accept().await.unwrap();
        let own: &weft::net::UnixStream = stream.as_ref();
        assert_eq!(own.peer_addr().unwrap().as_pathname(), Some(dir.as_path()));
        std::fs::remove_file(&dir).unwrap();
    });
}

#[test]
fn runtime_metrics_cross_a_catch_unwind() {
    let rt = rt();
    let metrics = rt.metrics();
    // `catch_unwind` takes only `UnwindSafe` closures: this one captures
    // the metrics by reference (so `RuntimeMetrics: RefUnwindSafe`) and
    // by value.
    let workers = std::panic::catch_unwind(|| metrics.num_workers()).unwrap();
    assert_eq!(workers, 1);
    let moved = std::panic::catch_unwind(move || metrics.num_alive_tasks()).unwrap();
    assert_eq!(moved, 0);
}

#[test]
fn a_default_watch_sender_holds_the_default_value() {
    let tx: weft::sync::watch::Sender<Vec<u8>> = Default::default();
    assert_eq!(tx.receiver_count(), 0);
    assert!(tx.borrow().is_empty());
    let rx = tx.subscribe();
    tx.send_modify(|v| v.push(7));
    assert_eq!(*rx.borrow(), vec![7]);
}

/// A stream that may move between threads but not be shared by them.
struct SendNotSync(std::cell::Cell<u8>, weft::io::DuplexStream);

impl weft::io::AsyncRead for SendNotSync {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut weft::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.0.set(self.0.get() + 1);
        std::pin::Pin::new(&mut self.1).poll_read(cx, buf)
    }
}

impl weft::io::AsyncWrite for SendNotSync {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.1).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.1).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.1).poll_shutdown(cx)
    }
}

#[test]
fn split_halves_can_be_shared_whatever_the_stream() {
    let (a, mut b) = weft::io::duplex(16);
    let (mut read, write) = weft::io::split(SendNotSync(std::cell::Cell::new(0), a));
    // Shared with another thread (which may only look at it), while the
    // owner goes on reading through `&mut`.
    let write = std::sync::Arc::new(write);
    let shared = std::sync::Arc::clone(&write);
    let looked = std::thread::spawn(move || format!("{shared:?}"))
        .join()
        .unwrap();
    assert!(looked.starts_with("WriteHalf"), "{looked}");
    rt().block_on(async {
        b.write_all(b"hi").await.unwrap();
        let mut got = [0u8; 2];
        read.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hi");
    });
    assert!(read.is_pair_of(&write));
}

/// A payload that cannot be cloned.
#[derive(Debug, PartialEq)]
struct Unique(u32);

#[test]
fn a_broadcast_sender_of_a_type_that_is_not_clone() {
    // Only receiving needs `Clone`: the sender and its counts work for any
    // type, as Tokio's do.
    let tx = weft::sync::broadcast::Sender::<Unique>::new(2);
    let refused = tx.send(Unique(1)).unwrap_err();
    assert_eq!(refused.0, Unique(1), "no receiver: the value comes back");
    let rx = tx.subscribe();
    assert_eq!(tx.send(Unique(2)).unwrap(), 1);
    assert_eq!(tx.receiver_count(), 1);
    assert_eq!(rx.len(), 1);
}

#[test]
fn unconstrained_wraps_any_value_and_runs_a_future_past_the_budget() {
    // Tokio's takes any `F` (the wrapper is a future only when `F` is).
    let _not_a_future = weft::task::coop::unconstrained(5u8);
    let rt = rt();
    let ran = rt.block_on(weft::task::coop::unconstrained(async {
        // Far past a task's budget of operations, without yielding.
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel();
        for i in 0..1_000u32 {
            tx.send(i).unwrap();
            assert_eq!(rx.recv().await, Some(i));
        }
        1_000
    }));
    assert_eq!(ran, 1_000);
}
