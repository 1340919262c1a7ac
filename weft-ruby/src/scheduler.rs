//! `Weft::Scheduler`: the Ruby object, its hooks and its event loop, built
//! on a [`Selector`] (the io-event selector `Weft::Selector` is, held here
//! as a plain Rust value).
//!
//! Owns: the selector (the loop fiber, the fibers waiting on fds, the ready
//! queue, the poller and the cross-thread side) and one [`State`] (fibers
//! in `block` and `kernel_sleep`, the timers of timed waits, the
//! `timeout_after` raises). The hooks written here are the hot ones
//! (`io_wait`, `block`, `kernel_sleep`, `unblock`) and the loop (`run`);
//! `lib/weft.rb` adds the rest in Ruby (`fiber`, `close`, `timeout_after`,
//! `process_wait`, `address_resolve`).
//!
//! Model: the selector in scheduler mode (see [`crate::selector`]). A hook
//! that waits records the fiber (on its fd in the selector, or as a waiter
//! in `state`) and `Fiber.yield`s, which returns to whoever resumed the
//! fiber: the loop, or the caller of `Fiber.schedule` the first time. The
//! loop resumes it when the fd is ready, the timer fires or `unblock` is
//! called. The fiber then removes its own records, on a normal return and
//! on an exception alike, so whichever of fd, timer and `unblock` comes
//! first resumes it and the others find it gone.
//!
//! Invariants:
//! - `state` is borrowed only between Ruby calls, never across one: a
//!   Ruby call may run the GC, whose mark function borrows `state`, or
//!   transfer to a fiber that calls back into this scheduler.
//! - Every Ruby object the Rust side holds is in `state` or the selector
//!   and is marked by [`DataTypeFunctions::mark`] (non-moving marks, so the
//!   raw `VALUE`s stay valid under compaction).
//! - An exception (a `StandardError`) ending a fiber the loop transfers to
//!   does not stop the loop (the selector runs in scheduler mode): the other
//!   fibers run to completion, then `run` raises the first such exception
//!   (Ruby's test/fiber expects it to come out of `run`, as with Ruby's
//!   reference scheduler); later ones are reported on `$stderr`. Anything
//!   else (`exit`, `Interrupt`, thread kill) stops the loop at once and
//!   propagates.

use crate::fd_query::{poll_one, ready_now};
use crate::held::{mark, value};
use crate::selector::Selector;
use crate::state::{Key, Obj, Raise, State, Wake};
use magnus::prelude::*;
use magnus::rb_sys::AsRawValue;
use magnus::typed_data::DataTypeFunctions;
use magnus::{gc, Error, RArray, Ruby, TypedData, Value};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The Ruby class `Weft::Scheduler`.
#[derive(TypedData, Default)]
#[magnus(class = "Weft::Scheduler", free_immediately, mark, size)]
pub struct Scheduler {
    selector: Selector,
    state: RefCell<State>,
}

impl DataTypeFunctions for Scheduler {
    fn mark(&self, marker: &gc::Marker) {
        // `state` is never borrowed across a Ruby call (module invariant),
        // so it is free whenever the GC can run.
        self.state.borrow().each_object(mark);
        self.selector.mark(marker);
    }
}

fn obj(value: impl AsRawValue) -> Obj {
    value.as_raw()
}

/// `io`'s `rb_io_t` (null if it was never opened), or `Err` if `io` is
/// not a Ruby IO.
fn io_struct(io: Value) -> Result<*const rb_sys::rb_io_t, ()> {
    let Some(file) = magnus::RFile::from_value(io) else {
        return Err(());
    };
    let raw = file.as_raw() as *const rb_sys::RFile;
    // SAFETY: `file` is a live T_FILE object (checked by `from_value`, and
    // alive because the caller holds it), so `raw` points at its RFile;
    // `fptr` is either null (never opened) or its rb_io_t, which Ruby frees
    // only with the object. Read with the GVL held.
    Ok(unsafe { (*raw).fptr } as *const rb_sys::rb_io_t)
}

