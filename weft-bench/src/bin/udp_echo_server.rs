//! A UDP echo server for measuring its CPU per datagram from outside
//! (`PROTO=udp bash weft-bench/echo_cpu.sh`): one socket, one task on a
//! one-worker runtime, `recv_from` → `send_to` back to the sender.
//!
//! `udp_echo_server weft|tokio`: prints the bound address on one line,
//! then serves until killed. weft's I/O driver follows `WEFT_IO_DRIVER`
//! (with io_uring the receives go through the ring, the sends stay
//! `sendto(2)`).

macro_rules! udp_echo {
    ($rt:ident) => {{
        let rt = $rt::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let socket = rt.block_on(async { $rt::net::UdpSocket::bind("127.0.0.1:0").await.unwrap() });
        let addr = socket.local_addr().unwrap();
        rt.spawn(async move {
            let mut buf = [0u8; 2048];
            loop {
                let Ok((n, from)) = socket.recv_from(&mut buf).await else {
                    return;
                };
                if socket.send_to(&buf[..n], from).await.is_err() {
                    return;
                }
            }
        });
        (addr, Box::new(rt) as Box<dyn std::any::Any>)
    }};
}

#[path = "../echo_process.rs"]
mod echo_process;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "weft".into());
    let (addr, rt) = match which.as_str() {
        "weft" => udp_echo!(weft),
        "tokio" => udp_echo!(tokio),
        other => panic!("unknown runtime {other:?}: use weft or tokio"),
    };
    echo_process::serve_until_killed(addr, rt)
}
