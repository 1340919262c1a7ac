//! Loom models of the monitor's handshakes with the workers (module doc
//! of `monitor.rs`): the spawn kick and the dormant kick. (The poll
//! stamp's seqlock has its model in stamp.rs.)

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
