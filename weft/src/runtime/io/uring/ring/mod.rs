//! One io_uring instance and its op table, behind one mutex.
//!
//! Owns: the ring (submission and completion queues), the [`OpTable`] of
//! what it holds, and the count of submission entries pushed but not yet
//! handed to the kernel.
//!
//! Invariants:
//! - **Submission entries point into buffers the table owns** (ops.rs):
//!   an entry is pushed only right after its slot took the buffer, so the
//!   kernel never sees memory that can be freed before the completion.
//! - **An entry naming a descriptor reaches the kernel before that
//!   descriptor can be closed.** A stream abandons its op (which submits
//!   everything pushed, then the cancel) before its socket is closed, so a
//!   pushed-but-unsubmitted receive can never be issued against a reused
//!   descriptor number.
//! - **A queued entry is a started op.** Once an entry is in the
//!   submission queue nothing takes it out: the next submit on the ring,
//!   whoever makes it, hands it to the kernel. So a start whose push
//!   succeeded returns the op, for its caller to abandon before closing
//!   the descriptor, as above: the owner's start leaves the entry to its
//!   batch point, which retries a refused submit at the next; another
//!   thread's start, which no batch point follows, submits itself and
//!   waits out refusals the kernel may get over, for up to a second.
//!   (Before, a start whose submit was refused reported the error and
//!   left the entry queued; its caller closed the socket, and a receive
//!   issued later ran on whatever socket reused the number, taking its
//!   data.) Only a start refused for longer, or with another error, fails
//!   with its entry queued, and an abandon whose submits all fail leaves
//!   the entry and its cancel queued while the descriptor closes: a
//!   kernel that refuses every submit that long has a ring nothing can
//!   use. A start whose push failed queued nothing: its slot is freed at
//!   once. The count of queued entries is read back from the queue after
//!   each submit (the kernel may take part of a batch).
//! - Entries pushed by the ring's owning worker may wait for its next
//!   [`flush`](Ring::flush) (once per maintenance tick and before it
//!   parks: one `io_uring_enter` for the batch); entries pushed by any
//!   other thread are submitted at once, because nobody else would. Two
//!   exceptions on the owner's side: a `block_on` returning submits the
//!   writes nobody waits for ([`Ring::submit_pending`]), and a poll
//!   re-armed from a completion's waker goes at once (poll.rs).
//! - **The submission and completion queues are touched only under the
//!   lock** (through `submission_shared` / `completion_shared`, which
//!   need exactly that); [`Ring::park`]'s wait, the one call made without
//!   it, only enters the kernel. (That enter also hands the kernel any
//!   entries another thread pushed meanwhile and is about to submit under
//!   the lock: theirs then submits none, which changes nothing for them
//!   but which thread the kernel runs the completion work on.)
//! - A thread that reaps the ring's poll on the epoll descriptor while the
//!   owner waits in the ring posts a no-op for the owner (park_poll.rs).
//! - The lock is never held across a blocking wait except in
//!   [`Ring::cancel_and_wait`], [`Ring::cancel_before_close`] and
//!   teardown, which wait for completions the kernel produces without any
//!   thread's user-space help (a cancelled request may complete in its
//!   submitter's task work, which runs in the kernel when that thread
//!   next enters or leaves it, or is woken from a wait, a wait on this
//!   lock included); wakers are called after it is released.

use super::empty_flag::EmptyFlag;
use super::ops::{
    Abandoned, Completed, Leave, LiveSend, OpKey, OpTable, OrphanSend, Polled, SlotKind,
    INTERNAL_USER_DATA,
};
use super::park_poll::ParkPoll;
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::time::{Duration, Instant};

// The submission entry of each kind of op (`Ring::start_recv`, ...).
mod entries;
// Handing entries to the kernel, and what a refused submit leads to.
mod submit;

/// Submission queue entries per ring (the completion queue is larger, so a
/// burst of completions for many in-flight receives rarely overflows; the
/// kernel keeps overflowed completions anyway, `IORING_FEAT_NODROP`).
const SQ_ENTRIES: u32 = 256;
const CQ_ENTRIES: u32 = 4096;

