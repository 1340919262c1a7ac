//! The long-poll monitor: notices a worker stuck in one poll and keeps the
//! work queued behind it moving (the idea is Go's `sysmon`).
//!
//! Owns: the sampling state (shared by the monitor thread and workers'
//! looks), the monitor thread, and the decision to take a stuck worker's
//! work or start a rescue thread when a poll runs past the threshold
//! (rescue.rs does both). The workers' stamps it reads are stamp.rs's;
//! the period from one sample to the next is pace.rs's.
//!
//! Invariants:
//! - **The hot path only stamps.** A worker writes its [`PollStamp`] at
//!   the start and end of every poll (stamp.rs: a seqlock with one
//!   writer; `seq` is odd while a poll runs).
//! - **Stuck means the same odd `seq` twice.** The monitor samples every
//!   `period`: [`LIFO_RECHECK`] after a sample that found, since a LIFO
//!   spawn, a worker in a poll with a task in its LIFO slot (so a child
//!   stranded there is stolen a quarter of a millisecond later), unless
//!   such a re-check found nothing in the last [`LIFO_RECHECK_COOLDOWN`]
//!   samples; 500 µs (at most a quarter of the threshold) after one that
//!   found a worker in the same poll twice, or in a poll with queued work
//!   behind it; otherwise doubling each sample, as Go's `sysmon` backs
//!   off, up to [`MAX_PERIOD`] (1 ms) while spawns go on (on several
//!   workers) and up to the slow period (nine tenths of the threshold)
//!   when none do. A worker
//!   whose `seq` is odd and unchanged since the last sample has been in
//!   one poll for at least a period; the duration reported is measured
//!   from the first sample that saw it (so it is low by less than one
//!   period).
//! - **Slow unless a task was spawned.** Each wake-up of the monitor costs
//!   the workers, not only the monitor: on 2 vCPUs any thread of the
//!   process waking every 2 ms, even one that does nothing, slowed a
//!   5-producer mpsc benchmark by ~20% and a `Notify` ping-pong by 2–3%
//!   (BENCHMARKS.md, rounds 8 and 9). So the monitor samples quickly only
//!   where the 1 ms promise needs it: a task *spawned* into a LIFO slot by
//!   a parent that may now block. Message passing fills the slot with
//!   *woken* tasks during most polls; those are rescued, like any stuck
//!   poll's work, once the poll is seen twice, within two slow periods.
//!   While slow, the monitor is kicked by the next LIFO spawn: the spawner
//!   bumps its worker's spawn count (a plain store on the stamp's line),
//!   runs the light fence and reads `slow`; the monitor, turning slow,
//!   stores `slow`, runs the heavy fence (`membarrier`, lifo.rs) and reads
//!   the counts. Either it sees the spawn and stays quick, or the spawner
//!   sees `slow` and kicks it (Dekker's handshake with an asymmetric
//!   fence, as the LIFO steal; loom model `loom_spawn_kick`). A spawn
//!   costs two plain stores and a load; the monitor pays the fence only
//!   when it turns slow. Without `membarrier` it never turns slow.
//! - **Nobody to help.** The quick periods above exist to hand stranded
//!   work to an idle worker. While no worker is parked or searching (every
//!   worker runs a task) there is none, so the monitor makes no LIFO
//!   re-check, and samples only for the threshold, at the slow period,
//!   unless spawns go on: then it stays at the 1 ms ceiling, for a worker
//!   that parks soon could take a stranded child, and it does not sleep
//!   slow, where every spawn would kick it only for it to find the
//!   workers still busy and pay the heavy fence to turn slow again (a
//!   cycle every spawn or two on a busy server). A one-worker runtime has
//!   nobody to help ever (its idle worker is the one that would be stuck):
//!   it samples at the slow period and never announces `slow`, so its
//!   spawns never kick. (Round 7 cut a busy one-worker hyper server's
//!   monitor wake-ups from about 1,650 to about 400 a second this way; the
//!   slow period makes it ~130. Round 15: a tonic server spent 0.3
//!   `membarrier`, 0.34 monitor wake-ups and 0.66 `timerfd_settime` per
//!   call in that cycle on one worker, 0.03, 0.09 and 0.14 on two;
//!   BENCHMARKS.md.) A task stranded in a slot while every other worker
//!   is busy is still stolen once seen twice, a sampling period or two
//!   later.
//! - **What the monitor moves.** For a worker in the same poll across a
//!   period, it steals the task in its LIFO slot onto the inject queue
//!   (lifo.rs: the owner pays no atomic read-modify-write for this) and
//!   wakes a sleeping worker if the stuck one has work to take, or if no
//!   thread is parked in the drivers: a worker woken from the drivers by an
//!   I/O event that runs the woken task, which then blocks, leaves them
//!   unmanned while the other workers sleep on their condvars, and every
//!   timer and socket of the runtime waited for that poll to end (seen:
//!   a timer 330 ms late behind a 400 ms poll on 2 and 4 workers; tests
//!   `timer_and_socket_while_the_driver_worker_blocks_*` in
//!   `sched_long_poll.rs`). The
//!   woken worker finds nothing to run and parks in the drivers. On the
//!   io_uring driver it also submits the stuck worker's ring: entries its
//!   tasks pushed wait for their worker's next flush (runtime/io/uring),
//!   and a read started just before the worker blocked waited for the
//!   whole poll (500 ms, tests `read_started_just_before_its_worker_blocks_*`).
//!   Past the threshold it counts a long poll, calls
//!   the user's hook once per poll, and, if no other worker is free to help
//!   (a one-worker runtime, every worker stuck, or a stuck worker with
//!   work queued behind it while every other worker is busy; a busy
//!   worker steals only when its own queue runs dry, which a server's
//!   worker may never do), starts one rescue thread: the stuck worker's
//!   place is taken by a fresh thread, as `block_in_place` does, without
//!   the task's cooperation. The rescue thread runs tasks from stuck
//!   workers' queues, the inject queue and the others' queues, with no
//!   core of its own (wakes go to the inject queue), and polls the
//!   drivers, until no worker is stuck; one seen in one poll for the
//!   threshold is retired, and the next rescue is another thread's
//!   (rescue.rs). A stuck thread whose poll returns
//!   goes on with its own core, which holds whatever was not taken.
//! - **Who samples: a parking worker when it can, the monitor thread when
//!   nobody did.** The sampling state ([`Sampler`]) sits behind a mutex,
//!   and the next sample has a due time. A worker on its way to park
//!   whose clock read (the one park already makes) finds the sample due
//!   takes it ([`Monitor::look`], under `try_lock`: never waits for the
//!   monitor), and sets the monitor thread's alarm for the next one
//!   (alarm.rs: a timerfd, one `timerfd_settime`), so the monitor thread
//!   sleeps on. Only the monitor thread acts: a look moves no task,
//!   wakes nobody, calls no hook and starts no rescue; when it sees a poll
//!   for the second time it kicks the monitor thread to sample again and
//!   act. A slow sample is due for looks from half its period on and
//!   rings the alarm at the full period, so the monitor thread samples
//!   only if no worker parked in the second half; quick samples are due
//!   when the alarm rings. Two samples close together (less than
//!   `min_gap`: a spawn's kick right after a look) do not count a poll as
//!   seen twice, and the second keeps the first's plan (or plans the LIFO
//!   re-check, if it saw a spawn the first did not): it is not the
//!   re-check the first planned. Only the monitor thread consumes a
//!   spawn, so the kicked sample sees one a look saw first. Why: each wake-up of an
//!   extra thread costs the workers of an oversubscribed machine, even a
//!   thread that does nothing (rounds 8 and 11); on the 5-producer mpsc
//!   benchmark the monitor thread now wakes a few times a second instead
//!   of ~100.
//! - **Sleeping.** After ten samples in a row in which no worker polled
//!   anything, the monitor sleeps until a worker leaves its park or a
//!   searching worker finds work (`wake_if_dormant`: one load on those two
//!   paths, which every worker passes before it polls again), or 100 ms
//!   pass (so an idle runtime costs ten wake-ups a second). No kick is
//!   lost to a race with falling asleep: the monitor stores `dormant` and
//!   then reads the idle counts, a worker is counted unparked before it
//!   reads `dormant`, all `SeqCst` (Dekker's handshake), so either the
//!   monitor sees an unparked worker and stays awake, or the worker sees
//!   `dormant` and kicks it. Both sides touch the idle counts with a
//!   read-modify-write, and that is what it rests on (loom model
//!   `loom_dormant`). (Before, a lost kick left a task stranded in a LIFO
//!   slot for up to 100 ms.) A kick rings the alarm, and no setting of the
//!   alarm by a sample drops it (alarm.rs, loom model `loom_alarm`).

