//! A spawned child process ([`Child`]) and its standard-stream pipes
//! ([`ChildStdin`], [`ChildStdout`], [`ChildStderr`]).
//!
//! Owns: the child until it is reaped (then only its exit status), and
//! the rule for dropping it unreaped: killed first if `kill_on_drop` was
//! set, then handed to `reap` as an orphan, so it never becomes a zombie.
//! The pipes are [`crate::net::unix::pipe`] ends.

use super::reap::ExitWatch;
use crate::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use crate::net::unix::pipe;
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::{ExitStatus, Output, Stdio};
use std::task::{Context, Poll};

/// A child process spawned by [`Command::spawn`](super::Command::spawn).
///
/// Dropping a `Child` does not stop the process (unless
/// [`kill_on_drop`](super::Command::kill_on_drop) was set); it is reaped
/// in the background once it exits.
pub struct Child {
    state: State,
    /// The child's standard input, if it was piped.
    pub stdin: Option<ChildStdin>,
    /// The child's standard output, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The child's standard error, if it was piped.
    pub stderr: Option<ChildStderr>,
}

enum State {
    Running(Running),
    Exited(ExitStatus),
}

/// A child not reaped yet, with what its drop must do.
struct Running {
    /// `None` only inside `Drop`.
    watch: Option<ExitWatch>,
    kill_on_drop: bool,
    /// Where an orphan's waiting task runs: the runtime it was spawned on.
    handle: Option<crate::runtime::Handle>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let Some(mut watch) = self.watch.take() else {
            return;
        };
        if self.kill_on_drop {
            // It may have exited already; then there is nothing to kill.
            let _ = watch.std_child().kill();
        }
        watch.orphan(self.handle.take());
    }
}

impl Child {
    #[track_caller]
    pub(super) fn new(mut std: std::process::Child, kill_on_drop: bool) -> io::Result<Child> {
        let stdin = std.stdin.take().map(ChildStdin::from_std).transpose()?;
        let stdout = std.stdout.take().map(ChildStdout::from_std).transpose()?;
        let stderr = std.stderr.take().map(ChildStderr::from_std).transpose()?;
        let watch = ExitWatch::new(std)?;
        Ok(Child {
            state: State::Running(Running {
                watch: Some(watch),
                kill_on_drop,
                handle: crate::runtime::Handle::try_current().ok(),
            }),
            stdin,
            stdout,
            stderr,
        })
    }

    /// The process id, or `None` once the child has been reaped (by
    /// [`wait`](Self::wait) or [`try_wait`](Self::try_wait)).
    pub fn id(&self) -> Option<u32> {
        match &self.state {
            State::Running(running) => running.watch.as_ref().map(ExitWatch::id),
            State::Exited(_) => None,
        }
    }

    /// Send `SIGKILL` without waiting for the child to die. After it was
    /// reaped, does nothing.
    ///
    /// # Errors
    /// From `kill(2)`.
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Running(running) => running.watch_mut().std_child().kill(),
            State::Exited(_) => Ok(()),
        }
    }

    /// Send `SIGKILL` and wait for the child to exit (std's `kill` does not
    /// wait; this does, as Tokio's). Cancel-safe.
    ///
    /// # Errors
    /// From `kill(2)` or `waitpid(2)`.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await?;
        Ok(())
    }

    /// Wait for the child to exit and reap it. Closes [`stdin`](Self::stdin)
    /// first, so a child reading its input to the end can finish.
    /// Cancel-safe; once it returned a status, it returns it again.
    ///
    /// # Errors
    /// From `waitpid(2)`, or when the runtime shut down.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        let status = match &mut self.state {
            State::Exited(status) => return Poll::Ready(Ok(*status)),
            State::Running(running) => std::task::ready!(running.watch_mut().poll_wait(cx))?,
        };
        self.reaped(status);
        Poll::Ready(Ok(status))
    }

    /// The exit status if the child has exited (reaping it), `None` if it
    /// still runs. Does not close stdin, and does not arrange a wake-up.
    ///
    /// # Errors
    /// From `waitpid(2)`.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = match &mut self.state {
            State::Exited(status) => return Ok(Some(*status)),
            State::Running(running) => running.watch_mut().try_wait()?,
        };
        if let Some(status) = status {
            self.reaped(status);
        }
        Ok(status)
    }

    /// The child was reaped: nothing is left for a drop to kill or orphan.
    fn reaped(&mut self, status: ExitStatus) {
        if let State::Running(running) = &mut self.state {
            running.watch = None;
        }
        self.state = State::Exited(status);
    }

    /// Close stdin, read stdout and stderr to their ends (those that were
    /// piped) while waiting for the exit, and return all three.
    ///
    /// # Errors
    /// From reading the pipes or from [`wait`](Self::wait).
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        async fn read_all<R: AsyncRead + Unpin>(pipe: &mut Option<R>) -> io::Result<Vec<u8>> {
            let mut out = Vec::new();
            if let Some(pipe) = pipe {
                pipe.read_to_end(&mut out).await?;
            }
            Ok(out)
        }
        let mut stdout = self.stdout.take();
        let mut stderr = self.stderr.take();
        let (status, stdout, stderr) =
            crate::try_join!(self.wait(), read_all(&mut stdout), read_all(&mut stderr))?;
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }
}

