//! What the echo benchmark's processes share (`echo_server`, `echo_load`,
//! `udp_echo_server`, `udp_echo_load`, driven by `echo_cpu.sh`): the load's
//! command line, and the server's "print the address, serve until killed".
//! Included by each with `#[path]`.

#![allow(dead_code)]

/// `ADDR CONNS SECS` from the command line of a load process.
pub fn load_args() -> (std::net::SocketAddr, usize, f64) {
    let mut args = std::env::args().skip(1);
    let addr = args.next().expect("ADDR").parse().expect("ADDR: ip:port");
    let conns = args
        .next()
        .expect("CONNS")
        .parse()
        .expect("CONNS: a number");
    let secs = args.next().expect("SECS").parse().expect("SECS: a number");
    (addr, conns, secs)
}

/// Print the server's address on one line and keep its runtime alive until
/// the process is killed.
pub fn serve_until_killed(addr: std::net::SocketAddr, runtime: Box<dyn std::any::Any>) -> ! {
    use std::io::Write;
    println!("{addr}");
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
        let _ = &runtime;
    }
}
