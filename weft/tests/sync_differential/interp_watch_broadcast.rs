//! The interpreters of `watch` and `broadcast` scripts, written once in
//! `watch_broadcast!` and expanded for both crates by `for_both!`. Each
//! runs a script on one channel (senders and receivers held by index) and
//! logs the result of every op and the state of every end.

use std::cell::RefCell;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::harness::{for_both, record, Script, Slots, Step};
use crate::ops::{BcastCfg, BcastOp, WatchOp};

macro_rules! watch_broadcast {
    () => {
        pub fn watch(s: &Script<(), WatchOp>, log: &mut Vec<Step>) {
            use k::sync::watch::{self, Receiver, Sender};
            type Fut = Pin<Box<dyn Future<Output = String>>>;
            type RxCell = Rc<RefCell<Receiver<u32>>>;
            let (tx, rx) = watch::channel(0u32);
            let mut txs: Vec<Option<Rc<Sender<u32>>>> = vec![Some(Rc::new(tx)), None];
            let mut rxs: Vec<Option<RxCell>> = vec![Some(Rc::new(RefCell::new(rx))), None, None];
            let mut slots = Slots::<Fut>::new();
            fn with_rx<R>(
                rxs: &[Option<RxCell>],
                i: usize,
                f: impl FnOnce(&mut Receiver<u32>) -> R,
            ) -> Result<R, &'static str> {
                match &rxs[i] {
                    None => Err("no rx"),
                    Some(c) => match c.try_borrow_mut() {
                        Err(_) => Err("rx busy"),
                        Ok(mut g) => Ok(f(&mut g)),
                    },
                }
            }
            fn show<R: Debug>(r: Result<R, &'static str>) -> String {
                match r {
                    Ok(v) => format!("{v:?}"),
                    Err(e) => e.into(),
                }
            }
            for op in &s.ops {
                let out = match *op {
                    WatchOp::Send { tx, v } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => match t.send(v) {
                            Ok(()) => "Ok".into(),
                            Err(e) => format!("Err(SendError({}))", e.0),
                        },
                    },
                    WatchOp::SendReplace { tx, v } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => format!("old {}", t.send_replace(v)),
                    },
                    WatchOp::SendModify { tx, v } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            t.send_modify(|x| *x = v);
                            String::new()
                        }
                    },
                    WatchOp::SendIfModified { tx, v } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => format!(
                            "{}",
                            t.send_if_modified(|x| {
                                if *x == v {
                                    false
                                } else {
                                    *x = v;
                                    true
                                }
                            })
                        ),
                    },
                    WatchOp::TxBorrow { tx } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            let r = t.borrow();
                            format!("{} changed={}", *r, r.has_changed())
                        }
                    },
                    WatchOp::Borrow { rx } => show(with_rx(&rxs, rx, |r| {
                        let g = r.borrow();
                        (*g, g.has_changed())
                    })),
                    WatchOp::BorrowAndUpdate { rx } => show(with_rx(&rxs, rx, |r| {
                        let g = r.borrow_and_update();
                        (*g, g.has_changed())
                    })),
                    WatchOp::HasChanged { rx } => show(with_rx(&rxs, rx, |r| {
                        r.has_changed().map_err(|_| "RecvError")
                    })),
                    WatchOp::MarkChanged { rx } => show(with_rx(&rxs, rx, |r| r.mark_changed())),
                    WatchOp::MarkUnchanged { rx } => {
                        show(with_rx(&rxs, rx, |r| r.mark_unchanged()))
                    }
                    WatchOp::Changed { slot, rx } => match rxs[rx].clone() {
                        None => "no rx".into(),
                        Some(cell) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return "rx busy".into();
                                };
                                format!("{:?}", g.changed().await.map_err(|_| "RecvError"))
                            })
                        }),
                    },
                    WatchOp::WaitFor { slot, rx, min } => match rxs[rx].clone() {
                        None => "no rx".into(),
                        Some(cell) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return "rx busy".into();
                                };
                                let r = g.wait_for(|v| *v >= min).await;
                                format!("{:?}", r.map(|v| *v).map_err(|_| "RecvError"))
                            })
                        }),
                    },
                    WatchOp::TxClosed { slot, tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                t.closed().await;
                                "closed".into()
                            })
                        }),
                    },
                    WatchOp::Poll { slot, fresh } => slots.poll(slot, fresh, |s| s),
                    WatchOp::DropFut { slot } => slots.drop_fut(slot),
                    WatchOp::Subscribe { tx, rx } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            rxs[rx] = Some(Rc::new(RefCell::new(t.subscribe())));
                            "subscribed".into()
                        }
                    },
                    WatchOp::CloneRx { from, to } => {
                        let c = match &rxs[from] {
                            None => Err("no rx"),
                            Some(c) => c.try_borrow().map(|r| r.clone()).map_err(|_| "rx busy"),
                        };
                        match c {
                            Ok(r) => {
                                rxs[to] = Some(Rc::new(RefCell::new(r)));
                                "cloned".into()
                            }
                            Err(e) => e.into(),
                        }
                    }
                    WatchOp::DropRx { rx } => match rxs[rx].take() {
                        None => "no rx".into(),
                        Some(_) => "dropped".into(),
                    },
                    WatchOp::CloneTx { from, to } => match &txs[from] {
                        None => "no tx".into(),
                        Some(t) => {
                            let t = Sender::clone(t);
                            txs[to] = Some(Rc::new(t));
                            "cloned".into()
                        }
                    },
                    WatchOp::DropTx { tx } => match txs[tx].take() {
                        None => "no tx".into(),
                        Some(_) => "dropped".into(),
                    },
                };
                let tx_state: Vec<String> = txs
                    .iter()
                    .map(|t| match t {
                        None => "-".into(),
                        Some(t) => format!(
                            "rxs={} txs={} closed={} v={}",
                            t.receiver_count(),
                            t.sender_count(),
                            t.is_closed(),
                            *t.borrow()
                        ),
                    })
                    .collect();
                let rx_state: Vec<String> = (0..rxs.len())
                    .map(
                        |i| match with_rx(&rxs, i, |r| (r.has_changed(), r.is_closed())) {
                            Ok((Ok(c), closed)) => format!("changed={c} closed={closed}"),
                            Ok((Err(_), closed)) => format!("Err(RecvError) closed={closed}"),
                            Err(e) => e.into(),
                        },
                    )
                    .collect();
                let state = format!("tx{tx_state:?} rx{rx_state:?}");
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }

        pub fn broadcast(s: &Script<BcastCfg, BcastOp>, log: &mut Vec<Step>) {
            use k::sync::broadcast::error::{RecvError, TryRecvError};
            use k::sync::broadcast::{self, Receiver, Sender};
            type Fut = Pin<Box<dyn Future<Output = String>>>;
            type RxCell = Rc<RefCell<Receiver<u32>>>;
            let (tx, rx) = broadcast::channel::<u32>(s.cfg.cap);
            let mut txs: Vec<Option<Rc<Sender<u32>>>> = vec![Some(Rc::new(tx)), None];
            let mut rxs: Vec<Option<RxCell>> = vec![Some(Rc::new(RefCell::new(rx))), None, None];
            let mut slots = Slots::<Fut>::new();
            let mut next = 0u32;
            for op in &s.ops {
                let out = match *op {
                    BcastOp::Send { tx } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            next += 1;
                            match t.send(next) {
                                Ok(n) => format!("sent {next} to {n}"),
                                Err(e) => format!("Err(SendError({}))", e.0),
                            }
                        }
                    },
                    BcastOp::Subscribe { tx, rx } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            rxs[rx] = Some(Rc::new(RefCell::new(t.subscribe())));
                            "subscribed".into()
                        }
                    },
                    BcastOp::Resubscribe { from, to } => {
                        let c = match &rxs[from] {
                            None => Err("no rx"),
                            Some(c) => c
                                .try_borrow()
                                .map(|r| r.resubscribe())
                                .map_err(|_| "rx busy"),
                        };
                        match c {
                            Ok(r) => {
                                rxs[to] = Some(Rc::new(RefCell::new(r)));
                                "resubscribed".into()
                            }
                            Err(e) => e.into(),
                        }
                    }
                    BcastOp::DropRx { rx } => match rxs[rx].take() {
                        None => "no rx".into(),
                        Some(_) => "dropped".into(),
                    },
                    BcastOp::CloneTx { from, to } => match &txs[from] {
                        None => "no tx".into(),
                        Some(t) => {
                            let t = Sender::clone(t);
                            txs[to] = Some(Rc::new(t));
                            "cloned".into()
                        }
                    },
                    BcastOp::DropTx { tx } => match txs[tx].take() {
                        None => "no tx".into(),
                        Some(_) => "dropped".into(),
                    },
                    BcastOp::TryRecv { rx } => match &rxs[rx] {
                        None => "no rx".into(),
                        Some(c) => match c.try_borrow_mut() {
                            Err(_) => "rx busy".into(),
                            Ok(mut r) => match r.try_recv() {
                                Ok(v) => format!("Ok({v})"),
                                Err(TryRecvError::Empty) => "Err(Empty)".into(),
                                Err(TryRecvError::Closed) => "Err(Closed)".into(),
                                Err(TryRecvError::Lagged(n)) => format!("Err(Lagged({n}))"),
                            },
                        },
                    },
                    BcastOp::Recv { slot, rx } => match rxs[rx].clone() {
                        None => "no rx".into(),
                        Some(cell) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut r) = cell.try_borrow_mut() else {
                                    return "rx busy".into();
                                };
                                match r.recv().await {
                                    Ok(v) => format!("Ok({v})"),
                                    Err(RecvError::Closed) => "Err(Closed)".into(),
                                    Err(RecvError::Lagged(n)) => format!("Err(Lagged({n}))"),
                                }
                            })
                        }),
                    },
                    BcastOp::Closed { slot, tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                t.closed().await;
                                "closed".into()
                            })
                        }),
                    },
                    BcastOp::Poll { slot, fresh } => slots.poll(slot, fresh, |s| s),
                    BcastOp::DropFut { slot } => slots.drop_fut(slot),
                };
                let tx_state: Vec<String> = txs
                    .iter()
                    .map(|t| match t {
                        None => "-".into(),
                        Some(t) => format!(
                            "len={} empty={} rxs={}",
                            t.len(),
                            t.is_empty(),
                            t.receiver_count()
                        ),
                    })
                    .collect();
                let rx_state: Vec<String> = rxs
                    .iter()
                    .map(|c| match c {
                        None => "-".into(),
                        Some(c) => match c.try_borrow() {
                            Err(_) => "busy".into(),
                            Ok(r) => format!(
                                "len={} empty={} closed={}",
                                r.len(),
                                r.is_empty(),
                                r.is_closed()
                            ),
                        },
                    })
                    .collect();
                let state = format!("tx{tx_state:?} rx{rx_state:?}");
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }
    };
}

for_both!(watch_broadcast);
