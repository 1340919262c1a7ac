//! The interpreters of `Notify` and `Barrier` scripts, written once in
//! `notify_barrier!` and expanded for both crates by `for_both!`. Each
//! runs a script on one instance and logs the result of every op (for a
//! barrier, also how many waiters have led).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::harness::{for_both, record, Script, Slots, Step};
use crate::ops::{BarrierCfg, BarrierOp, NotifyOp};

macro_rules! notify_barrier {
    () => {
        pub fn notify(s: &Script<(), NotifyOp>, log: &mut Vec<Step>) {
            use k::sync::futures::{Notified, OwnedNotified};
            use k::sync::Notify;
            enum Nf {
                B(Pin<Box<Notified<'static>>>),
                O(Pin<Box<OwnedNotified>>),
            }
            impl Future for Nf {
                type Output = ();
                fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
                    match self.get_mut() {
                        Nf::B(f) => f.as_mut().poll(cx),
                        Nf::O(f) => f.as_mut().poll(cx),
                    }
                }
            }
            let notify: &'static Arc<Notify> = Box::leak(Box::new(Arc::new(Notify::new())));
            let mut slots = Slots::<Nf>::new();
            for op in &s.ops {
                let out = match *op {
                    NotifyOp::Notified { slot, owned } => slots.create(slot, || {
                        if owned {
                            Nf::O(Box::pin(Arc::clone(notify).notified_owned()))
                        } else {
                            Nf::B(Box::pin(notify.notified()))
                        }
                    }),
                    NotifyOp::Enable { slot } => match slots.get_mut(slot) {
                        None => "empty".into(),
                        Some(s) => {
                            let r = match &mut s.fut {
                                Nf::B(f) => f.as_mut().enable(),
                                Nf::O(f) => f.as_mut().enable(),
                            };
                            format!("{r}")
                        }
                    },
                    NotifyOp::Poll { slot, fresh } => slots.poll(slot, fresh, |()| String::new()),
                    NotifyOp::DropFut { slot } => slots.drop_fut(slot),
                    NotifyOp::NotifyOne => {
                        notify.notify_one();
                        String::new()
                    }
                    NotifyOp::NotifyLast => {
                        notify.notify_last();
                        String::new()
                    }
                    NotifyOp::NotifyWaiters => {
                        notify.notify_waiters();
                        String::new()
                    }
                };
                record(log, op, out, String::new(), &slots);
            }
            slots.clear();
        }

        pub fn barrier(s: &Script<BarrierCfg, BarrierOp>, log: &mut Vec<Step>) {
            use k::sync::{Barrier, BarrierWaitResult};
            type Fut = Pin<Box<dyn Future<Output = BarrierWaitResult>>>;
            let b: &'static Barrier = Box::leak(Box::new(Barrier::new(s.cfg.n)));
            let mut slots = Slots::<Fut>::new();
            let mut leaders = 0;
            for op in &s.ops {
                let out = match *op {
                    BarrierOp::Wait { slot } => {
                        if slots.is_empty(slot) {
                            slots.create(slot, || -> Fut { Box::pin(b.wait()) })
                        } else {
                            "busy".into()
                        }
                    }
                    // Which waiter leads is arbitrary (documented): only
                    // the number of leaders is compared.
                    BarrierOp::Poll { slot, fresh } => slots.poll(slot, fresh, |r| {
                        leaders += usize::from(r.is_leader());
                        String::new()
                    }),
                };
                record(log, op, out, format!("leaders={leaders}"), &slots);
            }
            slots.clear();
        }
    };
}

for_both!(notify_barrier);
