//! Code written for Tokio, as Tokio's users write it, compiled against weft
//! under the name `tokio` and otherwise unchanged: a hand-written reader
//! over `ReadBuf`, a line-based echo server, `LocalSet` with `Rc` state,
//! `AsyncFd` at `tokio::io::unix`, and the number readers.

use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A reader that upper-cases what it wraps: the shape every Tokio codec
/// and TLS wrapper has.
struct Upper<R> {
    inner: R,
}

impl<R: AsyncRead + Unpin> AsyncRead for Upper<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        for b in &mut buf.filled_mut()[before..] {
            b.make_ascii_uppercase();
        }
        res
    }
}

#[tokio::test]
async fn hand_written_read_buf_reader() {
    let mut upper = Upper {
        inner: &b"shout"[..],
    };
    let mut out = String::new();
    upper.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "SHOUT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_echo_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (rd, mut wr) = socket.into_split();
        let mut lines = BufReader::new(rd).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            wr.write_all(format!("echo: {line}\n").as_bytes())
                .await
                .unwrap();
        }
    });
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(b"one\ntwo\n").await.unwrap();
    client.shutdown().await.unwrap();
    let mut reply = String::new();
    client.read_to_string(&mut reply).await.unwrap();
    assert_eq!(reply, "echo: one\necho: two\n");
    server.await.unwrap();
}

#[test]
fn local_set_with_rc_state() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let counter = Rc::new(std::cell::Cell::new(0));
    local.block_on(&rt, async {
        let mut handles = Vec::new();
        for _ in 0..3 {
            let counter = counter.clone();
            handles.push(tokio::task::spawn_local(async move {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                counter.set(counter.get() + 1);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
    });
    assert_eq!(counter.get(), 3);
}

#[tokio::test]
async fn async_fd_at_tokios_path() {
    use std::io::{Read, Write};
    use tokio::io::unix::AsyncFd;
    let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    let fd = AsyncFd::new(a).unwrap();
    b.write_all(b"x").unwrap();
    let mut buf = [0u8; 1];
    loop {
        let mut guard = fd.readable().await.unwrap();
        match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
            Ok(n) => {
                assert_eq!(n.unwrap(), 1);
                break;
            }
            Err(_would_block) => continue,
        }
    }
    assert_eq!(&buf, b"x");
}

#[tokio::test]
async fn framed_numbers() {
    let (mut a, mut b) = tokio::io::duplex(64);
    a.write_u32(7).await.unwrap();
    a.write_all(b"payload").await.unwrap();
    let len = b.read_u32().await.unwrap() as usize;
    let mut body = vec![0u8; len];
    b.read_exact(&mut body).await.unwrap();
    assert_eq!(body, b"payload");
}

#[tokio::test]
async fn sync_and_time_and_blocking() {
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(1));
    let permit = sem.clone().acquire_owned().await.unwrap();
    tokio::spawn(async move {
        tx.send(tokio::task::spawn_blocking(|| 2 + 2).await.unwrap())
            .await
            .unwrap();
        drop(permit);
    });
    let got = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
        .await
        .unwrap();
    assert_eq!(got, Some(4));
    let _again = sem.acquire().await.unwrap();
}
