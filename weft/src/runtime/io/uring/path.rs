//! Calls on paths through io_uring: `openat`, `unlinkat`, `mkdirat` and
//! `renameat`, what `fs::OpenOptions::open` (so `File::open`/`create`,
//! `fs::read`, `fs::write`), `fs::remove_file`, `remove_dir`, `create_dir`
//! and `rename` run instead of a blocking-pool call when the runtime's
//! driver has rings (and, for the last four, the kernel has their opcodes:
//! [`PathOp::supported`]).
//!
//! Owns: one call in flight, its path buffer, and the driver handle that
//! keeps its ring alive.
//!
//! Invariants:
//! - **A descriptor is never leaked.** An open is inserted as an op whose
//!   result is a descriptor (ops.rs): if the [`PathOp`] is dropped before
//!   it takes the result, the ring closes the file the kernel opened.
//! - The path buffer (one NUL-terminated path, or two back to back for a
//!   rename) is the ring's until the completion.
//! - A call the kernel interrupted (`EINTR`, `EAGAIN`, an `ECANCELED`
//!   nobody asked for) did not happen and is started again.

use super::ops::{interrupted, OpKey, Polled};
use crate::runtime::driver;
use std::fs::File;
use std::future::Future;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Which call on a path.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PathCall {
    /// `openat` with `open(2)` flags and mode: the result is a descriptor.
    Open { flags: i32, mode: u32 },
    /// `unlinkat`, of a directory (`rmdir`) or not (`unlink`).
    Remove { dir: bool },
    /// `mkdirat` with a mode.
    CreateDir { mode: u32 },
    /// `renameat` of the first path to the second, which starts at
    /// byte `to` of the buffer.
    Rename { to: usize },
}

/// A call on a path the ring runs; resolves to its non-negative result.
pub(crate) struct PathOp {
    driver: driver::Handle,
    /// The NUL-terminated path(s), while no op holds them.
    paths: Option<Vec<u8>>,
    call: PathCall,
    /// (ring index, op) while the kernel has it.
    op: Option<(usize, OpKey)>,
}

/// `path` with a NUL after it, appended to `buf`.
fn push_c_path(buf: &mut Vec<u8>, path: &Path) -> io::Result<()> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "file name contained an unexpected NUL byte",
        ));
    }
    buf.extend_from_slice(bytes);
    buf.push(0);
    Ok(())
}

impl PathOp {
    /// Whether the current runtime runs `unlinkat`, `mkdirat` and
    /// `renameat` on its rings (opens need only rings: the probe requires
    /// `openat`). Returns its driver if so.
    pub(crate) fn supported() -> Option<driver::Handle> {
        super::FileOp::current_driver().filter(|driver| {
            driver
                .io()
                .and_then(|io| io.rings())
                .is_some_and(|r| r.path_calls())
        })
    }

    /// `call` on `path` (and `to`, the new name of a rename).
    ///
    /// # Errors
    /// `InvalidInput` if a path holds a NUL byte (as std).
    pub(crate) fn new(
        driver: driver::Handle,
        call: PathCall,
        path: &Path,
        to: Option<&Path>,
    ) -> io::Result<PathOp> {
        let mut paths = Vec::new();
        push_c_path(&mut paths, path)?;
        let call = match (call, to) {
            (PathCall::Rename { .. }, Some(to)) => {
                let at = paths.len();
                push_c_path(&mut paths, to)?;
                PathCall::Rename { to: at }
            }
            (PathCall::Rename { .. }, None) => unreachable!("a rename names its new path"),
            (call, _) => call,
        };
        Ok(PathOp {
            driver,
            paths: Some(paths),
            call,
            op: None,
        })
    }

    /// Open `path`: [`PathOp::new`] with [`PathCall::Open`], resolving to
    /// the file.
    pub(crate) fn open(
        driver: driver::Handle,
        path: &Path,
        flags: i32,
        mode: u32,
    ) -> io::Result<impl Future<Output = io::Result<File>>> {
        let op = PathOp::new(driver, PathCall::Open { flags, mode }, path, None)?;
        Ok(async move {
            let fd = op.await?;
            // SAFETY: the kernel opened `fd` for this op, and the table
            // handed it to us alone (ops.rs): we own it now.
            Ok(unsafe { File::from_raw_fd(fd) })
        })
    }
}

impl Future for PathOp {
    type Output = io::Result<i32>;

    /// Spends one unit of the task's coop budget when it completes, as the
    /// blocking pool's join handle does.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<i32>> {
        let me = self.get_mut();
        let restore = ready!(crate::coop::poll_proceed(cx));
        let io = me
            .driver
            .io()
            .expect("a PathOp is made only with an I/O driver");
        let rings = io.rings().expect("a PathOp is made only with rings");
        loop {
            let Some((index, key)) = me.op else {
                let (index, owned) = io.current_ring(rings);
                let paths = me
                    .paths
                    .take()
                    .expect("the paths are ours while no op runs");
                let started = rings
                    .get(index)
                    .start_path(me.call, paths, cx.waker(), !owned);
                match started {
                    Ok(key) => me.op = Some((index, key)),
                    Err(e) => {
                        restore.made_progress();
                        return Poll::Ready(Err(e));
                    }
                }
                continue;
            };
            let (result, paths) = match rings.get(index).poll(key, cx.waker()) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending => {
                    if io.is_shutdown() {
                        // The ring's teardown cancels it and closes a
                        // descriptor it made anyway.
                        me.op = None;
                        rings.get(index).abandon(key, super::ops::Leave::Cancel);
                        restore.made_progress();
                        return Poll::Ready(Err(super::super::shutdown_error()));
                    }
                    return Poll::Pending;
                }
            };
            me.op = None;
            if interrupted(result) {
                me.paths = Some(paths);
                continue;
            }
            restore.made_progress();
            return Poll::Ready(if result < 0 {
                Err(io::Error::from_raw_os_error(-result))
            } else {
                Ok(result)
            });
        }
    }
}

impl Drop for PathOp {
    /// Give the call up: the kernel's is cancelled, and a file an open
    /// made anyway is closed by the ring (ops.rs).
    fn drop(&mut self) {
        if let Some((index, key)) = self.op.take() {
            if let Some(rings) = self.driver.io().and_then(|io| io.rings()) {
                rings.get(index).abandon(key, super::ops::Leave::Cancel);
            }
        }
    }
}
