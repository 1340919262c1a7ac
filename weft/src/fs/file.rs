//! [`File`]: an open file whose reads, writes and seeks run on the blocking
//! pool, as `tokio::fs::File` does (part of issue #14), or, on a runtime
//! whose I/O driver is io_uring, whose reads and writes run on the ring of
//! the worker that starts them (issue #15).
//!
//! Owns: the file's state machine and its one buffer ([`Buf`]).
//!
//! Invariants (Tokio's semantics, whichever of the two runs an operation):
//! - At most one operation is in flight per `File` (`State::Busy`); it
//!   owns the buffer while it runs and an `Arc<std::fs::File>`, so dropping
//!   the `File` does not stop it (a write made just before the drop still
//!   lands). On the ring, reads and writes use the descriptor's own cursor
//!   (`runtime/io/uring/file.rs`), so position semantics do not change; a
//!   seek to a start or current-relative position there is one `lseek`
//!   made in place (it never waits for the disk), `sync_all`/`sync_data`
//!   are `fsync` ops on the ring, and a seek from the end (which may ask a
//!   network or FUSE filesystem for the length) and every other call
//!   (`metadata`, `set_len`, ...) stay on the blocking pool.
//! - A write is accepted at once: up to `max_buf_size` bytes are copied into
//!   the buffer and the actual write runs in the background. Every other
//!   operation first waits for it.
//! - An error from a background write is kept (`last_write_err`) until an
//!   operation that can report it runs: the next write, flush or shutdown,
//!   and (unlike Tokio, see [`File::sync_all`]) `sync_all`, `sync_data` and
//!   `set_len`. Reads and seeks wait for the write but leave its error for
//!   those.
//! - When idle, `start..end` of the buffer holds bytes the OS has read but
//!   the caller has not taken yet, so the OS cursor is that many bytes ahead
//!   of the caller's position. A seek relative to the current position, a
//!   write and `set_len` drop those bytes and first move the cursor back by
//!   their number.

use super::file_buf::Buf;
use super::write_order::{self, WriteTicket};
use super::{asyncify, FileTimes, OpenOptions};
use crate::io::{AsyncRead, AsyncSeek, AsyncWrite, IoSlice, ReadBuf};
use crate::runtime::io::uring::FileOp;
use crate::sync::Mutex;
use crate::task::JoinHandle;
use std::fmt;
use std::fs::{File as StdFile, Metadata, Permissions};
use std::future::{poll_fn, Future};
use std::io::{self, Seek, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// The most bytes one background read or write moves unless
/// [`File::set_max_buf_size`] says otherwise (Tokio's default too).
const DEFAULT_MAX_BUF_SIZE: usize = 2 * 1024 * 1024;

/// An open file, read, written and seeked through the blocking pool.
///
/// Reading and writing go through [`AsyncReadExt`](crate::io::AsyncReadExt)
/// and [`AsyncWriteExt`](crate::io::AsyncWriteExt), seeking through
/// [`AsyncSeekExt`](crate::io::AsyncSeekExt).
///
/// A write returns as soon as its bytes are copied into the file's buffer;
/// the write itself runs in the background, and the next operation waits
/// for it. Call `flush` to wait for it (and see its error). Dropping a
/// `File` with a write still running does not cancel the write, but its
/// error, if any, is lost; and the file is closed only once the write is
/// done. `flush` does not ask the OS to put the data on disk: that is
/// [`File::sync_all`].
///
/// Every operation needs a runtime (it runs on the runtime's blocking pool).
///
/// ```
/// use weft::fs::File;
/// use weft::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-file-doc-{}", std::process::id()));
/// weft::fs::create_dir_all(&dir).await?;
/// let path = dir.join("notes.txt");
///
/// let mut file = File::create(&path).await?;
/// file.write_all(b"hello, world").await?;
/// file.flush().await?; // the background write is done
///
/// let mut file = File::open(&path).await?;
/// file.seek(std::io::SeekFrom::Start(7)).await?;
/// let mut rest = String::new();
/// file.read_to_string(&mut rest).await?;
/// assert_eq!(rest, "world");
/// weft::fs::remove_dir_all(&dir).await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub struct File {
    std: Arc<StdFile>,
    /// Locked by the `&self` methods that must wait for the operation in
    /// flight; the poll methods take `&mut self` and reach it directly.
    inner: Mutex<Inner>,
    max_buf_size: usize,
    /// Whether this file's background writes join the order of writes
    /// (write_order.rs): a regular file's only. A pipe's, a FIFO's or a
    /// terminal's write may wait for a reader for ever, and every path
    /// call in the process would wait behind it (Tokio's do not: a
    /// program whose reader opens or stats something first would hang).
    /// Found by the first write (one `fstat`); `None` until then.
    orders_writes: Option<bool>,
}

