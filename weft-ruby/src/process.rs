//! The pieces of `process_wait` that need the OS: a pidfd to wait on (so a
//! fiber waits for a child on the reactor, not on a thread) and a reap
//! that never blocks and never re-enters the fiber scheduler.
//!
//! Owns nothing. `lib/weft.rb` (`Weft.process_wait`) combines them: open a
//! pidfd, reap with `WNOHANG` until the child is gone, waiting for the
//! pidfd to be readable between tries; a thread when no pidfd is possible
//! (`pid <= 0`, a kernel before 5.3, a process already reaped).

use magnus::prelude::*;
use magnus::rb_sys::FromRawValue;
use magnus::{Error, Ruby, Value};

/// `Weft._pidfd_open(pid)`: an fd that becomes readable when `pid` exits,
/// or nil if the kernel can't give one.
fn pidfd_open(pid: i32) -> Option<i32> {
    // SAFETY: pidfd_open takes a pid and flags and returns an fd or -1; it
    // touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then_some(fd as i32)
}

/// `Weft._waitpid_nohang(pid, flags)`: the child's `Process::Status` (also
/// set as `$?`) if it changed state, nil if not yet; raises
/// `Errno::ECHILD` and the like as `Process.wait` does.
fn waitpid_nohang(ruby: &Ruby, pid: i32, flags: i32) -> Result<Value, Error> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer for the call.
        let r = unsafe { libc::waitpid(pid, &mut status, flags | libc::WNOHANG) };
        if r > 0 {
            // SAFETY: GVL held (a Ruby method); sets this thread's `$?`.
            unsafe { rb_sys::rb_last_status_set(status, r) };
            // SAFETY: as above; returns the Process::Status just set, which
            // the thread keeps alive as `$?`.
            return Ok(unsafe { Value::from_raw(rb_sys::rb_last_status_get()) });
        }
        if r == 0 {
            return Ok(ruby.qnil().as_value());
        }
        let errno = std::io::Error::last_os_error();
        if errno.raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        let class: magnus::ExceptionClass = ruby
            .class_object()
            .const_get::<_, magnus::RModule>("Errno")?
            .const_get(match errno.raw_os_error() {
                Some(libc::ECHILD) => "ECHILD",
                Some(libc::EINVAL) => "EINVAL",
                _ => "EIO",
            })?;
        return Err(Error::new(class, format!("waitpid({pid})")));
    }
}

/// Define `Weft._pidfd_open` and `Weft._waitpid_nohang`.
pub fn define(ruby: &Ruby) -> Result<(), Error> {
    let weft = ruby.define_module("Weft")?;
    weft.define_singleton_method("_pidfd_open", magnus::function!(pidfd_open, 1))?;
    weft.define_singleton_method("_waitpid_nohang", magnus::function!(waitpid_nohang, 2))?;
    Ok(())
}
