//! `Weft::Selector`: the selector interface of io-event (the library under
//! the `async` gem), on the same [`Poller`] (weft's reactor) as
//! `Weft::Scheduler`. Registered as `IO::Event::Selector::Weft` by
//! `lib/weft/io_event.rb`, so `IO_EVENT_SELECTOR=Weft` runs `async` on it.
//!
//! Owns: the loop fiber, the ready queue, the fibers waiting on each fd,
//! the poller and the cross-thread side.
//!
//! The model is io-event's: fibers move by `Fiber#transfer`. A fiber that
//! waits records itself on its fd and transfers to the loop fiber;
//! `select` transfers back to it with the ready events. `resume`, `yield`
//! and `raise` put the *calling* fiber on the ready queue before they
//! transfer away, and take it off again when control comes back by another
//! way (the entry is nulled, as io-event's stack nodes are unlinked), so a
//! fiber is never resumed twice for one suspension.
//!
//! Invariants:
//! - `inner` is borrowed only between Ruby calls, never across one (a Ruby
//!   call may run the GC, whose mark function borrows it, or transfer to a
//!   fiber that calls back into this selector).
//! - Every Ruby object the Rust side holds (the loop, queued fibers,
//!   waiting fibers and their IOs) is in `inner` and marked by
//!   [`DataTypeFunctions::mark`], with non-moving marks.
//! - A waiter is taken off its fd's list before its fiber is transferred
//!   to, so one readiness resumes it once; the fiber's own `io_wait` then
//!   finds nothing to remove. A waiter left by a fiber that was resumed
//!   some other way (a timeout's `transfer`, a `raise`) is removed by that
//!   `io_wait` on its way out, on return and on exception alike.
//! - `select` resumes only the fibers queued when it started: a fiber that
//!   queues itself again runs in the next `select`, after I/O was polled.
//! - `io_wait` always transfers to the loop, as io-event's selectors do
//!   (their own test suite checks the order of events around it): a fiber
//!   whose fd is ready at once is resumed by the next `select`, after the
//!   fibers queued before it and without asking the kernel again. (Before,
//!   it returned at once, which let two fibers waiting on one ready IO
//!   run in the wrong order, and one raise into the other before that one
//!   had started.) In scheduler mode `io_wait` keeps the shortcut (returns
//!   at once): Ruby's `Fiber::Scheduler` interface does not order it.
//! - A `select` resumes only waiters that waited when it polled (ids up to
//!   its horizon): a fiber it resumes that waits again, maybe on an fd
//!   number it just reused, is not resumed by an event of the old fd
//!   polled before.
//! - An fd's waiters trust its registration (skip the poller's check that
//!   the fd number still names the registered file) as `known` only while
//!   one of them waits on the same IO object: when the last leaves, the IO
//!   is forgotten, because the number may then be closed and reused. (The
//!   poller trusts a wait by the IO object that checked the registration
//!   last on its own account, and audits it: `poller/trust.rs`.)
//! - One departure from io-event: `io_read` with a `length` of 0 into the
//!   IO's own read buffer (Ruby 3.1 filling it for `gets`, handed on by
//!   async's `io_read`) waits for a byte instead of answering `EAGAIN`
//!   (`io_hooks`' module doc): Ruby would wait and call again.
//!
//! `Weft::Scheduler` is built on this type (it holds one, not as a Ruby
//! object): its hooks wait through `Selector::wait_fd` and its loop is
//! `Selector::select_for` plus its own timers. For it the selector runs
//! in *scheduler mode* (`Selector::scheduler_mode`), which changes two
//! things:
//! - fibers move as in Ruby's own reference scheduler: a waiting fiber
//!   `Fiber.yield`s to whoever resumed it (the loop, or the caller of
//!   `Fiber.schedule`), and the loop `resume`s it. Ruby programs may call
//!   `Fiber.yield` in a scheduled fiber (Ruby's test/fiber does), which a
//!   transferred-to fiber cannot; and a fiber started from another one
//!   returns to it when it first waits.
//! - a `StandardError` that a fiber ends with is *caught*: kept (the first)
//!   or reported on `$stderr` instead of raised out of `select`, so one
//!   failed fiber neither stops the loop nor strands the fibers the same
//!   `select` was about to resume.