use super::alarm::Alarm;
use super::lifo;
use super::pace::{Pace, Sighting};
use super::rescue::{self, rescue_wanted, Rescuer};
use super::stamp::PollStamp;
use super::Handle;
use crate::loom::{AtomicBool, AtomicU64, Ordering};
use crate::runtime::{LongPollHook, LongPollInfo};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The monitor's settings (from the builder).
#[derive(Clone)]
pub(crate) struct MonitorConfig {
    pub(crate) threshold: Duration,
    pub(crate) hook: Option<LongPollHook>,
}

/// Shared between the handle, the monitor thread and the rescue thread.
pub(crate) struct Monitor {
    config: MonitorConfig,
    /// The sampling period after a stuck sighting, and its ceiling.
    pub(super) min_period: Duration,
    pub(super) max_period: Duration,
    /// The period while no spawn asks for quick looks (module doc, "Slow
    /// unless a task was spawned").
    pub(super) slow_period: Duration,
    /// A poll seen twice less than this apart is not acted on yet: with
    /// workers sampling too, two samples can fall close together.
    min_gap: Duration,
    /// The monitor thread's sleep, set by whoever samples (module doc,
    /// "Who samples").
    alarm: Alarm,
    /// When the next sample is due, in nanoseconds since `epoch`.
    due: AtomicU64,
    epoch: Instant,
    sampler: Mutex<Sampler>,
    shut_down: AtomicBool,
    dormant: AtomicBool,
    /// The monitor announced that it sleeps longer than [`MAX_PERIOD`]: a
    /// spawn into a LIFO slot kicks it. (A one-worker runtime's monitor
    /// sleeps slow without announcing it: module doc, "Nobody to help".)
    slow: AtomicBool,
    /// The workers the monitor saw past the threshold at its last sample
    /// (the rescue thread steals from these first, and stops when none is
    /// left).
    stuck: Mutex<Vec<usize>>,
    /// The current rescue thread, if one runs (rescue.rs: a retired one,
    /// still in the poll it was seen stuck in, is no longer here).
    rescuer: Mutex<Option<Arc<Rescuer>>>,
    /// Held while the rescue thread or the monitor's LIFO steal takes
    /// queue entries (not while the rescue thread runs one), taken once
    /// by the runtime's shutdown before it frees tasks (rescue.rs).
    rescue_turn: Mutex<()>,
    /// The monitor thread, joined when the runtime is dropped (it owns a
    /// clone of this, and with it the alarm's timerfd: a runtime gone
    /// must not close a descriptor later, under the program's feet).
    thread: Mutex<Option<MonitorThread>>,
}

