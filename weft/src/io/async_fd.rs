//! `AsyncFd`: readiness for any file descriptor the caller owns.
//!
//! Owns: the caller's object `T` (whose descriptor must stay open while
//! registered) and its registration. The descriptor is registered once on
//! creation and deregistered before `T` is dropped or handed back, unless
//! the caller says it no longer names the registered file
//! ([`AsyncFd::into_inner_stale`]).
//!
//! Invariant: `inner`'s `as_raw_fd` names the same open descriptor for as
//! long as the `AsyncFd` holds it (until a caller of `into_inner_stale`
//! says it no longer does). The unsafe constructors
//! ([`AsyncFd::register`], [`AsyncFd::register_with_interest`]) make the
//! caller promise it; the safe ones (`new`, `with_interest`, `try_new`,
//! `try_with_interest`) take it on trust, as Tokio's did before it
//! deprecated them.

use crate::runtime::io::ready::{Interest, Ready};
use crate::runtime::io::registration::Registration;
use crate::runtime::io::scheduled_io::{Direction, ReadyEvent};
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{ready, Context, Poll};

/// Wraps an object with a file descriptor (a socket, pipe, eventfd, ...)
/// and tells when it is ready, for driving non-blocking syscalls yourself.
///
/// The descriptor must be in non-blocking mode. The usual pattern: wait
/// with [`readable`](Self::readable), try the syscall with
/// [`AsyncFdReadyGuard::try_io`], and loop on `Err(TryIoError)`, which
/// means "it would block; readiness was cleared".
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
/// use weft::io::AsyncFd;
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let (a, mut b) = UnixStream::pair().unwrap();
/// a.set_nonblocking(true).unwrap();
/// let fd = AsyncFd::new(a).unwrap();
/// b.write_all(b"ping").unwrap();
/// let mut buf = [0; 4];
/// loop {
///     let mut guard = fd.readable().await.unwrap();
///     match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
///         Ok(result) => { assert_eq!(result.unwrap(), 4); break; }
///         Err(_would_block) => continue,
///     }
/// }
/// assert_eq!(&buf, b"ping");
/// # });
/// ```
pub struct AsyncFd<T: AsRawFd> {
    registration: Registration,
    inner: Option<T>,
}

/// Readiness observed by [`AsyncFd::readable`] and friends.
#[must_use = "call clear_ready or try_io, or the readiness is kept"]
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    fd: &'a AsyncFd<T>,
    event: Option<ReadyEvent>,
}

/// Like [`AsyncFdReadyGuard`], with mutable access to the inner object.
#[must_use = "call clear_ready or try_io, or the readiness is kept"]
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    fd: &'a mut AsyncFd<T>,
    event: Option<ReadyEvent>,
}

/// The operation in `try_io` returned `WouldBlock`; readiness was cleared.
#[derive(Debug)]
pub struct TryIoError(());

