//! The monitor's decisions: its sampling pace (`Pace`: which period
//! follows which sighting) and when it starts a rescue thread.

use super::*;

fn monitor() -> Monitor {
    Monitor::new(
        MonitorConfig {
            threshold: Duration::from_millis(10),
            hook: None,
        },
        1,
    )
    .unwrap()
}

fn sighting(can_help: bool, lifo_waiting: bool, same_poll: bool) -> Sighting {
    Sighting {
        can_help,
        lifo_waiting,
        same_poll,
        stole: false,
        spawned: true,
        several_workers: true,
    }
}

fn without_spawns(seen: Sighting) -> Sighting {
    Sighting {
        spawned: false,
        ..seen
    }
}

/// Runs `samples` samples that all see `seen`; returns the periods.
fn periods(monitor: &Monitor, seen: Sighting, samples: usize) -> Vec<Duration> {
    let mut pace = Pace::new(monitor.min_period);
    (0..samples)
        .map(|_| {
            pace.after_sample(monitor, seen);
            pace.period
        })
        .collect()
}

#[test]
fn with_nobody_parked_the_period_backs_off_to_the_slow_period() {
    let monitor = monitor();
    // Every worker busy, queued work and a filled slot at every sample:
    // nothing can be handed to anyone, so no quick re-checks.
    let got = periods(&monitor, without_spawns(sighting(false, true, true)), 6);
    let ms = |n| Duration::from_micros(n);
    assert_eq!(
        got,
        [ms(1000), ms(2000), ms(4000), ms(8000), ms(9000), ms(9000)]
    );
    // So does a one-worker runtime's, spawns or not: nobody will ever be
    // free to take a child.
    let alone = Sighting {
        several_workers: false,
        ..sighting(false, true, true)
    };
    assert_eq!(*periods(&monitor, alone, 6).last().unwrap(), ms(9000));
}

/// Spawns going on while every worker is busy: the monitor stays at the
/// 1 ms ceiling (a worker that parks soon can take a stranded child), and
/// never sleeps slow, where each spawn would kick it.
#[test]
fn with_nobody_parked_but_spawns_going_on_the_period_stops_at_the_ceiling() {
    let monitor = monitor();
    let got = periods(&monitor, sighting(false, true, false), 6);
    assert!(got.iter().all(|p| *p <= monitor.max_period), "{got:?}");
    assert_eq!(*got.last().unwrap(), monitor.max_period);
}

#[test]
fn without_spawns_a_filled_slot_is_not_rechecked_and_the_period_backs_off() {
    let monitor = monitor();
    // Message passing: woken tasks fill the slot at most samples.
    let got = periods(&monitor, without_spawns(sighting(true, true, false)), 6);
    assert!(got.iter().all(|p| *p > LIFO_RECHECK));
    assert_eq!(*got.last().unwrap(), monitor.slow_period);
    assert_eq!(monitor.slow_period, Duration::from_micros(9000));
}

#[test]
fn with_a_parked_worker_a_filled_slot_is_rechecked_quickly_then_cools_down() {
    let monitor = monitor();
    let got = periods(&monitor, sighting(true, true, false), 12);
    let recheck = LIFO_RECHECK;
    // Re-check, find nothing stolen, then wait out the cool-down at the
    // ordinary (doubling) periods before the next re-check.
    assert_eq!(got[0], recheck);
    assert!(got[1..=LIFO_RECHECK_COOLDOWN as usize]
        .iter()
        .all(|p| *p > recheck && *p <= MAX_PERIOD));
    assert_eq!(got[LIFO_RECHECK_COOLDOWN as usize + 1], recheck);
}

#[test]
fn with_a_parked_worker_queued_work_keeps_the_short_period() {
    let monitor = monitor();
    let got = periods(&monitor, sighting(true, false, true), 4);
    assert!(got.iter().all(|p| *p == Duration::from_micros(500)));
    // While spawns go on, with nothing else suspicious it backs off
    // only to 1 ms.
    let got = periods(&monitor, sighting(true, false, false), 6);
    assert_eq!(*got.last().unwrap(), MAX_PERIOD);
}

