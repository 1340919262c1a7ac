//! Networking: TCP, UDP and Unix-domain sockets on the I/O driver.
//!
//! Every type here needs a runtime built with the I/O driver
//! (`Builder::enable_io` or `enable_all`; `Runtime::new` and the macros
//! enable it). Every read, write, accept and connect spends the task's
//! coop budget.

mod addr;
mod halves;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
