//! Tests of the timer wheel: exact firing ticks per level, ordering, keys,
//! reset and cancel, `next_deadline`, long jumps, and a randomized
//! comparison against a `BTreeSet` model.

use super::*;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Wake;

/// A waker that counts its wakes and logs its id, so a test can see who
/// fired, how often, and in which order.
struct Counter {
    id: u64,
    hits: AtomicUsize,
    log: Arc<Mutex<Vec<u64>>>,
}

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.hits.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().push(self.id);
    }
}

/// A wheel plus the wakers given to it, by id.
struct Harness {
    wheel: Wheel,
    log: Arc<Mutex<Vec<u64>>>,
    counters: HashMap<u64, Arc<Counter>>,
}

impl Harness {
    fn new() -> Harness {
        Harness {
            wheel: Wheel::new(),
            log: Arc::default(),
            counters: HashMap::new(),
        }
    }

    /// The waker for `id` (created on first use).
    fn waker(&mut self, id: u64) -> Waker {
        let log = &self.log;
        let counter = self.counters.entry(id).or_insert_with(|| {
            Arc::new(Counter {
                id,
                hits: AtomicUsize::new(0),
                log: log.clone(),
            })
        });
        Waker::from(counter.clone())
    }

    fn hits(&self, id: u64) -> usize {
        self.counters[&id].hits.load(Ordering::SeqCst)
    }

    fn insert(&mut self, id: u64, deadline: u64) -> TimerKey {
        let waker = self.waker(id);
        self.wheel.insert(deadline, waker)
    }

