//! axum, hyper-util, reqwest and tower, as published, on weft (`tokio` in
//! this graph is weft-tokio): an axum app with extractors, state, a
//! WebSocket echo and graceful shutdown, requested through hyper-util's
//! legacy `Client` and through reqwest (async, and `blocking`, which runs a
//! runtime of its own on a thread: weft's, here); a hyper-util `auto`
//! server answering HTTP/1.1 and HTTP/2; tower's timeout, concurrency limit
//! and buffer. Each check asserts its result; the program panics on the
//! first that fails.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};

use each_driver::ok;

#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
struct Greeting {
    name: String,
    visits: u64,
}

async fn greet(Path(name): Path<String>, State(visits): State<Arc<AtomicU64>>) -> Json<Greeting> {
    let visits = visits.fetch_add(1, Ordering::SeqCst) + 1;
    Json(Greeting { name, visits })
}

async fn ws_echo(ws: WebSocketUpgrade) -> axum::response::Response {
    ws.on_upgrade(|mut socket: WebSocket| async move {
        while let Some(Ok(msg)) = socket.recv().await {
            if let Message::Text(t) = msg {
                if socket
                    .send(Message::Text(format!("echo: {t}").into()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    })
}

async fn body_of(res: Response<hyper::body::Incoming>) -> String {
    String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

async fn axum_app() {
    let app = Router::new()
        .route("/", get(|| async { "hello from axum on weft" }))
        .route("/greet/{name}", get(greet))
        .route(
            "/echo",
            post(|body: String| async move { body.to_uppercase() }),
        )
        .route("/ws", get(ws_echo))
        .with_state(Arc::new(AtomicU64::new(0)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                stopped.await.ok();
            })
            .await
            .unwrap();
    });

    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let res = client
        .get(format!("http://{addr}/").parse().unwrap())
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(body_of(res).await, "hello from axum on weft");
    for visits in 1..=2 {
        let res = client
            .get(format!("http://{addr}/greet/weft").parse().unwrap())
            .await
            .unwrap();
        let greeting: Greeting = serde_json::from_str(&body_of(res).await).unwrap();
        assert_eq!(
            greeting,
            Greeting {
                name: "weft".into(),
                visits
            }
        );
    }
    let req = Request::post(format!("http://{addr}/echo"))
        .body(Full::new(Bytes::from_static(b"shout")))
        .unwrap();
    assert_eq!(body_of(client.request(req).await.unwrap()).await, "SHOUT");
    ok("axum: routing, Path/State/Json/String extractors, through hyper-util's legacy Client");

    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    for word in ["one", "two"] {
        ws.send(tokio_tungstenite::tungstenite::Message::Text(word.into()))
            .await
            .unwrap();
        let reply = ws.next().await.unwrap().unwrap();
        assert_eq!(reply.into_text().unwrap().as_str(), format!("echo: {word}"));
    }
    ws.close(None).await.unwrap();
    ok("axum: WebSocket echo (tokio-tungstenite client)");

    let http = reqwest::Client::new();
    let text = http
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text, "hello from axum on weft");
    let greeting: Greeting = http
        .get(format!("http://{addr}/greet/reqwest"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(greeting.name, "reqwest");
    let text = http
        .post(format!("http://{addr}/echo"))
        .body("async post")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text, "ASYNC POST");
    ok("reqwest (async): GET, JSON, POST against the axum app");

    let blocking = tokio::task::spawn_blocking(move || {
        let http = reqwest::blocking::Client::new();
        let get = http
            .get(format!("http://{addr}/"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        let post = http
            .post(format!("http://{addr}/echo"))
            .body("blocking post")
            .send()
            .unwrap()
            .text()
            .unwrap();
        (get, post)
    })
    .await
    .unwrap();
    assert_eq!(
        blocking,
        (
            "hello from axum on weft".to_string(),
            "BLOCKING POST".to_string()
        )
    );
    ok("reqwest::blocking: GET and POST (its own runtime on its own thread)");

    drop(client);
    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), server)
        .await
        .expect("graceful shutdown finished")
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
    ok("axum::serve with graceful shutdown");
}

async fn hyper_util_auto_server() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(|req: Request<hyper::body::Incoming>| async move {
                        let version = format!("{:?}", req.version());
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(version))))
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });

    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let res = client
        .get(format!("http://{addr}/").parse().unwrap())
        .await
        .unwrap();
    assert_eq!(body_of(res).await, "HTTP/1.1");

    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut versions = Vec::new();
    for _ in 0..3 {
        let req = Request::get(format!("http://{addr}/"))
            .body(Full::new(Bytes::new()))
            .unwrap();
        versions.push(body_of(sender.send_request(req).await.unwrap()).await);
    }
    assert_eq!(versions, ["HTTP/2.0"; 3]);
    ok("hyper-util auto server: HTTP/1.1 and HTTP/2 (prior knowledge) on one port");
}

async fn tower_layers() {
    use std::time::Duration;
    use tower::{Service, ServiceBuilder, ServiceExt};

    let slow = tower::service_fn(|ms: u64| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, Infallible>(ms)
    });
    let mut timed = ServiceBuilder::new()
        .timeout(Duration::from_millis(50))
        .service(slow);
    assert_eq!(timed.ready().await.unwrap().call(5).await.unwrap(), 5);
    let err = timed.ready().await.unwrap().call(500).await.unwrap_err();
    assert!(
        err.is::<tower::timeout::error::Elapsed>(),
        "timed out: {err}"
    );

    let running = Arc::new(AtomicU64::new(0));
    let peak = Arc::new(AtomicU64::new(0));
    let svc = {
        let (running, peak) = (running.clone(), peak.clone());
        tower::service_fn(move |_: ()| {
            let (running, peak) = (running.clone(), peak.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, Infallible>(())
            }
        })
    };
    let limited = ServiceBuilder::new()
        .buffer(16)
        .concurrency_limit(2)
        .service(svc);
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let mut svc = limited.clone();
            tokio::spawn(async move { svc.ready().await.unwrap().call(()).await.unwrap() })
        })
        .collect();
    for call in calls {
        call.await.unwrap();
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2, "at most two calls at once");
    ok("tower: timeout, buffer (a worker task over an mpsc channel), concurrency_limit");
}

async fn checks() {
    axum_app().await;
    hyper_util_auto_server().await;
    tower_layers().await;
    println!("axum, hyper-util, reqwest and tower on weft: all checks passed");
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, std::time::Duration::from_secs(120), checks())
    });
}
