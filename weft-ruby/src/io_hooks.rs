//! `io_read` and `io_write`: move bytes between an fd and an `IO::Buffer`,
//! suspending the fiber on `EAGAIN` until the fd is ready, until at least
//! `length` bytes moved. The scheduler's hooks (Ruby 3.1's `(io, buffer,
//! length)`) and the selector's (io-event's `(fiber, io, buffer, length,
//! offset = 0)`) share [`move_bytes`], each with its own way to wait.
//!
//! Owns nothing; borrows the buffer's memory only between Ruby calls.
//!
//! Invariants:
//! - The buffer's base pointer and size are fetched again after every
//!   wait, because other fibers run during it and may resize or free the
//!   buffer; no pointer into the buffer is held across a suspension. A
//!   fill of the IO's read buffer (below) also checks after every wait
//!   that the IO still has that buffer, since a close and a reopen by
//!   path during the wait free it and allocate another.
//! - The fd is switched to `O_NONBLOCK` (as `IO#read_nonblock` does), so a
//!   read or write never blocks the thread while holding the GVL.
//! - After every wait the fd is read from the IO again, so a closed IO
//!   raises `IOError` and a reused fd number is never read or written.
//! - Results follow the hook convention: the byte count, or `-errno` when
//!   nothing was moved.
//! - A read with a `length` of 0 ("at most one attempt, never wait") into
//!   the IO's own read buffer waits for a byte here instead. Only Ruby's
//!   `io_fillbuf` (under `gets`, `each_line`, `getc`, `eof?`...) reads
//!   into that buffer, and on `EAGAIN` it always calls `io_wait`, with no
//!   timeout on 3.1, and then `io_read` again: the same wait, two hook
//!   calls and an `IO::Buffer` later (5% of a keep-alive request's CPU).
//!   Reads into other memory (`read(n)` and `read` with nothing buffered,
//!   `read_nonblock`, `readpartial`, `sysread`) keep the convention. What
//!   a program can see: a subclass's `io_wait` is not called for a fill,
//!   and an exception raised into the waiting fiber comes out of `io_read`.
//!   Only before Ruby 3.2 (`FILL_WAITS`): from 3.2 Ruby's wait honours
//!   `IO#timeout`, which this one does not read.
//! - A read the poller knows would get `EAGAIN` is not made: a `recv` on a
//!   stream socket that moved fewer bytes than asked drained it, and until
//!   the driver turns, the move waits (or gives up) as if the next read had
//!   failed (`Poller::read_would_fail`, which says why that is safe). A
//!   keep-alive server's read after each response is such a read.

use crate::fd_map::FdSet;
use crate::scheduler::{fd_of, io_read_buffer, Scheduler};
use crate::state::{READABLE, WRITABLE};
use magnus::prelude::*;
use magnus::rb_sys::{protect, AsRawValue};
use magnus::{Error, Ruby, Value};
use std::cell::RefCell;
use std::ffi::c_void;

/// Whether a fill of an IO's read buffer waits in the hook (module doc):
/// only before Ruby 3.2, whose wait in Ruby also honours `IO#timeout`.
const FILL_WAITS: bool = cfg!(ruby_lt_3_2);

/// Which way bytes move.
pub enum Dir {
    Read,
    Write,
}

impl Dir {
    /// The readiness a move this way waits for.
    fn events(&self) -> u8 {
        match self {
            Dir::Read => READABLE,
            Dir::Write => WRITABLE,
        }
    }
}

/// `Weft::Scheduler#io_read(io, buffer, length, offset = 0)` (Ruby 3.1
/// passes three arguments, 3.2+ four: `offset` is into the buffer).
pub fn io_read(ruby: &Ruby, rb_self: &Scheduler, args: &[Value]) -> Result<isize, Error> {
    scheduler_move(ruby, rb_self, args, Dir::Read, false)
}

/// `Weft::Scheduler#io_write(io, buffer, length, offset = 0)`.
pub fn io_write(ruby: &Ruby, rb_self: &Scheduler, args: &[Value]) -> Result<isize, Error> {
    scheduler_move(ruby, rb_self, args, Dir::Write, false)
}