/// What sampling remembers between samples, whoever takes them.
struct Sampler {
    seen: Vec<Option<Seen>>,
    last_seq: Vec<u64>,
    last_spawns: Vec<u64>,
    stuck_now: Vec<usize>,
    /// The current rescue thread's poll, as `seen` is a worker's.
    rescuer_seen: Option<Seen>,
    /// Samples in a row in which no worker polled anything.
    quiet: u32,
    pace: Pace,
    /// When the last sample was taken, by anyone.
    last_at: Option<Instant>,
}

/// What the monitor remembers of one worker between samples.
#[derive(Clone, Copy)]
struct Seen {
    seq: u64,
    since: Instant,
    reported: bool,
}

/// What a sample learns from one stamp ([`Seen::sight`]).
#[must_use]
enum Sighted<'a> {
    /// No poll runs.
    Idle,
    /// A poll the last sample did not see (now remembered).
    New,
    /// The poll the last sample saw, still running.
    Same(&'a mut Seen),
}

impl Seen {
    /// A sample read `seq` from a stamp whose last sighting is `seen`
    /// (module doc, "Stuck means the same odd `seq` twice"): remember a
    /// new poll, forget an ended one.
    fn sight(seen: &mut Option<Seen>, seq: u64, now: Instant) -> Sighted<'_> {
        if seq & 1 == 0 {
            *seen = None;
            return Sighted::Idle;
        }
        if seen.as_ref().is_some_and(|s| s.seq == seq) {
            return Sighted::Same(seen.as_mut().expect("checked"));
        }
        *seen = Some(Seen {
            seq,
            since: now,
            reported: false,
        });
        Sighted::New
    }
}