use crate::fd_query::ready_for;
use crate::held::{mark, value, OwnerPid};
use crate::io_hooks::{hook_args, move_bytes, Dir, WaitFd};
use crate::poller::{ready_or_watch, Poller, Shared, WaitingIo};
use crate::scheduler::fd_of;
use crate::state::Obj;
use crate::waiters::{Inner, Queued};
use magnus::prelude::*;
use magnus::rb_sys::AsRawValue;
use magnus::typed_data::DataTypeFunctions;
use magnus::{gc, Error, Ruby, TypedData, Value};
use std::cell::{Cell, RefCell};
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The Ruby class `Weft::Selector`.
#[derive(TypedData, Default)]
#[magnus(class = "Weft::Selector", free_immediately, mark, size)]
pub struct Selector {
    inner: RefCell<Inner>,
    poller: RefCell<Option<Poller>>,
    shared: OnceLock<Shared>,
    idle: Cell<f64>,
    owner: OwnerPid,
    scheduler_mode: Cell<bool>,
}

impl DataTypeFunctions for Selector {
    fn mark(&self, _marker: &gc::Marker) {
        // Never borrowed across a Ruby call (module invariant), so free
        // whenever the GC runs.
        let inner = self.inner.borrow();
        inner.loop_fiber.into_iter().for_each(mark);
        inner.failed.into_iter().for_each(mark);
        inner.ready.iter().filter_map(|q| q.fiber).for_each(mark);
        for entry in inner.fds.values() {
            entry.io.into_iter().for_each(mark);
            entry.waiters.iter().for_each(|w| mark(w.fiber));
        }
        if let Some(shared) = self.shared.get() {
            shared.each_object(mark);
        }
    }
}

struct SelectorWait<'a> {
    ruby: &'a Ruby,
    selector: &'a Selector,
    fiber: Value,
    io: Value,
}

impl WaitFd for SelectorWait<'_> {
    fn wait(&mut self, fd: i32, events: u8) -> Result<(), Error> {
        self.selector
            .wait_fd(self.ruby, self.fiber, self.io, fd, events, true)
            .map(drop)
    }

    fn gave_up(&mut self, fd: i32, events: u8) {
        self.selector.note_eagain(fd, events);
    }

    fn moved(&mut self, fd: i32, short: bool) {
        self.selector.note_moved(fd, self.io, short);
    }

    fn read_would_fail(&mut self, fd: i32) -> bool {
        self.selector.read_would_fail(fd, self.io)
    }
}

/// Runs `f`, then nulls the ready-queue entry `id` whatever happened (the
/// fiber came back; its entry must not resume it again).
fn nulling<T>(selector: &Selector, id: u64, f: impl FnOnce() -> T) -> T {
    let result = f();
    selector.inner.borrow_mut().null(id);
    result
}

impl Selector {
    fn check_owner(&self, ruby: &Ruby) -> Result<(), Error> {
        self.owner.check(ruby, "Weft::Selector")
    }

    /// The process that set this selector up (`Weft::Scheduler` checks it
    /// under its own name).
    pub(crate) fn owner(&self) -> &OwnerPid {
        &self.owner
    }

    /// The cross-thread side (`unblock`, `wakeup`).
    pub(crate) fn shared_side(&self) -> Option<&Shared> {
        self.shared.get()
    }

    /// Switch to scheduler mode (module doc): fibers wait with
    /// `Fiber.yield` and are woken with `resume`; a `StandardError` a fiber
    /// ends with is kept for [`Selector::take_failed`] (the first) or
    /// reported on `$stderr` (the rest).
    pub(crate) fn scheduler_mode(&self) {
        self.scheduler_mode.set(true);
    }

    /// Suspend the current fiber until the loop wakes it: the value it was
    /// woken with.
    pub(crate) fn suspend(&self, ruby: &Ruby) -> Result<Value, Error> {
        if self.scheduler_mode.get() {
            ruby.fiber_yield(())
        } else {
            self.loop_fiber(ruby)?.funcall("transfer", ())
        }
    }

    /// The first exception caught since the last call (scheduler mode).
    pub(crate) fn take_failed(&self) -> Option<Error> {
        let exc = self.inner.borrow_mut().failed.take()?;
        magnus::Exception::from_value(value(exc)).map(Error::from)
    }

    /// Fibers suspended in this selector (on an fd, or queued).
    pub(crate) fn suspended(&self) -> usize {
        self.inner.borrow().suspended()
    }