/// `Weft::Scheduler#io_pread`: Ruby 3.1's `(io, buffer, length, from)`, or
/// 3.2+'s `(io, buffer, from, length, offset)`; `from` is the file offset.
pub fn io_pread(ruby: &Ruby, rb_self: &Scheduler, args: &[Value]) -> Result<isize, Error> {
    scheduler_move(ruby, rb_self, args, Dir::Read, true)
}

/// `Weft::Scheduler#io_pwrite`, with `io_pread`'s two signatures.
pub fn io_pwrite(ruby: &Ruby, rb_self: &Scheduler, args: &[Value]) -> Result<isize, Error> {
    scheduler_move(ruby, rb_self, args, Dir::Write, true)
}

/// A byte move's start: the offset into the buffer, and the file offset
/// for `pread`/`pwrite` (`None`: the file position).
pub type Offsets = (usize, Option<i64>);

/// A hook's `(io, buffer, length, offsets)`.
pub type HookArgs = (Value, Value, usize, Offsets);

/// The hook's arguments, by how many were passed.
pub fn hook_args(ruby: &Ruby, args: &[Value], positioned: bool) -> Result<HookArgs, Error> {
    let n = |v: &Value| usize::try_convert(*v);
    let pos = |v: &Value| i64::try_convert(*v);
    match (positioned, args) {
        (false, [io, buf, len]) => Ok((*io, *buf, n(len)?, (0, None))),
        (false, [io, buf, len, off]) => Ok((*io, *buf, n(len)?, (n(off)?, None))),
        (true, [io, buf, len, from]) => Ok((*io, *buf, n(len)?, (0, Some(pos(from)?)))),
        (true, [io, buf, from, len, off]) => Ok((*io, *buf, n(len)?, (n(off)?, Some(pos(from)?)))),
        _ => Err(Error::new(
            ruby.exception_arg_error(),
            format!(
                "wrong number of arguments (given {}, expected {})",
                args.len(),
                if positioned { "4..5" } else { "3..4" }
            ),
        )),
    }
}

/// How [`move_bytes`] waits for an fd after `EAGAIN`.
pub trait WaitFd {
    /// Suspend the fiber until `fd` is ready for `events` (the caller's
    /// own operation on it just got `EAGAIN`).
    fn wait(&mut self, fd: i32, events: u8) -> Result<(), Error>;
    /// The move gave up on `EAGAIN` without waiting (a zero `length`): the
    /// caller (Ruby) will most likely call `io_wait` on the fd next.
    fn gave_up(&mut self, fd: i32, events: u8);
    /// A read or write on `fd` moved bytes
    /// ([`Poller::note_moved`](crate::poller::Poller::note_moved)); `short`:
    /// a read at the file position that moved fewer than asked
    /// ([`Poller::note_short_read`](crate::poller::Poller::note_short_read)).
    fn moved(&mut self, fd: i32, short: bool);
    /// Would a read on `fd` get `EAGAIN` for sure
    /// ([`Poller::read_would_fail`](crate::poller::Poller::read_would_fail))?
    fn read_would_fail(&mut self, fd: i32) -> bool;
}

struct SchedulerWait<'a> {
    ruby: &'a Ruby,
    scheduler: &'a Scheduler,
    io: Value,
}

impl WaitFd for SchedulerWait<'_> {
    fn wait(&mut self, fd: i32, events: u8) -> Result<(), Error> {
        self.scheduler
            .wait_fd(self.ruby, self.io, fd, events, None, true)
            .map(drop)
    }

    fn gave_up(&mut self, fd: i32, events: u8) {
        self.scheduler.selector().note_eagain(fd, events);
    }

    fn moved(&mut self, fd: i32, short: bool) {
        self.scheduler.selector().note_moved(fd, self.io, short);
    }

    fn read_would_fail(&mut self, fd: i32) -> bool {
        self.scheduler.selector().read_would_fail(fd, self.io)
    }
}

