//! Opening a file through io_uring (`openat`): what `fs::OpenOptions::open`
//! (and so `File::open`, `File::create`, `fs::read`, `fs::write`) runs
//! instead of a blocking-pool call when its runtime's driver has rings.
//!
//! Owns: one open in flight, and the driver handle that keeps its ring
//! alive.
//!
//! Invariants:
//! - **A descriptor is never leaked.** The op is inserted as one whose
//!   result is a descriptor (ops.rs): if the [`OpenOp`] is dropped before
//!   it takes the result, the ring closes the file the kernel opened.
//! - The path buffer (NUL-terminated) is the ring's until the completion.
//! - An open the kernel interrupted (`EINTR`, `EAGAIN`, an `ECANCELED`
//!   nobody asked for) did not happen and is started again.

use super::ops::{OpKey, Polled};
use crate::runtime::driver;
use std::fs::File;
use std::future::Future;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// An `openat(2)` the ring runs; resolves to the open file.
pub(crate) struct OpenOp {
    driver: driver::Handle,
    /// The NUL-terminated path, while no op holds it.
    path: Option<Vec<u8>>,
    flags: i32,
    mode: u32,
    /// (ring index, op) while the kernel has it.
    op: Option<(usize, OpKey)>,
}

impl OpenOp {
    /// Open `path` with the `open(2)` `flags` and `mode` (see
    /// `FileOp::current_driver` for `driver`).
    ///
    /// # Errors
    /// `InvalidInput` if the path holds a NUL byte (as std).
    pub(crate) fn new(
        driver: driver::Handle,
        path: &Path,
        flags: i32,
        mode: u32,
    ) -> io::Result<OpenOp> {
        let bytes = path.as_os_str().as_bytes();
        if bytes.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "file name contained an unexpected NUL byte",
            ));
        }
        let mut c_path = Vec::with_capacity(bytes.len() + 1);
        c_path.extend_from_slice(bytes);
        c_path.push(0);
        Ok(OpenOp {
            driver,
            path: Some(c_path),
            flags,
            mode,
            op: None,
        })
    }
}

impl Future for OpenOp {
    type Output = io::Result<File>;

    /// Spends one unit of the task's coop budget when it completes, as the
    /// blocking pool's join handle does.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<File>> {
        let me = self.get_mut();
        let restore = ready!(crate::coop::poll_proceed(cx));
        let io = me
            .driver
            .io()
            .expect("an OpenOp is made only with an I/O driver");
        let rings = io.rings().expect("an OpenOp is made only with rings");
        loop {
            let Some((index, key)) = me.op else {
                let (index, owned) = io.current_ring(rings);
                let path = me.path.take().expect("the path is ours while no op runs");
                let started =
                    rings
                        .get(index)
                        .start_open(path, me.flags, me.mode, cx.waker(), !owned);
                match started {
                    Ok(key) => me.op = Some((index, key)),
                    Err(e) => {
                        restore.made_progress();
                        return Poll::Ready(Err(e));
                    }
                }
                continue;
            };
            let (result, path) = match rings.get(index).poll(key, cx.waker()) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending => {
                    if io.is_shutdown() {
                        // The ring's teardown cancels it and closes a
                        // descriptor it made anyway.
                        me.op = None;
                        rings.get(index).abandon(key, None);
                        restore.made_progress();
                        return Poll::Ready(Err(super::super::shutdown_error()));
                    }
                    return Poll::Pending;
                }
            };
            me.op = None;
            if matches!(-result, libc::EINTR | libc::EAGAIN | libc::ECANCELED) {
                me.path = Some(path);
                continue;
            }
            restore.made_progress();
            return Poll::Ready(if result < 0 {
                Err(io::Error::from_raw_os_error(-result))
            } else {
                // SAFETY: the kernel opened `result` for this op, and the
                // table handed it to us alone (ops.rs): we own it now.
                Ok(unsafe { File::from_raw_fd(result) })
            });
        }
    }
}

impl OpenOp {
    /// Give the op up: the kernel's open is cancelled, and a file it
    /// opened anyway is closed by the ring (ops.rs).
    fn abandon(&mut self) {
        if let Some((index, key)) = self.op.take() {
            if let Some(rings) = self.driver.io().and_then(|io| io.rings()) {
                rings.get(index).abandon(key, None);
            }
        }
    }
}

impl Drop for OpenOp {
    fn drop(&mut self) {
        self.abandon();
    }
}
