//! `tokio-io`: weft's streams used by code written against Tokio's I/O
//! traits (here Tokio's own `io-util` helpers), with no Tokio runtime.
#![cfg(feature = "tokio-io")]

#[macro_use]
mod support;

use std::time::Duration;
use weft::compat::TokioIo;
use weft::net::{TcpListener, TcpStream};
use weft::time::timeout;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn payload() -> Vec<u8> {
    (0..300_000u32).map(|i| (i * 7 % 256) as u8).collect()
}

/// An echo server built from `tokio::io::copy` on weft's owned TCP halves,
/// and a client using Tokio's `write_all` / `read_to_end` on a weft
/// `TcpStream` and on its borrowed halves.
async fn tcp_with_tokio_utilities() -> Result<(), Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = weft::spawn(async move {
        let (stream, _) = listener.accept().await?;
        let (mut rd, mut wr) = stream.into_split();
        let n = tokio::io::copy(&mut rd, &mut wr).await?;
        tokio::io::AsyncWriteExt::shutdown(&mut wr).await?;
        Ok::<u64, std::io::Error>(n)
    });

    let mut stream = TcpStream::connect(addr).await?;
    let data = payload();
    let (mut rd, mut wr) = stream.split();
    let send = async {
        tokio::io::AsyncWriteExt::write_all(&mut wr, &data).await?;
        tokio::io::AsyncWriteExt::shutdown(&mut wr).await?;
        Ok::<(), std::io::Error>(())
    };
    let mut got = Vec::new();
    let recv = tokio::io::AsyncReadExt::read_to_end(&mut rd, &mut got);
    let (sent, received) = futures::join!(send, recv);
    sent?;
    assert_eq!(received?, data.len());
    assert_eq!(got, data);
    assert_eq!(server.await.unwrap()?, data.len() as u64);

    // The whole stream through Tokio's trait too: the peer is gone, EOF.
    let mut rest = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut rest).await?;
    assert!(rest.is_empty());
    Ok(())
}

/// `TokioIo` both ways: a weft duplex pipe seen as Tokio, and Tokio's
/// duplex pipe seen as weft; plus `BufReader` through Tokio's
/// `AsyncBufReadExt`.
async fn adapters_both_ways() -> Result<(), Error> {
    // weft -> Tokio traits.
    let (a, b) = weft::io::duplex(64);
    let mut a = TokioIo::new(a);
    let mut b = TokioIo::new(b);
    let writer = weft::spawn(async move {
        tokio::io::AsyncWriteExt::write_all(&mut a, b"first line\nsecond line\n").await?;
        tokio::io::AsyncWriteExt::shutdown(&mut a).await?;
        Ok::<(), std::io::Error>(())
    });
    let mut text = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut b, &mut text).await?;
    assert_eq!(text, "first line\nsecond line\n");
    writer.await.unwrap()?;

    // Tokio traits -> weft.
    let (x, y) = tokio::io::duplex(64);
    let mut x = TokioIo::new(x);
    let mut y = TokioIo::new(y);
    let writer = weft::spawn(async move {
        weft::io::AsyncWriteExt::write_all(&mut x, &[9u8; 10_000]).await?;
        weft::io::AsyncWriteExt::shutdown(&mut x).await?;
        Ok::<(), std::io::Error>(())
    });
    let mut got = Vec::new();
    weft::io::AsyncReadExt::read_to_end(&mut y, &mut got).await?;
    assert_eq!(got, vec![9u8; 10_000]);
    writer.await.unwrap()?;

    // weft's BufReader with Tokio's line reader.
    let (mut a, b) = weft::io::duplex(8);
    let writer = weft::spawn(async move {
        weft::io::AsyncWriteExt::write_all(&mut a, b"alpha\nbeta\n").await?;
        Ok::<(), std::io::Error>(())
    });
    let mut reader = weft::io::BufReader::new(b);
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut line).await?;
    assert_eq!(line, "alpha\n");
    line.clear();
    tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut line).await?;
    assert_eq!(line, "beta\n");
    writer.await.unwrap()?;
    Ok(())
}

/// A child process's pipes, a pipe and a file, driven by Tokio's
/// `io-util` helpers.
async fn pipes_and_files_with_tokio_utilities() -> Result<(), Error> {
    let mut child = weft::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let data = payload();
    let writer = {
        let data = data.clone();
        weft::spawn(async move { tokio::io::AsyncWriteExt::write_all(&mut stdin, &data).await })
    };
    let mut echoed = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut stdout, &mut echoed).await?;
    writer.await.unwrap()?;
    assert!(echoed == data, "cat echoed {} bytes", echoed.len());
    assert!(child.wait().await?.success());

    let (mut tx, mut rx) = weft::net::unix::pipe::pipe()?;
    tokio::io::AsyncWriteExt::write_all(&mut tx, b"pipe").await?;
    drop(tx);
    let mut got = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut rx, &mut got).await?;
    assert_eq!(got, "pipe");

    let path = std::env::temp_dir().join(format!(
        "weft-compat-file-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut file = weft::fs::File::create(&path).await?;
    tokio::io::AsyncWriteExt::write_all(&mut file, b"file contents").await?;
    tokio::io::AsyncWriteExt::flush(&mut file).await?;
    drop(file);
    let mut file = weft::fs::File::open(&path).await?;
    let mut got = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut file, &mut got).await?;
    assert_eq!(got, "file contents");
    weft::fs::remove_file(&path).await?;
    Ok(())
}

fn run(rt: weft::runtime::Runtime, test: impl std::future::Future<Output = Result<(), Error>>) {
    rt.block_on(async {
        timeout(Duration::from_secs(20), test)
            .await
            .expect("test timed out")
            .unwrap()
    });
}

rt_test! {
    #[test]
    fn tcp_stream_with_tokio_io_util() {
        crate::run(rt(), crate::tcp_with_tokio_utilities());
    }

    #[test]
    fn tokio_io_adapters_both_ways() {
        crate::run(rt(), crate::adapters_both_ways());
    }

    #[test]
    fn pipes_and_files_with_tokio_io_util() {
        crate::run(rt(), crate::pipes_and_files_with_tokio_utilities());
    }
}