    /// Wake `fiber` with `args` (`transfer`, or `resume` in scheduler
    /// mode), or raise in it (`raise: true`, args as `Fiber#raise`'s),
    /// unless it is dead: `false` then. In scheduler mode, a
    /// `StandardError` it (or a fiber it started) ended with is kept or
    /// reported instead of returned.
    pub(crate) fn switch<A: magnus::ArgList>(
        &self,
        ruby: &Ruby,
        fiber: Value,
        raise: bool,
        args: A,
    ) -> Result<bool, Error> {
        let mode = self.scheduler_mode.get();
        // A Fiber is switched to directly; io-event allows any object that
        // answers `alive?` and the method.
        let result = match magnus::Fiber::from_value(fiber) {
            Some(f) if !f.is_alive() => return Ok(false),
            None if !fiber.funcall::<_, _, bool>("alive?", ())? => return Ok(false),
            Some(f) if !raise && mode => f.resume::<_, Value>(args),
            Some(f) if !raise => f.transfer::<_, Value>(args),
            _ => {
                let method = match (raise, mode) {
                    (true, _) => "raise",
                    (false, true) => "resume",
                    (false, false) => "transfer",
                };
                fiber.funcall::<_, _, Value>(method, args)
            }
        };
        let error = match result {
            Ok(_) => return Ok(true),
            Err(e) if mode && e.is_kind_of(ruby.exception_standard_error()) => e,
            Err(e) => return Err(e),
        };
        if self.inner.borrow().failed.is_none() {
            if let Some(exc) = error.value() {
                self.inner.borrow_mut().failed = Some(exc.as_raw());
                return Ok(true);
            }
        }
        let text = match error.value() {
            Some(exc) => exc
                .funcall::<_, _, String>("full_message", ())
                .unwrap_or_else(|_| error.to_string()),
            None => error.to_string(),
        };
        let msg = format!("weft: a fiber terminated with an exception:\n{text}");
        ruby.module_kernel()
            .funcall::<_, _, Value>("warn", (msg,))?;
        Ok(true)
    }

    /// Whether any fiber waits on an fd.
    pub(crate) fn has_fd_waiters(&self) -> bool {
        !self.inner.borrow().fds.is_empty()
    }

    /// The fds fibers wait on, with the IO each waits on.
    pub(crate) fn waited_ios(&self) -> Vec<(RawFd, Obj)> {
        self.inner
            .borrow()
            .fds
            .iter()
            .filter_map(|(fd, e)| Some((*fd, e.io?)))
            .collect()
    }

    /// Transfer to every waiter of `fd` with the events it asked for (its
    /// IO was closed under it: its retry raises `IOError`).
    pub(crate) fn wake_all(&self, ruby: &Ruby, fd: RawFd) -> Result<(), Error> {
        let taken = self.inner.borrow_mut().take_ready(fd, u8::MAX, u64::MAX);
        for (fiber, events) in taken {
            self.switch(ruby, value(fiber), false, (events,))?;
        }
        Ok(())
    }

    /// Set up the poller, with `loop_fiber` as the fiber waits return to.
    pub(crate) fn start(&self, ruby: &Ruby, loop_fiber: Value, what: &str) -> Result<(), Error> {
        let (poller, shared) =
            Poller::new().map_err(|e| Error::new(ruby.exception_runtime_error(), e.to_string()))?;
        if self.shared.set(shared).is_err() {
            return Err(Error::new(
                ruby.exception_runtime_error(),
                format!("{what} already initialized"),
            ));
        }
        *self.poller.borrow_mut() = Some(poller);
        self.inner.borrow_mut().loop_fiber = Some(loop_fiber.as_raw());
        self.owner.claim();
        Ok(())
    }

    /// A read or write on `fd` gave up on `EAGAIN` without waiting (see
    /// [`Poller::note_eagain`]).
    pub(crate) fn note_eagain(&self, fd: RawFd, events: u8) {
        self.with_poller(|p| p.note_eagain(fd, events));
    }

    /// A read or write on `fd` of `io` moved bytes ([`Poller::note_moved`]);
    /// `short`: a read that came up short ([`Poller::note_short_read`]).
    pub(crate) fn note_moved(&self, fd: RawFd, io: Value, short: bool) {
        self.with_poller(|p| {
            p.note_moved(fd, || !self.inner.borrow().has_waiters(fd));
            if short {
                p.note_short_read(fd, io.as_raw());
            }
        });
    }

