//! axum and hyper-util, as published, on weft (`tokio` in this graph is
//! weft-tokio): an axum app with extractors, state, a WebSocket echo and
//! graceful shutdown, requested through hyper-util's legacy `Client`; and a
//! hyper-util `auto` server answering HTTP/1.1 and HTTP/2. Each check
//! asserts its result; the program panics on the first that fails.

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

fn ok(what: &str) {
    println!("ok: {what}");
}

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

#[tokio::main]
async fn main() {
    axum_app().await;
    hyper_util_auto_server().await;
    println!("axum and hyper-util on weft: all checks passed");
}
