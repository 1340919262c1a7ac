//! actix-web's hello world on one worker (a current_thread runtime with a
//! `LocalSet`; actix-server's accept loop is a mio thread of its own),
//! until killed.
use actix_web::{web, App, HttpServer};

fn main() -> std::io::Result<()> {
    actix_web::rt::System::new().block_on(async {
        HttpServer::new(|| App::new().route("/", web::get().to(|| async { "Hello, World!" })))
            .workers(1)
            .bind(("127.0.0.1", eco_bench::port(3202)))?
            .run()
            .await
    })
}
