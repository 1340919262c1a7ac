//! The interpreters of bounded `mpsc` and `oneshot` scripts, written once
//! in `mpsc_oneshot!` and expanded for both crates by `for_both!`. Each
//! runs a script on one channel (senders, the receiver and permits held by
//! index) and logs the result of every op and the state of every end.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::harness::{for_both, record, take, Script, Slots, Step};
use crate::ops::{MpscCfg, MpscOp, OneshotOp};

macro_rules! mpsc_oneshot {
    () => {
        pub fn mpsc(s: &Script<MpscCfg, MpscOp>, log: &mut Vec<Step>) {
            use k::sync::mpsc::error::{TryRecvError, TrySendError};
            use k::sync::mpsc::{self, OwnedPermit, Receiver, Sender};
            enum Out {
                S(String),
                P(OwnedPermit<u32>),
            }
            type Fut = Pin<Box<dyn Future<Output = Out>>>;
            type RxCell = Rc<RefCell<Option<Receiver<u32>>>>;
            fn try_send_err<T>(e: TrySendError<T>) -> &'static str {
                match e {
                    TrySendError::Full(_) => "Err(Full)",
                    TrySendError::Closed(_) => "Err(Closed)",
                }
            }
            let (tx, rx) = mpsc::channel::<u32>(s.cfg.cap);
            let mut txs: Vec<Option<Sender<u32>>> = vec![Some(tx), None, None];
            let rx: RxCell = Rc::new(RefCell::new(Some(rx)));
            let mut slots = Slots::<Fut>::new();
            let mut permits: Vec<OwnedPermit<u32>> = Vec::new();
            let mut next = 0u32;
            let mut value = || {
                next += 10;
                next
            };
            for op in &s.ops {
                let out = match *op {
                    MpscOp::Send { slot, tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            slots.create(slot, move || -> Fut {
                                Box::pin(async move {
                                    Out::S(match t.send(v).await {
                                        Ok(()) => format!("sent {v}"),
                                        Err(e) => format!("Err(SendError({}))", e.0),
                                    })
                                })
                            })
                        }
                    },
                    MpscOp::Reserve { slot, tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                match t.reserve_owned().await {
                                    Ok(p) => Out::P(p),
                                    Err(_) => Out::S("Err(SendError)".into()),
                                }
                            })
                        }),
                    },
                    MpscOp::ReserveUse { slot, tx, send } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            slots.create(slot, move || -> Fut {
                                Box::pin(async move {
                                    Out::S(match t.reserve().await {
                                        Ok(p) if send => {
                                            p.send(v);
                                            format!("sent {v}")
                                        }
                                        Ok(_) => "permit dropped".into(),
                                        Err(_) => "Err(SendError)".into(),
                                    })
                                })
                            })
                        }
                    },
                    MpscOp::ReserveMany { slot, tx, n, k } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            slots.create(slot, move || -> Fut {
                                Box::pin(async move {
                                    Out::S(match t.reserve_many(n).await {
                                        Ok(it) => {
                                            let mut sent = Vec::new();
                                            for (i, p) in it.enumerate() {
                                                if i < k {
                                                    p.send(v + i as u32);
                                                    sent.push(v + i as u32);
                                                }
                                            }
                                            format!("sent {sent:?}")
                                        }
                                        Err(_) => "Err(SendError)".into(),
                                    })
                                })
                            })
                        }
                    },
                    MpscOp::Closed { slot, tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                t.closed().await;
                                Out::S("closed".into())
                            })
                        }),
                    },
                    MpscOp::Recv { slot } => {
                        let cell = Rc::clone(&rx);
                        slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return Out::S("rx busy".into());
                                };
                                let Some(r) = g.as_mut() else {
                                    return Out::S("no rx".into());
                                };
                                Out::S(format!("{:?}", r.recv().await))
                            })
                        })
                    }
                    MpscOp::RecvMany { slot, limit } => {
                        let cell = Rc::clone(&rx);
                        slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return Out::S("rx busy".into());
                                };
                                let Some(r) = g.as_mut() else {
                                    return Out::S("no rx".into());
                                };
                                let mut buf = Vec::new();
                                let n = r.recv_many(&mut buf, limit).await;
                                Out::S(format!("{n} {buf:?}"))
                            })
                        })
                    }
                    MpscOp::Poll { slot, fresh } => slots.poll(slot, fresh, |o| match o {
                        Out::S(s) => s,
                        Out::P(p) => {
                            permits.push(p);
                            "permit".into()
                        }
                    }),
                    MpscOp::DropFut { slot } => slots.drop_fut(slot),
                    MpscOp::TrySend { tx } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            match t.try_send(v) {
                                Ok(()) => format!("sent {v}"),
                                Err(e) => try_send_err(e).into(),
                            }
                        }
                    },
                    MpscOp::TryReserve { tx, send } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            match t.try_reserve() {
                                Ok(p) if send => {
                                    p.send(v);
                                    format!("sent {v}")
                                }
                                Ok(_) => "permit dropped".into(),
                                Err(e) => try_send_err(e).into(),
                            }
                        }
                    },
                    MpscOp::TryReserveOwned { tx } => match txs[tx].clone() {
                        None => "no tx".into(),
                        Some(t) => match t.try_reserve_owned() {
                            Ok(p) => {
                                permits.push(p);
                                "permit".into()
                            }
                            Err(e) => try_send_err(e).into(),
                        },
                    },
                    MpscOp::TryReserveMany { tx, n, k } => match &txs[tx] {
                        None => "no tx".into(),
                        Some(t) => {
                            let v = value();
                            match t.try_reserve_many(n) {
                                Ok(it) => {
                                    let mut sent = Vec::new();
                                    for (i, p) in it.enumerate() {
                                        if i < k {
                                            p.send(v + i as u32);
                                            sent.push(v + i as u32);
                                        }
                                    }
                                    format!("sent {sent:?}")
                                }
                                Err(e) => try_send_err(e).into(),
                            }
                        }
                    },
                    MpscOp::PermitSend { h } => match take(&mut permits, h) {
                        None => "none".into(),
                        Some(p) => {
                            let v = value();
                            drop(p.send(v));
                            format!("sent {v}")
                        }
                    },
                    MpscOp::PermitDrop { h, release } => match take(&mut permits, h) {
                        None => "none".into(),
                        Some(p) => {
                            if release {
                                drop(p.release());
                            } else {
                                drop(p);
                            }
                            "dropped".into()
                        }
                    },
                    MpscOp::CloneTx { from, to } => match txs[from].clone() {
                        None => "no tx".into(),
                        Some(t) => {
                            txs[to] = Some(t);
                            "cloned".into()
                        }
                    },
                    MpscOp::DropTx { tx } => match txs[tx].take() {
                        None => "no tx".into(),
                        Some(_) => "dropped".into(),
                    },
                    MpscOp::TryRecv => match rx.try_borrow_mut() {
                        Err(_) => "rx busy".into(),
                        Ok(mut g) => match g.as_mut() {
                            None => "no rx".into(),
                            Some(r) => match r.try_recv() {
                                Ok(v) => format!("Ok({v})"),
                                Err(TryRecvError::Empty) => "Err(Empty)".into(),
                                Err(TryRecvError::Disconnected) => "Err(Disconnected)".into(),
                            },
                        },
                    },
                    MpscOp::RxClose => match rx.try_borrow_mut() {
                        Err(_) => "rx busy".into(),
                        Ok(mut g) => match g.as_mut() {
                            None => "no rx".into(),
                            Some(r) => {
                                r.close();
                                "closed".into()
                            }
                        },
                    },
                    MpscOp::DropRx => {
                        let taken = match rx.try_borrow_mut() {
                            Err(_) => None,
                            Ok(mut g) => Some(g.take()),
                        };
                        match taken {
                            None => "rx busy".into(),
                            Some(None) => "no rx".into(),
                            Some(Some(r)) => {
                                drop(r);
                                "dropped".into()
                            }
                        }
                    }
                };
                let rx_state = match rx.try_borrow() {
                    Err(_) => "busy".into(),
                    Ok(g) => match g.as_ref() {
                        None => "none".into(),
                        Some(r) => format!(
                            "len={} empty={} closed={} cap={}/{} senders={}",
                            r.len(),
                            r.is_empty(),
                            r.is_closed(),
                            r.capacity(),
                            r.max_capacity(),
                            r.sender_strong_count()
                        ),
                    },
                };
                let tx_state: Vec<String> = txs
                    .iter()
                    .map(|t| match t {
                        None => "-".into(),
                        Some(t) => format!(
                            "cap={}/{} closed={}",
                            t.capacity(),
                            t.max_capacity(),
                            t.is_closed()
                        ),
                    })
                    .collect();
                let state = format!("rx({rx_state}) tx{tx_state:?} permits={}", permits.len());
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }

        pub fn oneshot(s: &Script<(), OneshotOp>, log: &mut Vec<Step>) {
            use k::sync::oneshot::{self, error::TryRecvError};
            type Fut = Pin<Box<dyn Future<Output = String>>>;
            let (tx, rx) = oneshot::channel::<u32>();
            let tx = Rc::new(RefCell::new(Some(tx)));
            let rx = Rc::new(RefCell::new(Some(rx)));
            let mut slots = Slots::<Fut>::new();
            for op in &s.ops {
                let out = match *op {
                    OneshotOp::Send { v } => {
                        let taken = match tx.try_borrow_mut() {
                            Err(_) => None,
                            Ok(mut g) => Some(g.take()),
                        };
                        match taken {
                            None => "tx busy".into(),
                            Some(None) => "no tx".into(),
                            Some(Some(t)) => format!("{:?}", t.send(v)),
                        }
                    }
                    OneshotOp::DropTx => {
                        let taken = match tx.try_borrow_mut() {
                            Err(_) => None,
                            Ok(mut g) => Some(g.take()),
                        };
                        match taken {
                            None => "tx busy".into(),
                            Some(None) => "no tx".into(),
                            Some(Some(t)) => {
                                drop(t);
                                "dropped".into()
                            }
                        }
                    }
                    OneshotOp::Closed { slot } => {
                        let cell = Rc::clone(&tx);
                        slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return "tx busy".into();
                                };
                                let Some(t) = g.as_mut() else {
                                    return "no tx".into();
                                };
                                t.closed().await;
                                "closed".into()
                            })
                        })
                    }
                    OneshotOp::Recv { slot } => {
                        let cell = Rc::clone(&rx);
                        slots.create(slot, move || -> Fut {
                            Box::pin(async move {
                                let Ok(mut g) = cell.try_borrow_mut() else {
                                    return "rx busy".into();
                                };
                                let Some(r) = g.as_mut() else {
                                    return "no rx".into();
                                };
                                if r.is_terminated() {
                                    return "terminated".into();
                                }
                                match r.await {
                                    Ok(v) => format!("Ok({v})"),
                                    Err(_) => "Err(RecvError)".into(),
                                }
                            })
                        })
                    }
                    OneshotOp::Poll { slot, fresh } => slots.poll(slot, fresh, |s| s),
                    OneshotOp::DropFut { slot } => slots.drop_fut(slot),
                    OneshotOp::TryRecv => match rx.try_borrow_mut() {
                        Err(_) => "rx busy".into(),
                        Ok(mut g) => match g.as_mut() {
                            None => "no rx".into(),
                            Some(r) => match r.try_recv() {
                                Ok(v) => format!("Ok({v})"),
                                Err(TryRecvError::Empty) => "Err(Empty)".into(),
                                Err(TryRecvError::Closed) => "Err(Closed)".into(),
                            },
                        },
                    },
                    OneshotOp::RxClose => match rx.try_borrow_mut() {
                        Err(_) => "rx busy".into(),
                        Ok(mut g) => match g.as_mut() {
                            None => "no rx".into(),
                            Some(r) => {
                                r.close();
                                "closed".into()
                            }
                        },
                    },
                    OneshotOp::DropRx => {
                        let taken = match rx.try_borrow_mut() {
                            Err(_) => None,
                            Ok(mut g) => Some(g.take()),
                        };
                        match taken {
                            None => "rx busy".into(),
                            Some(None) => "no rx".into(),
                            Some(Some(r)) => {
                                drop(r);
                                "dropped".into()
                            }
                        }
                    }
                };
                let tx_state = match tx.try_borrow() {
                    Err(_) => "busy".into(),
                    Ok(g) => match g.as_ref() {
                        None => "none".into(),
                        Some(t) => format!("closed={}", t.is_closed()),
                    },
                };
                let rx_state = match rx.try_borrow() {
                    Err(_) => "busy".into(),
                    Ok(g) => match g.as_ref() {
                        None => "none".into(),
                        Some(r) => {
                            format!("empty={} terminated={}", r.is_empty(), r.is_terminated())
                        }
                    },
                };
                let state = format!("tx({tx_state}) rx({rx_state})");
                record(log, op, out, state, &slots);
            }
            slots.clear();
        }
    };
}

for_both!(mpsc_oneshot);
