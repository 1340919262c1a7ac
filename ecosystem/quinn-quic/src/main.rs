//! quinn (QUIC over UDP, its `runtime-tokio` and rustls), as published, on
//! weft (`tokio` in this graph is weft-tokio). quinn drives its UDP socket
//! through `tokio::net::UdpSocket`'s `try_io` / `poll_recv_ready` /
//! `poll_send_ready` with its own `recvmsg`/`sendmsg` calls (quinn-udp),
//! its timers through `tokio::time::sleep_until` and `Sleep::reset`, and
//! its endpoint and connections as spawned tasks: on weft's io_uring
//! driver that means readiness-based receives on a socket whose receives
//! otherwise go through the ring (weft settles the ring's receive first).
//!
//! The program runs every check on each runtime flavour and each I/O
//! driver (`auto`, io_uring where the kernel allows it, and `epoll`), each
//! in a child process of its own (`WEFT_IO_DRIVER` is read
//! when a runtime is built): echoes on many concurrent bidirectional
//! streams, a large one-way transfer, unreliable datagrams, and a close
//! whose code and reason reach the peer. Each check asserts its result;
//! the program panics on the first that fails.

use quinn::crypto::rustls::QuicClientConfig;
use quinn::{ClientConfig, ConnectionError, Endpoint, ServerConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use each_driver::ok;

/// A deterministic byte pattern, so a received stream can be checked
/// without keeping what was sent.
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A server endpoint on loopback with a fresh self-signed certificate, and
/// a client configuration that trusts it.
fn endpoints() -> (Endpoint, ClientConfig) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = CertificateDer::from(certified.cert);
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let mut server_config = ServerConfig::with_single_cert(vec![cert.clone()], key).unwrap();
    let transport = Arc::get_mut(&mut server_config.transport).unwrap();
    transport.max_concurrent_bidi_streams(64u32.into());
    transport.datagram_receive_buffer_size(Some(1 << 20));
    let server = Endpoint::server(server_config, "127.0.0.1:0".parse().unwrap()).unwrap();

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let crypto = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let client = ClientConfig::new(Arc::new(QuicClientConfig::try_from(crypto).unwrap()));
    (server, client)
}

/// What the server does with each of the `n` connections it accepts:
/// echo every bidirectional stream, answer a uni stream with its length
/// and sum on a uni stream of its own, echo datagrams; returns how each
/// connection ended, in the order they were accepted.
async fn serve(server: Endpoint, n: usize) -> Vec<ConnectionError> {
    let mut connections = Vec::new();
    for _ in 0..n {
        let incoming = server.accept().await.expect("the endpoint closed early");
        connections.push(tokio::spawn(serve_one(incoming.await.unwrap())));
    }
    let mut ends = Vec::new();
    for connection in connections {
        ends.push(connection.await.unwrap());
    }
    ends
}

async fn serve_one(conn: quinn::Connection) -> ConnectionError {
    let streams = conn.clone();
    let bidi = tokio::spawn(async move {
        while let Ok((mut send, mut recv)) = streams.accept_bi().await {
            tokio::spawn(async move {
                let data = recv.read_to_end(usize::MAX).await.unwrap();
                send.write_all(&data).await.unwrap();
                send.finish().unwrap();
                // Keep the stream until the peer has everything.
                let _ = send.stopped().await;
            });
        }
    });
    let streams = conn.clone();
    let uni = tokio::spawn(async move {
        while let Ok(mut recv) = streams.accept_uni().await {
            let data = recv.read_to_end(usize::MAX).await.unwrap();
            let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
            let mut reply = streams.open_uni().await.unwrap();
            let mut answer = (data.len() as u64).to_be_bytes().to_vec();
            answer.extend_from_slice(&sum.to_be_bytes());
            reply.write_all(&answer).await.unwrap();
            reply.finish().unwrap();
            let _ = reply.stopped().await;
        }
    });
    let datagrams = conn.clone();
    let echo = tokio::spawn(async move {
        while let Ok(datagram) = datagrams.read_datagram().await {
            datagrams.send_datagram(datagram).unwrap();
        }
    });
    let end = conn.closed().await;
    for task in [bidi, uni, echo] {
        task.await.unwrap();
    }
    end
}