const QUIET_SAMPLES_BEFORE_SLEEP: u32 = 10;
/// The sampling period after a sample found a worker in a poll with a task
/// in its LIFO slot: if the same poll is still running this much later,
/// the task is stolen.
pub(super) const LIFO_RECHECK: Duration = Duration::from_micros(250);
/// The longest sampling period while any worker polls: a task left in
/// the slot of a worker that then blocks is first seen within this.
const MAX_PERIOD: Duration = Duration::from_millis(1);
/// After a LIFO re-check found nothing to steal (the poll had ended, as
/// it does in message passing), this many samples pass before the next.
pub(super) const LIFO_RECHECK_COOLDOWN: u32 = 8;
/// How long a dormant monitor sleeps between looks when nobody kicks it.
const DORMANT_SLEEP: Duration = Duration::from_millis(100);

impl Monitor {
    /// The monitor of a runtime of `workers` workers with these settings;
    /// an error if the kernel gives it no timer (the runtime then goes
    /// without).
    pub(crate) fn new(config: MonitorConfig, workers: usize) -> std::io::Result<Monitor> {
        let max_period = (config.threshold / 4).clamp(Duration::from_micros(50), MAX_PERIOD);
        let min_period = max_period.min(Duration::from_micros(500));
        // Nine tenths of the threshold: a poll is seen twice, and acted on,
        // within 1.8 thresholds of its start.
        let slow_period = (config.threshold * 9 / 10).max(max_period);
        let monitor = Monitor {
            min_gap: LIFO_RECHECK.min(min_period) / 2,
            config,
            min_period,
            max_period,
            slow_period,
            alarm: Alarm::new()?,
            due: AtomicU64::new(0),
            epoch: Instant::now(),
            sampler: Mutex::new(Sampler {
                seen: vec![None; workers],
                last_seq: vec![0; workers],
                last_spawns: vec![0; workers],
                stuck_now: Vec::new(),
                rescuer_seen: None,
                quiet: 0,
                pace: Pace::new(min_period),
                last_at: None,
            }),
            shut_down: AtomicBool::new(false),
            dormant: AtomicBool::new(false),
            slow: AtomicBool::new(false),
            stuck: Mutex::new(Vec::new()),
            rescuer: Mutex::new(None),
            rescue_turn: Mutex::new(()),
            thread: Mutex::new(None),
        };
        monitor.alarm.set(min_period);
        Ok(monitor)
    }

    /// Start the monitor thread for `handle`'s workers.
    pub(crate) fn start(handle: &Arc<Handle>) {
        let weak = Arc::downgrade(handle);
        let (done, ended) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("weft-monitor".into())
            .spawn(move || {
                run(weak);
                drop(done);
            });
        // No monitor is a lost feature, not a broken runtime.
        if let (Ok(join), Some(monitor)) = (spawned, &handle.monitor) {
            *monitor.thread.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(MonitorThread { join, ended });
        }
    }