#[test]
fn a_rescue_thread_replaces_a_stuck_worker_only_when_nobody_can_take_its_work() {
    let (idle, busy) = (true, false);
    // Nobody stuck: never.
    assert!(!rescue_wanted(0, 4, false, busy));
    // Every worker stuck: always, queued work or not.
    assert!(rescue_wanted(1, 1, false, idle));
    assert!(rescue_wanted(4, 4, false, busy));
    // One of four stuck with work queued behind it: only if no other
    // worker is parked or searching to steal it.
    assert!(rescue_wanted(1, 4, true, busy));
    assert!(!rescue_wanted(1, 4, true, idle));
    // ... and only if there is work to take.
    assert!(!rescue_wanted(1, 4, false, busy));
}

/// A spawn's kick right after a worker's look: the close sample is not the
/// LIFO re-check the look planned (which would then count as one that
/// found nothing, and wait for the 500 µs pace instead: round 11), and it
/// plans the re-check itself when the look came before the spawn.
#[test]
fn a_sample_right_after_another_keeps_or_plans_the_lifo_recheck() {
    let m = monitor();
    let mut pace = Pace::new(m.min_period);
    pace.after_sample(&m, sighting(true, true, false));
    assert!(pace.lifo_recheck, "the look saw the spawn");
    let planned = pace.period;
    pace.after_close_sample(&m, without_spawns(sighting(true, false, true)));
    assert!(pace.lifo_recheck);
    assert_eq!(pace.period, planned);

    let mut pace = Pace::new(m.min_period);
    for _ in 0..10 {
        pace.after_sample(&m, without_spawns(sighting(true, false, false)));
    }
    assert!(!pace.lifo_recheck);
    assert!(pace.period > m.max_period, "slow before the spawn");
    pace.after_close_sample(&m, sighting(true, true, false));
    assert!(pace.lifo_recheck);
    assert_eq!(pace.period, LIFO_RECHECK.min(m.min_period));
}

/// A spawn's kick that lands right after a worker's look (a close sample)
/// does not leave the monitor sleeping slow: with every worker busy it
/// stays at the ceiling (no kick cycle), and with a worker idle but the
/// LIFO re-check cooling down it samples within the ceiling too; a
/// one-worker runtime's stays slow.
#[test]
fn a_close_sample_that_saw_a_spawn_does_not_sleep_slow() {
    let m = monitor();
    let slow = || {
        let mut pace = Pace::new(m.min_period);
        for _ in 0..10 {
            pace.after_sample(&m, without_spawns(sighting(false, false, false)));
        }
        assert_eq!(pace.period, m.slow_period);
        pace
    };
    let mut busy = slow();
    busy.after_close_sample(&m, sighting(false, true, false));
    assert_eq!(busy.period, m.max_period);

    let mut cooling = slow();
    cooling.lifo_recheck = true;
    cooling.after_sample(&m, sighting(true, true, false));
    assert!(
        !cooling.lifo_recheck,
        "the re-check found nothing: cooldown"
    );
    cooling.period = m.slow_period;
    cooling.after_close_sample(&m, sighting(true, true, false));
    assert!(cooling.period <= m.max_period, "{:?}", cooling.period);

    let mut alone = slow();
    alone.after_close_sample(
        &m,
        Sighting {
            several_workers: false,
            ..sighting(false, true, false)
        },
    );
    assert_eq!(alone.period, m.slow_period);
}

/// A one-worker runtime never announces `slow` (module doc, "Nobody to
/// help"): its spawns would kick the monitor only for it to find nobody to
/// hand a child to and pay the heavy fence to turn slow again. The task
/// below blocks its worker between batches of LIFO spawns, long enough for
/// the monitor to back off to the slow period each time.
#[test]
fn a_one_worker_runtime_never_lets_its_spawns_kick_the_monitor() {
    let rt = crate::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let crate::scheduler::Handle::MultiThread(handle) = &rt.handle().inner else {
        unreachable!("a multi-thread runtime");
    };
    let monitor = handle
        .monitor
        .clone()
        .expect("the monitor is on by default");
    // Spawned, so that it runs on the worker (whose spawns go to its LIFO
    // slot), not in `block_on`.
    let on_worker = async move {
        let mut slow_seen = 0;
        for _ in 0..40 {
            for _ in 0..20 {
                drop(crate::spawn(async {}));
            }
            crate::task::yield_now().await;
            std::thread::sleep(monitor.slow_period);
            slow_seen += usize::from(monitor.is_slow());
        }
        slow_seen
    };
    let slow_seen = rt.block_on(async { crate::spawn(on_worker).await });
    assert_eq!(
        slow_seen.unwrap(),
        0,
        "the monitor announced slow on a one-worker runtime"
    );
}
