//! A file's reads and writes through io_uring: what `fs::File` runs
//! instead of a blocking-pool call when its runtime's driver has rings.
//!
//! Owns: one read or write in flight for one `File` (which ring, which
//! op, how far a write got), and the driver handle that keeps the rings
//! alive while it is out.
//!
//! Invariants:
//! - **Reads and writes use the file's own cursor** (offset -1,
//!   `IORING_FEAT_RW_CUR_POS`, which the probe requires), exactly as
//!   read(2) and write(2) would: a seek, a descriptor shared with a
//!   `try_clone` copy, and `into_std` all see the same position as on the
//!   blocking pool. `fs::File` keeps at most one op in flight per file,
//!   so the kernel never runs two against one cursor.
//! - **A write goes out whole** (`write_all`'s contract, which the
//!   blocking pool's write also keeps): a short write continues from where
//!   it stopped, on the ring of whichever thread polls it next.
//! - The buffer is the ring's until the completion (ops.rs). Dropping a
//!   [`FileOp`] leaves the request to the ring: a read is cancelled; a
//!   write runs to its completion (a write `File::write` accepted still
//!   lands after the `File` is dropped, as on the blocking pool): inside a
//!   runtime (the current one, which need not be the ring's) a task of
//!   its own polls it to its end, continuing a short write; outside one
//!   it is detached, and if it
//!   goes out short, the rest is not written (a regular file's write is
//!   short only when the disk or a size limit is full, where the rest
//!   would fail too).
//! - A write's waker at the ring is its ticket's (fs/write_order.rs),
//!   which wakes the task that polls it, if any: so its first completion
//!   always releases the ticket, whoever polls it and whenever (the rest
//!   of a short write is then not waited for by later calls).
//! - Completions the kernel interrupted (`EINTR`, `EAGAIN`, or an
//!   `ECANCELED` nobody asked for; the module doc of `uring` says why) are
//!   retried, never reported.

use super::ops::{interrupted, Leave, OpKey, Polled};
use super::Rings;
use crate::fs::write_order::WriteTicket;
use crate::runtime::{context, driver};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};

/// A read or write the ring runs for a file.
pub(crate) struct FileOp {
    driver: driver::Handle,
    /// (ring index, op) while the kernel has it.
    op: Option<(usize, OpKey)>,
    /// Held open until the op is given up (a request is submitted before
    /// its descriptor can close: ring/mod.rs's invariant).
    file: Arc<File>,
    kind: Kind,
    /// A write's place in the order of background writes
    /// (fs/write_order.rs): the ring holds its waker, so the completion
    /// releases it, polled or not.
    ticket: Option<WriteTicket>,
    /// This op is already the one a task finishes after its `File` went
    /// (see `Drop`): dropped again, it is left to the ring.
    finishing: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Reading up to this many bytes.
    Read(usize),
    /// Writing `buf[from..end]`.
    Write { from: usize, end: usize },
    /// `fsync` (`data_only`: `fdatasync`); no buffer.
    Sync { data_only: bool },
}

/// What a completion means for the op.
#[must_use]
enum Step {
    /// The op is over: the result for the file.
    Finished(io::Result<u64>),
    /// Start the same op again from where it stands.
    Again,
}

impl FileOp {
    /// The current runtime's driver, if it runs file operations on
    /// io_uring (`None`: use the blocking pool, as Tokio does).
    ///
    /// Only on a worker (a multi_thread worker, or the thread holding a
    /// current_thread runtime's core). Any other thread's op would go to
    /// the shared ring, which only a thread driving the runtime reaps:
    /// - a current_thread runtime may have no such thread (nobody in
    ///   `Runtime::block_on`), where a file call on Tokio still completes;
    /// - a multi_thread runtime's `block_on` thread (`#[tokio::main]`'s
    ///   `main`) would wait for a worker to wake, reap the ring and wake
    ///   it again, at every step of a call: a sequential `fs::read` took
    ///   2.5× Tokio's time there (46–55 µs against 17–21), where the
    ///   blocking pool's one hop per call matches Tokio's (BENCHMARKS.md,
    ///   "fs on a `block_on` thread").
    ///
    /// Nor once the runtime has shut down: the blocking pool then refuses
    /// the call, which fails with Tokio's error for it.
    pub(crate) fn current_driver() -> Option<driver::Handle> {
        context::with_current(|h| {
            let io = h.driver().io()?;
            if io.is_shutdown() {
                return None;
            }
            let rings = io.rings()?;
            if !io.current_ring(rings).1 {
                return None;
            }
            Some(h.driver().clone())
        })
        .flatten()
    }