/// The fd of `io`, read from its `rb_io_t` (no method call): `Ok(None)` if
/// `io` is closed, `Err` if it is not a Ruby IO (then `fileno` is asked).
fn io_fd(io: Value) -> Result<Option<i32>, ()> {
    let fptr = io_struct(io)?;
    let fd = if fptr.is_null() {
        -1
    } else {
        // SAFETY: `fptr` is the live IO's rb_io_t (`io_struct`), read with
        // the GVL held.
        unsafe { (*fptr).fd }
    };
    Ok((fd >= 0).then_some(fd))
}

/// `io`'s read buffer (`rb_io_t`'s `rbuf`) as (memory, capacity), which
/// only Ruby's `io_fillbuf` reads into: (null, 0) if `io` has none (not
/// allocated yet, freed by a close) or is not a Ruby IO. Read only on
/// Ruby < 3.2, where a fill waits in the hook (`io_hooks`' module doc).
#[cfg(ruby_lt_3_2)]
pub(crate) fn io_read_buffer(io: Value) -> (*const u8, usize) {
    match io_struct(io) {
        Ok(fptr) if !fptr.is_null() => {
            // SAFETY: the live IO's rb_io_t (`io_struct`), read with the
            // GVL held; `rbuf` is packed, so it is copied, never referenced.
            let rbuf = unsafe { (*fptr).rbuf };
            let capa = rbuf.capa;
            (rbuf.ptr as *const u8, usize::try_from(capa).unwrap_or(0))
        }
        _ => (std::ptr::null(), 0),
    }
}

/// Never asked from Ruby 3.2 on (see above): no buffer.
#[cfg(not(ruby_lt_3_2))]
pub(crate) fn io_read_buffer(_io: Value) -> (*const u8, usize) {
    (std::ptr::null(), 0)
}

/// `poll(2)` on one fd, blocking the thread (only for a forked child).
fn wait_blocking(fd: i32, events: u8, timeout: Option<Duration>) -> Option<u8> {
    let ms = timeout.map_or(-1, |t| i32::try_from(t.as_millis()).unwrap_or(i32::MAX));
    let ready = poll_one(fd, events, ms);
    (ready != 0).then_some(ready)
}

/// The fd of `io`: `IOError` if it is closed; `fileno` for a non-IO.
pub(crate) fn fd_of(ruby: &Ruby, io: Value) -> Result<i32, Error> {
    match io_fd(io) {
        Ok(Some(fd)) => Ok(fd),
        Ok(None) => Err(Error::new(ruby.exception_io_error(), "closed stream")),
        Err(()) => io.funcall("fileno", ()),
    }
}

fn duration(ruby: &Ruby, v: Value) -> Result<Option<Duration>, Error> {
    if v.is_nil() {
        return Ok(None);
    }
    let secs = f64::try_convert(v)?;
    if secs.is_nan() {
        return Err(Error::new(ruby.exception_arg_error(), "timeout is NaN"));
    }
    // Clamp: negative is "now"; a huge one is "a century", not an overflow.
    Ok(Some(Duration::from_secs_f64(secs.clamp(0.0, 3.0e9))))
}

/// How often an idle loop checks that the IOs its fibers wait on are open.
const CLOSED_CHECK: Duration = Duration::from_millis(100);

fn deadline(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(3_000_000_000))
}

impl Scheduler {
    fn forked(&self) -> bool {
        self.selector.owner().forked()
    }

    /// Refuse to wait in a forked child, whose poller would be the
    /// parent's epoll instance.
    pub(crate) fn check_owner(&self, ruby: &Ruby) -> Result<(), Error> {
        self.selector.owner().check(ruby, "Weft::Scheduler")
    }

    fn initialize(ruby: &Ruby, rb_self: &Self) -> Result<(), Error> {
        let here = ruby.fiber_current().as_value();
        rb_self.selector.start(ruby, here, "Weft::Scheduler")?;
        rb_self.selector.scheduler_mode();
        Ok(())
    }

