//! Reading: `AsyncReadExt` (`read`, `read_buf`, `read_exact`,
//! `read_to_end`, `read_to_string`, the number readers) and
//! `AsyncBufReadExt` (`fill_buf`, `consume`, `read_line`, `read_until`,
//! `lines` / `next_line`, `split` / `next_segment`), on a stack of
//! adapters over scripted mock readers: bare, `take`, `chain`, `BufReader`
//! (with its `buffer()`), `BufStream`, `io::join`, and `&[u8]` / `Cursor`
//! as buffered readers.
//!
//! A run of consecutive `NextLine` (or `NextSegment` with one delimiter)
//! ops shares one `Lines` (or `Split`), so partial records carried between
//! calls (after a cancellation or an error) are compared too.

use crate::harness::{cut, drive_fmt, for_both, run_op, show, Rng, Shrink, Step};
use crate::mock::{gen_read_events, gen_source, REv};

/// What the ops read from.
#[derive(Clone, Debug)]
pub enum RStack {
    Raw,
    Take(u64),
    /// The first mock, then the second.
    Chain,
    Buf(usize),
    BufOverTake(usize, u64),
    TakeOverBuf(u64, usize),
    ChainOfBufs(usize, usize),
    BufOverChain(usize),
    /// A `BufStream` (read and write buffer capacities).
    Stream(usize, usize),
    /// The source as a `&[u8]` (no events).
    Slice,
    /// The source in a `Cursor<Vec<u8>>` (no events).
    Cursor,
    /// `io::join` of a `BufReader` and a sink.
    JoinBuf(usize),
}

impl RStack {
    fn buffered(&self) -> bool {
        !matches!(self, RStack::Raw | RStack::Take(_) | RStack::Chain)
    }
}

#[derive(Clone, Debug)]
pub enum ROp {
    Read {
        n: usize,
        cancel: Option<usize>,
    },
    ReadBuf {
        n: usize,
        cancel: Option<usize>,
    },
    ReadExact(usize),
    /// Appends to one `Vec` kept across the script.
    ReadToEnd,
    /// Appends to one `String` kept across the script.
    ReadToString,
    /// One of the 22 number readers.
    Num(u8),
    FillBuf {
        cancel: Option<usize>,
    },
    Consume(usize),
    /// Appends to one `String` kept across the script.
    ReadLine,
    /// Appends to one `Vec` kept across the script.
    ReadUntil {
        delim: u8,
        cancel: Option<usize>,
    },
    NextLine {
        cancel: Option<usize>,
    },
    NextSegment {
        delim: u8,
        cancel: Option<usize>,
    },
}

#[derive(Clone, Debug)]
pub struct ReadScript {
    pub src: Vec<u8>,
    pub ev: Vec<REv>,
    pub src2: Vec<u8>,
    pub ev2: Vec<REv>,
    pub stack: RStack,
    pub ops: Vec<ROp>,
}

impl Shrink for ReadScript {
    fn parts(&self) -> Vec<usize> {
        vec![
            self.ops.len(),
            self.ev.len(),
            self.ev2.len(),
            self.src.len(),
            self.src2.len(),
        ]
    }

    fn without(&self, part: usize, at: usize, n: usize) -> Self {
        let mut s = self.clone();
        match part {
            0 => s.ops = cut(&s.ops, at, n),
            1 => s.ev = cut(&s.ev, at, n),
            2 => s.ev2 = cut(&s.ev2, at, n),
            3 => s.src = cut(&s.src, at, n),
            _ => s.src2 = cut(&s.src2, at, n),
        }
        s
    }
}

fn cancel(rng: &mut Rng) -> Option<usize> {
    rng.chance(15).then(|| rng.range(1, 3))
}

fn delim(rng: &mut Rng) -> u8 {
    [b'\n', b',', b'a', 0][rng.below(4) as usize]
}