pub(crate) struct Ring {
    state: Mutex<RingState>,
    /// The kernel takes `IORING_RECVSEND_POLL_FIRST` (Linux 5.19, as
    /// `COOP_TASKRUN`, which this ring was built with).
    poll_first: bool,
    /// The same ring, for [`Ring::park`]'s wait, which must not hold the
    /// lock (it only enters the kernel; no queue is touched).
    waiter: Arc<IoUring>,
    fd: RawFd,
    /// The owner pushed an op its caller did not wait for (a write that
    /// returned once its send was started) since its last `block_on`
    /// returned: [`Ring::submit_pending`]. Only the owner leaves pushes
    /// for later, and only it reads this, so `Relaxed` is enough; a send a
    /// batch point submitted meanwhile costs a look under the lock (and
    /// submits early whatever else was pushed since).
    unwaited_pushed: AtomicBool,
    /// The ring held nothing at the lock's latest release: no request in
    /// flight, none queued, no poll on the epoll descriptor armed
    /// ([`Ring::is_empty`]).
    empty: EmptyFlag,
    /// The owner's waits in the ring so far ([`Ring::park`]'s blocking
    /// enters), for the tests of where it waits.
    #[cfg(test)]
    waits: std::sync::atomic::AtomicUsize,
}

struct RingState {
    /// Queues touched only under the lock (`submission_shared` /
    /// `completion_shared` below rely on that).
    uring: Arc<IoUring>,
    table: OpTable,
    /// Entries pushed since the last submit.
    unsubmitted: usize,
    /// The poll on the epoll descriptor (see `park`).
    park_poll: ParkPoll,
    /// The descriptor that poll watches (set by the first `park`).
    epoll_fd: Option<RawFd>,
    /// Submits to refuse (`EAGAIN`) before the next real one: the tests'
    /// stand-in for a kernel short of memory.
    #[cfg(test)]
    refuse_submits: usize,
}

/// The ring's state under its lock. Its release records whether the ring
/// holds nothing ([`Ring::is_empty`]), posts the wake-up a reap owed the
/// parked owner meanwhile (park_poll.rs), once per hold, and wakes what
/// that post reaped only after the lock is let go.
struct Locked<'a>(Option<MutexGuard<'a, RingState>>, &'a EmptyFlag);

impl std::ops::Deref for Locked<'_> {
    type Target = RingState;
    fn deref(&self) -> &RingState {
        self.0.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut RingState {
        self.0.as_mut().expect("held until dropped")
    }
}

impl Drop for Locked<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(mut state) = self.0.take() {
            // Under the lock (empty_flag.rs).
            self.1.record(state.holds_nothing());
            if state.park_poll.take_owed_wake() {
                post_owed_wake(state);
            }
        }
    }
}

/// [`Locked`]'s release when a wake-up is owed: post it, let the lock go,
/// then wake what the post reaped.
#[cold]
fn post_owed_wake(mut state: MutexGuard<'_, RingState>) {
    let mut wakers = Vec::new();
    if state.push_nop(WAKE_USER_DATA, &mut wakers) {
        let _ = state.submit(&mut wakers);
    }
    drop(state);
    wake_all(wakers);
}

/// `user_data` of the ring's poll on the driver's epoll descriptor (like
/// `INTERNAL_USER_DATA`, its high half is all ones: no slot's name).
const EPOLL_USER_DATA: u64 = u64::MAX - 1;

/// `user_data` of the no-op that ends a waiting owner's park (park_poll.rs;
/// its high half is all ones too).
const WAKE_USER_DATA: u64 = u64::MAX - 2;

/// How long a wait for a cancelled request's end goes before it asks for
/// the cancel again.
const RECANCEL_AFTER: Duration = Duration::from_millis(10);

/// How long [`Ring::cancel_before_close`] waits in all before it leaves
/// the request to the table. A cancel normally ends a request within
/// microseconds; this bounds a drop's wait if the kernel never does.
const GIVE_UP_AFTER: Duration = Duration::from_secs(1);

/// `IORING_RECVSEND_POLL_FIRST` (`io_uring.h`, Linux 5.19), which the
/// `io-uring` crate does not export.
const RECVSEND_POLL_FIRST: u16 = 1;

