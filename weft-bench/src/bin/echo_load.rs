//! Load for `echo_server`: `echo_load ADDR CONNS SECS` opens CONNS
//! connections (a Tokio current_thread runtime, as the io suite's client)
//! and has each send 100 bytes and read the echo back, over and over, for
//! SECS seconds; prints the number of round trips.

use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn main() {
    let mut args = std::env::args().skip(1);
    let addr: std::net::SocketAddr = args.next().expect("ADDR").parse().unwrap();
    let conns: usize = args.next().expect("CONNS").parse().unwrap();
    let secs: f64 = args.next().expect("SECS").parse().unwrap();
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