impl Running {
    fn watch_mut(&mut self) -> &mut ExitWatch {
        self.watch
            .as_mut()
            .expect("a running child keeps its watch until reaped")
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Child")
            .field("id", &self.id())
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish_non_exhaustive()
    }
}

/// The child's standard input: a pipe that [`AsyncWrite`]s to it.
#[derive(Debug)]
pub struct ChildStdin {
    inner: pipe::Sender,
}

/// The child's standard output: a pipe to [`AsyncRead`] from.
#[derive(Debug)]
pub struct ChildStdout {
    inner: pipe::Receiver,
}

/// The child's standard error: a pipe to [`AsyncRead`] from.
#[derive(Debug)]
pub struct ChildStderr {
    inner: pipe::Receiver,
}

impl ChildStdin {
    /// Wrap std's handle (made non-blocking and registered).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(inner: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let inner = pipe::Sender::from_owned_fd_unchecked(inner.into())?;
        Ok(ChildStdin { inner })
    }
}

impl ChildStdout {
    /// Wrap std's handle (made non-blocking and registered).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(inner: std::process::ChildStdout) -> io::Result<ChildStdout> {
        let inner = pipe::Receiver::from_owned_fd_unchecked(inner.into())?;
        Ok(ChildStdout { inner })
    }
}

impl ChildStderr {
    /// Wrap std's handle (made non-blocking and registered).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn from_std(inner: std::process::ChildStderr) -> io::Result<ChildStderr> {
        let inner = pipe::Receiver::from_owned_fd_unchecked(inner.into())?;
        Ok(ChildStderr { inner })
    }
}

impl AsyncWrite for ChildStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// `AsyncRead`, the fd traits and the conversions the three pipes share.
macro_rules! child_pipe_impls {
    ($($t:ty),*) => {$(
        impl $t {
            /// Hand the pipe back as a blocking descriptor (deregistered).
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                self.inner.into_blocking_fd()
            }
        }

        impl AsRawFd for $t {
            fn as_raw_fd(&self) -> RawFd {
                self.inner.as_raw_fd()
            }
        }

        impl AsFd for $t {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.inner.as_fd()
            }
        }

        /// The pipe as another child's standard stream (blocking again,
        /// deregistered), to chain processes.
        impl TryFrom<$t> for Stdio {
            type Error = io::Error;

            fn try_from(pipe: $t) -> io::Result<Stdio> {
                pipe.into_owned_fd().map(Stdio::from)
            }
        }
    )*};
}
child_pipe_impls!(ChildStdin, ChildStdout, ChildStderr);

macro_rules! child_read_impls {
    ($($t:ty),*) => {$(
        impl AsyncRead for $t {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.inner).poll_read(cx, buf)
            }
        }
    )*};
}
child_read_impls!(ChildStdout, ChildStderr);