    /// Would a read on `fd` of `io` get `EAGAIN` for sure (see
    /// [`Poller::read_would_fail`])? Never while other fibers wait on the
    /// fd.
    pub(crate) fn read_would_fail(&self, fd: RawFd, io: Value) -> bool {
        self.with_poller(|p| {
            p.read_would_fail(fd, io.as_raw(), || self.inner.borrow().has_waiters(fd))
        })
        .unwrap_or(false)
    }

    /// Forget a short read noted on `fd` (see
    /// [`Poller::forget_short_read`]).
    pub(crate) fn forget_short_read(&self, fd: RawFd) {
        self.with_poller(|p| p.forget_short_read(fd));
    }

    /// `f` on the poller, unless the selector is closed.
    fn with_poller<R>(&self, f: impl FnOnce(&mut Poller) -> R) -> Option<R> {
        self.poller.borrow_mut().as_mut().map(f)
    }

    fn shared(&self, ruby: &Ruby) -> Result<&Shared, Error> {
        self.shared.get().ok_or_else(|| {
            Error::new(
                ruby.exception_runtime_error(),
                "Weft::Selector not initialized",
            )
        })
    }

    fn loop_fiber(&self, ruby: &Ruby) -> Result<Value, Error> {
        match self.inner.borrow().loop_fiber {
            Some(f) => Ok(value(f)),
            None => Err(Error::new(
                ruby.exception_runtime_error(),
                "the Weft::Selector is closed (it has no loop fiber)",
            )),
        }
    }

    /// `initialize(loop)`.
    fn initialize(ruby: &Ruby, rb_self: &Self, loop_fiber: Value) -> Result<(), Error> {
        rb_self.start(ruby, loop_fiber, "Weft::Selector")
    }

    fn get_loop(ruby: &Ruby, rb_self: &Self) -> Value {
        rb_self
            .inner
            .borrow()
            .loop_fiber
            .map_or_else(|| ruby.qnil().as_value(), value)
    }

    fn idle_duration(rb_self: &Self) -> f64 {
        rb_self.idle.get()
    }

    /// `transfer`: to the loop fiber, without queueing the caller.
    fn transfer(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        rb_self.loop_fiber(ruby)?.funcall("transfer", ())
    }

