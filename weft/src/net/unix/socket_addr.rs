//! `SocketAddr`: the address of a Unix-domain socket, as weft's Unix
//! sockets report it.
//!
//! Owns: a std `SocketAddr` behind Tokio's surface (`is_unnamed`,
//! `as_pathname`, and `as_abstract_name` as a method rather than std's
//! extension trait); `From` converts both ways.

use std::fmt;
use std::path::Path;

/// The address of a Unix-domain socket: a path, an abstract name (Linux),
/// or unnamed (an unbound socket, one end of a pair).
///
/// ```
/// use weft::net::unix::SocketAddr;
///
/// let std_addr = std::os::unix::net::SocketAddr::from_pathname("/tmp/x.sock").unwrap();
/// let addr = SocketAddr::from(std_addr);
/// assert_eq!(addr.as_pathname(), Some(std::path::Path::new("/tmp/x.sock")));
/// assert!(!addr.is_unnamed());
/// ```
#[derive(Clone)]
pub struct SocketAddr(pub(super) std::os::unix::net::SocketAddr);

impl SocketAddr {
    /// Whether the socket has no address (unbound, or one end of a pair).
    pub fn is_unnamed(&self) -> bool {
        self.0.is_unnamed()
    }

    /// The path the socket is bound to, if it is bound to one.
    pub fn as_pathname(&self) -> Option<&Path> {
        self.0.as_pathname()
    }

    /// The abstract name the socket is bound to (without the leading NUL
    /// byte), if it is bound to one.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        #[cfg(target_os = "android")]
        use std::os::android::net::SocketAddrExt as _;
        #[cfg(target_os = "linux")]
        use std::os::linux::net::SocketAddrExt as _;
        self.0.as_abstract_name()
    }
}

impl fmt::Debug for SocketAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<std::os::unix::net::SocketAddr> for SocketAddr {
    fn from(addr: std::os::unix::net::SocketAddr) -> SocketAddr {
        SocketAddr(addr)
    }
}

impl From<SocketAddr> for std::os::unix::net::SocketAddr {
    fn from(addr: SocketAddr) -> std::os::unix::net::SocketAddr {
        addr.0
    }
}