fn scheduler_move(
    ruby: &Ruby,
    rb_self: &Scheduler,
    args: &[Value],
    dir: Dir,
    positioned: bool,
) -> Result<isize, Error> {
    let (io, buffer, length, offsets) = hook_args(ruby, args, positioned)?;
    let waiter = SchedulerWait {
        ruby,
        scheduler: rb_self,
        io,
    };
    move_bytes(ruby, io, buffer, length, offsets, dir, waiter)
}

/// The buffer's memory: for a read, writable bytes (raises if the buffer
/// is read-only); for a write, readable ones.
fn bytes(buffer: Value, dir: &Dir) -> Result<(*mut u8, usize), Error> {
    let mut base: *mut c_void = std::ptr::null_mut();
    let mut size = 0; // bindgen's size_t (u64 here)
    let raw = buffer.as_raw();
    protect(|| {
        // SAFETY: GVL held; `raw` is the live buffer passed to the hook;
        // `base`/`size` are valid out-pointers; `protect` catches a raise
        // (not an IO::Buffer, read-only, freed).
        unsafe {
            match dir {
                Dir::Read => rb_sys::rb_io_buffer_get_bytes_for_writing(raw, &mut base, &mut size),
                Dir::Write => rb_sys::rb_io_buffer_get_bytes_for_reading(
                    raw,
                    &mut base as *mut *mut c_void as *mut *const c_void,
                    &mut size,
                ),
            }
        }
        rb_sys::Qnil as rb_sys::VALUE
    })?;
    Ok((base as *mut u8, size as usize))
}

thread_local! {
    /// fds last seen not to be sockets. Only a hint for speed: a socket
    /// listed here takes the `read`/`write` path (correct, one `fcntl`
    /// more), and a non-socket missing from it costs one failed `recv`.
    static NOT_SOCKET: RefCell<FdSet> = RefCell::new(FdSet::default());
}

/// Is `mem` (an `IO::Buffer`'s memory) `io`'s own read buffer, the one
/// `io_fillbuf` fills: the same address and the same size? The size
/// matters: a buffer freed by a close and another allocated by a reopen
/// can share the address and not the size.
fn is_read_buffer(io: Value, (base, size): (*mut u8, usize)) -> bool {
    let (rbuf, capa) = io_read_buffer(io);
    !base.is_null() && std::ptr::eq(base, rbuf) && size == capa
}

/// One `read`/`write` (or `pread`/`pwrite` at `at`) that never blocks. A
/// socket gets `recv`/`send` with `MSG_DONTWAIT`, which needs no
/// `O_NONBLOCK` and so no `fcntl` per call (Ruby's sockets are usually
/// non-blocking already, but an `F_GETFL` per hook call was a third of the
/// syscalls per request of a keep-alive HTTP server); anything else is
/// switched to `O_NONBLOCK` first, once per hook call (`nonblocking_set`).
///
/// # Safety
/// `mem..mem+n` must be valid for the direction (writable for a read).
unsafe fn one_move(
    fd: i32,
    mem: *mut c_void,
    n: usize,
    dir: &Dir,
    at: Option<i64>,
    nonblocking_set: &mut bool,
) -> isize {
    if at.is_none() && !NOT_SOCKET.with(|s| s.borrow().contains(&fd)) {
        // SAFETY: the caller's contract on `mem..mem+n`.
        let r = unsafe {
            match dir {
                Dir::Read => libc::recv(fd, mem, n, libc::MSG_DONTWAIT),
                Dir::Write => libc::send(fd, mem, n, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL),
            }
        };
        if r >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOTSOCK) {
            return r;
        }
        NOT_SOCKET.with(|s| s.borrow_mut().insert(fd));
    }
    if at.is_none() && !*nonblocking_set {
        set_nonblocking(fd);
        *nonblocking_set = true;
    }
    // SAFETY: the caller's contract on `mem..mem+n`.
    unsafe {
        match (dir, at) {
            (Dir::Read, None) => libc::read(fd, mem, n),
            (Dir::Write, None) => libc::write(fd, mem, n),
            (Dir::Read, Some(pos)) => libc::pread(fd, mem, n, pos),
            (Dir::Write, Some(pos)) => libc::pwrite(fd, mem, n, pos),
        }
    }
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on an fd number has no memory effects; a bad fd only
    // makes it fail, and the read/write below then reports EBADF.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 && flags & libc::O_NONBLOCK == 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Move at least `length` bytes (0: at most one attempt's worth, never
