//! actix-rt and actix-web, as published, on weft (`tokio` in this graph is
//! weft-tokio). actix runs a current_thread runtime with a `LocalSet` on
//! every thread it owns (the `System`, each `Arbiter`, each HTTP worker),
//! spawns with `spawn_local`, accepts connections on a mio poll thread of
//! its own and hands them to the workers as std sockets
//! (`TcpStream::from_std`), and stops with `oneshot`s and `mpsc`s.
//!
//! Checks: arbiters (futures and closures run on their own threads,
//! stopped and joined), blocking work and timers through actix-rt; then an
//! actix-web server with two workers answering a client on another thread
//! (reqwest's blocking client): path and JSON extractors, a 1 MiB body
//! echoed, shared state, a streamed response, ten requests in flight at
//! once, and a graceful stop that lets a request in flight finish. Each
//! check asserts its result; the program panics on the first that fails.
//! Everything runs on each I/O driver (`auto`, io_uring where the kernel
//! allows it, and `epoll`).

use actix_web::{get, post, web, App, HttpResponse, HttpServer, Responder};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use each_driver::ok;

/// actix-rt's own API: arbiters, blocking work, timers.
fn arbiters() {
    actix_rt::System::new().block_on(async {
        let system_thread = thread::current().id();
        // A future on an arbiter runs on the arbiter's thread, and a
        // closure too; both report back through tokio channels.
        let arbiter = actix_rt::Arbiter::new();
        let (tx, rx) = tokio::sync::oneshot::channel();
        assert!(arbiter.spawn(async move {
            actix_rt::time::sleep(Duration::from_millis(5)).await;
            // spawn_local works here: each arbiter has a LocalSet.
            let local = actix_rt::spawn(async { thread::current().id() });
            tx.send((thread::current().id(), local.await.unwrap()))
                .unwrap();
        }));
        let (ran_on, local_ran_on) = rx.await.unwrap();
        assert_ne!(ran_on, system_thread);
        assert_eq!(ran_on, local_ran_on);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for i in 0..10 {
            let tx = tx.clone();
            assert!(arbiter.spawn_fn(move || tx.send(i).unwrap()));
        }
        drop(tx);
        let mut got = Vec::new();
        while let Some(i) = rx.recv().await {
            got.push(i);
        }
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        assert!(arbiter.stop());
        // Joining blocks: do it on the blocking pool.
        actix_rt::task::spawn_blocking(move || arbiter.join().unwrap())
            .await
            .unwrap();
        ok("an arbiter ran futures and closures on its own thread, in order, then stopped");

        let started = Instant::now();
        let mut interval = actix_rt::time::interval(Duration::from_millis(10));
        for _ in 0..5 {
            interval.tick().await;
        }
        assert!(started.elapsed() >= Duration::from_millis(40));
        let never =
            actix_rt::time::timeout(Duration::from_millis(20), futures::future::pending::<()>());
        assert!(never.await.is_err());
        ok("actix-rt interval and timeout");
    });
}