struct Inner {
    state: State,
    /// A background write's error, for the next operation that reports it.
    last_write_err: Option<io::Error>,
    /// Where the last seek landed: what `poll_complete` reports when no seek
    /// is in flight. As in Tokio, it is not updated by reads and writes; a
    /// seek finished by a write, a flush or a waiting `&self` method is
    /// not recorded (see [`Inner::absorb`]), and a successful `set_len`
    /// sets it to 0.
    pos: u64,
}

enum State {
    Idle(Buf),
    /// The operation in flight, and what it is. It yields the buffer back
    /// with its result: bytes read, 0 for a write, or a seek's position.
    Busy(Op, Running),
}

/// Where the operation in flight runs.
enum Running {
    Blocking(JoinHandle<(io::Result<u64>, Buf)>),
    /// On an io_uring ring (a read or a write), which holds the buffer's
    /// bytes until it completes.
    Ring(FileOp),
    /// Already done in place (a seek on a runtime with rings).
    Done(io::Result<u64>, Buf),
}

/// What a background operation does. `set_len` counts as a write: its error
/// is reported like one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    Seek,
}

impl File {
    /// Open an existing file for reading.
    ///
    /// # Errors
    /// As `std::fs::File::open` (e.g. `NotFound`).
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        File::options().read(true).open(path).await
    }

    /// Open a file for writing, creating it if missing and truncating it if
    /// not.
    ///
    /// # Errors
    /// As `std::fs::File::create`.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Create a file that must not exist yet, and open it for reading and
    /// writing. The check and the creation are one atomic step.
    ///
    /// # Errors
    /// `AlreadyExists` if something is at `path`; otherwise as
    /// [`OpenOptions::open`].
    pub async fn create_new<P: AsRef<Path>>(path: P) -> io::Result<File> {
        File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// A fresh [`OpenOptions`] (all options off), to open a file in any
    /// other way: `File::options().append(true).open(path)`.
    #[must_use]
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Wrap an open std file. Its cursor is where reads and writes start.
    pub fn from_std(std: StdFile) -> File {
        File {
            std: Arc::new(std),
            inner: Mutex::new(Inner {
                state: State::Idle(Buf::default()),
                last_write_err: None,
                pos: 0,
            }),
            max_buf_size: DEFAULT_MAX_BUF_SIZE,
            orders_writes: None,
        }
    }

    /// Ask the OS to put the file's data and metadata on disk. Waits for
    /// the write in flight first.
    ///
    /// # Errors
    /// The error of a background write not reported yet (Tokio keeps that
    /// one for the next write or flush, and returns `Ok` here if the sync
    /// itself works, so a failed write could go unseen); otherwise the
    /// sync's own.
    pub async fn sync_all(&self) -> io::Result<()> {
        self.wait_for_write().await?;
        if let Some(driver) = FileOp::current_driver() {
            return FileOp::sync(driver, Arc::clone(&self.std), false).await;
        }
        let std = Arc::clone(&self.std);
        asyncify(move || std.sync_all()).await
    }

    /// As [`File::sync_all`], but metadata not needed to read the data back
    /// (like the modification time) may stay behind.
    ///
    /// # Errors
    /// As [`File::sync_all`].
    pub async fn sync_data(&self) -> io::Result<()> {
        self.wait_for_write().await?;
        if let Some(driver) = FileOp::current_driver() {
            return FileOp::sync(driver, Arc::clone(&self.std), true).await;
        }
        let std = Arc::clone(&self.std);
        asyncify(move || std.sync_data()).await
    }

    /// Truncate or extend the file to `size` bytes (an extension reads as
    /// zeros). The cursor does not move. Waits for the write in flight
    /// first.
    ///
    /// # Errors
    /// The error of a background write not reported yet (see
    /// [`File::sync_all`]); `set_len`'s own (e.g. the file is not open for
    /// writing).
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        inner.finish().await;
        if let Some(e) = inner.last_write_err.take() {
            return Err(e);
        }
        let behind = inner.idle_buf().discard();
        let std = Arc::clone(&self.std);
        inner.start(Op::Write, move |buf| {
            let result = rewind_by(&std, behind).and_then(|()| std.set_len(size));
            (result.map(|()| 0), buf)
        });
        // If this future is dropped here, the result is kept like a write's.
        let (_, result) = poll_fn(|cx| inner.poll_finish(cx))
            .await
            .expect("set_len started an operation");
        // As Tokio (which runs `set_len` as a seek to position 0): once it
        // succeeds, `poll_complete` with no seek in flight reports 0.
        if result.is_ok() {
            inner.pos = 0;
        }
        result.map(drop)
    }

    /// The file's metadata. Unlike Tokio, waits for the write in flight
    /// first, so the length includes what was written before (its error,
    /// if any, is kept for the next write or flush).
    ///
    /// # Errors
    /// As `std::fs::File::metadata`.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        self.inner.lock().await.finish().await;
        let std = Arc::clone(&self.std);
        asyncify(move || std.metadata()).await
    }

    /// A second `File` for the same open file (a duplicated descriptor): the
    /// two share the cursor, so reads, writes and seeks through one move the
    /// other. Waits for the write in flight first. The copy has this file's
    /// `max_buf_size`.
    ///
    /// # Errors
    /// As `std::fs::File::try_clone` (e.g. out of descriptors).
    pub async fn try_clone(&self) -> io::Result<File> {
        self.inner.lock().await.finish().await;
        let std = Arc::clone(&self.std);
        let clone = asyncify(move || std.try_clone()).await?;
        let mut file = File::from_std(clone);
        file.set_max_buf_size(self.max_buf_size);
        Ok(file)
    }

    /// The std file, once the operation in flight is done (a write's error
    /// is lost then: call `flush` first to see it). Bytes read ahead and not
    /// taken yet are dropped, as in Tokio, so the std file's cursor may be
    /// past what was read.
    ///
    /// # Panics
    /// If a `sync_all`, `sync_data`, `metadata`, `try_clone`,
    /// `set_permissions` or `set_times` future was dropped before it
    /// finished and its blocking call is still running (it holds the
    /// file): as Tokio.
    pub async fn into_std(mut self) -> StdFile {
        self.inner.get_mut().finish().await;
        Arc::try_unwrap(self.std).unwrap_or_else(|_| {
            panic!(
                "File::into_std: a cancelled sync_all/sync_data/metadata/try_clone/\
                 set_permissions/set_times call is still using the file on the blocking pool"
            )
        })
    }

    /// The std file now, or the `File` back if an operation still holds it
    /// (use [`File::into_std`] to wait instead).
    ///
    /// # Errors
    /// `Err(self)` while an operation is running.
    #[allow(clippy::result_large_err)] // Tokio's signature
    pub fn try_into_std(mut self) -> Result<StdFile, File> {
        match Arc::try_unwrap(self.std) {
            Ok(std) => Ok(std),
            Err(std) => {
                self.std = std;
                Err(self)
            }
        }
    }

    /// Change the file's permissions (`fchmod`). Does not wait for the
    /// operation in flight (as Tokio).
    ///
    /// # Errors
    /// As `std::fs::File::set_permissions`.
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        let std = Arc::clone(&self.std);
        asyncify(move || std.set_permissions(perm)).await
    }

    /// Set the file's access and/or modification times (`futimens`; a time
    /// not set in `times` is left alone). Waits for the operation in flight
    /// first, so a write still running cannot land after it and move the
    /// modification time again (that write's error, if any, is kept for the
    /// next write or flush).
    ///
    /// # Errors
    /// As `std::fs::File::set_times`.
    pub async fn set_times(&self, times: FileTimes) -> io::Result<()> {
        self.inner.lock().await.finish().await;
        let std = Arc::clone(&self.std);
        asyncify(move || std.set_times(times.to_std())).await
    }

    /// Set the file's modification time: [`File::set_times`] with only
    /// that time.
    ///
    /// # Errors
    /// As [`File::set_times`].
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.set_times(FileTimes::new().set_modified(time)).await
    }

    /// Bound the bytes one background read or write moves (2 MiB by
    /// default). A `write` takes at most this many bytes; a `read` asks the
    /// OS for at most this many. Takes effect from the next operation.
    ///
    /// # Panics
    /// If `max_buf_size` is 0 (as Tokio: every write would then take
    /// nothing, and every read would end the file).
    #[track_caller]
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        assert!(
            max_buf_size > 0,
            "File::set_max_buf_size(0): `max_buf_size` must be greater than 0 (the bound on one \
             background read or write must be at least 1 byte)"
        );
        self.max_buf_size = max_buf_size;
    }

    /// The bound set by [`File::set_max_buf_size`].
    pub fn max_buf_size(&self) -> usize {
        self.max_buf_size
    }

    /// Wait for the operation in flight; the error of a background write not
    /// reported yet is returned (and so reported).
    async fn wait_for_write(&self) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        inner.finish().await;
        inner.last_write_err.take().map_or(Ok(()), Err)
    }

    /// `poll_write` and `poll_write_vectored`: `fill` copies up to the
    /// bound into the (empty) buffer and says how much it took.
    fn poll_write_with(
        &mut self,
        cx: &mut Context<'_>,
        fill: impl FnOnce(&mut Buf, usize) -> usize,
    ) -> Poll<io::Result<usize>> {
        let inner = self.inner.get_mut();
        if let Some(e) = inner.last_write_err.take() {
            return Poll::Ready(Err(e));
        }
        match ready!(inner.poll_finish(cx)) {
            Some((Op::Write, Err(e))) => return Poll::Ready(Err(e)),
            Some((op, result)) => inner.absorb(op, result),
            None => {}
        }
        let buf = inner.idle_buf();
        let behind = buf.discard();
        let n = fill(buf, self.max_buf_size);
        if n == 0 && behind == 0 {
            // Nothing to write, but, as in Tokio (whose empty write still
            // goes to the blocking pool), the file counts as busy until
            // the next operation or `poll_complete` waits for it: a
            // `start_seek` right after fails the same way.
            let buf = std::mem::take(buf);
            inner.state = State::Busy(Op::Write, Running::Done(Ok(0), buf));
            return Poll::Ready(Ok(0));
        }
        // Later path calls and opens wait for it (write_order.rs), if the
        // file is a regular one.
        let orders = *self.orders_writes.get_or_insert_with(|| {
            // A file whose kind cannot be told is ordered, as before.
            !matches!(self.std.metadata(), Ok(m) if !m.file_type().is_file())
        });
        let ticket = if orders {
            write_order::begin_write()
        } else {
            None
        };
        // Bytes read ahead must first be given back with a seek: that
        // write takes the blocking pool, which does both in order.
        if behind > 0 || !inner.start_on_ring(&self.std, Op::Write, n, cx, ticket.as_ref()) {
            let std = Arc::clone(&self.std);
            inner.start(Op::Write, move |mut buf| {
                let result = rewind_by(&std, behind).and_then(|()| buf.write_to(&std));
                if let Some(ticket) = ticket {
                    ticket.release();
                }
                (result.map(|()| 0), buf)
            });
        }
        Poll::Ready(Ok(n))
    }
}