impl Ring {
    pub(crate) fn new() -> io::Result<Ring> {
        // COOP_TASKRUN is Linux 5.19, SUBMIT_ALL 5.18; older kernels refuse
        // the flags.
        match Ring::build(true) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ring::build(false),
            other => other,
        }
    }

    /// A ring with the flags of Linux 5.19 (`modern`: and then receives
    /// may ask the kernel to poll first) or without them.
    fn build(modern: bool) -> io::Result<Ring> {
        let mut builder = IoUring::builder();
        builder
            .setup_cqsize(CQ_ENTRIES)
            // A forked child must not see (or scribble on) the parent's
            // queues; it builds its own runtime.
            .dontfork();
        if modern {
            // Completions of a busy worker's receives wait for its next
            // kernel entry (a flush, a driver poll, a timer tick) instead
            // of an inter-processor interrupt each: 9% of a busy HTTP
            // server's CPU went to those IPIs. A sleeping worker is still
            // woken to post them. TASKRUN_FLAG says when such work waits
            // (`flush` then enters for it).
            builder.setup_coop_taskrun().setup_taskrun_flag();
            // A batch goes on past an entry the kernel refuses (its
            // completion says why) instead of leaving the rest queued.
            builder.setup_submit_all();
        }
        let uring = builder.build(SQ_ENTRIES)?;
        let poll_first = modern;
        let uring = Arc::new(uring);
        Ok(Ring {
            poll_first,
            fd: uring.as_raw_fd(),
            waiter: uring.clone(),
            unwaited_pushed: AtomicBool::new(false),
            empty: EmptyFlag::new(),
            #[cfg(test)]
            waits: Default::default(),
            state: Mutex::new(RingState {
                uring,
                table: OpTable::default(),
                unsubmitted: 0,
                park_poll: ParkPoll::default(),
                epoll_fd: None,
                #[cfg(test)]
                refuse_submits: 0,
            }),
        })
    }

    /// Whether the kernel supports every opcode in `codes` on this ring.
    pub(crate) fn supports(&self, codes: &[u8]) -> bool {
        let mut probe = io_uring::Probe::new();
        self.waiter.submitter().register_probe(&mut probe).is_ok()
            && codes.iter().all(|&code| probe.is_supported(code))
    }

    /// The ring's descriptor: readable while completions wait (the I/O
    /// driver polls it like a socket).
    pub(crate) fn fd(&self) -> RawFd {
        self.fd
    }

    fn lock(&self) -> Locked<'_> {
        Locked(
            Some(self.state.lock().unwrap_or_else(|e| e.into_inner())),
            &self.empty,
        )
    }

    /// Give `buf` to a new table slot and push `entry` under its name.
    ///
    /// # Safety
    /// Every byte `entry` points to lies in `buf`'s heap allocation.
    unsafe fn start(
        &self,
        entry: squeue::Entry,
        buf: Vec<u8>,
        waker: Option<&Waker>,
        submit_now: bool,
    ) -> io::Result<OpKey> {
        // SAFETY: the caller's contract.
        unsafe { self.start_op(entry, buf, waker, submit_now, SlotKind::Plain) }
    }

    /// [`Ring::start`] for an op of `kind` (its result a new descriptor,
    /// closed by the table if its owner never takes it; or a send the
    /// table continues while it ends short).
    ///
    /// # Safety
    /// As [`Ring::start`].
    unsafe fn start_op(
        &self,
        entry: squeue::Entry,
        buf: Vec<u8>,
        waker: Option<&Waker>,
        submit_now: bool,
        kind: SlotKind,
    ) -> io::Result<OpKey> {
        let mut state = self.lock();
        let key = state.table.insert_op(buf, waker.cloned(), kind);
        let entry = entry.user_data(key.user_data());
        let mut wakers = Vec::new();
        // SAFETY: the entry points into the buffer the table slot `key` now
        // owns, which stays allocated until the request's completion
        // (module invariant; ops.rs).
        if let Err(e) = unsafe { state.push(&entry, &mut wakers) } {
            state.table.remove_unqueued(key);
            drop(state);
            wake_all(wakers);
            return Err(e);
        }
        if submit_now {
            return self.submit_started(state, key, wakers);
        }
        if waker.is_none() {
            self.unwaited_pushed.store(true, Ordering::Relaxed);
        }
        drop(state);
        wake_all(wakers);
        Ok(key)
    }

    /// The op's result if it completed (the slot is then free), or
    /// `Pending` with `waker` stored.
    pub(crate) fn poll(&self, key: OpKey, waker: &Waker) -> Polled {
        self.lock().table.poll(key, waker)
    }

    /// The op's result if it completed, leaving any stored waker alone.
    pub(crate) fn try_take(&self, key: OpKey) -> Option<(i32, Vec<u8>)> {
        self.lock().table.try_take(key)
    }

    /// The op's owner gives it up. Everything pushed is submitted first
    /// (the caller is about to close the descriptor the entries name).
    /// `Leave::Cancel` cancels it in the kernel; a send (`Leave::Send`) is
    /// finished by the ring on its duplicate descriptor (ops.rs,
    /// `OrphanSend`), as the kernel's own buffer would send its bytes after
    /// a close; `Leave::Detach` lets it run to its end (a file write a
    /// dropped `File` accepted still lands). Either way the buffer is freed
    /// when the last completion arrives.
    pub(crate) fn abandon(&self, key: OpKey, leave: Leave) {
        let mut state = self.lock();
        let mut wakers = Vec::new();
        if state.unsubmitted > 0 {
            state.submit_queued(&mut wakers);
        }
        match state.table.abandon(key, leave) {
            (Abandoned::CancelInKernel, _) if leave == Leave::Cancel => {
                state.cancel(key.user_data(), &mut wakers)
            }
            (Abandoned::CancelInKernel, _) => {}
            (Abandoned::Replay(result), _) => {
                let completed = state.table.complete(key.user_data(), result);
                state.act(completed, &mut wakers);
                let _ = state.submit(&mut wakers);
            }
            (Abandoned::Freed, leftover) => finish_orphan(leftover),
            (Abandoned::FreedClosing(fd), leftover) => {
                close_orphan_fd(fd);
                finish_orphan(leftover);
            }
        }
        drop(state);
        wake_all(wakers);
    }

    /// Submit what was pushed, from any thread: for an op about to be
    /// left to a task that may not run soon (a dropped file's write,
    /// whose bytes must reach the kernel as an abandoned one's do).
    pub(crate) fn submit_now(&self) {
        let mut wakers = Vec::new();
        let mut state = self.lock();
        if state.unsubmitted > 0 {
            state.submit_queued(&mut wakers);
        }
        drop(state);
        wake_all(wakers);
    }

    /// Cancel the op and wait for its completion: its result and buffer
    /// (for a receive, the data it took before the cancel won, if any).
    /// The waker the op's owner left is woken by the completion as usual:
    /// the caller may be another task than the one waiting on the op (a
    /// readiness check beside a pending read), and that one must learn
    /// that its op ended.
    pub(crate) fn cancel_and_wait(&self, key: OpKey) -> (i32, Vec<u8>) {
        let mut wakers = Vec::new();
        let mut state = self.lock();
        state.cancel(key.user_data(), &mut wakers);
        let done = state.wait_for_cancelled(key, None, &mut wakers);
        drop(state);
        wake_all(wakers);
        done.expect("no deadline to give up at")
    }

    /// Cancel the op before its descriptor is closed, and wait for its
    /// result (a stream's receive: whether it took bytes nobody read).
    /// The kernel lets go of the request, and of its reference to the
    /// op's file, in the same completion run that posted the result, on
    /// the thread that submitted it: on this thread (the ring's owner,
    /// the usual case) before the cancel's `io_uring_enter` returns, on
    /// another within microseconds of the result being seen. A close
    /// right after may so leave the socket's own close to that free,
    /// microseconds later; for a stream that only delays its FIN or
    /// reset. (Listeners, for which a late close let a connect in, once
    /// waited for the free with a second `io_uring_enter`; they accept on
    /// readiness now, and streams do not pay for it: with a connection
    /// per request it was one `io_uring_enter` per connection.)
    ///
    /// A request the kernel has not ended after [`GIVE_UP_AFTER`] is left
    /// to the table, as a dropped op is (`Leave::Cancel`: its buffer is
    /// freed, and a descriptor it made closed, when it does end), and the
    /// result is `ECANCELED`: a drop must not wait forever on the kernel.
    pub(crate) fn cancel_before_close(&self, key: OpKey) -> i32 {
        let mut wakers = Vec::new();
        let mut state = self.lock();
        state.cancel(key.user_data(), &mut wakers);
        let result = match state.wait_for_cancelled(key, Some(GIVE_UP_AFTER), &mut wakers) {
            Some((result, _buf)) => result,
            None => {
                let (abandoned, _) = state.table.abandon(key, Leave::Cancel);
                debug_assert!(matches!(abandoned, Abandoned::CancelInKernel));
                -libc::ECANCELED
            }
        };
        drop(state);
        wake_all(wakers);
        result
    }

    /// The owner's batch point: submit what was pushed and collect what
    /// completed (one `io_uring_enter` if anything was pushed, none
    /// otherwise). Returns the wakers to call.
    pub(crate) fn flush(&self, wakers: &mut Vec<Waker>) {
        if self.is_empty() {
            return; // nothing to submit, nothing that can complete
        }
        self.lock().flush(wakers);
    }

    /// [`flush`](Self::flush) for a thread that is not the owner (the
    /// long-poll monitor, for a stuck owner), which must not trust the
    /// empty flag; and whether the ring still holds something afterwards
    /// (watch.rs).
    pub(crate) fn flush_and_holds(&self, wakers: &mut Vec<Waker>) -> bool {
        let mut state = self.lock();
        state.flush(wakers);
        !state.holds_nothing()
    }

    /// For an owner about to leave the runtime (`block_on` returning):
    /// submit what was pushed if it holds an op its caller did not wait
    /// for, a write that already returned. Its bytes must reach the
    /// kernel now: the caller may block on the peer next. Ops that others
    /// wait for (receives, polls) stay for the next batch point, which
    /// reaps too: submitting them here would cost a Ruby scheduler on the
    /// ring an `io_uring_enter` per hook call.
    #[inline]
    pub(crate) fn submit_pending(&self) {
        if self.unwaited_pushed.load(Ordering::Relaxed) {
            self.submit_unwaited();
        }
    }

    #[cold]
    fn submit_unwaited(&self) {
        self.unwaited_pushed.store(false, Ordering::Relaxed);
        let mut wakers = Vec::new();
        let mut state = self.lock();
        if state.unsubmitted > 0 {
            let _ = state.submit(&mut wakers);
        }
        drop(state);
        wake_all(wakers);
    }

    /// Whether the ring holds nothing: no request of the ring's is in the
    /// kernel or queued for it, and no poll on the epoll descriptor is
    /// armed. Read without the lock, and meant for the owner: only it
    /// starts requests on its ring, so once it sees the ring empty, the
    /// ring stays so until the owner starts something (uring/mod.rs, "An
    /// owner whose ring holds nothing waits in epoll"); a value another
    /// thread's release left stale says "not empty", which only costs a
    /// look under the lock. Then its park waits in epoll instead (one
    /// `epoll_wait`, where one in the ring is a poll request armed on the
    /// epoll descriptor, the enter, and an `epoll_wait` to take what
    /// fired), and its batch points and reaps skip the ring.
    pub(crate) fn is_empty(&self) -> bool {
        self.empty.owner_sees_empty()
    }

    /// Park the ring's owner (the worker holding the I/O driver) in the
    /// ring itself instead of in epoll: a poll on the driver's epoll
    /// descriptor `epoll_fd` is kept in the ring, so one wait returns for
    /// this ring's completions (their deferred work runs inside it, with no
    /// interrupted `epoll_wait`), for readiness on any other source (other
    /// rings, sockets, the driver's waker), or at `timeout`. Returns whether
    /// the epoll descriptor fired: the caller then takes its events.
    pub(crate) fn park(
        &self,
        epoll_fd: RawFd,
        timeout: Option<Duration>,
        wakers: &mut Vec<Waker>,
    ) -> bool {
        {
            let mut state = self.lock();
            state.epoll_fd = Some(epoll_fd);
            if state.park_poll.needs_arming() {
                state.arm_epoll_poll(wakers);
            }
            // Arming the poll right after the previous one fired would
            // have it fire at once on the completions this ring posts
            // meanwhile (its own descriptor was then in the epoll set for
            // good, for when another worker holds the driver; it is now
            // one-shot, armed while the owner is away (watch.rs), and
            // still for good without the long-poll monitor): measured,
            // twice the `epoll_wait`s on a ping-pong. So it is armed here,
            // just before the wait, with whatever else is pushed.
            if state.unsubmitted > 0 && state.submit(wakers).is_err() {
                return true;
            }
            state.reap(wakers);
            let fired = state.park_poll.take_fired();
            if !wakers.is_empty() || fired {
                return fired;
            }
            state.park_poll.start_wait();
        }
        // Without the lock: other threads may poll or start this ring's ops
        // meanwhile (an entry they push and submit is theirs to submit).
        #[cfg(test)]
        self.waits.fetch_add(1, Ordering::Relaxed);
        let result = match timeout {
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.waiter.submitter().submit_with_args(1, &args)
            }
            None => self.waiter.submitter().submit_and_wait(1),
        };
        let mut state = self.lock();
        state.park_poll.end_wait();
        state.reap(wakers);
        // A failed wait (not a timeout or an interruption) is reported as
        // "look at epoll", which never blocks the caller wrongly.
        let failed = matches!(&result, Err(e) if !matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)));
        state.park_poll.take_fired() || failed
    }

    /// Collect what completed (the driver saw the ring's descriptor ready).
    pub(crate) fn reap(&self, wakers: &mut Vec<Waker>) {
        self.lock().reap(wakers);
    }

    /// [`reap`](Self::reap), and whether the ring still holds something
    /// (a request in flight or queued, or the poll on the epoll descriptor
    /// armed) once the lock is released: for re-arming a worker ring's
    /// one-shot registration (watch.rs).
    pub(crate) fn reap_and_holds(&self, wakers: &mut Vec<Waker>) -> bool {
        let mut state = self.lock();
        state.reap(wakers);
        !state.holds_nothing()
    }

    /// The runtime shut down: wake every waiting task so it sees the
    /// shutdown error.
    pub(crate) fn wake_waiters(&self) {
        let mut wakers = Vec::new();
        self.lock().table.take_wakers(&mut wakers);
        wake_all(wakers);
    }
}

