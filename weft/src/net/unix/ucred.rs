//! `UCred`: the credentials of a Unix socket's peer.
//!
//! Owns: the one `getsockopt` that reads them (`SO_PEERCRED` on Linux and
//! Android, `getpeereid` on the BSDs and macOS, where the pid is not
//! available), and the id types it reports in (`uid_t`, `gid_t`, `pid_t`:
//! fixed-width, as Tokio's, the same as `libc`'s on every supported OS).

use std::io;
use std::os::fd::AsRawFd;

/// A user id, as [`UCred::uid`] reports it.
#[allow(non_camel_case_types)]
pub type uid_t = u32;

/// A group id, as [`UCred::gid`] reports it.
#[allow(non_camel_case_types)]
pub type gid_t = u32;

/// A process id, as [`UCred::pid`] reports it.
#[allow(non_camel_case_types)]
pub type pid_t = i32;

/// The user, group and (where the OS reports it) process of the peer of a
/// [`UnixStream`](super::UnixStream), as of when it connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UCred {
    pid: Option<pid_t>,
    uid: uid_t,
    gid: gid_t,
}

impl UCred {
    /// The peer's user id.
    pub fn uid(&self) -> uid_t {
        self.uid
    }

    /// The peer's group id.
    pub fn gid(&self) -> gid_t {
        self.gid
    }

    /// The peer's process id, where the OS reports it.
    pub fn pid(&self) -> Option<pid_t> {
        self.pid
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn peer_cred(sock: &impl AsRawFd) -> io::Result<UCred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes and `len` holds the size
    // of `cred`, as SO_PEERCRED requires; the descriptor is borrowed from a
    // live socket.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UCred {
        pid: Some(cred.pid),
        uid: cred.uid,
        gid: cred.gid,
    })
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn peer_cred(sock: &impl AsRawFd) -> io::Result<UCred> {
    let mut uid: libc::uid_t = 0;
    let mut gid: libc::gid_t = 0;
    // SAFETY: both out-pointers are valid for writes; the descriptor is
    // borrowed from a live socket.
    let rc = unsafe { libc::getpeereid(sock.as_raw_fd(), &mut uid, &mut gid) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UCred {
        pid: None,
        uid,
        gid,
    })
}
