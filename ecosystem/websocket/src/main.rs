//! tokio-tungstenite, unmodified, on weft: a WebSocket server (echo,
//! chat rooms, close codes, handshake timeouts) and its clients, on each
//! runtime flavour and each I/O driver (`each_driver`).
//!
//! What it leans on in the runtime: `TcpListener::accept`, `TcpStream` as
//! `AsyncRead + AsyncWrite` under tungstenite's frame codec (messages of
//! 0 bytes to 4 MiB, so partial reads and writes), a split stream read
//! and written by two tasks at once, `broadcast` for the chat, `timeout`
//! around a handshake a client never finishes, and `JoinSet`.

use each_driver::ok;
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{accept_async, connect_async, MaybeTlsStream, WebSocketStream};

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A payload of `len` bytes that differs by `seed`, so a message
/// delivered to the wrong client or cut short is noticed.
fn payload(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ seed) as u8)
        .collect()
}

/// Echoes every text and binary message; answers a close with the same
/// code and reason (tungstenite does the answering). Pings are answered
/// by tungstenite as it reads.
async fn echo_connection(stream: TcpStream) {
    let mut ws = accept_async(stream).await.expect("the server's handshake");
    while let Some(msg) = ws.next().await {
        let msg = msg.expect("a frame from the client");
        if msg.is_text() || msg.is_binary() {
            ws.send(msg).await.unwrap();
        }
    }
}

async fn echo_server() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(echo_connection(stream));
        }
    });
    (addr, server)
}

async fn connect(addr: SocketAddr, path: &str) -> Client {
    let (ws, response) = connect_async(format!("ws://{addr}{path}"))
        .await
        .expect("the client's handshake");
    assert_eq!(response.status(), 101, "the handshake's answer");
    ws
}

/// 48 clients at once, each sending messages of 0 bytes to 4 MiB, text and
/// binary, and reading each echo before the next.
async fn many_clients_echo(addr: SocketAddr) {
    let sizes = [0, 1, 125, 126, 65_535, 65_536, 300_000, 4 << 20];
    let mut clients = JoinSet::new();
    for c in 0..48 {
        clients.spawn(async move {
            let mut ws = connect(addr, "/echo").await;
            // The 4 MiB message only for a few clients, to keep CI quick.
            let sizes = if c % 8 == 0 { &sizes[..] } else { &sizes[..7] };
            for (i, &len) in sizes.iter().enumerate() {
                let bytes = payload(c * 100 + i, len);
                let msg = if i % 2 == 0 {
                    Message::binary(bytes.clone())
                } else {
                    let text: String = bytes.iter().map(|b| char::from(b'a' + b % 26)).collect();
                    Message::text(text)
                };
                ws.send(msg.clone()).await.unwrap();
                let back = ws.next().await.expect("an echo").unwrap();
                assert_eq!(back, msg, "client {c}, message {i} ({len} bytes)");
            }
            ws.close(None).await.unwrap();
            // After our close, the stream ends with the server's answer.
            while let Some(msg) = ws.next().await {
                match msg {
                    Ok(Message::Close(_)) | Err(WsError::ConnectionClosed) => {}
                    other => panic!("client {c}: after close, {other:?}"),
                }
            }
            sizes.len()
        });
    }
    let mut messages = 0;
    while let Some(n) = clients.join_next().await {
        messages += n.unwrap();
    }
    assert_eq!(messages, 6 * 8 + 42 * 7);
    ok("48 clients at once: 342 messages of 0 bytes to 4 MiB echoed intact");
}

/// A ping is answered with a pong carrying its payload, and a close's
/// code and reason reach the other side.
async fn ping_and_close_codes(addr: SocketAddr) {
    let mut ws = connect(addr, "/ping").await;
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    match ws.next().await.unwrap().unwrap() {
        Message::Pong(p) => assert_eq!(&p[..], b"are you there"),
        other => panic!("expected a pong, got {other:?}"),
    }
    ok("a ping is answered with its payload");

    let frame = CloseFrame {
        code: CloseCode::Library(4001),
        reason: "done for today".into(),
    };
    ws.close(Some(frame.clone())).await.unwrap();
    match ws.next().await {
        Some(Ok(Message::Close(Some(echoed)))) => assert_eq!(echoed, frame),
        other => panic!("expected the close echoed, got {other:?}"),
    }
    assert!(
        ws.next().await.is_none(),
        "the stream ends after the close handshake"
    );
    ok("a close's code 4001 and reason come back");
}

