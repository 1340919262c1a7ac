//! A TCP echo server: every byte a client sends comes straight back.
//!
//! Run it with `cargo run --release --example echo` (port 6142, or set
//! `PORT`), then try `nc 127.0.0.1 6142` and type a few lines.
//!
//! Each connection gets its own task, which splits the stream into its read
//! and write halves and joins them with `weft::io::copy`.

use weft::net::TcpListener;

#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(6142);
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("echo server listening on {}", listener.local_addr()?);

    loop {
        let (mut stream, peer) = listener.accept().await?;
        weft::spawn(async move {
            let (mut reader, mut writer) = stream.split();
            match weft::io::copy(&mut reader, &mut writer).await {
                Ok(n) => println!("{peer}: echoed {n} bytes"),
                Err(e) => eprintln!("{peer}: {e}"),
            }
        });
    }
}
