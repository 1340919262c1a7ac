//! axum's hello world on one worker, until killed.
use axum::{routing::get, Router};

fn main() {
    eco_bench::one_worker_runtime().block_on(async {
        let app = Router::new().route("/", get(|| async { "Hello, World!" }));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", eco_bench::port(3201)))
            .await
            .unwrap();
        axum::serve(listener, app).await.unwrap();
    });
}
