//! `AsyncFd::register`/`register_with_interest` with `AsyncFdRegisterError`,
//! `try_io_mut`, and the mut guard's `get_ref`/`get_mut`/
//! `clear_ready_matching` (issue 14), on every flavour.

#[macro_use]
mod support;

rt_test! {
    use std::io::{ErrorKind, Read, Write};
    use std::os::fd::{AsRawFd, RawFd};
    use std::os::unix::net::UnixStream;
    use weft::io::unix::{AsyncFd, AsyncFdRegisterError};
    use weft::io::{Interest, Ready};

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        (a, b)
    }

    #[test]
    fn register_then_try_io_mut_reads() {
        rt().block_on(async {
            let (a, mut b) = pair();
            // SAFETY: `a` owns its descriptor and keeps it open until the
            // AsyncFd drops it.
            let raw = a.as_raw_fd();
            let mut fd = unsafe { AsyncFd::register(a) }.unwrap();
            assert_eq!(std::os::fd::AsFd::as_fd(&fd).as_raw_fd(), raw);
            let mut buf = [0u8; 8];
            let err = fd.try_io_mut(Interest::READABLE, |s| s.read(&mut buf));
            assert_eq!(err.unwrap_err().kind(), ErrorKind::WouldBlock);

            b.write_all(b"mut").unwrap();
            let _ = fd.readable_mut().await.unwrap();
            let n = fd
                .try_io_mut(Interest::READABLE, |s: &mut UnixStream| s.read(&mut buf))
                .unwrap();
            assert_eq!(&buf[..n], b"mut");
        });
    }

    #[test]
    fn register_with_interest_readable_only() {
        rt().block_on(async {
            let (a, mut b) = pair();
            // SAFETY: as above.
            let fd = unsafe { AsyncFd::register_with_interest(a, Interest::READABLE) }.unwrap();
            b.write_all(b"r").unwrap();
            let guard = fd.ready(Interest::READABLE).await.unwrap();
            assert!(guard.ready().is_readable());
            assert!(!guard.ready().is_writable(), "write interest was not registered");
        });
    }

    /// An object whose descriptor is not open: registering it fails.
    #[derive(Debug)]
    struct Closed;

    impl AsRawFd for Closed {
        fn as_raw_fd(&self) -> RawFd {
            -1
        }
    }

    #[test]
    fn a_failed_register_hands_the_object_back() {
        rt().block_on(async {
            // SAFETY: the registration fails (EBADF), so no AsyncFd ever
            // holds the bogus descriptor.
            let err: AsyncFdRegisterError<Closed> = unsafe { AsyncFd::register(Closed) }.unwrap_err();
            assert!(std::error::Error::source(&err).is_some());
            let (_closed, cause) = err.into_parts();
            assert_eq!(cause.raw_os_error(), Some(libc::EBADF));
            // SAFETY: as above.
            let err = unsafe { AsyncFd::register_with_interest(Closed, Interest::READABLE) };
            let io: std::io::Error = err.unwrap_err().into();
            assert_eq!(io.raw_os_error(), Some(libc::EBADF));
        });
    }

    /// A bare descriptor number, as a C library or Ruby's IO hands one out.
    struct Number(RawFd);

    impl AsRawFd for Number {
        fn as_raw_fd(&self) -> RawFd {
            self.0
        }
    }

    #[test]
    fn a_stale_registration_is_freed_without_touching_its_successor() {
        rt().block_on(async {
            let (a, _a_peer) = pair();
            let (b, mut b_peer) = pair();
            let number = a.as_raw_fd();
            let old = AsyncFd::new(Number(number)).unwrap();
            // The number comes to name b's socket: a's file is closed and
            // took `old`'s registration out of the poller with it.
            // SAFETY: both descriptors are open and owned here; `a` keeps
            // owning the number (now b's file) and closes it on drop.
            assert!(unsafe { libc::dup2(b.as_raw_fd(), number) } >= 0);
            let new = AsyncFd::with_interest(Number(number), Interest::READABLE).unwrap();
            let metrics = weft::runtime::Handle::current().metrics();
            let freed = metrics.io_driver_fd_deregistered_count();
            assert_eq!(old.into_inner_stale().0, number);
            assert_eq!(
                metrics.io_driver_fd_deregistered_count(),
                freed + 1,
                "the stale registration's slot is freed"
            );
            // epoll finds a registration by number and file: a removal by
            // number now would have taken `new`'s out. Still there (both
            // drivers register with epoll): a second registration of the
            // same number and file is refused.
            let again = AsyncFd::with_interest(Number(number), Interest::READABLE);
            assert_eq!(again.err().and_then(|e| e.raw_os_error()), Some(libc::EEXIST));
            b_peer.write_all(b"x").unwrap();
            let ready = weft::time::timeout(std::time::Duration::from_secs(10), new.readable()).await;
            assert!(ready.is_ok(), "the successor's registration still reports readiness");
            drop(new);
            drop(a);
        });
    }

    #[test]
    fn mut_guard_clears_only_what_it_is_told() {
        rt().block_on(async {
            let (a, mut b) = pair();
            // SAFETY: as above.
            let mut fd = unsafe { AsyncFd::register(a) }.unwrap();
            b.write_all(b"x").unwrap();
            loop {
                let guard = fd.ready_mut(Interest::READABLE | Interest::WRITABLE).await.unwrap();
                if guard.ready().is_readable() && guard.ready().is_writable() {
                    break;
                }
            }
            let mut guard = fd.ready_mut(Interest::READABLE | Interest::WRITABLE).await.unwrap();
            assert_eq!(guard.get_ref().get_ref().as_raw_fd(), guard.get_inner().as_raw_fd());
            let _: &mut AsyncFd<UnixStream> = guard.get_mut();
            guard.clear_ready_matching(Ready::READABLE);
            assert!(!guard.ready().is_readable(), "READABLE cleared from the guard");
            assert!(guard.ready().is_writable(), "WRITABLE kept");
            drop(guard);
            // Writable is still set, so this resolves at once without it
            // saying readable (the data was never read, but readiness was
            // cleared and no new edge has come).
            let guard = fd.ready_mut(Interest::WRITABLE).await.unwrap();
            assert!(guard.ready().is_writable());
            drop(guard);
            let mut buf = [0u8; 1];
            let n = fd.try_io_mut(Interest::READABLE, |s| s.read(&mut buf));
            assert!(
                matches!(&n, Err(e) if e.kind() == ErrorKind::WouldBlock),
                "READABLE was cleared in the registration too: {n:?}"
            );
        });
    }
}
