//! Load for `echo_server`: `echo_load ADDR CONNS SECS` opens CONNS
//! connections (a Tokio current_thread runtime, as the io suite's client)
//! and has each send 100 bytes and read the echo back, over and over, for
//! SECS seconds; prints the number of round trips.

use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "../echo_process.rs"]
mod echo_process;

fn main() {
    let (addr, conns, secs) = echo_process::load_args();
    echo_process::run_load(conns, secs, |deadline| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        let msg = [7u8; 100];
        let mut buf = [0u8; 100];
        let mut n = 0u64;
        while Instant::now() < deadline {
            s.write_all(&msg).await.unwrap();
            s.read_exact(&mut buf).await.unwrap();
            n += 1;
        }
        n
    });
}