impl Ring {
    /// The first part of a ring's teardown ([`Rings`]'s drop): cancel what
    /// nobody will take, and let orphaned sends (a dropped stream's last
    /// write, accepted by a write as the kernel's socket buffer would have
    /// taken it) and detached file writes run until `deadline`. A program
    /// that writes and then ends its runtime expects its bytes to arrive,
    /// as on epoll.
    pub(crate) fn finish_sends(&mut self, deadline: Instant) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        state.cancel_and_drain(deadline);
    }
}

impl Drop for Ring {
    /// Cancel everything in flight but detached writes (sends too: past
    /// [`Ring::finish_sends`], a peer that reads nothing) and wait (a
    /// bounded time) for the completions, so no buffer is freed while the
    /// kernel may write it; whatever is still out after that is leaked,
    /// never freed.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        state.table.close();
        state.cancel_and_drain(Instant::now() + Duration::from_secs(1));
        if state.table.in_flight() > 0 {
            state.table.leak_in_flight();
        }
    }
}

impl RingState {
    /// Submit what was pushed and take what completed.
    fn flush(&mut self, wakers: &mut Vec<Waker>) {
        if self.unsubmitted > 0 || self.sq().taskrun() {
            // One enter submits the batch and runs the completion work
            // the kernel deferred to this thread (COOP_TASKRUN).
            let _ = self.submit(wakers);
        }
        self.reap(wakers);
    }