    /// Suspend until this fiber's waiter `key` is woken (or the fiber is
    /// resumed some other way); then remove the waiter and say why it was
    /// woken.
    fn suspend(&self, ruby: &Ruby, key: Key) -> Result<Option<Wake>, Error> {
        let result = self.selector.suspend(ruby);
        let wake = self.state.borrow_mut().remove(key);
        result?;
        Ok(wake)
    }

    /// `io_wait(io, events, timeout)`: the ready events, or false on timeout.
    fn io_wait(
        ruby: &Ruby,
        rb_self: &Self,
        io: Value,
        events: u8,
        timeout: Value,
    ) -> Result<Value, Error> {
        let timeout = duration(ruby, timeout)?;
        let fd = fd_of(ruby, io)?;
        Ok(
            match rb_self.wait_fd(ruby, io, fd, events, timeout, false)? {
                Some(e) => ruby.integer_from_i64(e.into()).as_value(),
                None => ruby.qfalse().as_value(),
            },
        )
    }

    /// Wait until `fd` (of `io`) is ready for one of `events`: the ready
    /// events, or `None` on timeout. `just_failed`: the caller's own
    /// read/write on the fd just got `EAGAIN`, so it is known not ready.
    pub(crate) fn wait_fd(
        &self,
        ruby: &Ruby,
        io: Value,
        fd: i32,
        events: u8,
        timeout: Option<Duration>,
        just_failed: bool,
    ) -> Result<Option<u8>, Error> {
        if self.forked() {
            // A forked child must not touch the parent's epoll instance;
            // its inherited fibers get a blocking wait instead.
            return Ok(wait_blocking(fd, events, timeout));
        }
        if timeout == Some(Duration::ZERO) {
            // A zero timeout is a readiness check: ask the kernel (and let
            // a read after a "readable" be made).
            self.selector.forget_short_read(fd);
            let now = ready_now(fd, events);
            return Ok((now != 0).then_some(now));
        }
        let fiber = ruby.fiber_current().as_value();
        let key = timeout.map(|t| {
            let mut state = self.state.borrow_mut();
            let key = state.add_io_timeout(obj(fiber));
            state.add_timer(key, deadline(t));
            key
        });
        let result = self
            .selector
            .wait_fd(ruby, fiber, io, fd, events, just_failed);
        if let Some(key) = key {
            self.state.borrow_mut().remove(key);
        }
        result
    }

    /// The selector under this scheduler.
    pub(crate) fn selector(&self) -> &Selector {
        &self.selector
    }

    /// `block(blocker, timeout)` core: true if unblocked, false on timeout.
    fn block_for(ruby: &Ruby, rb_self: &Self, timeout: Value) -> Result<bool, Error> {
        rb_self.check_owner(ruby)?;
        let timeout = duration(ruby, timeout)?;
        let fiber = ruby.fiber_current();
        let key = {
            let mut state = rb_self.state.borrow_mut();
            let key = state.add_block(obj(fiber), timeout.is_some());
            if let Some(t) = timeout {
                state.add_timer(key, deadline(t));
            }
            key
        };
        Ok(rb_self.suspend(ruby, key)? == Some(Wake::Unblocked))
    }

    /// `kernel_sleep(duration)` core (nil: until woken).
    fn sleep_for(ruby: &Ruby, rb_self: &Self, time: Value) -> Result<bool, Error> {
        rb_self.check_owner(ruby)?;
        let time = duration(ruby, time)?;
        let fiber = ruby.fiber_current();
        let key = {
            let mut state = rb_self.state.borrow_mut();
            let key = state.add_sleep(obj(fiber), time.is_some());
            if let Some(t) = time {
                state.add_timer(key, deadline(t));
            }
            key
        };
        rb_self.suspend(ruby, key)?;
        Ok(true)
    }

    /// `unblock(blocker, fiber)`: from any thread.
    fn unblock(ruby: &Ruby, rb_self: &Self, _blocker: Value, fiber: Value) -> Result<(), Error> {
        match rb_self.selector.shared_side() {
            Some(shared) => {
                shared.unblock(obj(fiber));
                Ok(())
            }
            None => Err(Error::new(
                ruby.exception_runtime_error(),
                "scheduler not initialized",
            )),
        }
    }