pub fn gen(rng: &mut Rng) -> ReadScript {
    // Never zero: `BufReader::with_capacity(0, ..)` panics in both crates
    // (as documented), which `buf_reader_with_capacity_zero` covers.
    let cap = |rng: &mut Rng| rng.range(1, 64);
    let limit = |rng: &mut Rng| rng.below(200);
    let stack = match rng.pick(&[2, 2, 2, 6, 2, 2, 2, 2, 2, 1, 1, 1]) {
        0 => RStack::Raw,
        1 => RStack::Take(limit(rng)),
        2 => RStack::Chain,
        3 => RStack::Buf(cap(rng)),
        4 => RStack::BufOverTake(cap(rng), limit(rng)),
        5 => RStack::TakeOverBuf(limit(rng), cap(rng)),
        6 => RStack::ChainOfBufs(cap(rng), cap(rng)),
        7 => RStack::BufOverChain(cap(rng)),
        8 => RStack::Stream(cap(rng), cap(rng)),
        9 => RStack::Slice,
        10 => RStack::Cursor,
        _ => RStack::JoinBuf(cap(rng)),
    };
    let buffered = stack.buffered();
    let n_ops = rng.range(1, 14);
    let mut ops = Vec::new();
    while ops.len() < n_ops {
        let w_buf = u32::from(buffered);
        let op = match rng.pick(&[4, 2, 2, 1, 1, 2, 2 * w_buf, w_buf, 3 * w_buf, 2 * w_buf]) {
            0 => ROp::Read {
                n: rng.size(),
                cancel: cancel(rng),
            },
            1 => ROp::ReadBuf {
                n: rng.size(),
                cancel: cancel(rng),
            },
            2 => ROp::ReadExact(rng.size()),
            3 => ROp::ReadToEnd,
            4 => ROp::ReadToString,
            5 => ROp::Num(rng.below(22) as u8),
            6 => ROp::FillBuf {
                cancel: cancel(rng),
            },
            7 => ROp::Consume(rng.range(0, 12)),
            8 => {
                if rng.coin() {
                    ROp::ReadLine
                } else {
                    ROp::ReadUntil {
                        delim: delim(rng),
                        cancel: cancel(rng),
                    }
                }
            }
            _ => {
                // A run of records.
                let seg = rng.coin().then(|| delim(rng));
                for _ in 0..rng.range(1, 6) {
                    ops.push(match seg {
                        None => ROp::NextLine {
                            cancel: cancel(rng),
                        },
                        Some(delim) => ROp::NextSegment {
                            delim,
                            cancel: cancel(rng),
                        },
                    });
                }
                continue;
            }
        };
        ops.push(op);
    }
    let (inv1, inv2) = (rng.chance(30), rng.chance(30));
    ReadScript {
        src: gen_source(rng, 160, inv1),
        ev: gen_read_events(rng, 12),
        src2: gen_source(rng, 60, inv2),
        ev2: gen_read_events(rng, 4),
        stack,
        ops,
    }
}

/// One arm per number reader: `$i` picks it, the value is formatted.
macro_rules! num_match {
    ($r:ident, $i:expr, $polls:expr; $($n:literal $f:ident $fmt:expr;)*) => {
        match $i {
            $($n => drive_fmt($r.$f(), None, $polls, $fmt),)*
            _ => unreachable!(),
        }
    };
}

/// Runs number reader `$i` (0..22) on `$r`, formatted.
macro_rules! read_num {
    ($r:ident, $i:expr, $polls:expr) => {
        num_match! { $r, $i, $polls;
            0 read_u8 |v| format!("{v}");
            1 read_i8 |v| format!("{v}");
            2 read_u16 |v| format!("{v}");
            3 read_i16 |v| format!("{v}");
            4 read_u32 |v| format!("{v}");
            5 read_i32 |v| format!("{v}");
            6 read_u64 |v| format!("{v}");
            7 read_i64 |v| format!("{v}");
            8 read_u128 |v| format!("{v}");
            9 read_i128 |v| format!("{v}");
            10 read_f32 |v: f32| format!("{:#x}", v.to_bits());
            11 read_f64 |v: f64| format!("{:#x}", v.to_bits());
            12 read_u16_le |v| format!("{v}");
            13 read_i16_le |v| format!("{v}");
            14 read_u32_le |v| format!("{v}");
            15 read_i32_le |v| format!("{v}");
            16 read_u64_le |v| format!("{v}");
            17 read_i64_le |v| format!("{v}");
            18 read_u128_le |v| format!("{v}");
            19 read_i128_le |v| format!("{v}");
            20 read_f32_le |v: f32| format!("{:#x}", v.to_bits());
            21 read_f64_le |v: f64| format!("{:#x}", v.to_bits());
        }
    };
}