impl Inner {
    /// Wait for the operation in flight, if any, and return what it was and
    /// its result. The file is idle afterwards.
    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Op, io::Result<u64>)>> {
        let State::Busy(op, handle) = &mut self.state else {
            return Poll::Ready(None);
        };
        let op = *op;
        let (result, buf) = match handle {
            Running::Blocking(handle) => match ready!(Pin::new(handle).poll(cx)) {
                Ok(done) => done,
                // Only a runtime shutting down stops a blocking call; the
                // buffer went with it.
                Err(e) => (Err(super::background_failed(e)), Buf::default()),
            },
            Running::Ring(ring_op) => {
                let (result, bytes) = ready!(ring_op.poll(cx));
                // A write's result is 0, as a blocking-pool write's.
                let result = match op {
                    Op::Write => result.map(|_| 0),
                    _ => result,
                };
                (result, Buf::from_ring(op == Op::Read, bytes))
            }
            Running::Done(result, buf) => (std::mem::replace(result, Ok(0)), std::mem::take(buf)),
        };
        self.state = State::Idle(buf);
        Poll::Ready(Some((op, result)))
    }

    /// Wait for the operation in flight, keeping what its result tells.
    async fn finish(&mut self) {
        poll_fn(|cx| {
            if let Some((op, result)) = ready!(self.poll_finish(cx)) {
                self.absorb(op, result);
            }
            Poll::Ready(())
        })
        .await;
    }

    /// Keep what a finished operation that nobody waits on tells: a
    /// write's error (for the next write or flush). A read's bytes are
    /// already in the buffer. Where a seek landed is kept by the callers
    /// that keep it in Tokio, reads and `poll_complete`
    /// ([`Inner::absorb_seek`]); a write, a flush and the `&self` methods
    /// that wait (`finish`) drop it, so `poll_complete` with no seek in
    /// flight then reports the position before that seek, as Tokio's does.
    fn absorb(&mut self, op: Op, result: io::Result<u64>) {
        if let (Op::Write, Err(e)) = (op, result) {
            self.last_write_err.get_or_insert(e);
        }
    }

    /// [`Inner::absorb`], keeping where a seek landed too.
    fn absorb_seek(&mut self, op: Op, result: io::Result<u64>) {
        match (op, result) {
            (Op::Seek, Ok(pos)) => self.pos = pos,
            (op, result) => self.absorb(op, result),
        }
    }

    fn idle_buf(&mut self) -> &mut Buf {
        match &mut self.state {
            State::Idle(buf) => buf,
            State::Busy(..) => unreachable!("the file's buffer is taken while idle only"),
        }
    }

    /// Run `job` on the blocking pool with the buffer. The file must be
    /// idle.
    fn start(&mut self, op: Op, job: impl FnOnce(Buf) -> (io::Result<u64>, Buf) + Send + 'static) {
        let buf = std::mem::take(self.idle_buf());
        self.state = State::Busy(
            op,
            Running::Blocking(crate::task::spawn_blocking(move || job(buf))),
        );
    }

    /// Start a read of up to `want` bytes (a write, if `write` is given:
    /// the buffer's live part) on the current runtime's io_uring ring, if
    /// it has rings. Returns `false`, with nothing started, if not. The
    /// file must be idle.
    fn start_on_ring(
        &mut self,
        std: &Arc<StdFile>,
        op: Op,
        want: usize,
        cx: &Context<'_>,
        ticket: Option<&WriteTicket>,
    ) -> bool {
        let Some(driver) = FileOp::current_driver() else {
            return false;
        };
        let buf = std::mem::take(self.idle_buf());
        let (bytes, end) = (buf.bytes, buf.end);
        let started = match op {
            Op::Read => FileOp::read(driver, Arc::clone(std), bytes, want, cx),
            Op::Write => FileOp::write(driver, Arc::clone(std), bytes, end, ticket.cloned()),
            Op::Seek => unreachable!("seeks are made in place"),
        };
        self.state = match started {
            Ok(ring_op) => State::Busy(op, Running::Ring(ring_op)),
            // The ring kept the buffer; the error is the op's result.
            Err(e) => State::Busy(op, Running::Done(Err(e), Buf::default())),
        };
        true
    }

    /// Seek in place on a runtime with rings (see the module doc);
    /// returns `false`, with nothing done, where the blocking pool must.
    fn seek_in_place(&mut self, std: &StdFile, position: SeekFrom) -> bool {
        if matches!(position, SeekFrom::End(_)) || FileOp::current_driver().is_none() {
            return false;
        }
        let result = (&*std).seek(position);
        let buf = std::mem::take(self.idle_buf());
        self.state = State::Busy(Op::Seek, Running::Done(result, buf));
        true
    }
}