    /// Schedule `klass.new(message)` to be raised in `fiber` after
    /// `duration` seconds; returns an id for `_cancel_raise`.
    fn raise_after(
        ruby: &Ruby,
        rb_self: &Self,
        fiber: Value,
        time: Value,
        class: Value,
        message: Value,
    ) -> Result<u64, Error> {
        let at = deadline(duration(ruby, time)?.unwrap_or(Duration::ZERO));
        let raise = Raise {
            fiber: obj(fiber),
            class: obj(class),
            message: obj(message),
        };
        Ok(rb_self.state.borrow_mut().add_raise(raise, at))
    }

    fn cancel_raise(rb_self: &Self, id: u64) {
        rb_self.state.borrow_mut().cancel_raise(id);
    }

    /// Fibers waiting with a deadline.
    fn waiting(ruby: &Ruby, rb_self: &Self) -> RArray {
        let fibers = rb_self.state.borrow().timed_fibers();
        let array = ruby.ary_new_capa(fibers.len());
        for f in fibers {
            // Pushing cannot fail for a fresh, unfrozen array.
            let _ = array.push(value(f));
        }
        array
    }

    /// Closed (its poller freed), or inherited through `fork` (unusable in
    /// the child).
    fn is_closed(rb_self: &Self) -> bool {
        Selector::is_closed(&rb_self.selector)
    }

    fn is_forked(rb_self: &Self) -> bool {
        rb_self.forked()
    }

    /// Free the poller's fds (after `run` drained the fibers). Idempotent.
    fn close_poller(rb_self: &Self) {
        Selector::close(&rb_self.selector);
    }

    /// Resume `fiber` for the loop (unless it is dead): plainly, or
    /// raising `raise` in it.
    fn resume(&self, ruby: &Ruby, fiber: Obj, raise: Option<&Raise>) -> Result<(), Error> {
        let fiber = value(fiber);
        let switched = match raise {
            None => self.selector.switch(ruby, fiber, false, ()),
            Some(r) => {
                let args = (value(r.class), value(r.message));
                self.selector.switch(ruby, fiber, true, args)
            }
        };
        switched.map(drop)
    }

    /// Run until no fiber is waiting on this scheduler.
    fn run(ruby: &Ruby, rb_self: &Self) -> Result<(), Error> {
        rb_self.check_owner(ruby)?;
        let Some(shared) = rb_self.selector.shared_side() else {
            return Err(Error::new(
                ruby.exception_runtime_error(),
                "scheduler not initialized",
            ));
        };
        let mut unblocked = Vec::new();
        loop {
            shared.take_unblocked(&mut unblocked);
            {
                let mut state = rb_self.state.borrow_mut();
                for fiber in unblocked.drain(..) {
                    state.unblock(fiber);
                }
            }
            let raises = rb_self.state.borrow_mut().expire(Instant::now());
            // Resume only the fibers woken now: one that waits again runs
            // on a later turn, after I/O has been looked at.
            let n = rb_self.state.borrow().ready_len();
            for _ in 0..n {
                let next = rb_self.state.borrow_mut().pop_ready();
                let Some(fiber) = next else { break };
                rb_self.resume(ruby, fiber, None)?;
            }
            for r in raises {
                rb_self.resume(ruby, r.fiber, Some(&r))?;
            }
            let (live, ready, next) = {
                let mut state = rb_self.state.borrow_mut();
                (state.live(), state.ready_len(), state.next_deadline())
            };
            let waiting = rb_self.selector.suspended();
            let unblocked_pending = shared.has_unblocked();
            if live == 0 && ready == 0 && waiting == 0 && !unblocked_pending {
                return rb_self.selector.take_failed().map_or(Ok(()), Err);
            }
            let timeout = if ready > 0 || unblocked_pending {
                Some(Duration::ZERO)
            } else {
                next.map(|at| at.saturating_duration_since(Instant::now()))
            };
            // Ruby 3.1 does not tell a scheduler that an IO was closed,
            // and closing removes the fd from epoll: a fiber waiting on an
            // IO another fiber closed would wait forever. So a loop that
            // blocks looks at its waited IOs every CLOSED_CHECK.
            let checks = rb_self.selector.has_fd_waiters() && timeout != Some(Duration::ZERO);
            let timeout = match timeout {
                _ if !checks => timeout,
                None => Some(CLOSED_CHECK),
                Some(t) => Some(t.min(CLOSED_CHECK)),
            };
            let woke = rb_self.selector.select_for(ruby, timeout)?;
            if checks && woke == 0 {
                rb_self.wake_closed(ruby)?;
            }
            // Let Thread#raise, Thread#kill and signals in (the unblock
            // function ended the poll for them).
            magnus::rb_sys::protect(|| {
                // SAFETY: called with the GVL held, inside `protect`, which
                // catches the non-local exit this may take.
                unsafe { rb_sys::rb_thread_check_ints() };
                ruby.qnil().as_raw()
            })?;
        }
    }