    /// Read up to `len` bytes from `file` at its cursor into `buf` (its
    /// old contents are dropped; it comes back holding what was read).
    ///
    /// # Errors
    /// The ring could not take the request (its buffer is then lost).
    pub(crate) fn read(
        driver: driver::Handle,
        file: Arc<File>,
        buf: Vec<u8>,
        len: usize,
        cx: &Context<'_>,
    ) -> io::Result<FileOp> {
        let mut op = FileOp {
            driver,
            op: None,
            file,
            kind: Kind::Read(len),
            ticket: None,
            finishing: false,
        };
        op.start(buf, Some(cx))?;
        Ok(op)
    }

    /// Write all of `buf[..end]` to `file` at its cursor. No task is woken
    /// when it ends until one polls it; `ticket`, if any, is released then
    /// (the ring holds its waker).
    ///
    /// # Errors
    /// As [`FileOp::read`].
    pub(crate) fn write(
        driver: driver::Handle,
        file: Arc<File>,
        buf: Vec<u8>,
        end: usize,
        ticket: Option<WriteTicket>,
    ) -> io::Result<FileOp> {
        let mut op = FileOp {
            driver,
            op: None,
            file,
            kind: Kind::Write { from: 0, end },
            ticket,
            finishing: false,
        };
        op.start(buf, None)?;
        Ok(op)
    }

    /// `fsync` (`data_only`: `fdatasync`) `file` on the ring of the task
    /// that awaits it.
    pub(crate) async fn sync(
        driver: driver::Handle,
        file: Arc<File>,
        data_only: bool,
    ) -> io::Result<()> {
        let mut op = FileOp {
            driver,
            op: None,
            file,
            kind: Kind::Sync { data_only },
            ticket: None,
            finishing: false,
        };
        let mut started = false;
        std::future::poll_fn(|cx| {
            if !started {
                started = true;
                if let Err(e) = op.start(Vec::new(), Some(cx)) {
                    return Poll::Ready(Err(e));
                }
            }
            op.poll(cx).map(|(result, _)| result.map(drop))
        })
        .await
    }

    fn rings(&self) -> &Rings {
        self.driver
            .io()
            .and_then(|io| io.rings())
            .expect("a FileOp is made only on a driver with rings")
    }

    /// Push the op (again) on the ring of the calling thread. `cx`: the
    /// task that waits for it (`None`: a write that returned at once, whose
    /// completion then wakes nobody; the next poll leaves a waker).
    fn start(&mut self, buf: Vec<u8>, cx: Option<&Context<'_>>) -> io::Result<()> {
        let io = self.driver.io().expect("checked by current_driver");
        let rings = self.rings();
        let (index, owned) = io.current_ring(rings);
        let ring = rings.get(index);
        let fd = self.file.as_raw_fd();
        let key = match self.kind {
            Kind::Read(len) => {
                let cx = cx.expect("a read is started by the task that waits for it");
                ring.start_read(fd, buf, len, cx.waker(), !owned)?
            }
            Kind::Write { from, end } => {
                let waker = self.ring_waker(cx.map(Context::waker));
                ring.start_write(fd, buf, from..end, waker.as_ref(), cx.is_some(), !owned)?
            }
            Kind::Sync { data_only } => {
                let cx = cx.expect("a sync is started by the task that waits for it");
                ring.start_fsync(fd, data_only, cx.waker(), !owned)?
            }
        };
        self.op = Some((index, key));
        Ok(())
    }

