//! The interpreters of `Semaphore`, `Mutex` and `RwLock` scripts, written
//! once in `locks!` and expanded for both crates by `for_both!`. Each runs
//! a script on one instance and logs the result of every op and the state
//! a program can observe (available permits, closed flag, guards held).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::harness::{for_both, record, take, Script, Slots, Step};
use crate::ops::{MutexOp, RwCfg, RwOp, SemCfg, SemOp};

macro_rules! locks {
    () => {
        pub fn semaphore(s: &Script<SemCfg, SemOp>, log: &mut Vec<Step>) {
            use k::sync::{
                AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
            };
            enum Held {
                B(SemaphorePermit<'static>),
                O(OwnedSemaphorePermit),
            }
            impl Held {
                fn n(&self) -> usize {
                    match self {
                        Held::B(p) => p.num_permits(),
                        Held::O(p) => p.num_permits(),
                    }
                }
            }
            type Fut = Pin<Box<dyn Future<Output = Result<Held, AcquireError>>>>;
            // Leaked, so borrowed permits and futures can be 'static.
            let sem: &'static Arc<Semaphore> =
                Box::leak(Box::new(Arc::new(Semaphore::new(s.cfg.permits))));
            let mut slots = Slots::<Fut>::new();
            let mut held: Vec<Held> = Vec::new();
            for op in &s.ops {
                let out = match *op {
                    SemOp::Acquire { slot, n, owned } => slots.create(slot, || -> Fut {
                        match (n, owned) {
                            (1, false) => {
                                let f = sem.acquire();
                                Box::pin(async move { f.await.map(Held::B) })
                            }
                            (1, true) => {
                                let f = Arc::clone(sem).acquire_owned();
                                Box::pin(async move { f.await.map(Held::O) })
                            }
                            (n, false) => {
                                let f = sem.acquire_many(n);
                                Box::pin(async move { f.await.map(Held::B) })
                            }
                            (n, true) => {
                                let f = Arc::clone(sem).acquire_many_owned(n);
                                Box::pin(async move { f.await.map(Held::O) })
                            }
                        }
                    }),
                    SemOp::Poll { slot, fresh } => slots.poll(slot, fresh, |r| match r {
                        Ok(p) => {
                            let n = p.n();
                            held.push(p);
                            format!("Ok({n})")
                        }
                        Err(_) => "Err(AcquireError)".into(),
                    }),
                    SemOp::DropFut { slot } => slots.drop_fut(slot),
                    SemOp::TryAcquire { n, owned } => {
                        let r = match (n, owned) {
                            (1, false) => sem.try_acquire().map(Held::B),
                            (1, true) => Arc::clone(sem).try_acquire_owned().map(Held::O),
                            (n, false) => sem.try_acquire_many(n).map(Held::B),
                            (n, true) => Arc::clone(sem).try_acquire_many_owned(n).map(Held::O),
                        };
                        match r {
                            Ok(p) => {
                                let n = p.n();
                                held.push(p);
                                format!("Ok({n})")
                            }
                            Err(TryAcquireError::Closed) => "Err(Closed)".into(),
                            Err(TryAcquireError::NoPermits) => "Err(NoPermits)".into(),
                        }
                    }
                    SemOp::AddPermits { n } => {
                        sem.add_permits(n);
                        String::new()
                    }
                    SemOp::ForgetPermits { n } => format!("{}", sem.forget_permits(n)),
                    SemOp::Close => {
                        sem.close();
                        String::new()
                    }
                    SemOp::Release { h } => match take(&mut held, h) {
                        Some(p) => format!("released {}", p.n()),
                        None => "none".into(),
                    },
                    SemOp::Forget { h } => match take(&mut held, h) {
                        Some(Held::B(p)) => {
                            p.forget();
                            "forgot".into()
                        }
                        Some(Held::O(p)) => {
                            p.forget();
                            "forgot".into()
                        }
                        None => "none".into(),
                    },
                    SemOp::Split { h, n } => {
                        if held.is_empty() {
                            "none".into()
                        } else {
                            let i = h % held.len();
                            let r = match &mut held[i] {
                                Held::B(p) => p.split(n).map(Held::B),
                                Held::O(p) => p.split(n).map(Held::O),
                            };
                            match r {
                                Some(p) => {
                                    held.push(p);
                                    "Some".into()
                                }
                                None => "None".into(),
                            }
                        }
                    }
                    SemOp::Merge { a, b } => {
                        let len = held.len();
                        if len < 2 || a % len == b % len {
                            "skip".into()
                        } else {
                            let (i, j) = (a % len, b % len);
                            let same = matches!(
                                (&held[i], &held[j]),
                                (Held::B(_), Held::B(_)) | (Held::O(_), Held::O(_))
                            );
                            if same {
                                let other = held.remove(j);
                                let i = if j < i { i - 1 } else { i };
                                match (&mut held[i], other) {
                                    (Held::B(p), Held::B(o)) => p.merge(o),
                                    (Held::O(p), Held::O(o)) => p.merge(o),
                                    _ => unreachable!(),
                                }
                                "merged".into()
                            } else {
                                "kinds differ".into()
                            }
                        }
                    }
                };
                let state = format!(
                    "avail={} closed={} held={:?}",
                    sem.available_permits(),
                    sem.is_closed(),
                    held.iter().map(Held::n).collect::<Vec<_>>()
                );
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }

        pub fn mutex(s: &Script<(), MutexOp>, log: &mut Vec<Step>) {
            use k::sync::{Mutex, MutexGuard, OwnedMutexGuard};
            enum G {
                B(MutexGuard<'static, u32>),
                O(OwnedMutexGuard<u32>),
            }
            impl G {
                fn get(&mut self) -> &mut u32 {
                    match self {
                        G::B(g) => g,
                        G::O(g) => g,
                    }
                }
            }
            type Fut = Pin<Box<dyn Future<Output = G>>>;
            let m: &'static Arc<Mutex<u32>> = Box::leak(Box::new(Arc::new(Mutex::new(0))));
            let mut slots = Slots::<Fut>::new();
            let mut held: Vec<G> = Vec::new();
            for op in &s.ops {
                let out = match *op {
                    MutexOp::Lock { slot, owned } => slots.create(slot, || -> Fut {
                        if owned {
                            let f = Arc::clone(m).lock_owned();
                            Box::pin(async move { G::O(f.await) })
                        } else {
                            let f = m.lock();
                            Box::pin(async move { G::B(f.await) })
                        }
                    }),
                    MutexOp::Poll { slot, fresh } => slots.poll(slot, fresh, |mut g| {
                        let v = *g.get();
                        held.push(g);
                        format!("guard({v})")
                    }),
                    MutexOp::DropFut { slot } => slots.drop_fut(slot),
                    MutexOp::TryLock { owned } => {
                        let r = if owned {
                            Arc::clone(m).try_lock_owned().map(G::O)
                        } else {
                            m.try_lock().map(G::B)
                        };
                        match r {
                            Ok(mut g) => {
                                let v = *g.get();
                                held.push(g);
                                format!("Ok({v})")
                            }
                            Err(_) => "Err(TryLockError)".into(),
                        }
                    }
                    MutexOp::Release { h } => match take(&mut held, h) {
                        Some(_) => "released".into(),
                        None => "none".into(),
                    },
                    MutexOp::Bump { h } => {
                        if held.is_empty() {
                            "none".into()
                        } else {
                            let i = h % held.len();
                            *held[i].get() += 1;
                            format!("{}", *held[i].get())
                        }
                    }
                };
                let state = format!("held={}", held.len());
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }

        pub fn rwlock(s: &Script<RwCfg, RwOp>, log: &mut Vec<Step>) {
            use k::sync::{
                OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockReadGuard,
                RwLockWriteGuard,
            };
            enum G {
                R(RwLockReadGuard<'static, u32>),
                Ro(OwnedRwLockReadGuard<u32>),
                W(RwLockWriteGuard<'static, u32>),
                Wo(OwnedRwLockWriteGuard<u32>),
            }
            impl G {
                fn show(&self) -> String {
                    match self {
                        G::R(g) => format!("R{}", **g),
                        G::Ro(g) => format!("R{}", **g),
                        G::W(g) => format!("W{}", **g),
                        G::Wo(g) => format!("W{}", **g),
                    }
                }
            }
            type Fut = Pin<Box<dyn Future<Output = G>>>;
            let l: &'static Arc<RwLock<u32>> = Box::leak(Box::new(Arc::new(
                RwLock::with_max_readers(0, s.cfg.max_readers),
            )));
            let mut slots = Slots::<Fut>::new();
            let mut held: Vec<G> = Vec::new();
            for op in &s.ops {
                let out = match *op {
                    RwOp::Read { slot, owned } => slots.create(slot, || -> Fut {
                        if owned {
                            let f = Arc::clone(l).read_owned();
                            Box::pin(async move { G::Ro(f.await) })
                        } else {
                            let f = l.read();
                            Box::pin(async move { G::R(f.await) })
                        }
                    }),
                    RwOp::Write { slot, owned } => slots.create(slot, || -> Fut {
                        if owned {
                            let f = Arc::clone(l).write_owned();
                            Box::pin(async move { G::Wo(f.await) })
                        } else {
                            let f = l.write();
                            Box::pin(async move { G::W(f.await) })
                        }
                    }),
                    RwOp::Poll { slot, fresh } => slots.poll(slot, fresh, |g| {
                        let s = g.show();
                        held.push(g);
                        s
                    }),
                    RwOp::DropFut { slot } => slots.drop_fut(slot),
                    RwOp::TryRead { owned } => {
                        let r = if owned {
                            Arc::clone(l).try_read_owned().map(G::Ro)
                        } else {
                            l.try_read().map(G::R)
                        };
                        match r {
                            Ok(g) => {
                                let s = g.show();
                                held.push(g);
                                format!("Ok({s})")
                            }
                            Err(_) => "Err(TryLockError)".into(),
                        }
                    }
                    RwOp::TryWrite { owned } => {
                        let r = if owned {
                            Arc::clone(l).try_write_owned().map(G::Wo)
                        } else {
                            l.try_write().map(G::W)
                        };
                        match r {
                            Ok(g) => {
                                let s = g.show();
                                held.push(g);
                                format!("Ok({s})")
                            }
                            Err(_) => "Err(TryLockError)".into(),
                        }
                    }
                    RwOp::Release { h } => match take(&mut held, h) {
                        Some(g) => format!("released {}", g.show()),
                        None => "none".into(),
                    },
                    RwOp::Downgrade { h } => {
                        if held.is_empty() {
                            "none".into()
                        } else {
                            let i = h % held.len();
                            match held.remove(i) {
                                G::W(g) => held.insert(i, G::R(g.downgrade())),
                                G::Wo(g) => held.insert(i, G::Ro(g.downgrade())),
                                g => held.insert(i, g),
                            }
                            held[i].show()
                        }
                    }
                    RwOp::Bump { h } => {
                        if held.is_empty() {
                            "none".into()
                        } else {
                            let i = h % held.len();
                            match &mut held[i] {
                                G::W(g) => **g += 1,
                                G::Wo(g) => **g += 1,
                                _ => {}
                            }
                            held[i].show()
                        }
                    }
                };
                let state = format!("held={:?}", held.iter().map(G::show).collect::<Vec<_>>());
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }
    };
}

for_both!(locks);