    /// Wake every waiter of an IO that was closed under it (its retry
    /// then raises `IOError`, as Ruby does for a closed stream).
    fn wake_closed(&self, ruby: &Ruby) -> Result<(), Error> {
        for (fd, io) in self.selector.waited_ios() {
            if matches!(io_fd(value(io)), Ok(None)) {
                self.selector.wake_all(ruby, fd)?;
            }
        }
        Ok(())
    }
}

/// Define `Weft::Scheduler`'s Rust methods.
pub fn define(ruby: &Ruby) -> Result<(), Error> {
    let weft = ruby.define_module("Weft")?;
    let class = weft.define_class("Scheduler", ruby.class_object())?;
    class.define_alloc_func::<Scheduler>();
    class.define_method("initialize", magnus::method!(Scheduler::initialize, 0))?;
    class.define_method("io_wait", magnus::method!(Scheduler::io_wait, 3))?;
    class.define_method("io_read", magnus::method!(crate::io_hooks::io_read, -1))?;
    class.define_method("io_write", magnus::method!(crate::io_hooks::io_write, -1))?;
    class.define_method("io_pread", magnus::method!(crate::io_hooks::io_pread, -1))?;
    class.define_method("io_pwrite", magnus::method!(crate::io_hooks::io_pwrite, -1))?;
    class.define_method("_block", magnus::method!(Scheduler::block_for, 1))?;
    class.define_method("_sleep", magnus::method!(Scheduler::sleep_for, 1))?;
    class.define_method("unblock", magnus::method!(Scheduler::unblock, 2))?;
    class.define_method("_raise_after", magnus::method!(Scheduler::raise_after, 4))?;
    class.define_method("_cancel_raise", magnus::method!(Scheduler::cancel_raise, 1))?;
    class.define_method("waiting", magnus::method!(Scheduler::waiting, 0))?;
    class.define_method("closed?", magnus::method!(Scheduler::is_closed, 0))?;
    class.define_method("_forked?", magnus::method!(Scheduler::is_forked, 0))?;
    class.define_method("_close_poller", magnus::method!(Scheduler::close_poller, 0))?;
    class.define_method("run", magnus::method!(Scheduler::run, 0))?;
    class.define_singleton_method("backend", magnus::function!(backend, 0))?;
    Ok(())
}

/// The poller's backend: the I/O driver a scheduler made now gets
/// (`poller::runtime_builder`: epoll unless `WEFT_IO_DRIVER` asks for
/// io_uring). A `WEFT_IO_DRIVER` weft refuses raises what
/// `Weft::Scheduler.new` would.
fn backend(ruby: &Ruby) -> Result<&'static str, Error> {
    let rt = crate::poller::runtime_builder()
        .enable_io()
        .build()
        .map_err(|e| Error::new(ruby.exception_io_error(), e.to_string()))?;
    Ok(
        if rt.metrics().io_driver() == Some(weft::runtime::IoDriver::Uring) {
            "io_uring"
        } else if cfg!(any(target_os = "linux", target_os = "android")) {
            "epoll"
        } else {
            "kqueue"
        },
    )
}
