//! The in-memory pipes: `duplex` (whole, or each end `io::split` into
//! halves) and `simplex` (split, or one `SimplexStream` that reads what it
//! wrote), with futures that stay alive across steps in slots, so wake-ups
//! are compared too.
//!
//! Futures are polled only by `Poll` ops (and once when created), the same
//! on both crates; after each step the log says which live futures were
//! woken since their last poll. A wake weft gives and Tokio does not is
//! allowed (counted); one Tokio gives and weft does not is a lost wake-up
//! if polling the future right then shows it mattered (`probe`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::harness::Step;
use crate::harness::{counting_waker, cut, for_both, show, BoxFut, Count, Rng, Shrink};

#[derive(Clone, Copy, Debug)]
pub enum PKind {
    /// Ends 0 and 1.
    Duplex(usize),
    /// Read half, write half of end 0, then of end 1 (objects 0..4).
    DuplexSplit(usize),
    /// Read half 0, write half 1.
    Simplex(usize),
    /// One stream (object 0).
    SimplexUnsplit(usize),
}

impl PKind {
    fn objects(self) -> usize {
        match self {
            PKind::Duplex(_) | PKind::Simplex(_) => 2,
            PKind::DuplexSplit(_) => 4,
            PKind::SimplexUnsplit(_) => 1,
        }
    }
}

pub const SLOTS: usize = 4;

#[derive(Clone, Debug)]
pub enum POp {
    /// One `poll_read` of up to `n` bytes, until ready.
    Read {
        obj: usize,
        n: usize,
        slot: usize,
    },
    /// Reads until `n` bytes or end of stream.
    ReadExact {
        obj: usize,
        n: usize,
        slot: usize,
    },
    /// One `poll_write` (or `poll_write_vectored` of `n` split in two).
    Write {
        obj: usize,
        n: usize,
        vectored: bool,
        slot: usize,
    },
    /// Writes until all `n` bytes are accepted.
    WriteAll {
        obj: usize,
        n: usize,
        slot: usize,
    },
    Flush {
        obj: usize,
        slot: usize,
    },
    Shutdown {
        obj: usize,
        slot: usize,
    },
    DropObj {
        obj: usize,
    },
    DropFut {
        slot: usize,
    },
    /// Polls the slot, woken or not.
    Poll {
        slot: usize,
    },
}

#[derive(Clone, Debug)]
pub struct PipeScript {
    pub kind: PKind,
    pub ops: Vec<POp>,
}

/// The script cut after step `i`, then a poll of `slot`.
pub fn probe(s: &PipeScript, i: usize, slot: usize) -> PipeScript {
    let mut ops = s.ops[..=i].to_vec();
    ops.push(POp::Poll { slot });
    PipeScript { kind: s.kind, ops }
}

impl Shrink for PipeScript {
    fn parts(&self) -> Vec<usize> {
        vec![self.ops.len()]
    }

    fn without(&self, _: usize, at: usize, n: usize) -> Self {
        PipeScript {
            kind: self.kind,
            ops: cut(&self.ops, at, n),
        }
    }
}

pub fn gen(rng: &mut Rng) -> PipeScript {
    let cap = rng.range(1, 24);
    let kind = match rng.pick(&[4, 3, 2, 1]) {
        0 => PKind::Duplex(cap),
        1 => PKind::DuplexSplit(cap),
        2 => PKind::Simplex(cap),
        _ => PKind::SimplexUnsplit(cap),
    };
    let objs = kind.objects();
    let ops = (0..rng.range(1, 30))
        .map(|_| {
            let obj = rng.below(objs as u64) as usize;
            let slot = rng.below(SLOTS as u64) as usize;
            let n = rng.range(0, 30);
            match rng.pick(&[5, 2, 5, 2, 1, 1, 1, 1, 8]) {
                0 => POp::Read { obj, n, slot },
                1 => POp::ReadExact { obj, n, slot },
                2 => POp::Write {
                    obj,
                    n,
                    vectored: rng.coin(),
                    slot,
                },
                3 => POp::WriteAll { obj, n, slot },
                4 => POp::Flush { obj, slot },
                5 => POp::Shutdown { obj, slot },
                6 => POp::DropObj { obj },
                7 => POp::DropFut { slot },
                _ => POp::Poll { slot },
            }
        })
        .collect();
    PipeScript { kind, ops }
}

