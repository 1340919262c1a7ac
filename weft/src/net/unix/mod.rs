//! Unix-domain sockets: [`UnixListener`], [`UnixStream`] (with its split
//! halves), [`UnixDatagram`], the [`UnixSocket`] builder and [`pipe`]
//! (pipes and FIFOs).
//!
//! Owns: the Unix socket types, registered with the I/O driver like the
//! TCP and UDP ones, the credentials type [`UCred`], and the rule for what
//! a path names: on Linux a path that starts with a NUL byte (`"\0name"`)
//! is an abstract socket name (no file), as in Tokio; any other path is a
//! file path.

mod datagram;
mod listener;
pub mod pipe;
mod socket;
mod socket_addr;
mod split;
mod stream;
mod ucred;

pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use socket::UnixSocket;
pub use socket_addr::SocketAddr;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::UnixStream;
pub use ucred::{gid_t, pid_t, uid_t, UCred};

use std::io;
use std::path::Path;

/// The socket address `path` names (see the module doc).
pub(crate) fn socket_addr(path: &Path) -> io::Result<std::os::unix::net::SocketAddr> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Some(name) = path.as_os_str().as_bytes().strip_prefix(b"\0") {
            #[cfg(target_os = "android")]
            use std::os::android::net::SocketAddrExt;
            #[cfg(target_os = "linux")]
            use std::os::linux::net::SocketAddrExt;
            return std::os::unix::net::SocketAddr::from_abstract_name(name);
        }
    }
    std::os::unix::net::SocketAddr::from_pathname(path)
}