    /// No request in flight, none queued, the poll on the epoll
    /// descriptor not armed ([`Ring::is_empty`]).
    fn holds_nothing(&self) -> bool {
        self.table.in_flight() == 0 && self.unsubmitted == 0 && self.park_poll.needs_arming()
    }

    /// The submission queue.
    fn sq(&mut self) -> squeue::SubmissionQueue<'_> {
        // SAFETY: as for the completion queue in `reap`: only touched
        // under the ring's lock, which `&mut self` proves is held.
        unsafe { self.uring.submission_shared() }
    }

    /// Push the poll on the epoll descriptor (`Ring::park`), not submitted.
    fn arm_epoll_poll(&mut self, wakers: &mut Vec<Waker>) {
        let Some(fd) = self.epoll_fd else { return };
        let entry = opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32)
            .build()
            .user_data(EPOLL_USER_DATA);
        // SAFETY: a poll points at no memory.
        if unsafe { self.push(&entry, wakers) }.is_ok() {
            self.park_poll.armed();
        }
    }

    /// Ask the kernel to cancel the request named `user_data`, submitting
    /// at once (with anything pushed before it: entries run in order, so
    /// the cancel finds its target).
    fn cancel(&mut self, user_data: u64, wakers: &mut Vec<Waker>) {
        let entry = opcode::AsyncCancel::new(user_data)
            .build()
            .user_data(INTERNAL_USER_DATA);
        // SAFETY: a cancel points at no memory.
        if unsafe { self.push(&entry, wakers) }.is_ok() {
            self.submit_queued(wakers);
        }
        self.reap(wakers);
    }

    /// Teardown: cancel every request the table calls cancellable, and
    /// reap until nothing is in flight or `deadline` passes. Nobody waits
    /// on these any more, so the wakers reaped are dropped unwoken.
    fn cancel_and_drain(&mut self, deadline: Instant) {
        let mut wakers = Vec::new();
        let pending: Vec<u64> = self.table.cancellable_user_data().collect();
        for user_data in pending {
            self.cancel(user_data, &mut wakers);
        }
        while self.table.in_flight() > 0 && Instant::now() < deadline {
            self.wait(Duration::from_millis(1), &mut wakers);
        }
    }

    /// Wait for a cancelled op's completion, asking for the cancel again
    /// every [`RECANCEL_AFTER`]; `None` if `give_up_after` passes first. The
    /// op's stored waker is left in place (its completion wakes it).
    fn wait_for_cancelled(
        &mut self,
        key: OpKey,
        give_up_after: Option<Duration>,
        wakers: &mut Vec<Waker>,
    ) -> Option<(i32, Vec<u8>)> {
        // Read once the request is found still in the kernel: the usual
        // case, a request the cancel's own enter ended (a stream dropped
        // with a receive in flight, every connection hyper closes), reads
        // no clock.
        let mut clock: Option<(Instant, Instant)> = None; // (began, cancelled_at)
        loop {
            if let Polled::Done { result, buf } = self.table.take_done(key) {
                return Some((result, buf));
            }
            let (began, cancelled_at) = clock.get_or_insert_with(|| {
                let now = Instant::now();
                (now, now)
            });
            if give_up_after.is_some_and(|limit| began.elapsed() >= limit) {
                return None;
            }
            self.wait(Duration::from_millis(1), wakers);
            // A cancel might miss: one that reaches a readiness-driven
            // request while its wake-up is re-issuing it (the poll fired,
            // the retry found nothing and armed a new poll) was suspected
            // of being forgotten behind a hang once. Linux 6.18 honours
            // it (test `a_receive_abandoned_amid_spurious_wakes_ends`);
            // asking again stays, for kernels that may not, and is
            // harmless: a request already gone is not found.
            if cancelled_at.elapsed() >= RECANCEL_AFTER {
                self.cancel(key.user_data(), wakers);
                *cancelled_at = Instant::now();
            }
        }
    }

    /// Push a no-op named `user_data` (a completion of its own, for a
    /// barrier or to end a wait in the ring); whether it was pushed.
    fn push_nop(&mut self, user_data: u64, wakers: &mut Vec<Waker>) -> bool {
        let entry = opcode::Nop::new().build().user_data(user_data);
        // SAFETY: a no-op points at no memory.
        unsafe { self.push(&entry, wakers) }.is_ok()
    }

    /// Block up to `timeout` for at least one completion, then reap.
    fn wait(&mut self, timeout: Duration, wakers: &mut Vec<Waker>) {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        let _ = self.uring.submitter().submit_with_args(1, &args);
        self.unsubmitted = 0;
        self.reap(wakers);
    }

    fn reap(&mut self, wakers: &mut Vec<Waker>) {
        let mut resent = false;
        loop {
            // SAFETY: the queues are only touched under the ring's lock,
            // which `&mut self` (a locked RingState) proves is held.
            let mut completion = unsafe { self.uring.completion_shared() };
            let mut any = false;
            let mut actions = Vec::new();
            for cqe in &mut completion {
                any = true;
                // Taking the epoll poll's completion, or the no-op posted
                // for the owner, while the owner waits in the ring owes it
                // a no-op, posted when this hold of the lock ends
                // (park_poll.rs, `Locked`).
                match cqe.user_data() {
                    EPOLL_USER_DATA => self.park_poll.completed(),
                    WAKE_USER_DATA => self.park_poll.wake_reaped(),
                    user_data => match self.table.complete(user_data, cqe.result()) {
                        Completed::Wake(waker) => wakers.extend(waker),
                        other => actions.push(other),
                    },
                }
            }
            drop(completion);
            for action in actions {
                resent |= matches!(action, Completed::Resend { .. });
                self.act(action, wakers);
            }
            if !any || !self.sq().cq_overflow() {
                break;
            }
            // The kernel kept completions that did not fit: have it move
            // them into the queue, and read again.
            let _ = self.uring.submitter().submit_and_wait(0);
        }
        if resent {
            // Whoever reaps may not be the ring's owner: send now.
            let _ = self.submit(wakers);
        }
    }

    /// Carry out what a completion asked for.
    fn act(&mut self, completed: Completed, wakers: &mut Vec<Waker>) {
        match completed {
            Completed::Wake(waker) => wakers.extend(waker),
            Completed::Resend { key, fd, ptr, len } => {
                let len = u32::try_from(len).unwrap_or(u32::MAX);
                let entry = opcode::Send::new(types::Fd(fd), ptr, len)
                    .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
                    .build()
                    .user_data(key.user_data());
                // SAFETY: `ptr` points at the rest of the buffer the slot
                // `key` still owns (ops.rs: in flight until its last
                // completion, live or orphaned). `fd` is open: an orphan's
                // is the table's own duplicate, open until `Finished`; a
                // live send's is its stream's socket, which the stream
                // closes only after abandoning the send, under this lock
                // (so after this entry is submitted, below, in `reap`).
                if unsafe { self.push(&entry, wakers) }.is_err() {
                    // Could not even queue it: give up on the rest.
                    let completed = self.table.complete(key.user_data(), -libc::ECONNABORTED);
                    self.act(completed, wakers);
                }
            }
            Completed::Finished(send) => finish_orphan(Some(send)),
            Completed::CloseFd(fd) => close_orphan_fd(fd),
        }
    }
}