/// waiting) between `io` and `buffer`, starting at byte `start` of the
/// buffer and, if `at` is given, at that offset of the file (`pread` /
/// `pwrite`, which leave the file position alone); `waiter` suspends the
/// fiber until the fd is ready. Returns the bytes moved, or `-errno` if
/// none.
pub fn move_bytes(
    ruby: &Ruby,
    io: Value,
    buffer: Value,
    length: usize,
    (start, at): Offsets,
    dir: Dir,
    mut waiter: impl WaitFd,
) -> Result<isize, Error> {
    let mut fd = fd_of(ruby, io)?;
    let mut nonblocking_set = false;
    let mut offset = start;
    // Reads at the file position are what the short-read hints are about.
    let hinted = matches!(dir, Dir::Read) && at.is_none();
    // The buffer's memory, fetched once per pass (module invariants).
    let mut mem = bytes(buffer, &dir)?;
    // Ruby filling the IO's own read buffer waits here (module doc).
    let fills = FILL_WAITS && hinted && length == 0 && start == 0 && is_read_buffer(io, mem);
    let length = start.saturating_add(length.max(usize::from(fills)));
    loop {
        let (base, size) = mem;
        if offset >= size {
            return Ok((offset - start) as isize);
        }
        // A read sure to fail is not made (`read_would_fail`): `EAGAIN`.
        let moved = if hinted && waiter.read_would_fail(fd) {
            Err(libc::EAGAIN)
        } else {
            let asked = size - offset;
            // SAFETY: `base..base+size` is the buffer's memory, fetched
            // with the GVL held after the last suspension, if any (module
            // invariant); `offset < size`.
            let n = unsafe {
                let ptr = base.add(offset) as *mut c_void;
                let pos = at.map(|p| p + (offset - start) as i64);
                one_move(fd, ptr, asked, &dir, pos, &mut nonblocking_set)
            };
            let moved = usize::try_from(n).map_err(|_| {
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO)
            });
            // A short read is noted for any fd: only a byte stream's
            // counts (the poller asks which it is).
            if let Ok(n @ 1..) = moved {
                waiter.moved(fd, hinted && n < asked);
            }
            moved
        };
        let errno = match moved {
            Ok(0) => {
                // End of file (read), or nothing accepted (write of 0 bytes).
                return Ok((offset - start) as isize);
            }
            Ok(n) => {
                offset += n;
                if offset >= length {
                    return Ok((offset - start) as isize);
                }
                continue;
            }
            Err(errno) => errno,
        };
        match errno {
            libc::EINTR => continue,
            libc::EAGAIN if length == start && offset == start => {
                waiter.gave_up(fd, dir.events());
                return Ok(-(libc::EAGAIN as isize));
            }
            libc::EAGAIN if length == start => return Ok((offset - start) as isize),
            libc::EAGAIN => {
                waiter.wait(fd, dir.events())?;
                // Another fiber may have closed the IO (and the fd number
                // been reused) meanwhile: ask the IO again (IOError if
                // closed), never read a stale fd number.
                fd = fd_of(ruby, io)?;
                nonblocking_set = false;
                mem = bytes(buffer, &dir)?;
                // Load-bearing: another fiber may have closed the File and
                // reopened it by path during the wait, which frees the
                // buffer `buffer` points into and allocates another
                // (perhaps at the same address, smaller). Not read into
                // then: Ruby waits and reads into the IO's new buffer.
                if fills && !is_read_buffer(io, mem) {
                    return Ok(-(libc::EAGAIN as isize));
                }
            }
            e if offset == start => return Ok(-(e as isize)),
            _ => return Ok((offset - start) as isize),
        }
    }
}
