//! mini-redis, Tokio's own tutorial server, unmodified, on weft: its
//! server, its async, buffered and blocking clients, and the `redis` crate
//! (redis-rs, multiplexed connection) talking to it, on each runtime
//! flavour and each I/O driver (`each_driver`).
//!
//! What it leans on in the runtime: mini-redis's server (a `Semaphore`
//! capping connections, a `broadcast` shutdown signal, an `mpsc` whose
//! close tells it every connection ended, `select!` in each connection),
//! its key expiry (a background task sleeping until the next deadline,
//! woken by `Notify`), pub/sub (`broadcast` per channel, `StreamMap`),
//! the buffered client (`mpsc` + `oneshot`), the blocking client (its own
//! current-thread runtime, built and run from a `spawn_blocking` thread),
//! and redis-rs's multiplexed connection (a driver task fed by `mpsc`).

use bytes::Bytes;
use each_driver::ok;
use mini_redis::{blocking_client, buffer, client};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// 100 clients at once, each setting and reading back its own keys.
async fn many_clients(addr: SocketAddr) {
    let mut clients = JoinSet::new();
    for c in 0..100 {
        clients.spawn(async move {
            let mut client = client::connect(addr).await.unwrap();
            for k in 0..20 {
                let key = format!("client{c}:key{k}");
                let value = Bytes::from(format!("{c}/{k}/").repeat(k + 1));
                client.set(&key, value.clone()).await.unwrap();
                assert_eq!(client.get(&key).await.unwrap(), Some(value), "{key}");
            }
            assert_eq!(
                client.get(&format!("client{c}:nothing")).await.unwrap(),
                None
            );
        });
    }
    while let Some(r) = clients.join_next().await {
        r.unwrap();
    }
    ok("100 clients at once: 2,000 keys set and read back");
}

/// A key set with an expiry is there before it and gone after it (the
/// server's purge task sleeps until the earliest deadline).
async fn expiry(addr: SocketAddr) {
    let mut client = client::connect(addr).await.unwrap();
    client
        .set_expires("short", "lived".into(), Duration::from_millis(150))
        .await
        .unwrap();
    client
        .set_expires("long", "lived".into(), Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        client.get("short").await.unwrap().as_deref(),
        Some(&b"lived"[..])
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        client.get("short").await.unwrap(),
        None,
        "expired after 150 ms"
    );
    assert!(client.get("long").await.unwrap().is_some());
    ok("a key with a 150 ms expiry is gone at 400 ms, one with 60 s stays");
}

/// Ten subscribers hear every message published on their channels, in
/// order; `publish` counts them.
async fn pub_sub(addr: SocketAddr) {
    let mut subscribers = JoinSet::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(10);
    for s in 0..10 {
        let ready = ready_tx.clone();
        subscribers.spawn(async move {
            let client = client::connect(addr).await.unwrap();
            let channels = vec!["news".to_string(), format!("private{s}")];
            let mut sub = client.subscribe(channels).await.unwrap();
            ready.send(()).await.unwrap();
            let mut got = Vec::new();
            while got.len() < 51 {
                let msg = sub.next_message().await.unwrap().expect("a message");
                got.push(format!(
                    "{}={}",
                    msg.channel,
                    String::from_utf8_lossy(&msg.content)
                ));
            }
            // In order within each channel; mini-redis merges a
            // subscriber's channels with a `StreamMap`, which may hand
            // the private message over before the last news.
            let news: Vec<&String> = got.iter().filter(|m| m.starts_with("news=")).collect();
            let want: Vec<String> = (0..50).map(|i| format!("news={i}")).collect();
            assert_eq!(news, want.iter().collect::<Vec<_>>(), "subscriber {s}");
            let private = format!("private{s}=for {s}");
            assert_eq!(
                got.iter().filter(|m| **m == private).count(),
                1,
                "subscriber {s}"
            );
        });
    }
    for _ in 0..10 {
        ready_rx.recv().await.unwrap();
    }
    let mut publisher = client::connect(addr).await.unwrap();
    for i in 0..50 {
        let heard = publisher
            .publish("news", i.to_string().into())
            .await
            .unwrap();
        assert_eq!(heard, 10, "message {i}");
    }
    for s in 0..10 {
        let heard = publisher
            .publish(&format!("private{s}"), format!("for {s}").into())
            .await
            .unwrap();
        assert_eq!(heard, 1);
    }
    assert_eq!(publisher.publish("nobody", "x".into()).await.unwrap(), 0);
    while let Some(r) = subscribers.join_next().await {
        r.unwrap();
    }
    ok("10 subscribers each heard 50 broadcasts in order and their own message");
}