/// A chat room: every client's message reaches every client, through a
/// broadcast channel and split streams (one task reads while another
/// writes the same connection).
async fn chat_room() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (room, _) = broadcast::channel::<String>(1024);
    let server_room = room.clone();
    let server = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let room = server_room.clone();
            tokio::spawn(async move {
                let ws = accept_async(stream).await.unwrap();
                let (mut to_client, mut from_client) = ws.split();
                let mut heard = room.subscribe();
                let forward = tokio::spawn(async move {
                    while let Ok(line) = heard.recv().await {
                        if to_client.send(Message::text(line)).await.is_err() {
                            break;
                        }
                    }
                });
                while let Some(Ok(msg)) = from_client.next().await {
                    if let Message::Text(t) = msg {
                        room.send(t.to_string()).unwrap();
                    }
                }
                forward.abort();
            });
        }
    });

    const MEMBERS: usize = 20;
    const EACH: usize = 5;
    let mut members = Vec::new();
    for _ in 0..MEMBERS {
        members.push(connect(addr, "/chat").await);
    }
    // A member hears the room once the server has subscribed it, after
    // its handshake: wait for all of them before anyone talks.
    while room.receiver_count() < MEMBERS {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut talkers = JoinSet::new();
    for (m, ws) in members.into_iter().enumerate() {
        talkers.spawn(async move {
            let (mut out, mut inbox) = ws.split();
            let speak = tokio::spawn(async move {
                for i in 0..EACH {
                    out.send(Message::text(format!("{m}:{i}"))).await.unwrap();
                }
                out
            });
            let mut heard = [0usize; MEMBERS];
            for _ in 0..MEMBERS * EACH {
                let Message::Text(t) = inbox.next().await.unwrap().unwrap() else {
                    panic!("member {m}: a non-text message");
                };
                let (who, i) = t.split_once(':').unwrap();
                let (who, i): (usize, usize) = (who.parse().unwrap(), i.parse().unwrap());
                assert_eq!(i, heard[who], "member {m}: {who}'s lines out of order");
                heard[who] += 1;
            }
            let out = speak.await.unwrap();
            out.reunite(inbox).unwrap().close(None).await.unwrap();
        });
    }
    while let Some(r) = talkers.join_next().await {
        r.unwrap();
    }
    server.abort();
    ok("a chat room of 20: each of 100 lines reached all 20, in each speaker's order");
}

/// A client that connects and never sends its handshake is dropped by the
/// server's timeout; one that sends garbage gets an error, not a hang.
async fn bad_clients() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut outcomes = Vec::new();
        for _ in 0..2 {
            let (stream, _) = listener.accept().await.unwrap();
            let r = tokio::time::timeout(Duration::from_millis(200), accept_async(stream)).await;
            outcomes.push(match r {
                Err(_) => "timed out",
                Ok(Err(_)) => "refused",
                Ok(Ok(_)) => "accepted",
            });
        }
        outcomes
    });
    let silent = TcpStream::connect(addr).await.unwrap();
    let mut rude = TcpStream::connect(addr).await.unwrap();
    rude.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut outcomes = server.await.unwrap();
    outcomes.sort();
    assert_eq!(outcomes, ["refused", "timed out"]);
    drop(silent);
    ok("a silent client times out, a plain HTTP request is refused");
}

async fn checks() {
    let (addr, server) = echo_server().await;
    many_clients_echo(addr).await;
    ping_and_close_codes(addr).await;
    server.abort();
    chat_room().await;
    bad_clients().await;
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, Duration::from_secs(120), checks())
    });
}