    /// The monitor thread, for the runtime's drop to join (after
    /// [`shutdown`](Self::shutdown), which ends its loop) or to detach.
    pub(crate) fn take_thread(&self) -> Option<MonitorThread> {
        self.thread.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// A worker left its park: resume sampling if the monitor sleeps.
    #[inline]
    pub(crate) fn wake_if_dormant(&self) {
        if self.kick_wanted() {
            self.kick();
        }
    }

    /// End the monitor thread's current sleep (or the next one, if it is
    /// not asleep yet), for a sample now.
    fn kick(&self) {
        self.alarm.kick();
    }

    pub(crate) fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        self.alarm.kick();
    }

    /// Whether the next sample is due at `now`: a worker about to park
    /// then takes it ([`Monitor::look`]).
    #[inline]
    pub(crate) fn is_due(&self, now: Instant) -> bool {
        let now = now.saturating_duration_since(self.epoch).as_nanos() as u64;
        now >= self.due.load(Ordering::Relaxed)
    }

    /// A worker's look on its way to park (module doc, "Who samples"):
    /// the sample, unless another thread is taking it; the monitor thread
    /// is kicked if something needs acting on.
    #[cold]
    pub(crate) fn look(&self, handle: &Arc<Handle>, now: Instant) {
        let Ok(mut sampler) = self.sampler.try_lock() else {
            return;
        };
        if self.is_due(now) && self.sample(handle, &mut sampler, now, false) == Sampled::Act {
            drop(sampler);
            self.kick();
        }
    }

    /// The next sample is `period` after `now`: set the alarm for it. A
    /// slow one is due for workers' looks from half the period on, so that
    /// a worker parking in the second half takes it before the alarm
    /// rings (module doc, "Who samples").
    fn schedule(&self, now: Instant, period: Duration) {
        let early = if period > self.max_period {
            period / 2
        } else {
            period
        };
        let due = (now + early).saturating_duration_since(self.epoch);
        self.due.store(due.as_nanos() as u64, Ordering::Relaxed);
        self.alarm.set(period);
    }

    fn sampler(&self) -> std::sync::MutexGuard<'_, Sampler> {
        self.sampler.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker put a task it spawned into its LIFO slot (`stamp` is its
    /// stamp): if the monitor sleeps slow, kick it, so that a parent that
    /// now blocks does not strand the child for a slow period.
    #[inline]
    pub(crate) fn note_lifo_spawn(&self, stamp: &PollStamp) {
        if self.spawn_sees_slow(stamp) {
            self.kick_fast();
        }
    }

    /// The spawner's half of the handshake in the module doc: count the
    /// spawn (a plain store: only this worker writes its count), then,
    /// after the light fence, read `slow`.
    #[inline]
    fn spawn_sees_slow(&self, stamp: &PollStamp) -> bool {
        stamp.count_lifo_spawn();
        lifo::light_fence();
        self.slow.load(Ordering::Relaxed)
    }

    #[cold]
    fn kick_fast(&self) {
        if self.slow.swap(false, Ordering::AcqRel) {
            self.kick();
        }
    }

    /// The monitor's half: announce `slow`, run the heavy fence, then read
    /// every worker's spawn count; `false` if one moved past `seen`, or if
    /// the heavy fence is unavailable (then the monitor must not sleep
    /// slow, and `slow` is cleared again).
    fn announce_slow<'a>(&self, stamps: impl Iterator<Item = &'a PollStamp>, seen: &[u64]) -> bool {
        if !lifo::heavy_fence_available() {
            return false;
        }
        self.slow.store(true, Ordering::Relaxed);
        lifo::heavy_fence();
        let spawned = stamps
            .zip(seen)
            .any(|(stamp, &seen)| stamp.lifo_spawns() != seen);
        if spawned {
            self.slow.store(false, Ordering::Relaxed);
        }
        !spawned
    }

    /// Whether the monitor has announced `slow` (and no spawn kicked it
    /// since).
    fn is_slow(&self) -> bool {
        self.slow.load(Ordering::Relaxed)
    }

