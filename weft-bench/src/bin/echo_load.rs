//! Load for `echo_server`: `echo_load ADDR CONNS SECS` opens CONNS
//! connections (a Tokio current_thread runtime, as the io suite's client)
//! and has each send 100 bytes and read the echo back, over and over, for
//! SECS seconds; prints the number of round trips.

use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "../echo_process.rs"]
mod echo_process;

fn main() {
    let (addr, conns, secs) = echo_process::load_args();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let total = rt.block_on(async move {
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        let mut tasks = Vec::new();
        for _ in 0..conns {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.set_nodelay(true).unwrap();
            tasks.push(tokio::spawn(async move {
                let msg = [7u8; 100];
                let mut buf = [0u8; 100];
                let mut n = 0u64;
                while Instant::now() < deadline {
                    s.write_all(&msg).await.unwrap();
                    s.read_exact(&mut buf).await.unwrap();
                    n += 1;
                }
                n
            }));
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        total
    });
    println!("{total}");
}
