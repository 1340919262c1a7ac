//! `AsyncFd` readiness on every flavour and (through `WEFT_IO_DRIVER`) both
//! drivers, registered with epoll as on Tokio: waits that must wait, waits
//! that must resolve, several waiters at once, the closed, priority and
//! error bits, a writer on a half-closed socket, waking from another
//! thread, and what dropping does. The cases are in `async_fd/cases.rs`;
//! `io_async_fd_on_rings.rs` runs them on ring-registered descriptors.

#[macro_use]
mod support;

mod registered {
    pub use weft::io::unix::AsyncFd;
}

include!("async_fd/cases.rs");
