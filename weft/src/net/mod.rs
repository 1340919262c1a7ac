//! Networking: TCP, UDP and Unix-domain sockets on the I/O driver.
//!
//! Every type here needs a runtime built with the I/O driver
//! (`Builder::enable_io` or `enable_all`; `Runtime::new` and the macros
//! enable it). Every read, write, accept and connect spends the task's
//! coop budget.

mod addr;

/// The readiness methods every socket type has, delegating to its
/// `io: PollEvented<_>` field (`$noun` names the type in the docs).
macro_rules! readiness_methods {
    ($noun:literal) => {
        #[doc = concat!("Wait until the ", $noun, " is ready for any of `interest`. Cancel-safe;")]
        /// any number of tasks may wait at once.
        pub async fn ready(
            &self,
            interest: crate::io::Interest,
        ) -> std::io::Result<crate::io::Ready> {
            Ok(self.io.registration().readiness(interest).await?.ready)
        }

        #[doc = concat!("Wait until the ", $noun, " may be readable. Cancel-safe.")]
        pub async fn readable(&self) -> std::io::Result<()> {
            self.ready(crate::io::Interest::READABLE).await.map(drop)
        }

        #[doc = concat!("Wait until the ", $noun, " may be writable. Cancel-safe.")]
        pub async fn writable(&self) -> std::io::Result<()> {
            self.ready(crate::io::Interest::WRITABLE).await.map(drop)
        }

        #[doc = concat!("Run `f` once if the ", $noun, " looks ready for `interest`, clearing")]
        /// the readiness if `f` returns `WouldBlock` (for custom syscalls).
        pub fn try_io<R>(
            &self,
            interest: crate::io::Interest,
            f: impl FnOnce() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            self.io.registration().try_io(interest, f)
        }

        /// Wait for `interest`, then run `f`, repeating while it returns
        /// `WouldBlock`.
        pub async fn async_io<R>(
            &self,
            interest: crate::io::Interest,
            f: impl FnMut() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            self.io.registration().async_io(interest, f).await
        }
    };
}
pub(crate) use readiness_methods;
mod halves;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
