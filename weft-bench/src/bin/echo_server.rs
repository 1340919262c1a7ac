//! The io suite's TCP echo server (`echo_server!`: one worker, one task
//! per connection, read → `write_all`) as a process of its own, for
//! measuring its CPU per round trip from outside (`echo_cpu.sh`).
//!
//! `echo_server weft|tokio|weft-fd|tokio-fd`: prints the listening address
//! on one line, then serves until killed (`-fd`: each connection a std
//! socket under `AsyncFd`, `echo_server_fd!`). weft's I/O driver follows
//! `WEFT_IO_DRIVER`.

// Only the server macro is used here; the client half is echo_load's job.
#[path = "../echo.rs"]
#[macro_use]
#[allow(dead_code)]
mod echo;

#[path = "../echo_process.rs"]
mod echo_process;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "weft".into());
    let (addr, rt) = match which.as_str() {
        "weft" => {
            let (addr, rt) = echo_server!(weft);
            (addr, Box::new(rt) as Box<dyn std::any::Any>)
        }
        "tokio" => {
            let (addr, rt) = echo_server!(tokio);
            (addr, Box::new(rt) as Box<dyn std::any::Any>)
        }
        "weft-fd" => {
            let (addr, rt) = echo_server_fd!(weft);
            (addr, Box::new(rt) as Box<dyn std::any::Any>)
        }
        "tokio-fd" => {
            let (addr, rt) = echo_server_fd!(tokio);
            (addr, Box::new(rt) as Box<dyn std::any::Any>)
        }
        other => panic!("unknown server {other:?}: use weft, tokio, weft-fd or tokio-fd"),
    };
    echo_process::serve_until_killed(addr, rt)
}