#[derive(Deserialize)]
struct Order {
    item: String,
    count: u32,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Receipt {
    item: String,
    total: u32,
}

/// Requests in flight at once, and how many a `/gather` waits for.
struct Gathering {
    in_flight: AtomicUsize,
    want: usize,
}

#[get("/hello/{name}")]
async fn hello(name: web::Path<String>) -> impl Responder {
    format!("hello {name}")
}

#[post("/echo")]
async fn echo(body: web::Bytes) -> impl Responder {
    HttpResponse::Ok().body(body)
}

#[post("/order")]
async fn order(order: web::Json<Order>) -> impl Responder {
    web::Json(Receipt {
        item: order.item.clone(),
        total: order.count * 3,
    })
}

#[get("/count")]
async fn count(counter: web::Data<AtomicUsize>) -> impl Responder {
    (counter.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

#[get("/stream")]
async fn stream() -> impl Responder {
    let chunks = futures::stream::unfold(0u32, |i| async move {
        if i == 5 {
            return None;
        }
        actix_rt::time::sleep(Duration::from_millis(2)).await;
        Some((
            Ok::<_, actix_web::Error>(web::Bytes::from(format!("chunk {i};"))),
            i + 1,
        ))
    });
    HttpResponse::Ok().streaming(chunks)
}

/// Answers only once `want` requests are in it at the same time: the
/// server must be serving that many at once (at most 10 s).
#[get("/gather")]
async fn gather(gathering: web::Data<Gathering>) -> impl Responder {
    gathering.in_flight.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while gathering.in_flight.load(Ordering::SeqCst) < gathering.want {
        if Instant::now() > deadline {
            return HttpResponse::GatewayTimeout().finish();
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    HttpResponse::Ok().body("gathered")
}

#[get("/slow")]
async fn slow() -> impl Responder {
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    "slow done"
}

/// The client's side, on a thread of its own: every request and what it
/// must answer. Sends "stop" once a slow request is in flight.
fn client(base: String, stop: mpsc::Sender<()>) {
    let http = reqwest::blocking::Client::new();
    let get = |path: &str| http.get(format!("{base}{path}")).send().unwrap();

    assert_eq!(get("/hello/weft").text().unwrap(), "hello weft");
    let body: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    let back = http
        .post(format!("{base}/echo"))
        .body(body.clone())
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    assert!(back[..] == body[..], "echo: {} bytes back", back.len());
    let receipt: Receipt = http
        .post(format!("{base}/order"))
        .json(&serde_json::json!({"item": "yarn", "count": 4}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        receipt,
        Receipt {
            item: "yarn".into(),
            total: 12
        }
    );
    let counts: Vec<usize> = (0..6)
        .map(|_| get("/count").text().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        get("/stream").text().unwrap(),
        "chunk 0;chunk 1;chunk 2;chunk 3;chunk 4;"
    );
    ok("path, JSON, a 1 MiB body, shared state and a streamed response");

    let gatherers: Vec<_> = (0..10)
        .map(|_| {
            let url = format!("{base}/gather");
            thread::spawn(move || {
                let response = reqwest::blocking::get(url).unwrap();
                (response.status().as_u16(), response.text().unwrap())
            })
        })
        .collect();
    for gatherer in gatherers {
        assert_eq!(gatherer.join().unwrap(), (200, "gathered".to_string()));
    }
    ok("ten requests in flight at once on two workers");

    let url = format!("{base}/slow");
    let in_flight = thread::spawn(move || reqwest::blocking::get(url).unwrap().text().unwrap());
    thread::sleep(Duration::from_millis(100));
    stop.send(()).unwrap();
    assert_eq!(in_flight.join().unwrap(), "slow done");
}

fn server() {
    actix_web::rt::System::new().block_on(async {
        let counter = web::Data::new(AtomicUsize::new(0));
        let gathering = web::Data::new(Gathering {
            in_flight: AtomicUsize::new(0),
            want: 10,
        });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(counter.clone())
                .app_data(gathering.clone())
                .service(hello)
                .service(echo)
                .service(order)
                .service(count)
                .service(stream)
                .service(gather)
                .service(slow)
                .app_data(web::PayloadConfig::new(4 << 20))
        })
        .workers(2)
        .disable_signals()
        .shutdown_timeout(10)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let addr = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        let (stop_tx, stop_rx) = mpsc::channel();
        let client = thread::spawn(move || client(format!("http://{addr}"), stop_tx));
        let stopper = actix_rt::spawn(async move {
            // The client asks once a slow request is in flight; if it
            // panicked instead (its sender dropped), stop anyway, so the
            // panic is reported rather than the server left running.
            let asked = actix_rt::task::spawn_blocking(move || stop_rx.recv().is_ok())
                .await
                .unwrap();
            // Graceful: the slow request in flight is answered first.
            handle.stop(true).await;
            asked
        });
        server.await.unwrap();
        let asked = stopper.await.unwrap();
        actix_rt::task::spawn_blocking(move || client.join().unwrap())
            .await
            .unwrap();
        assert!(asked, "the client ended without asking for the stop");
        ok("a graceful stop let the request in flight finish");
    });
}

fn main() {
    // actix builds a runtime per thread itself: one child per driver.
    each_driver::main(&["child"], |_| {
        arbiters();
        server();
    });
}
