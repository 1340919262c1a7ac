//! Loom models of the monitor's handshakes with the workers (module doc
//! of `monitor.rs`): the poll stamp's seqlock, the spawn kick, the
//! dormant kick.

mod loom_stamp {
    //! The stamp's seqlock: a monitor that sampled an odd `seq` and then
    //! asks `task_of(seq)` gets that poll's task or `None`, never the task
    //! of the poll before or after it, whatever the worker does meanwhile.
    //! Removing either fence, or the re-read of `seq`, makes loom find a
    //! reader that pairs poll 1's `seq` with poll 2's task. The reader is a
    //! spawned thread: run on the model's main thread, its first load was
    //! never scheduled after the worker's stores, and the model passed
    //! without checking anything.

    use super::super::PollStamp;
    use crate::loom::Arc;
    use std::panic::Location;
    use std::sync::atomic::Ordering;

    #[track_caller]
    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    #[test]
    fn loom_poll_stamp_reader_never_mixes_two_polls() {
        loom::model(|| {
            let first = here();
            let second = here();
            let stamp = Arc::new(PollStamp::new());
            let worker = {
                let stamp = stamp.clone();
                loom::thread::spawn(move || {
                    stamp.begin_raw(1, first);
                    stamp.end();
                    stamp.begin_raw(2, second);
                })
            };
            let reader = loom::thread::spawn({
                let stamp = stamp.clone();
                move || {
                    let seq = stamp.seq.load(Ordering::Acquire);
                    if seq & 1 == 1 {
                        let expected = if seq == 1 { (1, first) } else { (2, second) };
                        if let Some((id, at)) = stamp.task_of(seq) {
                            assert_eq!(
                                (id, at),
                                expected,
                                "seq {seq} read with another poll's task"
                            );
                        }
                    }
                }
            });
            reader.join().unwrap();
            worker.join().unwrap();
            assert_eq!(stamp.task_of(3), Some((2, second)));
        });
    }
}

mod loom_spawn_kick {
    //! The slow handshake (module doc, "Slow unless a task was spawned"):
    //! a spawn into a LIFO slot while the monitor goes slow is either seen
    //! by the monitor (which then does not sleep slow) or sees `slow` and
    //! kicks it. Both halves are the real code (`spawn_sees_slow` and
    //! `announce_slow`); under loom the light and heavy fences are both
    //! `SeqCst` fences (lifo.rs), the symmetric form of the handshake.
    //! Without the monitor's fence, loom finds the run where neither side
    //! sees the other.

    use super::super::{Monitor, MonitorConfig, PollStamp};
    use crate::loom::Arc;
    use std::time::Duration;

    #[test]
    fn loom_spawn_kick_is_never_lost() {
        loom::model(|| {
            let stamp = Arc::new(PollStamp::new());
            let monitor = Arc::new(
                Monitor::new(
                    MonitorConfig {
                        threshold: Duration::from_millis(10),
                        hook: None,
                    },
                    1,
                )
                .unwrap(),
            );
            let spawner = {
                let (stamp, monitor) = (stamp.clone(), monitor.clone());
                loom::thread::spawn(move || monitor.spawn_sees_slow(&stamp))
            };
            let stays_fast = {
                let (stamp, monitor) = (stamp.clone(), monitor.clone());
                loom::thread::spawn(move || !monitor.announce_slow(std::iter::once(&*stamp), &[0]))
            };
            let kicks = spawner.join().unwrap();
            let stays_fast = stays_fast.join().unwrap();
            assert!(
                kicks || stays_fast,
                "the spawn missed `slow` and the monitor missed the spawn"
            );
        });
    }
}

mod loom_dormant {
    //! The dormant handshake (module doc, "Sleeping"): a worker that leaves
    //! its park while the monitor falls asleep is either seen unparked by
    //! the monitor (which then stays awake) or sees `dormant` and kicks it.
    //! Both halves are the real code: `Idle::unpark_worker_by_id` counts
    //! the worker unparked and `Monitor::kick_wanted` is what
    //! `wake_if_dormant` reads; `Monitor::announce_dormant` over
    //! `Idle::any_unparked` is the monitor's side. What makes it hold is
    //! that both sides update or read the idle counts with a
    //! read-modify-write: the two RMWs are ordered, and whichever comes
    //! second sees the first (and, being `SeqCst`, what preceded it). With
    //! `any_unparked` reading the counts with a plain load, loom finds the
    //! run where neither side sees the other (a lost kick); weakening the
    //! `dormant` store or load alone does not break it, for that reason.

    use super::super::{Monitor, MonitorConfig};
    use crate::loom::Arc;
    use crate::scheduler::multi_thread::idle::Idle;
    use std::time::Duration;

    #[test]
    fn loom_monitor_kick_is_never_lost() {
        loom::model(|| {
            let idle = Arc::new(Idle::new(1));
            // The only worker parks.
            let _ = idle.transition_worker_to_parked(0, false);
            let monitor = Arc::new(
                Monitor::new(
                    MonitorConfig {
                        threshold: Duration::from_millis(10),
                        hook: None,
                    },
                    1,
                )
                .unwrap(),
            );
            let worker = {
                let (idle, monitor) = (idle.clone(), monitor.clone());
                loom::thread::spawn(move || {
                    assert!(idle.unpark_worker_by_id(0));
                    monitor.kick_wanted()
                })
            };
            let stay_awake = {
                let (idle, monitor) = (idle.clone(), monitor.clone());
                loom::thread::spawn(move || monitor.announce_dormant(|| idle.any_unparked()))
            };
            let kicked = worker.join().unwrap();
            let stay_awake = stay_awake.join().unwrap();
            assert!(
                kicked || stay_awake,
                "the worker missed `dormant` and the monitor missed the unparked worker"
            );
        });
    }
}
