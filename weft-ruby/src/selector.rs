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
//!   had started.) `Weft::Scheduler`'s `io_wait` keeps the shortcut: Ruby's
//!   `Fiber::Scheduler` interface does not order it.
//! - A `select` resumes only waiters that waited when it polled (ids up to
//!   its horizon): a fiber it resumes that waits again, maybe on an fd
//!   number it just reused, is not resumed by an event of the old fd
//!   polled before.

use crate::held::{mark, value, OwnerPid};
use crate::io_hooks::{hook_args, move_bytes, Dir, WaitFd};
use crate::poller::{ready_for, ready_or_watch, Poller, Shared};
use crate::scheduler::fd_of;
use crate::state::Obj;
use magnus::prelude::*;
use magnus::rb_sys::AsRawValue;
use magnus::typed_data::DataTypeFunctions;
use magnus::{gc, Error, Ruby, TypedData, Value};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
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
}

#[derive(Default)]
struct Inner {
    loop_fiber: Option<Obj>,
    /// Fibers to resume, each with an id; a suspension's own entry is
    /// nulled (`fiber: None`) when it comes back another way.
    ready: VecDeque<Queued>,
    next_id: u64,
    fds: HashMap<RawFd, FdWaiters>,
    /// Waiters whose fd was ready when they started waiting (fd, waiter
    /// id, events): the next `select` resumes them, as io-event's
    /// selectors do (module doc). In id order, as ids are handed out.
    ready_waiters: VecDeque<(RawFd, u64, u8)>,
}

struct Queued {
    id: u64,
    fiber: Option<Obj>,
}

#[derive(Default)]
struct FdWaiters {
    /// The IO the waiters wait on (the registration's trust, as in
    /// [`crate::state::IoCtl`]).
    io: Option<Obj>,
    waiters: Vec<IoWaiter>,
}

struct IoWaiter {
    id: u64,
    fiber: Obj,
    events: u8,
}