/// Move the OS cursor back by `n` bytes read ahead and dropped.
fn rewind_by(std: &StdFile, n: usize) -> io::Result<()> {
    if n == 0 {
        return Ok(());
    }
    // A buffer's length is at most isize::MAX, so it fits.
    let n = i64::try_from(n).expect("a buffer length fits in i64");
    (&*std).seek(SeekFrom::Current(-n)).map(drop)
}

impl AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        dst: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let inner = me.inner.get_mut();
        loop {
            match ready!(inner.poll_finish(cx)) {
                // A read started by this call (or by one that was dropped):
                // its bytes are in the buffer; none means end of file.
                Some((Op::Read, result)) => {
                    result?;
                    inner.idle_buf().copy_to(dst);
                    return Poll::Ready(Ok(()));
                }
                Some((op, result)) => inner.absorb_seek(op, result),
                None => {}
            }
            let buf = inner.idle_buf();
            if buf.unread() > 0 || dst.remaining() == 0 {
                buf.copy_to(dst);
                return Poll::Ready(Ok(()));
            }
            let want = dst.remaining().min(me.max_buf_size);
            if !inner.start_on_ring(&me.std, Op::Read, want, cx, None) {
                let std = Arc::clone(&me.std);
                inner.start(Op::Read, move |mut buf| {
                    let result = buf.read_from(&std, want).map(|n| n as u64);
                    (result, buf)
                });
            }
        }
    }
}

