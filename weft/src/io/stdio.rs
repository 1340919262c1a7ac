//! `stdin`, `stdout`, `stderr`: the process's standard streams, as Tokio
//! offers them (part of issue #14).
//!
//! Owns: [`Blocking`], which runs a blocking `Read`/`Write` on the blocking
//! pool one operation at a time, and the three stream types built on it.
//!
//! Invariants (Tokio's semantics): at most one operation is in flight per
//! stream, and it owns the std handle and the buffer while it runs
//! (`State::Busy`); a write is accepted at once (copied into the buffer,
//! up to `MAX_BUF` bytes) and finishes in the background, so writes reach
//! the stream in the order they were made; `poll_flush` waits for the
//! write in flight and then flushes; a read first drains what the last
//! blocking read left in the buffer. An error from a background write is
//! reported by the next operation.
//!
//! The descriptors (0, 1, 2) belong to the process and stay open for its
//! whole life (weft never closes them, as std does not), so a stream may
//! lend its descriptor (`AsFd`) for as long as the stream lives.

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use crate::runtime::io::shutdown_error;
use crate::task::JoinHandle;
use std::fmt;
use std::future::Future;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// The most bytes one background operation moves (Tokio's bound too).
const MAX_BUF: usize = 2 * 1024 * 1024;

/// A blocking std stream driven on the blocking pool.
struct Blocking<T> {
    state: State<T>,
}

enum State<T> {
    /// The handle and a buffer; `pos..` of the buffer is data read but not
    /// yet handed out. `None` once an operation could not start because the
    /// runtime had shut down (the handle went with it): every operation
    /// fails from then on, as in Tokio.
    Idle(Option<(T, Vec<u8>, usize)>),
    /// An operation owns both; it returns them with its result.
    Busy(JoinHandle<(T, Vec<u8>, io::Result<usize>)>),
}

impl<T: Send + 'static> Blocking<T> {
    fn new(inner: T) -> Blocking<T> {
        Blocking {
            state: State::Idle(Some((inner, Vec::new(), 0))),
        }
    }

    /// Wait for the operation in flight (its result; `Ok(0)` if none); the
    /// stream is idle after.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let State::Busy(handle) = &mut self.state else {
            return Poll::Ready(Ok(0));
        };
        let (inner, buf, result) = ready!(Pin::new(handle).poll(cx)).map_err(|e| {
            io::Error::other(format!("a standard-stream operation did not finish: {e}"))
        })?;
        self.state = State::Idle(Some((inner, buf, 0)));
        Poll::Ready(result)
    }

    /// The handle and buffer of an idle stream, or the runtime's shutdown
    /// error if an earlier operation found it shut down.
    fn take_idle(&mut self) -> io::Result<(T, Vec<u8>)> {
        let State::Idle(idle) = &mut self.state else {
            unreachable!("take_idle while an operation is in flight")
        };
        let (inner, buf, _) = idle.take().ok_or_else(shutdown_error)?;
        Ok((inner, buf))
    }

    /// Run `op` on the blocking pool; the runtime's shutdown error (the
    /// handle is then gone) if the runtime has shut down.
    fn start(
        &mut self,
        op: impl FnOnce(&mut T, &mut Vec<u8>) -> io::Result<usize> + Send + 'static,
    ) -> io::Result<()> {
        let (mut inner, mut buf) = self.take_idle()?;
        let handle = crate::task::spawn_blocking_unless_shut_down(move || {
            let result = op(&mut inner, &mut buf);
            (inner, buf, result)
        })
        .ok_or_else(shutdown_error)?;
        self.state = State::Busy(handle);
        Ok(())
    }
}

impl<T: Read + Send + 'static> Blocking<T> {
    fn poll_read(&mut self, cx: &mut Context<'_>, out: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            if let State::Busy(_) = self.state {
                match ready!(self.poll_idle(cx)) {
                    // End of stream: the read returned nothing.
                    Ok(0) => return Poll::Ready(Ok(())),
                    Ok(_) => {}
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            let State::Idle(idle) = &mut self.state else {
                unreachable!("idle after poll_idle")
            };
            let (_, buf, pos) = idle.as_mut().ok_or_else(shutdown_error)?;
            if *pos < buf.len() {
                let n = (buf.len() - *pos).min(out.remaining());
                out.put_slice(&buf[*pos..*pos + n]);
                *pos += n;
                return Poll::Ready(Ok(()));
            }
            let want = out.remaining().min(MAX_BUF);
            if want == 0 {
                return Poll::Ready(Ok(()));
            }
            self.start(move |inner, buf| {
                buf.clear();
                buf.resize(want, 0);
                let result = inner.read(buf);
                buf.truncate(*result.as_ref().unwrap_or(&0));
                result
            })?;
        }
    }
}

impl<T: Write + Send + 'static> Blocking<T> {
    fn poll_write(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        // The previous write's error, if any, is this call's.
        ready!(self.poll_idle(cx))?;
        let n = data.len().min(MAX_BUF);
        let (inner, mut buf) = self.take_idle()?;
        buf.clear();
        buf.extend_from_slice(&data[..n]);
        self.state = State::Idle(Some((inner, buf, 0)));
        self.start(|inner, buf| {
            let result = inner.write_all(buf).map(|()| buf.len());
            buf.clear();
            result
        })?;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            // A write in flight first; then the flush itself. `Ok(usize::MAX)`
            // marks the flush's own completion.
            if let State::Busy(_) = self.state {
                if ready!(self.poll_idle(cx))? == usize::MAX {
                    return Poll::Ready(Ok(()));
                }
            }
            self.start(|inner, _| inner.flush().map(|()| usize::MAX))?;
        }
    }
}

macro_rules! std_stream {
    ($(#[$doc:meta])* $name:ident, $ctor:ident, $std:ty, $make:expr) => {
        $(#[$doc])*
        pub struct $name(Blocking<$std>);

        #[doc = concat!("The process's ", stringify!($ctor), " as an async stream.")]
        ///
        /// # Panics
        /// Operations need a runtime (they run on its blocking pool).
        pub fn $ctor() -> $name {
            $name(Blocking::new($make))
        }

        /// The process's descriptor for this stream (as std's and Tokio's).
        impl std::os::fd::AsRawFd for $name {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                $make.as_raw_fd()
            }
        }

        impl std::os::fd::AsFd for $name {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                // SAFETY: the descriptor stays open for the whole process
                // (module doc), so it outlives this borrow.
                unsafe { std::os::fd::BorrowedFd::borrow_raw(std::os::fd::AsRawFd::as_raw_fd(self)) }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

std_stream!(
    /// Standard input; see [`stdin`]. Reads go through a buffer on the
    /// blocking pool (as in Tokio, a read that is cancelled may still
    /// consume input, which the next read gets).
    Stdin, stdin, std::io::Stdin, std::io::stdin()
);
std_stream!(
    /// Standard output; see [`stdout`]. Writes are accepted at once and
    /// reach the output in order; call `flush` to wait for them.
    Stdout, stdout, std::io::Stdout, std::io::stdout()
);
std_stream!(
    /// Standard error; see [`stderr`]. As [`Stdout`].
    Stderr, stderr, std::io::Stderr, std::io::stderr()
);

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_mut().0.poll_read(cx, buf)
    }
}

macro_rules! write_impl {
    ($name:ident) => {
        impl AsyncWrite for $name {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().0.poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }
        }
    };
}

write_impl!(Stdout);
write_impl!(Stderr);