impl DataTypeFunctions for Selector {
    fn mark(&self, _marker: &gc::Marker) {
        // Never borrowed across a Ruby call (module invariant), so free
        // whenever the GC runs.
        let inner = self.inner.borrow();
        inner.loop_fiber.into_iter().for_each(mark);
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

fn alive(fiber: Value) -> Result<bool, Error> {
    match magnus::Fiber::from_value(fiber) {
        Some(f) => Ok(f.is_alive()),
        // io-event allows any object that answers `transfer`/`alive?`.
        None => fiber.funcall("alive?", ()),
    }
}

impl Inner {
    fn queue(&mut self, fiber: Option<Obj>) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.ready.push_back(Queued { id, fiber });
        id
    }

    fn null(&mut self, id: u64) {
        if let Some(q) = self.ready.iter_mut().find(|q| q.id == id) {
            q.fiber = None;
        }
    }

    /// Record a waiter; `true` if the fd's other waiters wait on this IO.
    fn add_waiter(&mut self, fd: RawFd, io: Obj, fiber: Obj, events: u8) -> (u64, bool) {
        self.next_id += 1;
        let id = self.next_id;
        let entry = self.fds.entry(fd).or_default();
        let known = entry.io == Some(io) && !entry.waiters.is_empty();
        entry.io = Some(io);
        entry.waiters.push(IoWaiter { id, fiber, events });
        (id, known)
    }

    fn remove_waiter(&mut self, fd: RawFd, id: u64) {
        self.take_waiter(fd, id);
    }

    /// Take the waiter `id` off `fd`'s list, if it still waits.
    fn take_waiter(&mut self, fd: RawFd, id: u64) -> Option<Obj> {
        let entry = self.fds.get_mut(&fd)?;
        let at = entry.waiters.iter().position(|w| w.id == id)?;
        let waiter = entry.waiters.remove(at);
        if entry.waiters.is_empty() {
            self.fds.remove(&fd);
        }
        Some(waiter.fiber)
    }

    fn wanted(&self, fd: RawFd) -> u8 {
        self.fds
            .get(&fd)
            .map_or(0, |e| e.waiters.iter().fold(0, |a, w| a | w.events))
    }

    /// Take off `fd`'s list the waiters (up to id `horizon`) that `ready`
    /// satisfies.
    fn take_ready(&mut self, fd: RawFd, ready: u8, horizon: u64) -> Vec<(Obj, u8)> {
        let Some(entry) = self.fds.get_mut(&fd) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        entry.waiters.retain(|w| {
            let got = if w.id <= horizon { w.events & ready } else { 0 };
            if got != 0 {
                out.push((w.fiber, got));
            }
            got == 0
        });
        if entry.waiters.is_empty() {
            self.fds.remove(&fd);
        }
        out
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
        if let Some(p) = self.selector.poller.borrow_mut().as_mut() {
            p.note_eagain(fd, events);
        }
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
        let (poller, shared) =
            Poller::new().map_err(|e| Error::new(ruby.exception_runtime_error(), e.to_string()))?;
        if rb_self.shared.set(shared).is_err() {
            return Err(Error::new(
                ruby.exception_runtime_error(),
                "Weft::Selector already initialized",
            ));
        }
        *rb_self.poller.borrow_mut() = Some(poller);
        rb_self.inner.borrow_mut().loop_fiber = Some(loop_fiber.as_raw());
        rb_self.owner.claim();
        Ok(())
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
    fn close(rb_self: &Self) {
        rb_self.poller.borrow_mut().take();
        rb_self.inner.borrow_mut().loop_fiber = None;
    }

    fn is_closed(rb_self: &Self) -> bool {
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

    fn wait_fd(
        &self,
        ruby: &Ruby,
        fiber: Value,
        io: Value,
        fd: RawFd,
        events: u8,
        just_failed: bool,
    ) -> Result<Option<u8>, Error> {
        self.check_owner(ruby)?;
        let shared = self.shared(ruby)?;
        let target = self.loop_fiber(ruby)?;
        let (id, known) =
            self.inner
                .borrow_mut()
                .add_waiter(fd, io.as_raw(), fiber.as_raw(), events);
        let watched = ready_or_watch(
            self.poller.borrow_mut().as_mut(),
            shared,
            fd,
            events,
            known,
            just_failed,
        );
        let now = match watched {
            Ok(now) => now,
            Err(e) => {
                self.inner.borrow_mut().remove_waiter(fd, id);
                return Err(Error::new(ruby.exception_io_error(), e.to_string()));
            }
        };
        if now != 0 {
            // Ready already: still a trip through the loop, which resumes
            // it at its next `select` (module doc).
            self.inner
                .borrow_mut()
                .ready_waiters
                .push_back((fd, id, now));
        }
        let result: Result<Value, Error> = target.funcall("transfer", ());
        self.inner.borrow_mut().remove_waiter(fd, id);
        let result = result?;
        if !result.to_bool() {
            return Ok(None);
        }
        Ok(Some(u8::try_convert(result)?))
    }

    /// `io_read(fiber, io, buffer, length, offset = 0)`.
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
    fn flush_ready(&self) -> Result<bool, Error> {
        let n = self.inner.borrow().ready.len();
        for _ in 0..n {
            let next = self.inner.borrow_mut().ready.pop_front();
            let Some(Queued { fiber: Some(f), .. }) = next else {
                continue;
            };
            let fiber = value(f);
            if alive(fiber)? {
                let _: Value = fiber.funcall("transfer", ())?;
            }
        }
        Ok(n > 0)
    }

    /// `select(duration)`: run the ready fibers, poll (blocking up to
    /// `duration`, nil: forever, only if nothing is ready), transfer to the
    /// fibers whose fds are ready; the number of fds that were.
    fn select(ruby: &Ruby, rb_self: &Self, duration: Value) -> Result<usize, Error> {
        rb_self.check_owner(ruby)?;
        let shared = rb_self.shared(ruby)?;
        let mut timeout = if duration.is_nil() {
            None
        } else {
            let secs = f64::try_convert(duration)?;
            Some(Duration::from_secs_f64(if secs.is_nan() {
                0.0
            } else {
                secs.clamp(0.0, 3.0e9)
            }))
        };
        if rb_self.flush_ready()? {
            // What the fibers did may change the caller's timers.
            timeout = Some(Duration::ZERO);
        }
        if Self::is_ready(rb_self) || !rb_self.inner.borrow().ready_waiters.is_empty() {
            timeout = Some(Duration::ZERO);
        }
        let mut woken = Vec::new();
        rb_self.turn(ruby, shared, Some(Duration::ZERO), &mut woken)?;
        rb_self.idle.set(0.0);
        if woken.is_empty() && timeout != Some(Duration::ZERO) && !Self::is_ready(rb_self) {
            let start = Instant::now();
            let turned = rb_self.turn(ruby, shared, timeout, &mut woken);
            rb_self.idle.set(start.elapsed().as_secs_f64());
            turned?;
        }
        // Only waiters that waited when the poll ran are resumed by this
        // turn; a fiber resumed below that waits again (perhaps on an fd
        // number just reused) waits for the next `select`.
        let horizon = rb_self.inner.borrow().next_id;
        let already = rb_self.resume_ready_waiters(horizon)?;
        Ok(already + rb_self.dispatch(woken, horizon)?)
    }

    /// Transfer to the waiters (up to id `horizon`) that found their fd
    /// ready when they began waiting and still wait; the number resumed.
    fn resume_ready_waiters(&self, horizon: u64) -> Result<usize, Error> {
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
            let fiber = value(fiber);
            if alive(fiber)? {
                count += 1;
                let _: Value = fiber.funcall("transfer", (events,))?;
            }
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
        let result = match self.poller.borrow_mut().as_mut() {
            Some(p) => p.wait(shared, timeout, |fd, ready| woken.push((fd, ready)))?,
            None => Err(std::io::Error::other("the Weft::Selector is closed")),
        };
        result.map_err(|e| Error::new(ruby.exception_io_error(), e.to_string()))
    }

    /// Transfer to the waiters (up to id `horizon`) of each woken fd that
    /// it satisfies.
    fn dispatch(&self, woken: Vec<(RawFd, u8)>, horizon: u64) -> Result<usize, Error> {
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
                let fiber = value(fiber);
                if alive(fiber)? {
                    let _: Value = fiber.funcall("transfer", (events,))?;
                }
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
    Ok(())
}