    /// `resume(fiber, *args)`: queue the caller, transfer to `fiber`.
    fn resume(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<Value, Error> {
        let Some((fiber, rest)) = args.split_first() else {
            return Err(Error::new(
                ruby.exception_arg_error(),
                "wrong number of arguments (given 0, expected 1+): resume(fiber, *arguments)",
            ));
        };
        let id = rb_self
            .inner
            .borrow_mut()
            .queue(Some(ruby.fiber_current().as_raw()));
        nulling(rb_self, id, || fiber.funcall("transfer", rest))
    }

    /// `yield`: queue the caller, transfer to the loop.
    fn yield_to_loop(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        let target = rb_self.loop_fiber(ruby)?;
        let id = rb_self
            .inner
            .borrow_mut()
            .queue(Some(ruby.fiber_current().as_raw()));
        nulling(rb_self, id, || target.funcall("transfer", ()))
    }

    /// `push(fiber)`: queue `fiber`.
    fn push(rb_self: &Self, fiber: Value) {
        rb_self.inner.borrow_mut().queue(Some(fiber.as_raw()));
    }

    /// `raise(fiber, *args, **opts)`: queue the caller, raise in `fiber`.
    fn raise(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<Value, Error> {
        let Some((fiber, rest)) = args.split_first() else {
            return Err(Error::new(
                ruby.exception_arg_error(),
                "wrong number of arguments (given 0, expected 1+): raise(fiber, *arguments)",
            ));
        };
        let id = rb_self
            .inner
            .borrow_mut()
            .queue(Some(ruby.fiber_current().as_raw()));
        nulling(rb_self, id, || fiber.funcall("raise", rest))
    }

    fn is_ready(rb_self: &Self) -> bool {
        rb_self
            .inner
            .borrow()
            .ready
            .iter()
            .any(|q| q.fiber.is_some())
    }

    /// `wakeup`: end a blocked `select` from any thread; `true` if it was
    /// blocked.
    fn wakeup(rb_self: &Self) -> bool {
        match rb_self.shared.get() {
            Some(shared) if shared.is_blocked() => {
                shared.wake();
                true
            }
            _ => false,
        }
    }

    /// `close`: free the reactor (idempotent).
    pub(crate) fn close(rb_self: &Self) {
        rb_self.poller.borrow_mut().take();
        if let Some(shared) = rb_self.shared.get() {
            shared.close();
        }
        rb_self.inner.borrow_mut().loop_fiber = None;
    }

    pub(crate) fn is_closed(rb_self: &Self) -> bool {
        rb_self.poller.borrow().is_none() || rb_self.owner.forked()
    }

    /// `io_wait(fiber, io, events)`: the ready events, or `false` if the
    /// fiber was transferred to without any (a timeout).
    fn io_wait(
        ruby: &Ruby,
        rb_self: &Self,
        fiber: Value,
        io: Value,
        events: u8,
    ) -> Result<Value, Error> {
        let fd = fd_of(ruby, io)?;
        Ok(match rb_self.wait_fd(ruby, fiber, io, fd, events, false)? {
            Some(e) => ruby.integer_from_i64(e.into()).as_value(),
            None => ruby.qfalse().as_value(),
        })
    }

    /// Suspend `fiber` (the current one) until `fd` is ready for one of
    /// `events`: the ready events, or `None` if it was transferred to
    /// without them (a timeout). `just_failed`: the caller's own move on
    /// the fd just got `EAGAIN`.
    pub(crate) fn wait_fd(
        &self,
        ruby: &Ruby,
        fiber: Value,
        io: Value,
        fd: RawFd,
        events: u8,
        just_failed: bool,
    ) -> Result<Option<u8>, Error> {
        self.check_owner(ruby)?;
        // An uninitialized or closed selector has no loop to come back
        // from.
        self.loop_fiber(ruby)?;
        let (id, known) =
            self.inner
                .borrow_mut()
                .add_waiter(fd, io.as_raw(), fiber.as_raw(), events);
        // The entry this fd had without waiters was dropped, so `known`
        // is true only while a waiter on this same IO is here (module doc).
        // SAFETY: the GVL is held (crate invariants) and `io` is a live
        // object, an argument of this call.
        let object_id = || unsafe { rb_sys::rb_obj_id(io.as_raw()) } as u64;
        let watched = ready_or_watch(
            self.poller.borrow_mut().as_mut(),
            fd,
            events,
            known,
            just_failed,
            WaitingIo {
                addr: io.as_raw(),
                object_id: &object_id,
            },
        );
        let now = match watched {
            Ok(now) => now,
            Err(e) => {
                self.inner.borrow_mut().remove_waiter(fd, id);
                return Err(Error::new(ruby.exception_io_error(), e.to_string()));
            }
        };
        if now != 0 && self.scheduler_mode.get() {
            // Ready already, and a scheduler's io_wait is not ordered
            // against other fibers (module doc): return at once.
            self.leave(fd, id);
            return Ok(Some(now));
        }
        if now != 0 {
            // Ready already: still a trip through the loop, which resumes
            // it at its next `select` (module doc).
            self.inner
                .borrow_mut()
                .ready_waiters
                .push_back((fd, id, now));
        }
        let result = self.suspend(ruby);
        self.leave(fd, id);
        let result = result?;
        if !result.to_bool() {
            return Ok(None);
        }
        Ok(Some(u8::try_convert(result)?))
    }

    /// The waiter `id` on `fd` is done waiting (if it was not taken
    /// already); the poller hears when the fd's last waiter left
    /// (`Poller::release`).
    fn leave(&self, fd: RawFd, id: u64) {
        let idle = {
            let mut inner = self.inner.borrow_mut();
            inner.remove_waiter(fd, id);
            !inner.has_waiters(fd)
        };
        if idle {
            self.with_poller(|p| p.release(fd));
        }
    }

    /// `io_read(fiber, io, buffer, length, offset = 0)`; a fill of the IO's
    /// own read buffer waits (module doc).
    fn io_read(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<isize, Error> {
        rb_self.io_move(ruby, args, Dir::Read, false)
    }

    /// `io_write(fiber, io, buffer, length, offset = 0)`.
    fn io_write(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<isize, Error> {
        rb_self.io_move(ruby, args, Dir::Write, false)
    }

    /// `io_pread(fiber, io, buffer, from, length, offset = 0)`.
    fn io_pread(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<isize, Error> {
        rb_self.io_move(ruby, args, Dir::Read, true)
    }

    /// `io_pwrite(fiber, io, buffer, from, length, offset = 0)`.
    fn io_pwrite(ruby: &Ruby, rb_self: &Self, args: &[Value]) -> Result<isize, Error> {
        rb_self.io_move(ruby, args, Dir::Write, true)
    }

    fn io_move(
        &self,
        ruby: &Ruby,
        args: &[Value],
        dir: Dir,
        positioned: bool,
    ) -> Result<isize, Error> {
        // io-event's forms are the scheduler hooks' 3.2+ forms with the
        // fiber first and the buffer offset optional.
        let full = if positioned { 6 } else { 5 };
        let mut args = args.to_vec();
        if args.len() == full - 1 {
            args.push(ruby.integer_from_i64(0).as_value());
        }
        let [fiber, rest @ ..] = args.as_slice() else {
            return Err(Error::new(
                ruby.exception_arg_error(),
                "wrong number of arguments (given 0): the first is the fiber",
            ));
        };
        if args.len() != full {
            return Err(Error::new(
                ruby.exception_arg_error(),
                format!(
                    "wrong number of arguments (given {}, expected {}..{})",
                    args.len(),
                    full - 1,
                    full
                ),
            ));
        }
        let (io, buffer, length, offsets) = hook_args(ruby, rest, positioned)?;
        let waiter = SelectorWait {
            ruby,
            selector: self,
            fiber: *fiber,
            io,
        };
        move_bytes(ruby, io, buffer, length, offsets, dir, waiter)
    }

    /// Transfer to each fiber queued when this started (skipping nulled
    /// entries and dead fibers); `true` if any entry was taken.
    fn flush_ready(&self, ruby: &Ruby) -> Result<bool, Error> {
        let n = self.inner.borrow().ready.len();
        for _ in 0..n {
            let next = self.inner.borrow_mut().ready.pop_front();
            let Some(Queued { fiber: Some(f), .. }) = next else {
                continue;
            };
            self.switch(ruby, value(f), false, ())?;
        }
        Ok(n > 0)
    }

    /// `select(duration)`: run the ready fibers, poll (blocking up to
    /// `duration`, nil: forever, only if nothing is ready), transfer to the
    /// fibers whose fds are ready; the number of fds that were.
    fn select(ruby: &Ruby, rb_self: &Self, duration: Value) -> Result<usize, Error> {
        let timeout = if duration.is_nil() {
            None
        } else {
            let secs = f64::try_convert(duration)?;
            Some(Duration::from_secs_f64(if secs.is_nan() {
                0.0
            } else {
                secs.clamp(0.0, 3.0e9)
            }))
        };
        rb_self.select_for(ruby, timeout)
    }

    /// [`Selector::select`] with the duration converted.
    pub(crate) fn select_for(
        &self,
        ruby: &Ruby,
        mut timeout: Option<Duration>,
    ) -> Result<usize, Error> {
        self.check_owner(ruby)?;
        let shared = self.shared(ruby)?;
        if self.flush_ready(ruby)? {
            // What the fibers did may change the caller's timers.
            timeout = Some(Duration::ZERO);
        }
        if Self::is_ready(self) || !self.inner.borrow().ready_waiters.is_empty() {
            timeout = Some(Duration::ZERO);
        }
        let mut woken = Vec::new();
        self.turn(ruby, shared, Some(Duration::ZERO), &mut woken)?;
        self.idle.set(0.0);
        if woken.is_empty() && timeout != Some(Duration::ZERO) && !Self::is_ready(self) {
            let start = Instant::now();
            let turned = self.turn(ruby, shared, timeout, &mut woken);
            self.idle.set(start.elapsed().as_secs_f64());
            turned?;
        }
        // Only waiters that waited when the poll ran are resumed by this
        // turn; a fiber resumed below that waits again (perhaps on an fd
        // number just reused) waits for the next `select`.
        let horizon = self.inner.borrow().next_id;
        let already = self.resume_ready_waiters(ruby, horizon)?;
        Ok(already + self.dispatch(ruby, woken, horizon)?)
    }

    /// Transfer to the waiters (up to id `horizon`) that found their fd
    /// ready when they began waiting and still wait; the number resumed.
    fn resume_ready_waiters(&self, ruby: &Ruby, horizon: u64) -> Result<usize, Error> {
        // Entries are in id order, so those up to the horizon are a prefix:
        // taken one at a time (no borrow across the transfers below).
        let next = || {
            let mut inner = self.inner.borrow_mut();
            match inner.ready_waiters.front() {
                Some(&(_, id, _)) if id <= horizon => inner.ready_waiters.pop_front(),
                _ => None,
            }
        };
        let mut count = 0;
        while let Some((fd, id, events)) = next() {
            // A waiter that left by another way (a raise, a timeout) is
            // gone from the list already.
            let Some(fiber) = self.inner.borrow_mut().take_waiter(fd, id) else {
                continue;
            };
            count += usize::from(self.switch(ruby, value(fiber), false, (events,))?);
        }
        Ok(count)
    }

    fn turn(
        &self,
        ruby: &Ruby,
        shared: &Shared,
        timeout: Option<Duration>,
        woken: &mut Vec<(RawFd, u8)>,
    ) -> Result<(), Error> {
        let wanted = |fd| self.inner.borrow().wanted(fd);
        let result = match self.poller.borrow_mut().as_mut() {
            Some(p) => p.wait(shared, timeout, wanted, |fd, ready| woken.push((fd, ready)))?,
            None => Err(std::io::Error::other("the Weft::Selector is closed")),
        };
        result.map_err(|e| Error::new(ruby.exception_io_error(), e.to_string()))
    }

    /// Transfer to the waiters (up to id `horizon`) of each woken fd that
    /// it satisfies.
    fn dispatch(&self, ruby: &Ruby, woken: Vec<(RawFd, u8)>, horizon: u64) -> Result<usize, Error> {
        let mut count = 0;
        for (fd, ready) in woken {
            // Fibers resumed for earlier fds may have changed this one's
            // waiters: ask now.
            let wanted = self.inner.borrow().wanted(fd);
            if wanted == 0 {
                continue;
            }
            let ready = ready_for(fd, ready, wanted);
            let taken = self.inner.borrow_mut().take_ready(fd, ready, horizon);
            if taken.is_empty() {
                continue;
            }
            count += 1;
            for (fiber, events) in taken {
                self.switch(ruby, value(fiber), false, (events,))?;
            }
        }
        Ok(count)
    }
}

/// Define `Weft::Selector`.
pub fn define(ruby: &Ruby) -> Result<(), Error> {
    let weft = ruby.define_module("Weft")?;
    let class = weft.define_class("Selector", ruby.class_object())?;
    class.define_alloc_func::<Selector>();
    class.define_method("initialize", magnus::method!(Selector::initialize, 1))?;
    class.define_method("loop", magnus::method!(Selector::get_loop, 0))?;
    class.define_method("idle_duration", magnus::method!(Selector::idle_duration, 0))?;
    class.define_method("transfer", magnus::method!(Selector::transfer, 0))?;
    class.define_method("resume", magnus::method!(Selector::resume, -1))?;
    class.define_method("yield", magnus::method!(Selector::yield_to_loop, 0))?;
    class.define_method("push", magnus::method!(Selector::push, 1))?;
    class.define_method("raise", magnus::method!(Selector::raise, -1))?;
    class.define_method("ready?", magnus::method!(Selector::is_ready, 0))?;
    class.define_method("select", magnus::method!(Selector::select, 1))?;
    class.define_method("wakeup", magnus::method!(Selector::wakeup, 0))?;
    class.define_method("close", magnus::method!(Selector::close, 0))?;
    class.define_method("closed?", magnus::method!(Selector::is_closed, 0))?;
    class.define_method("io_wait", magnus::method!(Selector::io_wait, 3))?;
    class.define_method("io_read", magnus::method!(Selector::io_read, -1))?;
    class.define_method("io_write", magnus::method!(Selector::io_write, -1))?;
    class.define_method("io_pread", magnus::method!(Selector::io_pread, -1))?;
    class.define_method("io_pwrite", magnus::method!(Selector::io_pwrite, -1))?;
    weft.define_singleton_method(
        "_identity_checks",
        magnus::function!(crate::fd_query::identity_checks, 0),
    )?;
    Ok(())
}