impl AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_write_with(cx, |buf, max| buf.fill_from(&[IoSlice::new(src)], max))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_write_with(cx, |buf, max| buf.fill_from(bufs, max))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// Wait for the write in flight; its error, or one kept from an earlier
    /// background write, is returned.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let inner = self.get_mut().inner.get_mut();
        if let Some(e) = inner.last_write_err.take() {
            return Poll::Ready(Err(e));
        }
        match ready!(inner.poll_finish(cx)) {
            Some((Op::Write, Err(e))) => Poll::Ready(Err(e)),
            Some((op, result)) => {
                inner.absorb(op, result);
                Poll::Ready(Ok(()))
            }
            None => Poll::Ready(Ok(())),
        }
    }

    /// As `poll_flush` (a file has no write direction to close).
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

impl AsyncSeek for File {
    /// Start a seek. A `SeekFrom::Current` offset counts from the caller's
    /// position, before any bytes read ahead.
    ///
    /// # Errors
    /// If another operation is still in flight (finish it with
    /// `poll_complete` first), or if accounting for the bytes read ahead
    /// overflows the offset.
    fn start_seek(self: Pin<&mut Self>, mut position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        let inner = me.inner.get_mut();
        if let State::Busy(..) = inner.state {
            return Err(io::Error::other(
                "a file operation is still in flight; call poll_complete before start_seek",
            ));
        }
        let buf = inner.idle_buf();
        if let SeekFrom::Current(offset) = &mut position {
            let behind = i64::try_from(buf.unread()).expect("a buffer length fits in i64");
            *offset = offset.checked_sub(behind).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek offset out of range")
            })?;
        }
        // A `Start`/`End` seek lands where it says whatever the cursor; a
        // `Current` one was corrected above.
        buf.discard();
        if !inner.seek_in_place(&me.std, position) {
            let std = Arc::clone(&me.std);
            inner.start(Op::Seek, move |buf| ((&*std).seek(position), buf));
        }
        Ok(())
    }

    /// Wait for the seek in flight (after any other operation in flight)
    /// and return where it landed. With no seek in flight, where the last
    /// one landed (0 if none; as Tokio, this does not follow reads and
    /// writes: use `stream_position`, which seeks, for the cursor).
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let inner = self.get_mut().inner.get_mut();
        loop {
            match ready!(inner.poll_finish(cx)) {
                Some((Op::Seek, result)) => {
                    if let Ok(pos) = result {
                        inner.pos = pos;
                    }
                    return Poll::Ready(result);
                }
                Some((op, result)) => inner.absorb(op, result),
                None => return Poll::Ready(Ok(inner.pos)),
            }
        }
    }
}

