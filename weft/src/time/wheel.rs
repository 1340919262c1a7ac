//! Placeholder wheel (BTreeMap) with the final API; replaced by the
//! hierarchical wheel.
use std::collections::BTreeMap;
use std::task::Waker;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimerKey {
    index: u32,
    generation: u32,
}

enum State {
    Pending(Waker),
    Fired,
}

struct Entry {
    generation: u32,
    deadline: u64,
    state: Option<State>,
}

pub(crate) struct Wheel {
    elapsed: u64,
    entries: Vec<Entry>,
    free: Vec<u32>,
    order: BTreeMap<(u64, u32), ()>,
}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        Wheel { elapsed: 0, entries: Vec::new(), free: Vec::new(), order: BTreeMap::new() }
    }
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }
    pub(crate) fn insert(&mut self, deadline: u64, waker: Waker) -> TimerKey {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.entries.push(Entry { generation: 0, deadline: 0, state: None });
                (self.entries.len() - 1) as u32
            }
        };
        let e = &mut self.entries[index as usize];
        e.deadline = deadline;
        e.state = Some(State::Pending(waker));
        self.order.insert((deadline, index), ());
        TimerKey { index, generation: e.generation }
    }
    fn entry(&mut self, key: TimerKey) -> Option<&mut Entry> {
        let e = self.entries.get_mut(key.index as usize)?;
        (e.generation == key.generation && e.state.is_some()).then_some(e)
    }
    pub(crate) fn update_waker(&mut self, key: TimerKey, waker: &Waker) -> bool {
        match self.entry(key) {
            Some(Entry { state: Some(State::Pending(w)), .. }) => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
                true
            }
            _ => false,
        }
    }
    pub(crate) fn reset(&mut self, key: TimerKey, deadline: u64, waker: &Waker) {
        let Some(e) = self.entry(key) else { return };
        let old = e.deadline;
        let was_pending = matches!(e.state, Some(State::Pending(_)));
        e.deadline = deadline;
        e.state = Some(State::Pending(waker.clone()));
        if was_pending {
            self.order.remove(&(old, key.index));
        }
        self.order.insert((deadline, key.index), ());
    }
    pub(crate) fn remove(&mut self, key: TimerKey) -> bool {
        let Some(e) = self.entry(key) else { return false };
        let fired = matches!(e.state, Some(State::Fired));
        let d = e.deadline;
        e.state = None;
        e.generation = e.generation.wrapping_add(1);
        if !fired {
            self.order.remove(&(d, key.index));
        }
        self.free.push(key.index);
        fired
    }
    pub(crate) fn is_fired(&self, key: TimerKey) -> bool {
        self.entries.get(key.index as usize).is_some_and(|e| {
            e.generation == key.generation && matches!(e.state, Some(State::Fired))
        })
    }
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.order.keys().next().map(|(d, _)| *d)
    }
    pub(crate) fn advance(&mut self, now: u64, mut wake: impl FnMut(Waker)) -> usize {
        self.elapsed = self.elapsed.max(now);
        let mut n = 0;
        while let Some((&(d, i), _)) = self.order.iter().next() {
            if d > self.elapsed {
                break;
            }
            self.order.remove(&(d, i));
            if let Some(State::Pending(w)) = self.entries[i as usize].state.replace(State::Fired) {
                wake(w);
            }
            n += 1;
        }
        n
    }
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }
    pub(crate) fn pending(&self) -> usize {
        self.order.len()
    }
}