/// A future in a slot, with its own counting waker.
pub struct Slot {
    fut: BoxFut,
    count: Arc<Count>,
    waker: Waker,
    seen: usize,
}

impl Slot {
    pub fn new(fut: BoxFut) -> Slot {
        let (count, waker) = counting_waker();
        Slot {
            fut,
            count,
            waker,
            seen: 0,
        }
    }

    pub fn poll(&mut self) -> Poll<String> {
        self.seen = self.count.get();
        self.fut
            .as_mut()
            .poll(&mut Context::from_waker(&self.waker))
    }

    pub fn woken(&self) -> bool {
        self.count.get() > self.seen
    }
}

/// Byte `i` written by object `obj` (different for each writer).
pub fn obj_stream(obj: usize, from: usize, n: usize) -> Vec<u8> {
    (from..from + n)
        .map(|i| {
            (i as u8)
                .wrapping_mul(13)
                .wrapping_add((obj as u8).wrapping_mul(100))
        })
        .collect()
}

/// Each writer's position in its stream.
pub type Positions = Rc<Vec<Cell<usize>>>;

macro_rules! pipes {
    () => {
        use k::io::{AsyncRead, AsyncWrite, DuplexStream, ReadHalf, SimplexStream, WriteHalf};
        use std::pin::Pin;

        pub enum Obj {
            D(DuplexStream),
            R(ReadHalf<DuplexStream>),
            W(WriteHalf<DuplexStream>),
            S(SimplexStream),
            SR(ReadHalf<SimplexStream>),
            SW(WriteHalf<SimplexStream>),
        }

        impl Obj {
            fn reader(&mut self) -> Option<Pin<&mut (dyn AsyncRead + Unpin)>> {
                Some(match self {
                    Obj::D(x) => Pin::new(x),
                    Obj::R(x) => Pin::new(x),
                    Obj::S(x) => Pin::new(x),
                    Obj::SR(x) => Pin::new(x),
                    Obj::W(_) | Obj::SW(_) => return None,
                })
            }

            fn writer(&mut self) -> Option<Pin<&mut (dyn AsyncWrite + Unpin)>> {
                Some(match self {
                    Obj::D(x) => Pin::new(x),
                    Obj::W(x) => Pin::new(x),
                    Obj::S(x) => Pin::new(x),
                    Obj::SW(x) => Pin::new(x),
                    Obj::R(_) | Obj::SR(_) => return None,
                })
            }
        }

        type Shared = Rc<RefCell<Option<Obj>>>;

        fn fmt_res<T>(r: std::io::Result<T>, ok: impl FnOnce(T) -> String) -> String {
            match r {
                Ok(v) => format!("Ok({})", ok(v)),
                Err(e) => format!("Err({:?})", e.kind()),
            }
        }

        /// Runs `f` on the object's reader (or writer): `gone` once dropped,
        /// `n/a` if it cannot.
        fn with_obj<T>(
            o: &Shared,
            write: bool,
            f: impl FnOnce(
                Pin<&mut (dyn AsyncRead + Unpin)>,
                Pin<&mut (dyn AsyncWrite + Unpin)>,
            ) -> Poll<T>,
            fmt: impl FnOnce(T) -> String,
        ) -> Poll<String> {
            let mut g = o.borrow_mut();
            let Some(obj) = g.as_mut() else {
                return Poll::Ready("gone".into());
            };
            // A stand-in for the side not used.
            let mut none_r: &[u8] = &[];
            let mut none_w = Vec::new();
            let (r, w): (
                Pin<&mut (dyn AsyncRead + Unpin)>,
                Pin<&mut (dyn AsyncWrite + Unpin)>,
            ) = if write {
                match obj.writer() {
                    Some(w) => (Pin::new(&mut none_r), w),
                    None => return Poll::Ready("n/a".into()),
                }
            } else {
                match obj.reader() {
                    Some(r) => (r, Pin::new(&mut none_w)),
                    None => return Poll::Ready("n/a".into()),
                }
            };
            f(r, w).map(fmt)
        }

        fn make(op: &POp, objs: &[Shared], pos: &Positions) -> BoxFut {
            match *op {
                POp::Read { obj, n, .. } => {
                    let o = Rc::clone(&objs[obj]);
                    Box::pin(std::future::poll_fn(move |cx| {
                        let mut b = vec![0u8; n];
                        let mut rb = k::io::ReadBuf::new(&mut b);
                        with_obj(
                            &o,
                            false,
                            |r, _| r.poll_read(cx, &mut rb),
                            |x| fmt_res(x, |()| String::new()),
                        )
                        .map(|s| {
                            if s == "Ok()" {
                                format!("Ok({})", show(rb.filled()))
                            } else {
                                s
                            }
                        })
                    }))
                }
                POp::ReadExact { obj, n, .. } => {
                    let o = Rc::clone(&objs[obj]);
                    let mut acc = Vec::new();
                    Box::pin(std::future::poll_fn(move |cx| loop {
                        if acc.len() == n {
                            return Poll::Ready(format!("Ok({})", show(&acc)));
                        }
                        let mut b = vec![0u8; n - acc.len()];
                        let mut rb = k::io::ReadBuf::new(&mut b);
                        let r = with_obj(
                            &o,
                            false,
                            |r, _| r.poll_read(cx, &mut rb),
                            |x| fmt_res(x, |()| String::new()),
                        );
                        match r {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(s) if s != "Ok()" => return Poll::Ready(s),
                            Poll::Ready(_) if rb.filled().is_empty() => {
                                return Poll::Ready(format!("Eof after {}", show(&acc)))
                            }
                            Poll::Ready(_) => acc.extend_from_slice(rb.filled()),
                        }
                    }))
                }
                POp::Write {
                    obj, n, vectored, ..
                } => {
                    let o = Rc::clone(&objs[obj]);
                    let pos = Rc::clone(pos);
                    Box::pin(std::future::poll_fn(move |cx| {
                        let data = obj_stream(obj, pos[obj].get(), n);
                        let (a, b) = data.split_at(n / 2);
                        let bufs = [std::io::IoSlice::new(a), std::io::IoSlice::new(b)];
                        with_obj(
                            &o,
                            true,
                            |_, w| {
                                if vectored {
                                    w.poll_write_vectored(cx, &bufs)
                                } else {
                                    w.poll_write(cx, &data)
                                }
                            },
                            |x| {
                                fmt_res(x, |k| {
                                    pos[obj].set(pos[obj].get() + k);
                                    format!("{k}")
                                })
                            },
                        )
                    }))
                }
                POp::WriteAll { obj, n, .. } => {
                    let o = Rc::clone(&objs[obj]);
                    let pos = Rc::clone(pos);
                    let mut left = n;
                    Box::pin(std::future::poll_fn(move |cx| loop {
                        if left == 0 {
                            return Poll::Ready(format!("Ok(all {n})"));
                        }
                        let data = obj_stream(obj, pos[obj].get(), left);
                        let r = with_obj(
                            &o,
                            true,
                            |_, w| w.poll_write(cx, &data),
                            |x| fmt_res(x, |k| format!("{k}")),
                        );
                        match r {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(s) => match s
                                .strip_prefix("Ok(")
                                .and_then(|x| x.strip_suffix(')'))
                                .and_then(|x| x.parse::<usize>().ok())
                            {
                                Some(0) => return Poll::Ready("WriteZero".into()),
                                Some(k) => {
                                    pos[obj].set(pos[obj].get() + k);
                                    left -= k;
                                }
                                None => return Poll::Ready(format!("{s} after {}", n - left)),
                            },
                        }
                    }))
                }
                POp::Flush { obj, .. } | POp::Shutdown { obj, .. } => {
                    let o = Rc::clone(&objs[obj]);
                    let flush = matches!(op, POp::Flush { .. });
                    Box::pin(std::future::poll_fn(move |cx| {
                        with_obj(
                            &o,
                            true,
                            |_, w| {
                                if flush {
                                    w.poll_flush(cx)
                                } else {
                                    w.poll_shutdown(cx)
                                }
                            },
                            |x| fmt_res(x, |()| String::new()),
                        )
                    }))
                }
                _ => unreachable!(),
            }
        }

        pub fn run(s: &PipeScript) -> Vec<Step> {
            let shared = |o: Obj| -> Shared { Rc::new(RefCell::new(Some(o))) };
            let objs: Vec<Shared> = match s.kind {
                PKind::Duplex(c) => {
                    let (a, b) = k::io::duplex(c);
                    vec![shared(Obj::D(a)), shared(Obj::D(b))]
                }
                PKind::DuplexSplit(c) => {
                    let (a, b) = k::io::duplex(c);
                    let (ar, aw) = k::io::split(a);
                    let (br, bw) = k::io::split(b);
                    vec![
                        shared(Obj::R(ar)),
                        shared(Obj::W(aw)),
                        shared(Obj::R(br)),
                        shared(Obj::W(bw)),
                    ]
                }
                PKind::Simplex(c) => {
                    let (r, w) = k::io::simplex(c);
                    vec![shared(Obj::SR(r)), shared(Obj::SW(w))]
                }
                PKind::SimplexUnsplit(c) => {
                    vec![shared(Obj::S(SimplexStream::new_unsplit(c)))]
                }
            };
            let pos: Positions = Rc::new((0..objs.len()).map(|_| Cell::new(0)).collect());
            let mut slots: Vec<Option<Slot>> = (0..SLOTS).map(|_| None).collect();
            let mut log = Vec::new();
            for op in &s.ops {
                let out = match *op {
                    POp::Read { slot, .. }
                    | POp::ReadExact { slot, .. }
                    | POp::Write { slot, .. }
                    | POp::WriteAll { slot, .. }
                    | POp::Flush { slot, .. }
                    | POp::Shutdown { slot, .. } => {
                        let old = slots[slot].take().is_some();
                        let mut new = Slot::new(make(op, &objs, &pos));
                        let r = match new.poll() {
                            Poll::Ready(v) => v,
                            Poll::Pending => {
                                slots[slot] = Some(new);
                                "Pending".into()
                            }
                        };
                        if old {
                            format!("(old dropped) {r}")
                        } else {
                            r
                        }
                    }
                    POp::DropObj { obj } => {
                        let had = objs[obj].borrow_mut().take();
                        let r = if had.is_some() { "dropped" } else { "gone" };
                        drop(had);
                        r.into()
                    }
                    POp::DropFut { slot } => if slots[slot].take().is_some() {
                        "dropped"
                    } else {
                        "empty"
                    }
                    .into(),
                    POp::Poll { slot } => match slots[slot].as_mut().map(Slot::poll) {
                        None => "empty".into(),
                        Some(Poll::Pending) => "Pending".into(),
                        Some(Poll::Ready(v)) => {
                            slots[slot] = None;
                            v
                        }
                    },
                };
                let mut step = Step::new(op, out, String::new());
                step.woken = slots
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.woken())))
                    .collect();
                log.push(step);
            }
            log
        }
    };
}

for_both!(pipes);