    /// Sampling fast again: spawns need not kick.
    fn leave_slow(&self) {
        if self.is_slow() {
            self.slow.store(false, Ordering::Relaxed);
        }
    }

    /// The worker's half of the handshake in the module doc (the worker was
    /// counted unparked before): is the monitor dormant, so it must be
    /// kicked?
    #[inline]
    fn kick_wanted(&self) -> bool {
        self.dormant.load(Ordering::SeqCst)
    }

    /// The monitor's half: announce `dormant`, then read whether any worker
    /// is unparked (true: stay awake).
    fn announce_dormant(&self, any_unparked: impl Fn() -> bool) -> bool {
        self.dormant.store(true, Ordering::SeqCst);
        any_unparked()
    }

    /// The workers past the threshold at the monitor thread's last sample.
    pub(super) fn stuck_workers(&self) -> std::sync::MutexGuard<'_, Vec<usize>> {
        self.stuck.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The rescue thread's turn for one step; the shutdown's wait for the
    /// step under way (rescue.rs).
    pub(super) fn rescue_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.rescue_turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn rescuer(&self) -> std::sync::MutexGuard<'_, Option<Arc<Rescuer>>> {
        self.rescuer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `rescuer` is leaving: if it is still the current one, the next
    /// sample that wants a rescue starts another.
    pub(super) fn rescue_ended(&self, rescuer: &Arc<Rescuer>) {
        let mut current = self.rescuer();
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, rescuer)) {
            *current = None;
        }
    }

    /// Start a rescue thread unless one is current (in the place of the
    /// first stuck worker, for reports).
    fn start_rescue(&self, handle: &Arc<Handle>, s: &mut Sampler) {
        let rescuer = {
            let mut current = self.rescuer();
            if current.is_some() {
                return;
            }
            let rescuer = Arc::new(Rescuer::new(s.stuck_now.first().copied().unwrap_or(0)));
            *current = Some(rescuer.clone());
            rescuer
        };
        s.rescuer_seen = None;
        if !rescue::start(handle, rescuer.clone()) {
            // The next sample that wants a rescue tries again.
            self.rescue_ended(&rescuer);
        }
    }

    /// Retire the current rescue thread if it has been in one poll for
    /// the threshold (rescue.rs, "A rescued task may block too"), and
    /// report that poll: the thread leaves once the poll returns, and a
    /// rescue wanted now starts another.
    fn watch_rescuer(&self, handle: &Handle, s: &mut Sampler, now: Instant) {
        let mut current = self.rescuer();
        let Some(rescuer) = current.as_ref() else {
            s.rescuer_seen = None;
            return;
        };
        let seq = rescuer.stamp().seq();
        let Sighted::Same(seen) = Seen::sight(&mut s.rescuer_seen, seq, now) else {
            return;
        };
        let stuck_for = now - seen.since;
        if stuck_for >= self.config.threshold {
            rescuer.retire();
            let stamp = (rescuer.stamp(), seq);
            report(
                handle,
                self,
                rescuer.stands_in_for(),
                stamp,
                stuck_for,
                true,
            );
            *current = None;
            s.rescuer_seen = None;
        }
    }

    /// Sleep until the alarm rings: at the time the last sample set, or,
    /// `dormant`, after `period` if a worker is still unparked
    /// (`any_unparked`) and else [`DORMANT_SLEEP`] or until a worker
    /// kicks it. Returns whether a kick rang it, `None` on shutdown.
    fn wait(
        &self,
        dormant: bool,
        period: Duration,
        any_unparked: impl Fn() -> bool,
    ) -> Option<bool> {
        let kicked = if dormant {
            // Outside the sampler's lock: the check may drop the last
            // handle to the runtime.
            let stay_awake = self.announce_dormant(any_unparked);
            // A worker still unparked is about to poll or to park: sample
            // again after the usual period rather than sleep until kicked.
            self.alarm
                .set(if stay_awake { period } else { DORMANT_SLEEP });
            let kicked = self.alarm.wait();
            self.dormant.store(false, Ordering::SeqCst);
            kicked
        } else {
            self.alarm.wait()
        };
        (!self.shut_down.load(Ordering::SeqCst)).then_some(kicked)
    }
}

