//! Loom model of a worker ring's one-shot watch (watch.rs): while the
//! ring's owner is away, every completion is reaped by the thread parked
//! in epoll, with the registration armed only by a departure and by the
//! reaps that follow its events.
//!
//! What is modelled: the real [`RingWatch`] flag, and the rules of
//! `Rings::owner_leaves`, `Rings::owner_back` and `Rings::reap_fired`. The
//! kernel side is a model of what they rely on: the ring's completion
//! queue (a count of posted, unreaped completions, and of requests still
//! in flight, under the ring's lock) and epoll's one-shot registration
//! (under epoll's own lock: a posted completion delivers an event only
//! while armed, and disarms; arming sets the mask first and then polls the
//! descriptor, delivering an event at once if a completion is posted and
//! unreaped). Epoll disarms a one-shot registration when it hands the
//! event to `epoll_wait`, and hands it only if the descriptor is still
//! readable then; disarming at the callback, as here, is the harsher
//! case.
//!
//! The check: the owner leaves with requests in flight and sleeps; a
//! kernel thread completes them one by one; the epoll holder reaps on each
//! event. If a completion were left with the registration disarmed, the
//! holder would wait forever and loom would report the deadlock.
//! Removing the re-arm after a reap, or the arm at departure, makes loom
//! find it (the mutations were tried).

use super::watch::RingWatch;
use crate::loom::{lock, thread, Arc, Mutex};
use loom::sync::Notify;

/// The ring as the protocol sees it.
#[derive(Default)]
struct Cq {
    /// Requests the kernel has not completed yet.
    in_flight: usize,
    /// Completions posted and not reaped.
    posted: usize,
    /// Completions reaped so far.
    reaped: usize,
}

/// epoll's view of the ring's descriptor.
#[derive(Default)]
struct Epoll {
    armed: bool,
    /// Events delivered and not yet taken by `epoll_wait`.
    events: usize,
}

struct Model {
    cq: Mutex<Cq>,
    epoll: Mutex<Epoll>,
    /// Wakes the thread in `epoll_wait`.
    epoll_wake: Notify,
    watch: RingWatch,
    /// The owner's departure may arm (`owner_leaves`); a mutation switch.
    arm_on_leave: bool,
    /// The reap after an event may re-arm (`reap_fired`); a mutation switch.
    rearm_after_reap: bool,
}

impl Model {
    /// A ring with `in_flight` requests, its owner not yet away; the
    /// mutation switches as given.
    fn new(in_flight: usize, arm_on_leave: bool, rearm_after_reap: bool) -> Arc<Model> {
        Arc::new(Model {
            cq: Mutex::new(Cq {
                in_flight,
                ..Cq::default()
            }),
            // Registered armed (watch::register), and possibly fired
            // already: start disarmed, the harder case.
            epoll: Mutex::new(Epoll::default()),
            epoll_wake: Notify::new(),
            watch: RingWatch::default(),
            arm_on_leave,
            rearm_after_reap,
        })
    }

    /// The kernel completes one request: the completion is posted, then
    /// the descriptor's wait queue is woken (epoll's callback).
    fn complete_one(&self) {
        {
            let mut cq = lock(&self.cq);
            cq.in_flight -= 1;
            cq.posted += 1;
        }
        self.fire_if_armed();
    }

    /// Deliver one event if the registration is armed, disarming it.
    fn fire_if_armed(&self) {
        let mut ep = lock(&self.epoll);
        if ep.armed {
            ep.armed = false;
            ep.events += 1;
            drop(ep);
            self.epoll_wake.notify();
        }
    }

    /// `EPOLL_CTL_MOD` with `EPOLLONESHOT`: armed, then (the kernel's
    /// `ep_modify`: a full barrier, then a poll of the descriptor) an event
    /// at once if it is readable (a completion posted, not reaped), unless
    /// a completion's callback already delivered one.
    fn arm(&self) {
        lock(&self.epoll).armed = true;
        if lock(&self.cq).posted > 0 {
            self.fire_if_armed();
        }
    }