/// The buffered client: many tasks share one connection through a
/// channel to the task that owns it.
async fn buffered(addr: SocketAddr) {
    let shared = buffer(client::connect(addr).await.unwrap());
    let mut tasks = JoinSet::new();
    for t in 0..32 {
        let mut handle = shared.clone();
        tasks.spawn(async move {
            let key = format!("buffered{t}");
            handle.set(&key, t.to_string().into()).await.unwrap();
            assert_eq!(handle.get(&key).await.unwrap(), Some(t.to_string().into()));
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    ok("32 tasks through one buffered connection");
}

/// The blocking client builds its own current-thread runtime; from a
/// `spawn_blocking` thread that is allowed, as on Tokio.
async fn blocking(addr: SocketAddr) {
    let got = tokio::task::spawn_blocking(move || {
        let mut client = blocking_client::connect(addr).unwrap();
        client.set("blocking", "yes".into()).unwrap();
        client.get("blocking").unwrap()
    })
    .await
    .unwrap();
    assert_eq!(got.as_deref(), Some(&b"yes"[..]));
    ok("the blocking client, with its own runtime, from spawn_blocking");
}

/// redis-rs's multiplexed connection against mini-redis: commands from
/// several tasks over one connection, and a command mini-redis lacks
/// answered with its error.
async fn redis_rs(addr: SocketAddr) {
    let client = redis::Client::open(format!("redis://{addr}/")).unwrap();
    let con = client.get_multiplexed_async_connection().await.unwrap();
    let mut tasks = JoinSet::new();
    for t in 0..16 {
        let mut con = con.clone();
        tasks.spawn(async move {
            let key = format!("rs{t}");
            let _: () = redis::cmd("SET")
                .arg(&key)
                .arg(t * 7)
                .query_async(&mut con)
                .await
                .unwrap();
            let back: i64 = redis::cmd("GET")
                .arg(&key)
                .query_async(&mut con)
                .await
                .unwrap();
            assert_eq!(back, t * 7);
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let mut con = con;
    let err = redis::cmd("INCR")
        .arg("rs0")
        .query_async::<i64>(&mut con)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown command"), "{err}");
    // A value written by redis-rs reads back through mini-redis's client.
    let mut mini = client::connect(addr).await.unwrap();
    assert_eq!(mini.get("rs3").await.unwrap().as_deref(), Some(&b"21"[..]));
    ok("redis-rs: 16 tasks over one multiplexed connection; an unknown command's error");
}

async fn checks() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(mini_redis::server::run(listener, stop_rx));

    many_clients(addr).await;
    expiry(addr).await;
    pub_sub(addr).await;
    buffered(addr).await;
    blocking(addr).await;
    redis_rs(addr).await;

    // A graceful stop: a connection left open is told to end, and `run`
    // returns once every connection's task has.
    let mut idle = client::connect(addr).await.unwrap();
    idle.set("before-stop", "x".into()).await.unwrap();
    stop_tx.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(
        idle.get("before-stop").await.is_err(),
        "the server closed the idle connection"
    );
    assert!(client::connect(addr).await.is_err(), "the listener is gone");
    ok("a graceful stop ends the open connection and closes the listener");
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, Duration::from_secs(120), checks())
    });
}