impl<T: AsRawFd> AsyncFd<T> {
    /// Register `inner` for readable and writable readiness.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        AsyncFd::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Register `inner` for `interest`.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        AsyncFd::try_with_interest(inner, interest).map_err(AsyncFdRegisterError::into_cause)
    }

    /// Like [`AsyncFd::new`], but a failed registration hands `inner` back.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn try_new(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Like [`AsyncFd::with_interest`], but a failed registration hands
    /// `inner` back.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn try_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        match Registration::new_fd(inner.as_raw_fd(), interest) {
            Ok(registration) => Ok(AsyncFd {
                registration,
                inner: Some(inner),
            }),
            Err(cause) => Err(AsyncFdRegisterError { inner, cause }),
        }
    }

    /// Register `inner` for readable and writable readiness; a failed
    /// registration hands `inner` back with the cause.
    ///
    /// # Safety
    /// `inner.as_raw_fd()` must return one valid, open descriptor, the
    /// same one every time, and it must stay open and name the same open
    /// file description until the `AsyncFd` is dropped, forgotten or
    /// [`into_inner`](Self::into_inner)-ed (or, once it no longer does,
    /// [`into_inner_stale`](Self::into_inner_stale)-ed).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub unsafe fn register(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Register `inner` for `interest`; a failed registration hands
    /// `inner` back with the cause.
    ///
    /// # Safety
    /// As for [`register`](Self::register).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub unsafe fn register_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, interest)
    }

    /// Register `inner` for `interest`, learning its readiness from poll
    /// requests on the runtime's io_uring rings when it has them (a wait
    /// that finds no readiness arms one; nothing is armed while nobody
    /// waits), and from epoll otherwise or for a datagram socket or a
    /// listener. weft's Ruby selector uses it; its readiness is not
    /// Tokio's: a `try_io` before any wait finds none.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[doc(hidden)]
    #[track_caller]
    pub fn with_interest_on_rings(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        let registration = Registration::new_fd_on_rings(inner.as_raw_fd(), interest)?;
        Ok(AsyncFd {
            registration,
            inner: Some(inner),
        })
    }

    /// The wrapped object.
    pub fn get_ref(&self) -> &T {
        self.inner.as_ref().expect("present until drop")
    }

    /// The wrapped object, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.as_mut().expect("present until drop")
    }

    /// Deregister and return the object.
    pub fn into_inner(mut self) -> T {
        self.deregister();
        self.inner.take().expect("present until drop")
    }

    /// Hand back the object and free the registration without taking the
    /// descriptor out of the poller: for when its number no longer names
    /// the open file that was registered (that file closed, and the number
    /// perhaps reused since). epoll finds a registration by number and
    /// file, so the removal [`into_inner`](Self::into_inner) and drop make
    /// would then fail, or remove the registration of the file that took
    /// the number. Events the old registration still gets (its file still
    /// open elsewhere) are dropped. A weft addition; Tokio has no such
    /// call.
    ///
    /// Called while the number still names the registered file, it leaves
    /// that file in the poller under a token nobody holds: its events are
    /// lost, and registering the same descriptor again fails with
    /// `EEXIST` until the file is closed everywhere. (kqueue, on the BSDs
    /// and macOS, drops a registration when its descriptor closes, so
    /// there nothing is left behind either way.)
    ///
    /// ```
    /// use std::os::fd::AsRawFd;
    /// use std::os::unix::net::UnixStream;
    /// use weft::io::AsyncFd;
    ///
    /// struct Number(i32);
    /// impl AsRawFd for Number {
    ///     fn as_raw_fd(&self) -> i32 {
    ///         self.0
    ///     }
    /// }
    ///
    /// # weft::runtime::Runtime::new().unwrap().block_on(async {
    /// let (a, _peer) = UnixStream::pair().unwrap();
    /// let old = AsyncFd::new(Number(a.as_raw_fd())).unwrap();
    /// // The number's owner closes it and reuses it for another socket.
    /// let (b, _peer2) = UnixStream::pair().unwrap();
    /// dup2(&b, &a);
    /// let new = AsyncFd::new(Number(a.as_raw_fd())).unwrap();
    /// // Dropping `old` would take `new`'s registration out of the poller.
    /// let _number = old.into_inner_stale();
    /// # drop(new);
    /// # });
    /// # fn dup2(from: &UnixStream, to: &UnixStream) {
    /// #     // SAFETY: both are open descriptors owned by the caller.
    /// #     assert!(unsafe { libc::dup2(from.as_raw_fd(), to.as_raw_fd()) } >= 0);
    /// # }
    /// ```
    pub fn into_inner_stale(mut self) -> T {
        self.registration.forget();
        self.inner.take().expect("present until drop")
    }

    fn deregister(&mut self) {
        if let Some(inner) = &self.inner {
            let fd: RawFd = inner.as_raw_fd();
            let _ = self.registration.deregister(&mut mio::unix::SourceFd(&fd));
        }
    }

    /// Poll for read readiness (only the last task to poll is woken).
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// [`AsyncFd::poll_read_ready`] with mutable access in the guard.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// [`AsyncFd::poll_write_ready`] with mutable access in the guard.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// Poll for write readiness (only the last task to poll is woken).
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// [`poll_read_ready`](Self::poll_read_ready) that an error alone
    /// (`ERROR` readiness, with nothing to read) also ends, as `poll(2)`
    /// counts `POLLERR` as readable. Not Tokio's: for weft-ruby's selector,
    /// whose `IO#wait` must return on an error as Ruby's own does.
    #[doc(hidden)]
    pub fn poll_read_ready_or_error<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready_or_error(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// [`poll_write_ready`](Self::poll_write_ready) that an error alone
    /// also ends (as [`poll_read_ready_or_error`](Self::poll_read_ready_or_error)).
    #[doc(hidden)]
    pub fn poll_write_ready_or_error<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.registration.poll_ready_or_error(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyGuard {
            fd: self,
            event: Some(event),
        }))
    }

    /// Wait for any of `interest`. Cancel-safe; any number of tasks may wait.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.registration.readiness(interest).await?;
        Ok(AsyncFdReadyGuard {
            fd: self,
            event: Some(event),
        })
    }

    /// Wait for any of `interest`, with mutable access in the guard.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = self.registration.readiness(interest).await?;
        Ok(AsyncFdReadyMutGuard {
            fd: self,
            event: Some(event),
        })
    }

    /// Wait until readable.
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    /// Wait until readable, with mutable access in the guard.
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Wait until writable.
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// Wait until writable, with mutable access in the guard.
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Wait for `interest` and run `f`, repeating while it returns
    /// `WouldBlock`.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        self.registration
            .async_io(interest, || f(self.get_ref()))
            .await
    }

    /// [`AsyncFd::async_io`] with mutable access to the object.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.inner.as_mut().expect("present until drop");
        self.registration.async_io(interest, || f(inner)).await
    }

    /// Run `f` once if ready for `interest`; clears readiness on
    /// `WouldBlock`.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        self.registration.try_io(interest, || f(self.get_ref()))
    }

    /// [`try_io`](Self::try_io) with mutable access to the object.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = self.inner.as_mut().expect("present until drop");
        self.registration.try_io(interest, || f(inner))
    }
}