impl From<StdFile> for File {
    fn from(std: StdFile) -> File {
        File::from_std(std)
    }
}

impl From<std::os::fd::OwnedFd> for File {
    fn from(fd: std::os::fd::OwnedFd) -> File {
        File::from_std(StdFile::from(fd))
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File")
            .field("std", &self.std)
            .field("max_buf_size", &self.max_buf_size)
            .finish_non_exhaustive()
    }
}

#[cfg(unix)]
impl std::os::unix::io::AsRawFd for File {
    fn as_raw_fd(&self) -> std::os::unix::io::RawFd {
        self.std.as_raw_fd()
    }
}

#[cfg(unix)]
impl std::os::unix::io::AsFd for File {
    fn as_fd(&self) -> std::os::unix::io::BorrowedFd<'_> {
        self.std.as_fd()
    }
}

#[cfg(unix)]
impl std::os::unix::io::FromRawFd for File {
    /// Take ownership of `fd`, an open file descriptor.
    ///
    /// # Safety
    /// As `std::fs::File::from_raw_fd`: `fd` must be open and owned by no
    /// one else (it is closed when the `File` is dropped).
    unsafe fn from_raw_fd(fd: std::os::unix::io::RawFd) -> File {
        // SAFETY: the caller upholds `from_raw_fd`'s contract, which is
        // std's: `fd` is open and ours to own and close.
        File::from_std(unsafe { StdFile::from_raw_fd(fd) })
    }
}