    /// Advances, wakes what fired (outside the wheel, as the driver will),
    /// and returns the ids in firing order.
    fn advance(&mut self, now: u64) -> Vec<u64> {
        let mut wakers = Vec::new();
        let fired = self.wheel.advance(now, |w| wakers.push(w));
        assert_eq!(fired, wakers.len());
        wakers.into_iter().for_each(Waker::wake);
        check_invariants(&self.wheel);
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// Walks every list and checks the module doc's invariants; returns the
/// pending deadlines found.
fn check_invariants(wheel: &Wheel) -> Vec<u64> {
    let mut deadlines = Vec::new();
    let mut cursor = wheel.due.head();
    while let Some(index) = cursor {
        let entry = wheel.slab.entry(index);
        assert_eq!(entry.state, State::Due);
        assert!(entry.deadline <= wheel.elapsed);
        assert!(entry.waker.is_some());
        deadlines.push(entry.deadline);
        cursor = wheel.slab.next_in_list(index);
    }
    for (level, lvl) in wheel.levels.iter().enumerate() {
        for (slot, list) in lvl.slots.iter().enumerate() {
            assert_eq!(lvl.occupied & (1 << slot) != 0, !list.is_empty());
            let start = wheel.slot_start(level, slot);
            assert!(start > wheel.elapsed);
            let mut cursor = list.head();
            while let Some(index) = cursor {
                let entry = wheel.slab.entry(index);
                let expected = State::Slotted {
                    level: level as u8,
                    slot: slot as u8,
                };
                assert_eq!(entry.state, expected);
                assert!(entry.deadline >= start, "deadline before its slot");
                if level < TOP {
                    assert!(entry.deadline < start + slot_span(level));
                    assert_eq!(level_for(wheel.elapsed, entry.deadline), level);
                } else {
                    assert_eq!(slot_of(entry.deadline, level), slot);
                }
                assert!(entry.waker.is_some());
                deadlines.push(entry.deadline);
                cursor = wheel.slab.next_in_list(index);
            }
        }
    }
    assert_eq!(deadlines.len(), wheel.pending());
    assert!(wheel.pending() <= wheel.len());
    assert!(wheel.elapsed <= MAX_TICK);
    if let Earliest::Known(earliest) = wheel.earliest.get() {
        assert_eq!(earliest, wheel.find_earliest(), "stale next_deadline memo");
    }
    assert_eq!(wheel.next_deadline(), deadlines.iter().copied().min());
    deadlines
}

/// A fixed-seed xorshift64 generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One deadline per level and the clamped far case.
const LEVEL_DEADLINES: [u64; 10] = [
    0,
    1,
    63,
    64,
    65,
    4095,
    4096,
    (1 << 18) + 7,
    (1 << 30) + 3,
    1 << 40,
];

const TEN_YEARS: u64 = 10 * 365 * 24 * 60 * 60 * 1000;

#[test]
fn level_for_picks_the_highest_differing_digit() {
    assert_eq!(level_for(0, 1), 0);
    assert_eq!(level_for(0, 63), 0);
    assert_eq!(level_for(0, 64), 1);
    assert_eq!(level_for(63, 64), 1);
    assert_eq!(level_for(64, 127), 0);
    assert_eq!(level_for(0, 4095), 1);
    assert_eq!(level_for(0, 4096), 2);
    assert_eq!(level_for(0, (1 << 30) + 3), 5);
    assert_eq!(level_for(0, 1 << 40), TOP);
    assert_eq!(level_for((1 << 36) - 1, 1 << 36), TOP);
}

#[test]
fn each_level_fires_at_its_exact_tick() {
    for base in [0, 123_456_789] {
        for offset in LEVEL_DEADLINES {
            let deadline = base + offset;
            let mut h = Harness::new();
            h.advance(base);
            h.insert(1, deadline);
            assert_eq!(h.wheel.next_deadline(), Some(deadline));
            if offset > 0 {
                assert!(h.advance(deadline - 1).is_empty(), "{deadline} fired early");
                assert_eq!(h.wheel.next_deadline(), Some(deadline));
                assert_eq!(h.wheel.elapsed(), deadline - 1);
            }
            assert_eq!(h.advance(deadline), [1], "{deadline} did not fire on time");
            assert_eq!(h.hits(1), 1);
            assert_eq!(h.wheel.next_deadline(), None);
            assert_eq!((h.wheel.len(), h.wheel.pending()), (1, 0));
        }
    }
}

#[test]
fn every_level_fires_in_deadline_order() {
    // All at once, in one long advance.
    let mut h = Harness::new();
    for (id, deadline) in LEVEL_DEADLINES.iter().enumerate().rev() {
        h.insert(id as u64, *deadline);
    }
    check_invariants(&h.wheel);
    let order = h.advance(1 << 41);
    assert_eq!(order, (0..LEVEL_DEADLINES.len() as u64).collect::<Vec<_>>());

    // Stepping from deadline to deadline: each step fires exactly one timer,
    // at exactly its tick.
    let mut h = Harness::new();
    for (id, deadline) in LEVEL_DEADLINES.iter().enumerate() {
        h.insert(id as u64, *deadline);
    }
    for (id, deadline) in LEVEL_DEADLINES.iter().enumerate() {
        assert_eq!(h.wheel.next_deadline(), Some(*deadline));
        assert_eq!(h.advance(*deadline), [id as u64]);
        assert_eq!(h.wheel.elapsed(), *deadline);
    }
    assert_eq!(h.wheel.next_deadline(), None);
}

#[test]
fn deadlines_in_the_past_fire_on_the_next_advance() {
    let mut h = Harness::new();
    h.insert(1, 0);
    assert_eq!(h.wheel.next_deadline(), Some(0));
    assert_eq!(h.advance(0), [1]);

    h.advance(1000);
    h.insert(2, 500);
    h.insert(3, 1000);
    h.insert(4, 1001);
    assert_eq!(h.wheel.next_deadline(), Some(500));
    // Same `now`: the past ones fire anyway, the future one waits.
    assert_eq!(h.advance(1000), [2, 3]);
    assert_eq!(h.wheel.next_deadline(), Some(1001));

    // A `now` behind the wheel counts as `elapsed`.
    h.insert(5, 10);
    assert_eq!(h.advance(3), [5]);
    assert_eq!(h.wheel.elapsed(), 1000);
    assert_eq!(h.advance(1001), [4]);
}

#[test]
fn many_timers_in_one_slot() {
    let mut h = Harness::new();
    for id in 0..1000 {
        h.insert(id, 5000);
    }
    for id in 1000..2000 {
        h.insert(id, 5001 + id % 7);
    }
    assert_eq!(h.wheel.pending(), 2000);
    assert!(h.advance(4999).is_empty());
    let first = h.advance(5000);
    assert_eq!(first.len(), 1000);
    assert_eq!(first.iter().copied().collect::<BTreeSet<_>>().len(), 1000);
    assert!(first.iter().all(|&id| id < 1000));
    assert_eq!(h.wheel.next_deadline(), Some(5001));
    assert_eq!(h.advance(6000).len(), 1000);
    assert!((0..2000).all(|id| h.hits(id) == 1));
    assert_eq!((h.wheel.len(), h.wheel.pending()), (2000, 0));
}

#[test]
fn cancel_frees_the_entry_and_stales_the_key() {
    let mut h = Harness::new();
    let a = h.insert(1, 100);
    let b = h.insert(2, 100);
    let c = h.insert(3, 200);
    assert!(!h.wheel.remove(b));
    assert_eq!((h.wheel.len(), h.wheel.pending()), (2, 2));
    check_invariants(&h.wheel);

    // Every operation on the stale key is harmless.
    assert!(!h.wheel.remove(b));
    assert!(!h.wheel.is_fired(b));
    let w = h.waker(2);
    assert!(h.wheel.update_waker(b, &w).is_none());
    h.wheel.reset(b, 50, &w);
    assert_eq!((h.wheel.len(), h.wheel.pending()), (2, 2));
    assert_eq!(h.wheel.next_deadline(), Some(100));

    // The freed entry is reused under a new generation.
    let d = h.insert(4, 150);
    assert_eq!(d.index(), b.index());
    assert_ne!(d, b);
    assert!(
        !h.wheel.remove(b),
        "a stale key must not free the new timer"
    );
    assert_eq!(h.wheel.len(), 3);

    assert_eq!(h.advance(1000), [1, 4, 3]);
    assert_eq!(h.hits(2), 0);
    assert!(h.wheel.is_fired(a) && h.wheel.is_fired(c) && h.wheel.is_fired(d));
    assert!(h.wheel.remove(a) && h.wheel.remove(c) && h.wheel.remove(d));
    assert_eq!(h.wheel.len(), 0);
    assert!(!h.wheel.is_fired(a));
}

#[test]
fn removing_the_only_timer_empties_its_slot() {
    let mut h = Harness::new();
    let k = h.insert(1, 1 << 20);
    assert!(h.wheel.levels[3].occupied != 0);
    assert!(!h.wheel.remove(k));
    assert!(h.wheel.levels.iter().all(|l| l.occupied == 0));
    assert_eq!(h.wheel.next_deadline(), None);
    assert!(h.advance(1 << 21).is_empty());
}

#[test]
fn move_pending_keeps_the_waker_and_refuses_a_fired_timer() {
    let mut h = Harness::new();
    let k = h.insert(1, 1000);
    // Earlier, then later: the same key and the waker it was armed with.
    assert!(h.wheel.move_pending(k, 10));
    assert_eq!(h.wheel.next_deadline(), Some(10));
    assert!(h.wheel.move_pending(k, 300));
    assert_eq!((h.wheel.len(), h.wheel.pending()), (1, 1));
    assert!(h.advance(299).is_empty());
    assert_eq!(h.advance(300), [1]);
    // Fired: its waker is gone, so nothing moves.
    assert!(!h.wheel.move_pending(k, 400));
    assert!(h.wheel.is_fired(k));
    assert!(h.wheel.remove(k));
    // Stale.
    assert!(!h.wheel.move_pending(k, 500));
}

#[test]
fn reset_moves_a_timer_earlier_later_and_after_firing() {
    let mut h = Harness::new();
    let w = h.waker(1);
    let k = h.insert(1, 1000);
    h.wheel.reset(k, 10, &w);
    assert_eq!(h.wheel.next_deadline(), Some(10));
    assert!(h.advance(9).is_empty());
    assert_eq!(h.advance(10), [1]);
    assert!(h.wheel.is_fired(k));

    // After firing: pending again.
    h.wheel.reset(k, 2000, &w);
    assert!(!h.wheel.is_fired(k));
    assert_eq!((h.wheel.len(), h.wheel.pending()), (1, 1));
    assert_eq!(h.wheel.next_deadline(), Some(2000));
    h.wheel.reset(k, 5000, &w);
    assert_eq!(h.wheel.next_deadline(), Some(5000));
    assert!(h.advance(4999).is_empty());
    assert_eq!(h.advance(5000), [1]);

    // Into the past: fires on the next advance.
    h.wheel.reset(k, 3, &w);
    assert_eq!(h.wheel.next_deadline(), Some(3));
    assert_eq!(h.advance(5000), [1]);
    assert_eq!(h.hits(1), 3);
    assert!(h.wheel.remove(k));
}

#[test]
fn update_waker_swaps_until_fired() {
    let mut h = Harness::new();
    let k = h.insert(1, 100);
    let second = h.waker(2);
    // The first waker is handed back, for the caller to drop unlocked;
    // the identity reported is the stored clone's (an `Arc` waker's clone
    // shares its pointer).
    let Some((Some(_), stored)) = h.wheel.update_waker(k, &second) else {
        panic!("the first waker is not handed back");
    };
    assert_eq!(stored, WakerId::of(&second));
    assert_ne!(stored, WakerId::of(&h.waker(1)));

    // The same waker again: no clone is stored.
    let strong = Arc::strong_count(&h.counters[&2]);
    let Some((None, again)) = h.wheel.update_waker(k, &second) else {
        panic!("the same waker displaced one");
    };
    assert_eq!(again, stored);
    assert_eq!(Arc::strong_count(&h.counters[&2]), strong);

    assert_eq!(h.advance(100), [2]);
    assert_eq!(h.hits(1), 0);
    assert!(h.wheel.update_waker(k, &second).is_none());
    assert!(h.wheel.is_fired(k));
}

#[test]
fn next_deadline_follows_inserts_removes_and_advances() {
    let mut h = Harness::new();
    assert_eq!(h.wheel.next_deadline(), None);
    let a = h.insert(1, 500);
    let b = h.insert(2, 100);
    let c = h.insert(3, 9000);
    assert_eq!(h.wheel.next_deadline(), Some(100));
    h.wheel.remove(b);
    assert_eq!(h.wheel.next_deadline(), Some(500));
    h.advance(499);
    assert_eq!(h.wheel.next_deadline(), Some(500));
    h.advance(500);
    assert_eq!(h.wheel.next_deadline(), Some(9000));
    h.wheel.remove(a);
    assert_eq!(h.wheel.next_deadline(), Some(9000));
    h.wheel.remove(c);
    assert_eq!(h.wheel.next_deadline(), None);

    // Top level: the first slot to come around holds only a deadline far
    // beyond the wheel, and a later slot holds the earliest deadline.
    let far = (1 << 37) + (1 << 30);
    let near = 3 << 30;
    let f = h.insert(4, far);
    h.insert(5, near);
    assert_eq!(h.wheel.next_deadline(), Some(near));
    assert_eq!(h.advance(near), [5]);
    assert_eq!(h.wheel.next_deadline(), Some(far));
    assert!(h.advance(far - 1).is_empty());
    assert_eq!(h.advance(far), [4]);
    h.wheel.remove(f);
    assert_eq!(h.wheel.next_deadline(), None);
}

#[test]
fn huge_jumps_fire_everything_in_order() {
    let deadlines: Vec<u64> = (1..=10).map(|i| i * (TEN_YEARS / 10) - i * 7).collect();
    let mut h = Harness::new();
    for (id, deadline) in deadlines.iter().enumerate().rev() {
        h.insert(id as u64, *deadline);
    }
    assert_eq!(h.wheel.next_deadline(), Some(deadlines[0]));
    assert_eq!(h.advance(TEN_YEARS), (0..10).collect::<Vec<_>>());
    assert_eq!(h.wheel.elapsed(), TEN_YEARS);

    // The same timers, visited one jump at a time.
    let mut h = Harness::new();
    for (id, deadline) in deadlines.iter().enumerate() {
        h.insert(id as u64, *deadline);
    }
    for (id, deadline) in deadlines.iter().enumerate() {
        assert!(h.advance(deadline - 1).is_empty());
        assert_eq!(h.wheel.next_deadline(), Some(*deadline));
        assert_eq!(h.advance(*deadline), [id as u64]);
    }

    // An hour of paused time at once, with a thousand timers inside it.
    let mut h = Harness::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut expected: Vec<(u64, u64)> = (0..1000).map(|id| (rng.below(3_600_000), id)).collect();
    for &(deadline, id) in &expected {
        h.insert(id, deadline);
    }
    expected.sort();
    let order = h.advance(3_600_000);
    assert_eq!(order.len(), 1000);
    assert_eq!(order.iter().collect::<BTreeSet<_>>().len(), 1000);
    let by_id: HashMap<u64, u64> = expected.iter().map(|&(d, id)| (id, d)).collect();
    let deadlines_in_order: Vec<u64> = order.iter().map(|id| by_id[id]).collect();
    assert!(deadlines_in_order.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn far_timers_many_turns_apart() {
    // Each deadline several turns of the whole wheel after the previous.
    let deadlines: Vec<u64> = (1..=20).map(|k| k * 3 * WHEEL_SPAN + k * 1001).collect();
    let mut h = Harness::new();
    for (id, deadline) in deadlines.iter().enumerate().rev() {
        h.insert(id as u64, *deadline);
    }
    assert_eq!(h.advance(u64::MAX), (0..20).collect::<Vec<_>>());

    let mut h = Harness::new();
    for (id, deadline) in deadlines.iter().enumerate() {
        h.insert(id as u64, *deadline);
    }
    for (id, deadline) in deadlines.iter().enumerate() {
        assert_eq!(h.wheel.next_deadline(), Some(*deadline));
        assert!(h.advance(deadline - 1).is_empty());
        assert_eq!(h.advance(*deadline), [id as u64]);
    }
}

#[test]
fn deadlines_beyond_max_tick_are_clamped() {
    let mut h = Harness::new();
    h.insert(1, u64::MAX);
    assert_eq!(h.wheel.next_deadline(), Some(MAX_TICK));
    assert!(h.advance(MAX_TICK - 1).is_empty());
    assert_eq!(h.advance(u64::MAX), [1]);
    assert_eq!(h.wheel.elapsed(), MAX_TICK);
}

/// Random inserts, resets, removes, waker updates and advances, checked
/// step by step against a `BTreeSet` of (deadline, id).
#[test]
fn randomized_against_a_model() {
    run_model(0x2545_f491_4f6c_dd1d, false, false);
}

/// The same with mostly far deadlines and long jumps, so the top level
/// turns over and the wheel jumps ahead (`rebase`) often.
#[test]
fn randomized_far_deadlines_against_a_model() {
    run_model(0x5851_f42d_4c95_7f2d, true, false);
}

/// With owners pushing deadlines later without the lock
/// ([`Deadlines::try_extend`]): timers fire at their latest deadline, in
/// its order, and `next_deadline` is a lower bound of the true earliest.
#[test]
fn randomized_lazy_extensions_against_a_model() {
    run_model(0x9e37_79b9_7f4a_7c15, false, true);
    run_model(0x2545_f491_4f6c_dd1d, true, true);
}

/// `extend`: some steps push a pending timer later through `Deadlines`
/// (the `Sleep` fast path) instead of `reset`.
fn run_model(seed: u64, far: bool, extend: bool) {
    let mut h = Harness::new();
    let mut rng = Rng(seed);
    // The model: pending (deadline, id), and every live timer's key and
    // pending deadline (None once fired).
    let mut pending: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut live: Vec<(u64, TimerKey, Option<u64>)> = Vec::new();
    let mut next_id = 0;
    let mut extensions = 0;

    let random_deadline = |rng: &mut Rng, elapsed: u64| match rng.below(10) {
        0 => elapsed.saturating_sub(rng.below(1000)),
        _ if far => elapsed + rng.below(1 << 42),
        1..=3 => elapsed + rng.below(64),
        4..=6 => elapsed + rng.below(5000),
        7 => elapsed + rng.below(1 << 24),
        8 => elapsed + rng.below(1 << 40),
        _ => (elapsed & !4095) + rng.below(8192),
    };

    for step in 0..20_000 {
        let elapsed = h.wheel.elapsed();
        let op = rng.below(100);
        if op < 30 && live.len() < 400 {
            let deadline = random_deadline(&mut rng, elapsed);
            let key = h.insert(next_id, deadline);
            pending.insert((deadline, next_id));
            live.push((next_id, key, Some(deadline)));
            next_id += 1;
        } else if op < 45 && !live.is_empty() {
            let i = rng.below(live.len() as u64) as usize;
            let (id, key, old) = live[i];
            let deadline = random_deadline(&mut rng, elapsed);
            let waker = h.waker(id);
            h.wheel.reset(key, deadline, &waker);
            if let Some(old) = old {
                assert!(pending.remove(&(old, id)));
            }
            pending.insert((deadline, id));
            live[i].2 = Some(deadline);
        } else if extend && op < 55 && live.iter().any(|t| t.2.is_some()) {
            let pending_ones: Vec<usize> =
                (0..live.len()).filter(|&i| live[i].2.is_some()).collect();
            let i = pending_ones[rng.below(pending_ones.len() as u64) as usize];
            let (id, key, old) = live[i];
            let old = old.expect("chosen pending");
            if old > 0 && rng.below(4) == 0 {
                // Earlier than the latest: refused, the owner takes the lock.
                assert!(!h
                    .wheel
                    .deadlines()
                    .try_extend(key, old - 1 - rng.below(old.min(50))));
            } else {
                let later = (old
                    + match rng.below(3) {
                        0 => rng.below(64),
                        1 => rng.below(5000),
                        _ => rng.below(1 << 30),
                    })
                .min(MAX_TICK);
                assert!(h.wheel.deadlines().try_extend(key, later), "step {step}");
                extensions += 1;
                assert!(pending.remove(&(old, id)));
                pending.insert((later, id));
                live[i].2 = Some(later);
            }
        } else if op < 65 && !live.is_empty() {
            let i = rng.below(live.len() as u64) as usize;
            let (id, key, deadline) = live.swap_remove(i);
            assert_eq!(h.wheel.remove(key), deadline.is_none(), "step {step}");
            if let Some(deadline) = deadline {
                assert!(pending.remove(&(deadline, id)));
            }
            assert!(!h.wheel.remove(key));
        } else if op < 70 && !live.is_empty() {
            let i = rng.below(live.len() as u64) as usize;
            let (id, key, deadline) = live[i];
            let waker = h.waker(id);
            assert_eq!(
                h.wheel.update_waker(key, &waker).is_some(),
                deadline.is_some()
            );
            assert_eq!(h.wheel.is_fired(key), deadline.is_none());
        } else {
            let now = match rng.below(10) {
                0 => elapsed,
                1 => h.wheel.next_deadline().unwrap_or(elapsed),
                2 => elapsed + rng.below(1 << 26),
                3 => elapsed + rng.below(1 << 38),
                4..=6 if far => elapsed + rng.below(1 << 41),
                _ => elapsed + rng.below(300),
            };
            let fired = h.advance(now);
            // Behind the wheel's clock counts as the clock.
            let now = now.max(elapsed);
            let expected: Vec<(u64, u64)> = pending
                .iter()
                .take_while(|(d, _)| *d <= now)
                .copied()
                .collect();
            let mut fired_sorted = fired.clone();
            fired_sorted.sort_unstable();
            let mut expected_ids: Vec<u64> = expected.iter().map(|&(_, id)| id).collect();
            expected_ids.sort_unstable();
            assert_eq!(
                fired_sorted, expected_ids,
                "step {step}: wrong set fired at {now}"
            );
            // Timers armed already due fire first, in any order; the rest
            // in deadline order.
            let deadline_of: HashMap<u64, u64> = expected.iter().map(|&(d, id)| (id, d)).collect();
            let order: Vec<u64> = fired.iter().map(|id| deadline_of[id]).collect();
            let overdue = order.iter().take_while(|&&d| d <= elapsed).count();
            assert!(order[overdue..].iter().all(|&d| d > elapsed), "step {step}");
            assert!(
                order[overdue..].windows(2).all(|w| w[0] <= w[1]),
                "step {step}: out of order"
            );
            for (d, id) in expected {
                pending.remove(&(d, id));
                let entry = live.iter_mut().find(|t| t.0 == id).unwrap();
                entry.2 = None;
            }
            assert_eq!(h.wheel.elapsed(), now);
        }
        let earliest = pending.first().map(|&(d, _)| d);
        if extend {
            // A placement is a lower bound of the latest deadline.
            let next = h.wheel.next_deadline();
            assert_eq!(next.is_some(), earliest.is_some(), "step {step}");
            assert!(next <= earliest, "step {step}: {next:?} after {earliest:?}");
        } else {
            assert_eq!(h.wheel.next_deadline(), earliest, "step {step}");
        }
        assert_eq!(h.wheel.pending(), pending.len());
        assert_eq!(h.wheel.len(), live.len());
        if step % 16 == 0 {
            check_invariants(&h.wheel);
        }
    }
    assert!(!extend || extensions > 1000, "only {extensions} extensions");
    // Extensions keep timers pending longer, so fewer new ones fit.
    assert!(
        next_id > if extend { 1500 } else { 3000 },
        "the model test should exercise thousands of timers (made {next_id})"
    );
}

/// Prints the time to insert and then remove 100,000 timers. Run with
/// `cargo test -p weft --release --lib time::wheel -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_insert_remove_100k() {
    const N: usize = 100_000;
    let waker = Waker::noop().clone();
    let mut wheel = Wheel::new();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let deadlines: Vec<u64> = (0..N).map(|_| 1 + rng.below(1 << 22)).collect();
    let mut keys = Vec::with_capacity(N);
    for round in 0..3 {
        let start = std::time::Instant::now();
        for &deadline in &deadlines {
            keys.push(wheel.insert(deadline, waker.clone()));
        }
        let inserted = start.elapsed();
        for key in keys.drain(..) {
            assert!(!wheel.remove(key));
        }
        let total = start.elapsed();
        println!(
            "round {round}: insert {N}: {inserted:?}, remove {N}: {:?}, total {total:?} ({:.1} ns/timer)",
            total - inserted,
            total.as_nanos() as f64 / N as f64
        );
        assert_eq!(wheel.len(), 0);
    }
}

#[test]
fn release_frees_the_timer_and_hands_its_waker_out() {
    let mut h = Harness::new();
    let k = h.insert(1, 100);
    let strong = Arc::strong_count(&h.counters[&1]);
    let waker = h.wheel.release(k).expect("a pending timer has its waker");
    assert_eq!(h.wheel.len(), 0, "the entry is freed");
    assert!(h.wheel.release(k).is_none(), "the key is stale");
    assert!(!h.wheel.remove(k), "the key is stale");
    // Still alive: releasing did not drop it; we do.
    assert_eq!(Arc::strong_count(&h.counters[&1]), strong);
    drop(waker);
    assert_eq!(Arc::strong_count(&h.counters[&1]), strong - 1);
    // A fired timer's waker was handed out when it fired: nothing to hand.
    let fired = h.insert(1, 5);
    assert_eq!(h.advance(10), vec![1]);
    assert!(h.wheel.release(fired).is_none());
    assert_eq!(h.wheel.len(), 0);
}
