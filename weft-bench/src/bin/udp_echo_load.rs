//! Load for `udp_echo_server`: `udp_echo_load ADDR CONNS SECS` opens
//! CONNS UDP sockets (a Tokio current_thread runtime) and has each send
//! 100 bytes and wait for the echo, over and over, for SECS seconds; prints
//! the number of round trips. A datagram lost on loopback would stall its
//! socket, so each wait gives up after 100 ms and sends again.

use std::time::{Duration, Instant};

#[path = "../echo_process.rs"]
mod echo_process;

fn main() {
    let (addr, conns, secs) = echo_process::load_args();
    echo_process::run_load(conns, secs, |deadline| async move {
        let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        s.connect(addr).await.unwrap();
        let msg = [7u8; 100];
        let mut buf = [0u8; 128];
        let mut n = 0u64;
        while Instant::now() < deadline {
            s.send(&msg).await.unwrap();
            let echo = tokio::time::timeout(Duration::from_millis(100), s.recv(&mut buf));
            if let Ok(Ok(100)) = echo.await {
                n += 1;
            }
        }
        n
    });
}