/// The monitor thread, and word of the end of its loop.
pub(crate) struct MonitorThread {
    join: std::thread::JoinHandle<()>,
    ended: std::sync::mpsc::Receiver<()>,
}

impl MonitorThread {
    /// Join the thread if its loop ends within `limit` (it ends at once
    /// after a shutdown kicked it), else leave it to end on its own: a
    /// runtime's drop waits for it, but never for ever. Not from the
    /// monitor thread itself (a long-poll hook that dropped a runtime).
    pub(crate) fn join_within(self, limit: Duration) {
        if self.join.thread().id() == std::thread::current().id() {
            return;
        }
        if let Err(std::sync::mpsc::RecvTimeoutError::Disconnected) = self.ended.recv_timeout(limit)
        {
            let _ = self.join.join();
        }
    }
}

/// Whether a sample found something only the monitor thread acts on.
#[derive(Clone, Copy, PartialEq, Eq)]
#[must_use]
enum Sampled {
    Routine,
    /// A worker's look saw a poll for the second time: the monitor thread
    /// must take the next sample, and act.
    Act,
}

impl Monitor {
    /// One sample of every worker's stamp (module doc), by the monitor
    /// thread (`acts`) or by a worker on its way to park (`!acts`: it moves
    /// nothing, starts nothing and calls no hook; it returns
    /// [`Sampled::Act`] instead when something needs it, for the monitor
    /// thread to sample again and act). Sets the alarm for the next one.
    fn sample(&self, handle: &Arc<Handle>, s: &mut Sampler, now: Instant, acts: bool) -> Sampled {
        let mut outcome = Sampled::Routine;
        let mut busy = false;
        let mut stuck_with_queue = false;
        s.stuck_now.clear();
        let mut same_poll = false;
        let mut lifo_waiting = false;
        let mut stole = false;
        let mut spawned = false;
        for (index, remote) in handle.remotes.iter().enumerate() {
            let spawns = remote.stamp.lifo_spawns();
            spawned |= spawns != s.last_spawns[index];
            // Only the monitor thread consumes a spawn: a look that saw it
            // first leaves it for the sample the spawn's kick asks for.
            if acts {
                s.last_spawns[index] = spawns;
            }
            let seq = remote.stamp.seq();
            // Any poll since the last sample, or one running now: busy.
            busy |= seq != s.last_seq[index] || seq & 1 == 1;
            s.last_seq[index] = seq;
            match Seen::sight(&mut s.seen[index], seq, now) {
                Sighted::Idle => {}
                Sighted::Same(seen) => {
                    if now - seen.since < self.min_gap {
                        // Two samples close together (a kick right after
                        // a look): as a new sighting, acted on later.
                        same_poll |= !remote.steal.is_empty();
                        lifo_waiting |= remote.lifo.looks_occupied();
                        continue;
                    }
                    same_poll = true;
                    if !acts {
                        outcome = Sampled::Act;
                        continue;
                    }
                    stole |= rescue::rescue_queued(handle, self, index);
                    let stuck_for = now - seen.since;
                    if stuck_for >= self.config.threshold {
                        s.stuck_now.push(index);
                        stuck_with_queue |= !remote.steal.is_empty();
                        if !seen.reported {
                            seen.reported = true;
                            let stamp = (&remote.stamp, seq);
                            report(handle, self, index, stamp, stuck_for, false);
                        }
                    }
                }
                Sighted::New => {
                    // A new poll with work waiting behind it: look again
                    // soon, in case that work is stranded.
                    same_poll |= !remote.steal.is_empty();
                    lifo_waiting |= remote.lifo.looks_occupied();
                }
            }
        }
        s.quiet = if busy { 0 } else { s.quiet + 1 };
        // A one-worker runtime's idle worker is the one that would be
        // stuck: it can help nobody.
        let several_workers = handle.remotes.len() > 1;
        let can_help = several_workers && handle.idle.any_idle();
        let seen = Sighting {
            can_help,
            lifo_waiting,
            same_poll,
            stole,
            spawned,
            several_workers,
        };
        if s.last_at.is_some_and(|at| now - at < self.min_gap) {
            // Right after another sample (a spawn's kick just after a
            // look): it brings news only of a spawn, and must not count
            // as the LIFO re-check the other one planned.
            s.pace.after_close_sample(self, seen);
        } else {
            s.pace.after_sample(self, seen);
        }
        // Sleeping longer than a stranded child may wait: let spawns kick
        // (module doc, "Slow unless a task was spawned"). The heavy fence
        // is paid when the monitor turns slow, not at every slow sample.
        // A one-worker runtime has nobody to hand a child to, so a kick
        // would buy nothing (module doc, "Nobody to help").
        if s.pace.period <= self.max_period {
            self.leave_slow();
        } else if several_workers
            && !self.is_slow()
            && !self.announce_slow(handle.remotes.iter().map(|r| &r.stamp), &s.last_spawns)
        {
            s.pace.period = self.max_period;
        }
        self.schedule(now, s.pace.period);
        s.last_at = Some(now);
        if !acts {
            // The stuck list and the rescue thread are the monitor
            // thread's (a look never sees a worker stuck).
            return outcome;
        }
        {
            let mut stuck = self.stuck_workers();
            if *stuck != s.stuck_now {
                stuck.clone_from(&s.stuck_now);
            }
        }
        self.watch_rescuer(handle, s, now);
        if rescue_wanted(
            s.stuck_now.len(),
            handle.remotes.len(),
            stuck_with_queue,
            can_help,
        ) {
            self.start_rescue(handle, s);
        }
        Sampled::Routine
    }
}

