use super::*;
use crate::loom::thread;
use std::cell::RefCell;

/// Overflow sink for the thread that owns the queue.
#[derive(Default)]
struct Sink(RefCell<Vec<usize>>);

impl Overflow<usize> for Sink {
    fn push_batch<I: Iterator<Item = usize>>(&self, iter: I) {
        self.0.borrow_mut().extend(iter);
    }
}

/// Bitmask of item ids that have been received; fails on a duplicate.
#[derive(Default)]
struct Seen(u64);

impl Seen {
    fn add(&mut self, item: usize) {
        assert!(item < 64);
        let bit = 1u64 << item;
        assert_eq!(self.0 & bit, 0, "item {item} received twice");
        self.0 |= bit;
    }

    fn merge(&mut self, other: Seen) {
        assert_eq!(self.0 & other.0, 0, "item received twice");
        self.0 |= other.0;
    }

    fn assert_all(&self, n: usize) {
        assert_eq!(self.0, (1u64 << n) - 1, "items lost");
    }
}

fn drain_into(local: &mut Local<usize>, seen: &mut Seen) {
    while let Some(t) = local.pop() {
        seen.add(t);
    }
}

/// Steal once from `victim` into a fresh local queue and drain it.
fn steal_once(victim: &Steal<usize>) -> Seen {
    let (_, mut mine) = local();
    let mut seen = Seen::default();
    let mut stolen = 0;
    if let Some(t) = victim.steal_into(&mut mine, &mut stolen) {
        seen.add(t);
    }
    drain_into(&mut mine, &mut seen);
    seen
}

#[test]
fn basic() {
    loom::model(|| {
        let (steal, mut local) = local();
        let sink = Sink::default();

        let th = thread::spawn(move || {
            let (_, mut mine) = super::local();
            let mut seen = Seen::default();
            for _ in 0..2 {
                let mut stolen = 0;
                if let Some(t) = steal.steal_into(&mut mine, &mut stolen) {
                    seen.add(t);
                }
                drain_into(&mut mine, &mut seen);
            }
            seen
        });

        let mut seen = Seen::default();
        let mut next = 0;
        for _ in 0..2 {
            for _ in 0..2 {
                local.push_back_or_overflow(next, &sink);
                next += 1;
            }
            if let Some(t) = local.pop() {
                seen.add(t);
            }
        }
        local.push_back_or_overflow(next, &sink);
        next += 1;
        drain_into(&mut local, &mut seen);

        for t in sink.0.into_inner() {
            seen.add(t);
        }
        seen.merge(th.join().expect("stealer panicked"));
        seen.assert_all(next);
    });
}

#[test]
fn steal_overflow() {
    loom::model(|| {
        let (steal, mut local) = local();
        let sink = Sink::default();

        // Two tasks are there when the stealer starts, so it can be mid
        // claim while the owner fills the ring and overflows.
        local.push_back_or_overflow(0, &sink);
        local.push_back_or_overflow(1, &sink);
        let th = thread::spawn(move || steal_once(&steal));

        let mut seen = Seen::default();
        let total = LOCAL_QUEUE_CAPACITY + 1;
        for i in 2..total {
            local.push_back_or_overflow(i, &sink);
        }
        drain_into(&mut local, &mut seen);
        for t in sink.0.into_inner() {
            seen.add(t);
        }
        seen.merge(th.join().expect("stealer panicked"));
        seen.assert_all(total);
    });
}

#[test]
fn multi_stealer() {
    const N: usize = LOCAL_QUEUE_CAPACITY;
    loom::model(|| {
        let (steal, mut local) = local();
        let sink = Sink::default();
        for i in 0..N {
            local.push_back_or_overflow(i, &sink);
        }

        let s1 = steal.clone();
        let th1 = thread::spawn(move || steal_once(&s1));
        let th2 = thread::spawn(move || steal_once(&steal));

        let mut seen = Seen::default();
        drain_into(&mut local, &mut seen);
        assert!(sink.0.into_inner().is_empty());
        seen.merge(th1.join().expect("stealer panicked"));
        seen.merge(th2.join().expect("stealer panicked"));
        seen.assert_all(N);
    });
}

#[test]
fn chained_steal() {
    loom::model(|| {
        let sink = Sink::default();
        // A starts empty and B full, so A's steal publishes one task in
        // A's ring (and returns another) that C can only get by
        // stealing it from A. B's owner stays idle on this thread.
        let (steal_a, mut a) = local();
        let (steal_b, mut b) = local();
        for i in 0..LOCAL_QUEUE_CAPACITY {
            b.push_back_or_overflow(i, &sink);
        }

        // C steals from A while A steals from B.
        let th = thread::spawn(move || steal_once(&steal_a));

        let mut seen = Seen::default();
        let mut stolen = 0;
        if let Some(t) = steal_b.steal_into(&mut a, &mut stolen) {
            seen.add(t);
        }
        drain_into(&mut a, &mut seen);
        drain_into(&mut b, &mut seen);
        assert!(sink.0.into_inner().is_empty());
        seen.merge(th.join().expect("stealer panicked"));
        seen.assert_all(LOCAL_QUEUE_CAPACITY);
    });
}
