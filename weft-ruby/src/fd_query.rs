//! What the kernel says about one fd, asked directly rather than through
//! a registration: whether it is a socket and which one (`fstat`'s device
//! and inode), whether it is a stream socket, and whether it is ready now
//! (`poll(2)`). The poller asks these when a registration can't answer:
//! a wait that must check the fd still names the registered socket, a
//! readiness bit left over from data already read, a read hint that only
//! holds for stream sockets.
//!
//! Owns nothing; each function is one syscall on an fd number, which
//! fails harmlessly if the number is not open.

use crate::state::{PRIORITY, READABLE, WRITABLE};
use std::os::fd::RawFd;

/// `(device, inode)` of `fd` if it is a socket. The raw `fstat` syscall:
/// glibc's `fstat` is `newfstatat` with an empty path, which the kernel
/// looks up first.
pub fn socket_identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: `st` is written by fstat before it is read; an invalid fd
    // only makes fstat fail.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `st` is a valid out-pointer for the fstat syscall,
    // whose struct on Linux is libc's `stat`.
    if unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st as *mut libc::stat) } != 0 {
        return None;
    }
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some((st.st_dev, st.st_ino))
}

/// Is `fd` a stream socket (`SO_TYPE` is `SOCK_STREAM`)?
pub fn stream_socket(fd: RawFd) -> bool {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `kind` and `len` are valid out-pointers of the sizes passed;
    // an fd that is not a socket only makes the call fail.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    r == 0 && kind == libc::SOCK_STREAM
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

    #[test]
    fn ready_now_sees_a_pipe_become_readable() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert_eq!(ready_now(fds[0], READABLE), 0);
        assert_eq!(ready_now(fds[1], WRITABLE), WRITABLE);
        // SAFETY: one byte from a static buffer to the pipe's write end.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        assert_eq!(ready_now(fds[0], READABLE | WRITABLE), READABLE);
        assert_eq!(ready_for(fds[0], READABLE, READABLE | WRITABLE), READABLE);
        for fd in fds {
            // SAFETY: closing descriptors the test opened.
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn a_socket_has_an_identity_and_a_type() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let d = std::os::unix::net::UnixDatagram::unbound().unwrap();
        use std::os::fd::AsRawFd;
        assert!(socket_identity(a.as_raw_fd()).is_some());
        assert_ne!(
            socket_identity(a.as_raw_fd()),
            socket_identity(d.as_raw_fd())
        );
        assert!(stream_socket(a.as_raw_fd()));
        assert!(!stream_socket(d.as_raw_fd()));
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(socket_identity(file.as_raw_fd()), None, "not a socket");
        assert!(!stream_socket(file.as_raw_fd()));
    }
}
