//! What the kernel says about one fd, asked directly rather than through
//! a registration: whether it is a socket and which one (`fstat`'s device
//! and inode), whether it is a stream socket, and whether it is ready now
//! (`poll(2)`). The poller asks these when a registration can't answer:
//! a wait that must check the fd still names the registered socket, a
//! readiness bit left over from data already read, a read hint that only
//! holds for byte-stream sockets.
//!
//! Owns nothing; each function is a syscall or two on an fd number, which
//! fail harmlessly if the number is not open.

use crate::state::{PRIORITY, READABLE, WRITABLE};
use std::os::fd::RawFd;

/// `(device, inode)` of `fd` if it is a socket. The raw `fstat` syscall:
/// glibc's `fstat` is `newfstatat` with an empty path, which the kernel
/// looks up first.
pub fn socket_identity(fd: RawFd) -> Option<(u64, u64)> {
    IDENTITY_CHECKS.with(|n| n.set(n.get() + 1));
    // SAFETY: `libc::stat` is plain integers, for which all zeros is a
    // valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `st` is a valid out-pointer for the fstat syscall,
    // whose struct on Linux is libc's `stat`.
    if unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st as *mut libc::stat) } != 0 {
        return None;
    }
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some((st.st_dev, st.st_ino))
}

thread_local! {
    /// [`socket_identity`] calls on this thread (each an `fstat`).
    static IDENTITY_CHECKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread asked an fd's identity (`Weft._identity_checks`,
/// for tests: a keep-alive connection's waits should not).
pub fn identity_checks() -> u64 {
    IDENTITY_CHECKS.with(|n| n.get())
}

/// An `int` socket option of `fd` (`SOL_SOCKET` level), if it has one.
fn socket_option(fd: RawFd, option: libc::c_int) -> Option<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid out-pointers of the sizes passed;
    // an fd that is not a socket only makes the call fail.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(value)
}

/// Multipath TCP's protocol number (Linux 5.6+), a byte stream like TCP.
const IPPROTO_MPTCP: libc::c_int = 262;

/// Is `fd` a socket whose reads drain a byte stream: a short read means
/// nothing was left? `SOCK_STREAM` over TCP, Multipath TCP, or a protocol
/// that is the family's only one (AF_UNIX, vsock). Not SCTP's one-to-one
/// `SOCK_STREAM`, which returns one message per read.
pub fn byte_stream_socket(fd: RawFd) -> bool {
    socket_option(fd, libc::SO_TYPE) == Some(libc::SOCK_STREAM)
        && matches!(
            socket_option(fd, libc::SO_PROTOCOL),
            Some(0 | libc::IPPROTO_TCP | IPPROTO_MPTCP)
        )
}

/// What of `wanted` a woken fd is ready for, given its driver `ready`ness.
/// The driver reports urgent data with readability, so when a waiter wants
/// `PRIORITY` the kernel is asked which of the two it is.
pub fn ready_for(fd: RawFd, ready: u8, wanted: u8) -> u8 {
    let ready = ready & wanted;
    if ready & PRIORITY != 0 {
        ready_now(fd, wanted)
    } else {
        ready
    }
}

/// Is `fd` ready for `events` right now? (`poll(2)` with a zero timeout.)
pub fn ready_now(fd: RawFd, events: u8) -> u8 {
    poll_one(fd, events, 0)
}

/// `poll(2)` on one fd for up to `ms` milliseconds (-1: forever), holding
/// whatever lock the caller holds: the events ready, 0 if none.
pub fn poll_one(fd: RawFd, events: u8, ms: i32) -> u8 {
    let mut wanted = 0;
    if events & READABLE != 0 {
        wanted |= libc::POLLIN;
    }
    if events & WRITABLE != 0 {
        wanted |= libc::POLLOUT;
    }
    if events & PRIORITY != 0 {
        wanted |= libc::POLLPRI;
    }
    let mut pfd = libc::pollfd {
        fd,
        events: wanted,
        revents: 0,
    };
    // SAFETY: `pfd` is a valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n <= 0 {
        return 0;
    }
    let r = pfd.revents;
    if r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return events;
    }
    let mut ready = 0;
    if r & libc::POLLIN != 0 {
        ready |= READABLE;
    }
    if r & libc::POLLOUT != 0 {
        ready |= WRITABLE;
    }
    if r & libc::POLLPRI != 0 {
        ready |= PRIORITY;
    }
    ready & events
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    #[test]
    fn ready_now_sees_a_pipe_become_readable() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (r, w) = (reader.as_raw_fd(), writer.as_raw_fd());
        assert_eq!(ready_now(r, READABLE), 0);
        assert_eq!(ready_now(w, WRITABLE), WRITABLE);
        writer.write_all(b"x").unwrap();
        assert_eq!(ready_now(r, READABLE | WRITABLE), READABLE);
        assert_eq!(ready_for(r, READABLE, READABLE | WRITABLE), READABLE);
    }

    fn socket(domain: libc::c_int, kind: libc::c_int, protocol: libc::c_int) -> Option<OwnedFd> {
        // SAFETY: socket(2) takes no pointers; a result >= 0 is a new fd
        // that nothing else owns.
        let fd = unsafe { libc::socket(domain, kind, protocol) };
        // SAFETY: as above.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    }

    #[test]
    fn a_socket_has_an_identity_and_only_byte_streams_count_as_such() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let datagrams = std::os::unix::net::UnixDatagram::unbound().unwrap();
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let packets = socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0).unwrap();
        assert!(socket_identity(a.as_raw_fd()).is_some());
        assert_ne!(
            socket_identity(a.as_raw_fd()),
            socket_identity(datagrams.as_raw_fd())
        );
        assert!(byte_stream_socket(a.as_raw_fd()));
        assert!(byte_stream_socket(tcp.as_raw_fd()));
        assert!(!byte_stream_socket(datagrams.as_raw_fd()));
        assert!(
            !byte_stream_socket(packets.as_raw_fd()),
            "records, not bytes"
        );
        // SCTP's one-to-one socket is a SOCK_STREAM of messages (where the
        // kernel has SCTP at all).
        if let Some(sctp) = socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_SCTP) {
            assert!(!byte_stream_socket(sctp.as_raw_fd()), "SCTP");
        }
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(socket_identity(file.as_raw_fd()), None, "not a socket");
        assert!(!byte_stream_socket(file.as_raw_fd()));
    }
}
