//! A broadcast chat server over TCP: each line a client sends goes to every
//! other client, prefixed with the sender's address.
//!
//! Run it with `cargo run --release --example chat` (port 6188, or set
//! `PORT`), then connect two or more clients with `nc 127.0.0.1 6188` and
//! type lines in each.
//!
//! One `weft::sync::broadcast` channel carries `(sender, line)` pairs. Each
//! connection has two tasks: one reads its client's lines with
//! `BufReader::lines` and sends them to the channel, the other writes the
//! channel's messages from the other clients back to it.

use std::net::SocketAddr;
use weft::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use weft::net::{TcpListener, TcpStream};
use weft::sync::broadcast;

async fn client(
    stream: TcpStream,
    peer: SocketAddr,
    tx: broadcast::Sender<(SocketAddr, String)>,
) -> std::io::Result<()> {
    let mut rx = tx.subscribe();
    let (reader, mut writer) = stream.into_split();
    writer
        .write_all(format!("welcome, {peer}\n").as_bytes())
        .await?;

    // Outgoing: everyone else's lines, written to this client by a task of
    // its own.
    let forward = weft::spawn(async move {
        loop {
            let text = match rx.recv().await {
                Ok((from, _)) if from == peer => continue,
                Ok((from, line)) => format!("{from}: {line}\n"),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    format!("({n} messages skipped)\n")
                }
                Err(broadcast::error::RecvError::Closed) => break,
            };
            if writer.write_all(text.as_bytes()).await.is_err() {
                break; // the client is gone
            }
        }
    });

    // Incoming: this client's lines, to everyone.
    let _ = tx.send((peer, "joined".to_string()));
    let mut lines = BufReader::new(reader).lines();
    let result = async {
        while let Some(line) = lines.next_line().await? {
            let _ = tx.send((peer, line));
        }
        Ok(())
    }
    .await;
    let _ = tx.send((peer, "left".to_string()));
    forward.abort();
    result
}

#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(6188);
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("chat server listening on {}", listener.local_addr()?);

    let (tx, _) = broadcast::channel(256);
    loop {
        let (stream, peer) = listener.accept().await?;
        let tx = tx.clone();
        weft::spawn(async move {
            if let Err(e) = client(stream, peer, tx).await {
                eprintln!("{peer}: {e}");
            }
        });
    }
}
