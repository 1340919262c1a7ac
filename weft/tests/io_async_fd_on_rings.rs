//! The cases of `io_async_fd.rs` (`async_fd/cases.rs`) on descriptors
//! registered for the io_uring rings (`AsyncFd::with_interest_on_rings`,
//! the Ruby selector's registration): on the io_uring driver their reads
//! and writes are waited for with poll requests on the rings, while
//! errors, hang-ups and priority still come from epoll; on the epoll
//! driver they are ordinary registrations.

#[macro_use]
mod support;

mod registered {
    use std::io;
    use std::marker::PhantomData;
    use std::os::fd::AsRawFd;
    use weft::io::Interest;

    /// `AsyncFd`'s constructors, registering for the rings.
    pub struct AsyncFd<T>(PhantomData<T>);

    // Named as the real constructors, which the shared cases call.
    #[allow(clippy::new_ret_no_self)]
    impl<T: AsRawFd> AsyncFd<T> {
        pub fn new(inner: T) -> io::Result<weft::io::unix::AsyncFd<T>> {
            AsyncFd::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
        }

        pub fn with_interest(
            inner: T,
            interest: Interest,
        ) -> io::Result<weft::io::unix::AsyncFd<T>> {
            weft::io::unix::AsyncFd::with_interest_on_rings(inner, interest)
        }
    }
}

include!("async_fd/cases.rs");