/// An orphaned send is over: shut its write direction down if asked, and
/// close the duplicate descriptor the table held.
fn finish_orphan(send: Option<OrphanSend>) {
    if let Some(send) = send {
        // SAFETY: `send.fd` is a duplicate the table owns (ops.rs); it is
        // closed here exactly once, when its last send finished.
        unsafe {
            if send.shutdown {
                libc::shutdown(send.fd, libc::SHUT_WR);
            }
            libc::close(send.fd);
        }
    }
}

/// Close a descriptor an orphaned open created (ops.rs).
fn close_orphan_fd(fd: RawFd) {
    // SAFETY: the kernel made `fd` for a request whose owner is gone; the
    // table hands it out exactly once (ops.rs), and nobody else knows it.
    unsafe { libc::close(fd) };
}

/// Empty `buf` and make room for `len` bytes: where a receive or read into
/// its spare capacity starts, and how much it may take (at most the
/// capacity; a completion of `n` bytes then makes `buf[..n]` valid).
fn spare_room(buf: &mut Vec<u8>, len: usize) -> (*mut u8, u32) {
    buf.clear();
    buf.reserve(len);
    let len = u32::try_from(len.min(buf.capacity())).unwrap_or(u32::MAX);
    (buf.as_mut_ptr(), len)
}

fn wake_all(wakers: Vec<Waker>) {
    for waker in wakers {
        waker.wake();
    }
}

#[cfg(all(test, not(loom)))]
mod park_tests;
#[cfg(all(test, not(loom)))]
mod tests;