/// The monitor thread.
fn run(handle: Weak<Handle>) {
    let Some(monitor) = handle.upgrade().and_then(|h| h.monitor.clone()) else {
        return;
    };
    let any_unparked = || handle.upgrade().is_some_and(|h| h.idle.any_unparked());
    loop {
        let (dormant, period) = {
            let sampler = monitor.sampler();
            (
                sampler.quiet >= QUIET_SAMPLES_BEFORE_SLEEP,
                sampler.pace.period,
            )
        };
        let Some(kicked) = monitor.wait(dormant, period, any_unparked) else {
            return;
        };
        let Some(handle) = handle.upgrade() else {
            return;
        };
        if handle.inject.is_closed() {
            return;
        }
        let mut sampler = monitor.sampler();
        let now = Instant::now();
        // A worker took the sample since the alarm was set, and set it
        // again: sleep on, unless kicked.
        if !kicked && !dormant && !monitor.is_due(now) {
            continue;
        }
        let _ = monitor.sample(&handle, &mut sampler, now, true);
    }
}

/// Count the long poll numbered `seq` on `stamp` for worker `index`, and
/// tell the hook (a poll on a rescue thread is counted for the worker
/// whose place it took).
fn report(
    handle: &Handle,
    monitor: &Monitor,
    index: usize,
    (stamp, seq): (&PollStamp, u64),
    stuck_for: Duration,
    on_rescue_thread: bool,
) {
    handle.worker_metrics[index]
        .long_poll_count
        .fetch_add(1, Ordering::Relaxed);
    let Some(hook) = &monitor.config.hook else {
        return;
    };
    if let Some((id, spawned_at)) = stamp.task_of(seq) {
        let info = LongPollInfo::new(index, id, stuck_for, spawned_at, on_rescue_thread);
        // A panicking hook must not stop the monitor.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&info)));
    }
}

#[cfg(all(test, not(loom)))]
#[path = "monitor_tests.rs"]
mod pace_tests;

#[cfg(all(test, loom))]
#[path = "loom_monitor.rs"]
mod loom_models;
