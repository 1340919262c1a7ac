//! `SocketAddr`: the address of a Unix-domain socket, as weft's Unix
//! sockets report it.
//!
//! Owns: a std `SocketAddr` behind Tokio's surface (`is_unnamed`,
//! `as_pathname`, and `as_abstract_name` as a method rather than std's
//! extension trait); `From` converts both ways; and reading one from the
//! raw `sockaddr_un` the kernel wrote for a datagram's sender
//! ([`SocketAddr::from_raw`]).

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

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

impl SocketAddr {
    /// The address in `raw`, the bytes of a `sockaddr_un` the kernel wrote
    /// (as many as the length it reported): a datagram's sender. Nothing past the family (or not even that:
    /// recvfrom(2) reports an unnamed sender with length 0) is unnamed.
    pub(crate) fn from_raw(raw: &[u8]) -> io::Result<SocketAddr> {
        let path_at = std::mem::offset_of!(libc::sockaddr_un, sun_path);
        let Some(path) = raw.get(path_at..).filter(|path| !path.is_empty()) else {
            return unnamed();
        };
        let family = libc::sa_family_t::from_ne_bytes([raw[0], raw[1]]);
        if family != libc::AF_UNIX as libc::sa_family_t {
            return Err(io::Error::other("an address that is not a Unix-domain one"));
        }
        let addr = match path {
            [] => return unnamed(),
            // Linux: a leading NUL names an abstract socket, whose name is
            // every byte after it (NULs included), as long as the length
            // says.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            [0, name @ ..] => {
                #[cfg(target_os = "android")]
                use std::os::android::net::SocketAddrExt as _;
                #[cfg(target_os = "linux")]
                use std::os::linux::net::SocketAddrExt as _;
                std::os::unix::net::SocketAddr::from_abstract_name(name)?
            }
            // A path ends at its NUL, if the kernel counted one.
            path => {
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                std::os::unix::net::SocketAddr::from_pathname(OsStr::from_bytes(&path[..end]))?
            }
        };
        Ok(SocketAddr(addr))
    }
}

/// An unnamed address (most accepted peers and datagram senders: clients
/// rarely bind). std makes one only from a socket, so one is taken from an
/// unbound datagram socket once and cloned after.
fn unnamed() -> io::Result<SocketAddr> {
    static UNNAMED: OnceLock<std::os::unix::net::SocketAddr> = OnceLock::new();
    if let Some(addr) = UNNAMED.get() {
        return Ok(SocketAddr(addr.clone()));
    }
    let addr = std::os::unix::net::UnixDatagram::unbound()?.local_addr()?;
    Ok(SocketAddr(UNNAMED.get_or_init(|| addr).clone()))
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