async fn checks() {
    let (server, client_config) = endpoints();
    let addr: SocketAddr = server.local_addr().unwrap();
    let served = tokio::spawn(serve(server.clone(), 2));
    let mut client = Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    client.set_default_client_config(client_config);

    // 1. Many streams at once, of sizes from empty to past the stream's
    // initial flow-control window, echoed whole.
    let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
    let echoes: Vec<_> = (0..48u64)
        .map(|i| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let len = [0, 1, 1200, 1500, 65_536, 300_000][i as usize % 6];
                let sent = pattern(i, len);
                let (mut send, mut recv) = conn.open_bi().await.unwrap();
                let writer = {
                    let sent = sent.clone();
                    tokio::spawn(async move {
                        send.write_all(&sent).await.unwrap();
                        send.finish().unwrap();
                    })
                };
                let back = recv.read_to_end(usize::MAX).await.unwrap();
                writer.await.unwrap();
                assert!(
                    back == sent,
                    "stream {i}: {} bytes back of {len}",
                    back.len()
                );
            })
        })
        .collect();
    for echo in echoes {
        echo.await.unwrap();
    }
    ok("48 concurrent bidirectional streams echoed (0 to 300,000 bytes each)");

    // 2. One large one-way transfer, answered on a stream the server opens.
    let big = pattern(99, 8 << 20);
    let sum: u64 = big.iter().map(|&b| u64::from(b)).sum();
    let mut send = conn.open_uni().await.unwrap();
    send.write_all(&big).await.unwrap();
    send.finish().unwrap();
    let mut answer = conn.accept_uni().await.unwrap();
    let reply = answer.read_to_end(16).await.unwrap();
    assert_eq!(
        u64::from_be_bytes(reply[..8].try_into().unwrap()),
        big.len() as u64
    );
    assert_eq!(u64::from_be_bytes(reply[8..].try_into().unwrap()), sum);
    ok("8 MiB one-way stream received whole (length and sum answered)");

    // 3. Unreliable datagrams: each echoed; one that is lost is sent again.
    for i in 0..50u32 {
        let payload = pattern(u64::from(i) + 1000, 100 + i as usize * 10);
        let mut echoed = false;
        for _ in 0..5 {
            conn.send_datagram(payload.clone().into()).unwrap();
            match tokio::time::timeout(Duration::from_secs(1), conn.read_datagram()).await {
                Ok(back) => {
                    assert_eq!(&back.unwrap()[..], &payload[..], "datagram {i}");
                    echoed = true;
                    break;
                }
                Err(_elapsed) => continue,
            }
        }
        assert!(echoed, "datagram {i} never came back in 5 tries");
    }
    ok("50 datagrams echoed");

    // 4. A second connection open at the same time, closed by the client
    // with a code and a reason, which the server sees.
    let second = client.connect(addr, "localhost").unwrap().await.unwrap();
    let (mut send, mut recv) = second.open_bi().await.unwrap();
    send.write_all(b"second").await.unwrap();
    send.finish().unwrap();
    assert_eq!(recv.read_to_end(64).await.unwrap(), b"second");
    second.close(VarInt::from_u32(3), b"done with it");
    conn.close(VarInt::from_u32(7), b"last");
    let ends = tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the server did not see both connections close")
        .unwrap();
    assert_eq!(ends.len(), 2, "{ends:?}");
    for (end, (code, reason)) in ends
        .iter()
        .zip([(7u32, &b"last"[..]), (3, b"done with it")])
    {
        match end {
            ConnectionError::ApplicationClosed(close) => {
                assert_eq!(close.error_code, VarInt::from_u32(code));
                assert_eq!(&close.reason[..], reason);
            }
            other => panic!("connection ended with {other:?}, not the client's close"),
        }
    }
    ok("closes with codes and reasons reached the server");

    client.wait_idle().await;
    server.close(VarInt::from_u32(0), b"");
    server.wait_idle().await;
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, Duration::from_secs(120), checks())
    });
}
