//! tonic, as published, on weft (`tokio` in this graph is weft-tokio): a
//! gRPC service with a unary and a server-streaming method, served by
//! tonic's server and called through the client `tonic-build` generated.
//! Each check asserts its result; the program panics on the first that
//! fails.

use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

pub mod counter {
    tonic::include_proto!("counter");
}

use counter::counter_client::CounterClient;
use counter::counter_server::{Counter, CounterServer};
use counter::{AddRequest, CountRequest, Value};

#[derive(Default)]
struct Service {
    total: AtomicI64,
}

#[tonic::async_trait]
impl Counter for Service {
    async fn add(&self, request: Request<AddRequest>) -> Result<Response<Value>, Status> {
        let by = request.into_inner().by;
        let value = self.total.fetch_add(by, Ordering::SeqCst) + by;
        Ok(Response::new(Value { value }))
    }

    type CountUpStream = Pin<Box<dyn Stream<Item = Result<Value, Status>> + Send>>;

    async fn count_up(
        &self,
        request: Request<CountRequest>,
    ) -> Result<Response<Self::CountUpStream>, Status> {
        let CountRequest { from, count } = request.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            for value in from..from + i64::from(count) {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                if tx.send(Ok(Value { value })).await.is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
}

/// `#[tokio::main]` (the stand-in's macro: a multi-thread runtime) on a
/// function other than `main`, run once per I/O driver.
#[tokio::main]
async fn checks() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(CounterServer::new(Service::default()))
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                async {
                    stopped.await.ok();
                },
            ),
    );

    let mut client = CounterClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let mut last = 0;
    for by in [1, 10, 100] {
        last = client
            .add(AddRequest { by })
            .await
            .unwrap()
            .into_inner()
            .value;
    }
    assert_eq!(last, 111);
    // Concurrent unary calls over the one HTTP/2 connection.
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let mut client = client.clone();
            tokio::spawn(async move {
                client
                    .add(AddRequest { by: 1 })
                    .await
                    .unwrap()
                    .into_inner()
                    .value
            })
        })
        .collect();
    let mut seen = Vec::new();
    for call in calls {
        seen.push(call.await.unwrap());
    }
    seen.sort();
    assert_eq!(seen, (112..=121).collect::<Vec<_>>());
    println!("ok: tonic unary calls (sequential and concurrent on one channel)");

    let mut stream = client
        .count_up(CountRequest { from: 5, count: 20 })
        .await
        .unwrap()
        .into_inner();
    let mut values = Vec::new();
    while let Some(v) = stream.next().await {
        values.push(v.unwrap().value);
    }
    assert_eq!(values, (5..25).collect::<Vec<_>>());
    println!("ok: tonic server streaming (20 messages, in order)");

    drop(client);
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    println!("ok: tonic server shut down gracefully");
    println!("tonic on weft: all checks passed");
}

fn main() {
    each_driver::main(&["child"], |_| checks());
}
