//! `io_read` and `io_write`, Ruby 3.1's `(io, buffer, length)` signatures:
//! move bytes between an fd and an `IO::Buffer`, suspending the fiber on
//! `EAGAIN` until the fd is ready, until at least `length` bytes moved.
//!
//! Owns nothing; borrows the buffer's memory only between Ruby calls.
//!
//! Invariants:
//! - The buffer's base pointer and size are fetched again after every
//!   wait, because other fibers run during it and may resize or free the
//!   buffer; no pointer into the buffer is held across a suspension.
//! - The fd is switched to `O_NONBLOCK` (as `IO#read_nonblock` does), so a
//!   read or write never blocks the thread while holding the GVL.
//! - After every wait the fd is read from the IO again, so a closed IO
//!   raises `IOError` and a reused fd number is never read or written.
//! - Results follow the hook convention: the byte count, or `-errno` when
//!   nothing was moved.

use crate::scheduler::{fd_of, Scheduler};
use crate::state::{READABLE, WRITABLE};
use magnus::rb_sys::{protect, AsRawValue};
use magnus::{Error, Ruby, Value};
use std::ffi::c_void;

enum Dir {
    Read,
    Write,
}

/// `io_read(io, buffer, length)`.
pub fn io_read(
    ruby: &Ruby,
    rb_self: &Scheduler,
    io: Value,
    buffer: Value,
    length: usize,
) -> Result<isize, Error> {
    transfer(ruby, rb_self, io, buffer, length, Dir::Read)
}

/// `io_write(io, buffer, length)`.
pub fn io_write(
    ruby: &Ruby,
    rb_self: &Scheduler,
    io: Value,
    buffer: Value,
    length: usize,
) -> Result<isize, Error> {
    transfer(ruby, rb_self, io, buffer, length, Dir::Write)
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

fn transfer(
    ruby: &Ruby,
    rb_self: &Scheduler,
    io: Value,
    buffer: Value,
    length: usize,
    dir: Dir,
) -> Result<isize, Error> {
    let mut fd = fd_of(ruby, io)?;
    set_nonblocking(fd);
    let mut offset = 0usize;
    loop {
        let (base, size) = bytes(buffer, &dir)?;
        if offset >= size {
            return Ok(offset as isize);
        }
        // SAFETY: `base..base+size` is the buffer's memory, fetched just
        // now with the GVL held and not held across a suspension (module
        // invariant); `offset < size`.
        let n = unsafe {
            let at = base.add(offset) as *mut c_void;
            match dir {
                Dir::Read => libc::read(fd, at, size - offset),
                Dir::Write => libc::write(fd, at, size - offset),
            }
        };
        if n > 0 {
            offset += n as usize;
            if offset >= length {
                return Ok(offset as isize);
            }
            continue;
        }
        if n == 0 {
            // End of file (read), or nothing accepted (write of 0 bytes).
            return Ok(offset as isize);
        }
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        match errno {
            libc::EINTR => continue,
            libc::EAGAIN if length == 0 && offset == 0 => return Ok(-(libc::EAGAIN as isize)),
            libc::EAGAIN if length == 0 => return Ok(offset as isize),
            libc::EAGAIN => {
                let events = match dir {
                    Dir::Read => READABLE,
                    Dir::Write => WRITABLE,
                };
                rb_self.wait_fd(ruby, io, fd, events, None)?;
                // Another fiber may have closed the IO (and the fd number
                // been reused) meanwhile: ask the IO again (IOError if
                // closed), never read a stale fd number.
                fd = fd_of(ruby, io)?;
            }
            e if offset == 0 => return Ok(-(e as isize)),
            _ => return Ok(offset as isize),
        }
    }
}
