//! Shared by the bench servers and the load generator: the generated gRPC
//! code and the runtime every server uses (one worker, as weft-bench's
//! servers: the measure is CPU per request on one core).

pub mod counter {
    tonic::include_proto!("counter");
}

/// A multi-thread runtime with one worker (or `$WORKERS`).
pub fn one_worker_runtime() -> tokio::runtime::Runtime {
    let workers = std::env::var("WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(1);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime builds")
}

/// The port from `$PORT`, or `default`.
pub fn port(default: u16) -> u16 {
    std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(default)
}