macro_rules! readers {
    () => {
        crate::mock::mock_impls!();
        use k::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

        type DynR = Box<dyn AsyncRead + Unpin>;

        enum Top {
            Plain(DynR),
            BufR(BufReader<DynR>),
            Buffered(Box<dyn AsyncBufRead + Unpin>),
        }

        impl Top {
            fn rd(&mut self) -> &mut (dyn AsyncRead + Unpin) {
                match self {
                    Top::Plain(r) => &mut **r,
                    Top::BufR(r) => r,
                    Top::Buffered(r) => &mut **r,
                }
            }

            fn bufrd(&mut self) -> &mut (dyn AsyncBufRead + Unpin) {
                match self {
                    Top::Plain(_) => unreachable!("buffered op on an unbuffered stack"),
                    Top::BufR(r) => r,
                    Top::Buffered(r) => &mut **r,
                }
            }

            /// `BufReader::buffer()`, where the top is one.
            fn state(&self) -> String {
                match self {
                    Top::BufR(r) => format!(" buffer={}", show(r.buffer())),
                    _ => String::new(),
                }
            }
        }

        pub fn run(s: &ReadScript) -> Vec<Step> {
            let c1 = ReadCore::shared(&s.src, &s.ev);
            let c2 = ReadCore::shared(&s.src2, &s.ev2);
            let m1 = || -> DynR { Box::new(MockR(MockRc::clone(&c1))) };
            let m2 = || -> DynR { Box::new(MockR(MockRc::clone(&c2))) };
            let mut top = match s.stack {
                RStack::Raw => Top::Plain(m1()),
                RStack::Take(l) => Top::Plain(Box::new(m1().take(l))),
                RStack::Chain => Top::Plain(Box::new(m1().chain(m2()))),
                RStack::Buf(c) => Top::BufR(BufReader::with_capacity(c, m1())),
                RStack::BufOverTake(c, l) => {
                    Top::BufR(BufReader::with_capacity(c, Box::new(m1().take(l))))
                }
                RStack::TakeOverBuf(l, c) => {
                    Top::Buffered(Box::new(BufReader::with_capacity(c, m1()).take(l)))
                }
                RStack::ChainOfBufs(a, b) => Top::Buffered(Box::new(
                    BufReader::with_capacity(a, m1()).chain(BufReader::with_capacity(b, m2())),
                )),
                RStack::BufOverChain(c) => {
                    Top::BufR(BufReader::with_capacity(c, Box::new(m1().chain(m2()))))
                }
                RStack::Stream(rc, wc) => {
                    let w = WriteCore::shared(&[], &[], &[]);
                    let rw = MockRW(MockR(MockRc::clone(&c1)), MockW(w));
                    Top::Buffered(Box::new(k::io::BufStream::with_capacity(rc, wc, rw)))
                }
                RStack::Slice => {
                    let leaked: &'static [u8] = Box::leak(s.src.clone().into_boxed_slice());
                    Top::Buffered(Box::new(leaked))
                }
                RStack::Cursor => Top::Buffered(Box::new(std::io::Cursor::new(s.src.clone()))),
                RStack::JoinBuf(c) => Top::Buffered(Box::new(k::io::join(
                    BufReader::with_capacity(c, m1()),
                    k::io::sink(),
                ))),
            };
            let mut log = Vec::new();
            let mut to_end = b"x".to_vec();
            let mut to_string = String::from("s:");
            let mut line = String::from("l:");
            let mut until = b"u:".to_vec();
            let mut i = 0;
            while i < s.ops.len() {
                let op = &s.ops[i];
                let mut polls = 0;
                let calls0 = c1.borrow().calls + c2.borrow().calls;
                // A run of `NextLine`s shares one `Lines`, of `NextSegment`s
                // (one delimiter) one `Split`.
                if let ROp::NextLine { .. } | ROp::NextSegment { .. } = op {
                    let seg = match op {
                        ROp::NextSegment { delim, .. } => Some(*delim),
                        _ => None,
                    };
                    let r = top.bufrd();
                    let (mut lines, mut split) = match seg {
                        None => (Some(r.lines()), None),
                        Some(d) => (None, Some(r.split(d))),
                    };
                    while i < s.ops.len() {
                        let (out, op) = match (&s.ops[i], &mut lines, &mut split) {
                            (ROp::NextLine { cancel }, Some(l), _) => (
                                drive_fmt(l.next_line(), *cancel, &mut polls, |v| format!("{v:?}")),
                                &s.ops[i],
                            ),
                            (ROp::NextSegment { delim, cancel }, _, Some(sp))
                                if Some(*delim) == seg =>
                            {
                                (
                                    drive_fmt(sp.next_segment(), *cancel, &mut polls, |v| {
                                        v.map_or("None".into(), |v| show(&v))
                                    }),
                                    &s.ops[i],
                                )
                            }
                            _ => break,
                        };
                        log.push(Step::new(op, out, format!("polls={polls}")));
                        polls = 0;
                        i += 1;
                    }
                    continue;
                }
                let out = match *op {
                    ROp::Read { n, cancel } => {
                        let mut b = vec![0u8; n];
                        let r = run_op(top.rd().read(&mut b), cancel, &mut polls);
                        r.fmt(|k| show(&b[..k]))
                    }
                    ROp::ReadBuf { n, cancel } => {
                        let mut b = vec![0u8; n];
                        let mut sl = &mut b[..];
                        let r = drive_fmt(top.rd().read_buf(&mut sl), cancel, &mut polls, |k| {
                            format!("{k}")
                        });
                        let left = sl.len();
                        format!("{r} {}", show(&b[..n - left]))
                    }
                    ROp::ReadExact(n) => {
                        let mut b = vec![0u8; n];
                        let r = run_op(top.rd().read_exact(&mut b), None, &mut polls);
                        r.fmt(|k| format!("{k} {}", show(&b)))
                    }
                    ROp::ReadToEnd => {
                        let r =
                            drive_fmt(top.rd().read_to_end(&mut to_end), None, &mut polls, |k| {
                                format!("{k}")
                            });
                        format!("{r} buf={}", show(&to_end))
                    }
                    ROp::ReadToString => {
                        let r = drive_fmt(
                            top.rd().read_to_string(&mut to_string),
                            None,
                            &mut polls,
                            |k| format!("{k}"),
                        );
                        format!("{r} buf={to_string:?}")
                    }
                    ROp::Num(i) => {
                        let r = top.rd();
                        read_num!(r, i, &mut polls)
                    }
                    ROp::FillBuf { cancel } => {
                        drive_fmt(top.bufrd().fill_buf(), cancel, &mut polls, |b| show(b))
                    }
                    ROp::Consume(n) => {
                        // No more than `fill_buf` returned (Tokio's
                        // contract); what is buffered now, at most.
                        let avail = match &top {
                            Top::BufR(r) => r.buffer().len(),
                            _ => usize::MAX,
                        };
                        if avail == usize::MAX {
                            // Unknown without a fill: fill first (a
                            // no-op when something is buffered).
                            let r = drive_fmt(top.bufrd().fill_buf(), None, &mut polls, |b| {
                                format!("{}", b.len())
                            });
                            match r.strip_prefix("Ok(").and_then(|x| x.strip_suffix(')')) {
                                Some(len) => {
                                    let k = n.min(len.parse().unwrap());
                                    top.bufrd().consume(k);
                                    format!("consumed {k} of {len}")
                                }
                                None => r,
                            }
                        } else {
                            let k = n.min(avail);
                            top.bufrd().consume(k);
                            format!("consumed {k}")
                        }
                    }
                    ROp::ReadLine => {
                        let r =
                            drive_fmt(top.bufrd().read_line(&mut line), None, &mut polls, |k| {
                                format!("{k}")
                            });
                        format!("{r} buf={line:?}")
                    }
                    ROp::ReadUntil { delim, cancel } => {
                        let r = drive_fmt(
                            top.bufrd().read_until(delim, &mut until),
                            cancel,
                            &mut polls,
                            |k| format!("{k}"),
                        );
                        format!("{r} buf={}", show(&until))
                    }
                    ROp::NextLine { .. } | ROp::NextSegment { .. } => unreachable!(),
                };
                let calls = c1.borrow().calls + c2.borrow().calls - calls0;
                let hard = format!("{out}{}", top.state());
                log.push(Step::new(op, hard, format!("polls={polls} calls={calls}")));
                i += 1;
            }
            log
        }
    };
}

for_both!(readers);
