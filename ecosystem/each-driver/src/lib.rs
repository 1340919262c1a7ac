//! The shared `main` of the ecosystem programs that run their checks once
//! per weft I/O driver: each (driver, flavour) pair runs in a child
//! process of the same binary, because `WEFT_IO_DRIVER` is read when a
//! runtime is built and some crates (actix) build their own runtimes on
//! their own threads. The parent only launches the children and fails if
//! one does.
//!
//! ```no_run
//! # async fn checks() {}
//! each_driver::main(&each_driver::FLAVOURS, |flavour| {
//!     each_driver::block_on_within(flavour, std::time::Duration::from_secs(60), checks())
//! });
//! ```

use std::process::Command;
use std::time::Duration;

/// weft's I/O drivers as `WEFT_IO_DRIVER` names them. `uring`, not
/// `auto`: on a kernel without io_uring, `auto` would quietly run epoll
/// twice, where this fails loudly.
pub const DRIVERS: [&str; 2] = ["uring", "epoll"];

/// The runtime flavours [`runtime`] builds.
pub const FLAVOURS: [&str; 2] = ["current_thread", "multi_thread"];

/// In a child (the binary's first argument names its flavour), runs
/// `checks` with it; in the parent, runs every flavour of `flavours` on
/// every driver of [`DRIVERS`], each in a child, and panics if one fails.
/// A program that builds no runtime of its own passes `&["child"]`.
pub fn main(flavours: &[&str], checks: fn(&str)) {
    if let Some(flavour) = std::env::args().nth(1) {
        return checks(&flavour);
    }
    let me = std::env::current_exe().expect("the program's own path");
    for driver in DRIVERS {
        for flavour in flavours {
            println!("== {flavour}, WEFT_IO_DRIVER={driver}");
            let status = Command::new(&me)
                .arg(flavour)
                .env("WEFT_IO_DRIVER", driver)
                .status()
                .expect("the child process starts");
            assert!(status.success(), "{flavour} on {driver}: {status}");
        }
    }
}

/// A runtime of `flavour` (one of [`FLAVOURS`]; two workers for
/// `multi_thread`), with I/O and time enabled.
pub fn runtime(flavour: &str) -> tokio::runtime::Runtime {
    let mut builder = match flavour {
        "current_thread" => tokio::runtime::Builder::new_current_thread(),
        "multi_thread" => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
        other => panic!("unknown flavour {other:?}: expected one of {FLAVOURS:?}"),
    };
    builder.enable_all().build().expect("the runtime builds")
}

/// Runs `checks` on a runtime of `flavour`, and fails if they take longer
/// than `limit` (a hang shows as a failure, not a stuck CI).
pub fn block_on_within<F: std::future::Future>(
    flavour: &str,
    limit: Duration,
    checks: F,
) -> F::Output {
    runtime(flavour)
        .block_on(async { tokio::time::timeout(limit, checks).await })
        .unwrap_or_else(|_| panic!("the checks took more than {limit:?} on {flavour}"))
}

/// Prints a passed check, as every program does.
pub fn ok(what: &str) {
    println!("ok: {what}");
}