    /// The op's result once it is over, with its buffer: bytes read, or
    /// bytes written (all of them). Spends one unit of the task's coop
    /// budget when it completes, as the blocking pool's join handle does.
    ///
    /// # Panics
    /// If polled again after it returned `Ready`.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<(io::Result<u64>, Vec<u8>)> {
        let restore = ready!(crate::coop::poll_proceed(cx));
        loop {
            let (index, key) = self.op.expect("a FileOp polled after it finished");
            let waker = self.ring_waker(Some(cx.waker()));
            let waker = waker.as_ref().unwrap_or(cx.waker());
            let (result, buf) = match self.rings().get(index).poll(key, waker) {
                Polled::Done { result, buf } => (result, buf),
                Polled::Pending => {
                    let io = self.driver.io().expect("checked by current_driver");
                    if io.is_shutdown() {
                        // The ring is gone or going: its teardown frees the
                        // buffer; this op ends with the shutdown error.
                        self.abandon();
                        restore.made_progress();
                        return Poll::Ready((Err(super::super::shutdown_error()), Vec::new()));
                    }
                    return Poll::Pending;
                }
            };
            self.op = None;
            let mut buf = buf;
            if let (Kind::Read(_), Ok(n)) = (self.kind, usize::try_from(result)) {
                // SAFETY: the kernel wrote `n` bytes at the start of the
                // buffer's spare capacity (`Ring::start_read` cleared it and
                // asked for at most its capacity).
                unsafe { buf.set_len(n) };
            }
            match self.step(result) {
                Step::Finished(result) => {
                    if let Some(ticket) = &self.ticket {
                        ticket.release();
                    }
                    restore.made_progress();
                    return Poll::Ready((result, buf));
                }
                Step::Again => {
                    if let Err(e) = self.start(buf, Some(cx)) {
                        restore.made_progress();
                        return Poll::Ready((Err(e), Vec::new()));
                    }
                }
            }
        }
    }

    /// Account for a completion with `result`.
    fn step(&mut self, result: i32) -> Step {
        if interrupted(result) {
            return Step::Again;
        }
        let Ok(n) = usize::try_from(result) else {
            return Step::Finished(Err(io::Error::from_raw_os_error(-result)));
        };
        match &mut self.kind {
            Kind::Read(_) => Step::Finished(Ok(n as u64)),
            Kind::Sync { .. } => Step::Finished(Ok(0)),
            Kind::Write { from, end } => {
                *from += n;
                if *from == *end {
                    Step::Finished(Ok(*end as u64))
                } else if n == 0 {
                    Step::Finished(Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the file took no more bytes",
                    )))
                } else {
                    Step::Again
                }
            }
        }
    }

    /// The waker to leave with the ring for `task`: for a write with a
    /// ticket, the ticket's (which wakes `task` after releasing it),
    /// whatever `task` is; else `task`'s own (`None`: the ring's own
    /// default, no waker).
    fn ring_waker(&self, task: Option<&Waker>) -> Option<Waker> {
        match &self.ticket {
            Some(ticket) => {
                if let Some(task) = task {
                    ticket.set_task(task);
                }
                Some(ticket.waker())
            }
            None => task.cloned(),
        }
    }

    /// Leave the request to the ring (see the module doc).
    fn abandon(&mut self) {
        if let Some((index, key)) = self.op.take() {
            let ring = self.rings().get(index);
            match self.kind {
                Kind::Read(_) | Kind::Sync { .. } => ring.abandon(key, Leave::Cancel),
                Kind::Write { .. } => ring.abandon(key, Leave::Detach),
            }
        }
    }
}

impl Drop for FileOp {
    /// A write still in flight whose `File` went is finished by a task of
    /// its own, so later calls wait for its end, not for its abandonment
    /// (fs/write_order.rs), and a short write goes on; without a runtime
    /// (a `File` dropped outside one), or when that task itself is
    /// dropped (a runtime shutting down), it is left to the ring.
    fn drop(&mut self) {
        if let (Kind::Write { .. }, Some(_), false) = (self.kind, self.op, self.finishing) {
            if let Ok(handle) = crate::runtime::Handle::try_current() {
                // Into the kernel now, as `abandon` would: the task may not
                // run before the caller blocks (on a `current_thread`
                // runtime, inside `block_on`).
                if let Some((index, _)) = self.op {
                    self.rings().get(index).submit_now();
                }
                let mut rest = FileOp {
                    driver: self.driver.clone(),
                    op: self.op.take(),
                    file: Arc::clone(&self.file),
                    kind: self.kind,
                    ticket: self.ticket.take(),
                    finishing: true,
                };
                drop(handle.spawn(async move {
                    // Its error has nobody to go to (as on the blocking
                    // pool, whose job outlives the `File` too).
                    let _ = std::future::poll_fn(|cx| rest.poll(cx)).await;
                }));
                return;
            }
        }
        self.abandon();
    }
}