    /// `Rings::owner_leaves`: the owner's ring holds requests (it left
    /// some in flight), so it arms.
    fn owner_leaves(&self) {
        self.watch.leave();
        if self.arm_on_leave {
            self.arm();
        }
    }

    /// `Ring::reap_and_holds`: take the posted completions; whether the
    /// ring still holds a request.
    fn reap_and_holds(&self) -> bool {
        let mut cq = lock(&self.cq);
        cq.reaped += cq.posted;
        cq.posted = 0;
        cq.in_flight > 0
    }

    /// `Rings::reap_fired`.
    fn reap_fired(&self) {
        if self.reap_and_holds() && self.watch.is_away() && self.rearm_after_reap {
            self.arm();
        }
    }

    /// `epoll_wait` until an event, then take it.
    fn wait_event(&self) {
        loop {
            {
                let mut ep = lock(&self.epoll);
                if ep.events > 0 {
                    ep.events -= 1;
                    return;
                }
            }
            self.epoll_wake.wait();
        }
    }

    fn reaped(&self) -> usize {
        lock(&self.cq).reaped
    }
}

/// The owner leaves with `requests` in flight; a kernel thread completes
/// them; the epoll holder must reap every one.
fn run(requests: usize, arm_on_leave: bool, rearm_after_reap: bool) {
    loom::model(move || {
        let model = Model::new(requests, arm_on_leave, rearm_after_reap);
        let kernel = {
            let model = model.clone();
            thread::spawn(move || {
                for _ in 0..requests {
                    model.complete_one();
                }
            })
        };
        let owner = {
            let model = model.clone();
            thread::spawn(move || model.owner_leaves())
        };
        // The holder: one event at least per reap that found something,
        // until every completion is reaped.
        while model.reaped() < requests {
            model.wait_event();
            model.reap_fired();
        }
        kernel.join().unwrap();
        owner.join().unwrap();
        assert_eq!(model.reaped(), requests);
    });
}

/// One completion, posted before, during or after the owner's departure.
#[test]
fn a_completion_while_the_owner_is_away_is_reaped() {
    run(1, true, true);
}

/// Two completions: the second comes after the reap of the first, which
/// must have armed the registration again.
#[test]
fn every_completion_while_the_owner_is_away_is_reaped() {
    run(2, true, true);
}

/// The owner comes back while the holder reaps: a stale arm costs at most
/// a spurious event, and a completion after the owner is back is the
/// owner's to reap (here, after its return, it reaps what is left).
#[test]
fn an_owner_coming_back_takes_over_its_ring() {
    loom::model(|| {
        let model = Model::new(2, true, true);
        model.owner_leaves();
        let holder = {
            let model = model.clone();
            thread::spawn(move || {
                // One event, then the holder goes on to other work.
                model.wait_event();
                model.reap_fired();
            })
        };
        model.complete_one();
        // The owner is back (its batch point) and will reap itself.
        model.watch.back();
        model.complete_one();
        holder.join().unwrap();
        // The owner's batch point.
        let _ = model.reap_and_holds();
        assert_eq!(model.reaped(), 2);
        // At most one event is left over for the holder's next wait: the
        // registration never fires for a ring its owner reaps.
        assert!(lock(&model.epoll).events <= 1);
    });
}

/// The mutations the module doc names: each must leave a completion
/// unreaped, which loom reports as a deadlock (a panic out of the model).
#[test]
fn the_model_catches_a_missing_arm() {
    for (arm_on_leave, rearm_after_reap) in [(false, true), (true, false)] {
        let caught = std::panic::catch_unwind(|| run(2, arm_on_leave, rearm_after_reap));
        assert!(
            caught.is_err(),
            "arm on leave {arm_on_leave}, re-arm after reap {rearm_after_reap}: no lost completion found"
        );
    }
}
