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

/// The load processes' main: on a Tokio current_thread runtime, run
/// `conns` copies of `conn` (each given the deadline `secs` from now, and
/// returning the round trips it made) and print their total.
pub fn run_load<F, Fut>(conns: usize, secs: f64, conn: F)
where
    F: Fn(std::time::Instant) -> Fut,
    Fut: std::future::Future<Output = u64> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let total: u64 = rt.block_on(async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
        let tasks: Vec<_> = (0..conns).map(|_| tokio::spawn(conn(deadline))).collect();
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        total
    });
    println!("{total}");
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