impl<T: AsRawFd> Drop for AsyncFd<T> {
    fn drop(&mut self) {
        self.deregister();
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: by the module invariant, `as_raw_fd` names one open
        // descriptor for as long as the `AsyncFd` holds `inner`, which is at
        // least as long as this borrow of `self`.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    /// The readiness this guard observed.
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |e| e.ready)
    }

    /// Forget the readiness (the resource would block now).
    pub fn clear_ready(&mut self) {
        if let Some(event) = self.event.take() {
            self.fd.registration.clear_readiness(event);
        }
    }

    /// Forget only the readiness in `ready` (e.g. `Ready::READABLE` after a
    /// read would block, keeping `WRITABLE`): all of `ready`, even bits
    /// this guard did not see, as in Tokio (unless an event came since
    /// the guard's).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(&self.fd.registration, &mut self.event, ready);
    }

    /// Keep the readiness (the default when the guard is dropped). A
    /// no-op, as in Tokio: the guard still shows the readiness, and a
    /// later `clear_ready` still clears it.
    pub fn retain_ready(&mut self) {}

    /// Run `f`; on `WouldBlock`, clear readiness and return `Err(TryIoError)`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.fd) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The `AsyncFd`.
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.fd
    }

    /// The wrapped object.
    pub fn get_inner(&self) -> &'a T {
        self.fd.get_ref()
    }
}

impl<T: AsRawFd> AsyncFdReadyMutGuard<'_, T> {
    /// The readiness this guard observed.
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |e| e.ready)
    }

    /// Forget the readiness (the resource would block now).
    pub fn clear_ready(&mut self) {
        if let Some(event) = self.event.take() {
            self.fd.registration.clear_readiness(event);
        }
    }

    /// Forget only the readiness in `ready` (see
    /// [`AsyncFdReadyGuard::clear_ready_matching`]).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_matching(&self.fd.registration, &mut self.event, ready);
    }

    /// Keep the readiness (see [`AsyncFdReadyGuard::retain_ready`]).
    pub fn retain_ready(&mut self) {}

    /// Run `f`; on `WouldBlock`, clear readiness and return `Err(TryIoError)`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.fd) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The `AsyncFd`.
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.fd
    }

    /// The `AsyncFd`, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.fd
    }

    /// The wrapped object.
    pub fn get_inner(&self) -> &T {
        self.fd.get_ref()
    }

    /// The wrapped object, mutably.
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.fd.get_mut()
    }
}

/// Clear `ready` from the registration, as of the guard's `event` (all
/// of `ready`, as Tokio does, even the part the guard did not see), and
/// keep the rest of `event` in the guard (shared by both guards).
fn clear_matching(registration: &Registration, event: &mut Option<ReadyEvent>, ready: Ready) {
    if let Some(mut seen) = event.take() {
        registration.clear_readiness(ReadyEvent { ready, ..seen });
        seen.ready = seen.ready - ready;
        if !seen.ready.is_empty() {
            *event = Some(seen);
        }
    }
}

/// Tokio's shape: `ReadyGuard { async_fd: AsyncFd { inner: .. } }`.
impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadyGuard")
            .field("async_fd", &self.fd)
            .finish()
    }
}

/// Tokio's shape: `MutReadyGuard { async_fd: AsyncFd { inner: .. } }`.
impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutReadyGuard")
            .field("async_fd", &self.fd)
            .finish()
    }
}

/// A failed [`AsyncFd::register`] (or `register_with_interest`,
/// `try_new`, `try_with_interest`): the object comes back with the cause.
pub struct AsyncFdRegisterError<T> {
    inner: T,
    cause: io::Error,
}

/// The name Tokio used for [`AsyncFdRegisterError`] before 1.54.
#[doc(hidden)]
#[deprecated(note = "use `AsyncFdRegisterError` instead")]
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;

impl<T> AsyncFdRegisterError<T> {
    /// The object that could not be registered, and why.
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }

    fn into_cause(self) -> io::Error {
        self.cause
    }
}

/// Shows the cause alone, as Tokio's does.
impl<T> fmt::Display for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

/// Shows the cause alone, as Tokio's does (`T` need not be `Debug`).
impl<T> fmt::Debug for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> std::error::Error for AsyncFdRegisterError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdRegisterError<T>> for io::Error {
    fn from(e: AsyncFdRegisterError<T>) -> io::Error {
        e.cause
    }
}

impl fmt::Display for TryIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the operation would block; readiness was cleared")
    }
}

impl std::error::Error for TryIoError {}
