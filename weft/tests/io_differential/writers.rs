//! Writing: `AsyncWriteExt` (`write`, `write_all`, `write_vectored`,
//! `write_buf`, `write_all_buf`, the number writers, `flush`, `shutdown`)
//! on a stack over a scripted mock writer (vectored or not): bare,
//! `BufWriter` (with its `buffer()`), two `BufWriter`s, the `WriteHalf` of
//! `io::split`, a `BufWriter` over that half, `BufStream`, and `io::join`.
//!
//! The program writes one byte stream (`mock::stream`), moving on by what
//! each write reports. What reached the mock is compared strictly where a
//! program can rely on it: after every op on an unbuffered stack, and after
//! a successful `flush` or `shutdown` on a buffered one; elsewhere it is
//! informational (when a `BufWriter` passes bytes on is its own business).

use bytes::Buf;

use crate::harness::{cut, drive_fmt, for_both, run_op, show, Rng, Shrink, Step};
use crate::mock::{gen_flush_events, gen_write_events, stream, FEv, WEv};

#[derive(Clone, Debug)]
pub enum WStack {
    Raw,
    Buf(usize),
    /// A `BufWriter` (first capacity) over a `BufWriter`.
    BufOverBuf(usize, usize),
    /// The write half of `io::split` over the mock.
    Half,
    BufOverHalf(usize),
    /// A `BufStream` (read and write capacities).
    Stream(usize, usize),
    /// `io::join` of an empty reader and the mock.
    Join,
}

#[derive(Clone, Debug)]
pub enum WOp {
    Write {
        n: usize,
        cancel: Option<usize>,
    },
    WriteAll(usize),
    WriteVectored(Vec<usize>),
    /// `write_buf` of a `Chain` of two slices.
    WriteBuf(usize, usize),
    WriteAllBuf(usize, usize),
    /// One of the 22 number writers.
    Num(u8),
    Flush,
    Shutdown,
}

#[derive(Clone, Debug)]
pub struct WriteScript {
    pub vectored: bool,
    pub ev: Vec<WEv>,
    pub fev: Vec<FEv>,
    pub sev: Vec<FEv>,
    pub stack: WStack,
    pub ops: Vec<WOp>,
}

impl Shrink for WriteScript {
    fn parts(&self) -> Vec<usize> {
        vec![
            self.ops.len(),
            self.ev.len(),
            self.fev.len(),
            self.sev.len(),
        ]
    }

    fn without(&self, part: usize, at: usize, n: usize) -> Self {
        let mut s = self.clone();
        match part {
            0 => s.ops = cut(&s.ops, at, n),
            1 => s.ev = cut(&s.ev, at, n),
            2 => s.fev = cut(&s.fev, at, n),
            _ => s.sev = cut(&s.sev, at, n),
        }
        s
    }
}

pub fn gen(rng: &mut Rng) -> WriteScript {
    let cap = |rng: &mut Rng| rng.range(0, 64);
    // A `BufStream`'s read buffer, never of capacity zero: that panics in
    // both crates (as documented), which `buf_reader_with_capacity_zero`
    // covers.
    let rcap = |rng: &mut Rng| rng.range(1, 64);
    let stack = match rng.pick(&[2, 5, 2, 2, 2, 2, 1]) {
        0 => WStack::Raw,
        1 => WStack::Buf(cap(rng)),
        2 => WStack::BufOverBuf(cap(rng), cap(rng)),
        3 => WStack::Half,
        4 => WStack::BufOverHalf(cap(rng)),
        5 => WStack::Stream(rcap(rng), cap(rng)),
        _ => WStack::Join,
    };
    let vectored = rng.coin();
    let ops = (0..rng.range(1, 12))
        .map(|_| match rng.pick(&[4, 3, 2, 2, 2, 2, 2, 1]) {
            0 => WOp::Write {
                n: rng.size(),
                cancel: rng.chance(15).then(|| rng.range(1, 3)),
            },
            1 => WOp::WriteAll(rng.size()),
            2 => WOp::WriteVectored((0..rng.range(0, 4)).map(|_| rng.range(0, 40)).collect()),
            3 => WOp::WriteBuf(rng.range(0, 40), rng.range(0, 40)),
            4 => WOp::WriteAllBuf(rng.range(0, 40), rng.range(0, 40)),
            5 => WOp::Num(rng.below(22) as u8),
            6 => WOp::Flush,
            _ => WOp::Shutdown,
        })
        .collect();
    WriteScript {
        vectored,
        ev: gen_write_events(rng, 12),
        fev: gen_flush_events(rng, 4),
        sev: gen_flush_events(rng, 3),
        stack,
        ops,
    }
}

/// One arm per number writer: `$i` picks it; the value is the one whose
/// encoding is the program's next bytes. Gives the result and the size.
macro_rules! wnum_match {
    ($w:ident, $i:expr, $pos:expr, $polls:expr; $($n:literal $f:ident $t:ty, $from:ident;)*) => {
        match $i {
            $($n => {
                const N: usize = std::mem::size_of::<$t>();
                let bytes: [u8; N] = stream($pos, N).try_into().unwrap();
                let r = drive_fmt($w.$f(<$t>::$from(bytes)), None, $polls, |()| String::new());
                (r, N)
            })*
            _ => unreachable!(),
        }
    };
}

/// Runs number writer `$i` (0..22) on `$w`, writing stream bytes at `$pos`.
macro_rules! write_num {
    ($w:ident, $i:expr, $pos:expr, $polls:expr) => {
        wnum_match! { $w, $i, $pos, $polls;
            0 write_u8 u8, from_be_bytes; 1 write_i8 i8, from_be_bytes;
            2 write_u16 u16, from_be_bytes; 3 write_i16 i16, from_be_bytes;
            4 write_u32 u32, from_be_bytes; 5 write_i32 i32, from_be_bytes;
            6 write_u64 u64, from_be_bytes; 7 write_i64 i64, from_be_bytes;
            8 write_u128 u128, from_be_bytes; 9 write_i128 i128, from_be_bytes;
            10 write_f32 f32, from_be_bytes; 11 write_f64 f64, from_be_bytes;
            12 write_u16_le u16, from_le_bytes; 13 write_i16_le i16, from_le_bytes;
            14 write_u32_le u32, from_le_bytes; 15 write_i32_le i32, from_le_bytes;
            16 write_u64_le u64, from_le_bytes; 17 write_i64_le i64, from_le_bytes;
            18 write_u128_le u128, from_le_bytes; 19 write_i128_le i128, from_le_bytes;
            20 write_f32_le f32, from_le_bytes; 21 write_f64_le f64, from_le_bytes;
        }
    };
}

macro_rules! writers {
    () => {
        crate::mock::mock_impls!();
        use k::io::{AsyncWrite, AsyncWriteExt, BufWriter};

        type DynW = Box<dyn AsyncWrite + Unpin>;

        enum Top {
            Plain(DynW),
            BufW(BufWriter<DynW>),
        }

        impl Top {
            fn wr(&mut self) -> &mut (dyn AsyncWrite + Unpin) {
                match self {
                    Top::Plain(w) => &mut **w,
                    Top::BufW(w) => w,
                }
            }

            fn state(&self) -> String {
                match self {
                    Top::BufW(w) => format!(" buffer={}", show(w.buffer())),
                    Top::Plain(_) => String::new(),
                }
            }
        }

        pub fn run(s: &WriteScript) -> Vec<Step> {
            let core = WriteCore::shared(&s.ev, &s.fev, &s.sev);
            let mock = || mock_writer(&core, s.vectored);
            let half = || -> DynW {
                let r = ReadCore::shared(&[], &[]);
                let (_rd, wr) = k::io::split(MockRW(MockR(r), mock()));
                Box::new(wr)
            };
            let mut top = match s.stack {
                WStack::Raw => Top::Plain(mock()),
                WStack::Buf(c) => Top::BufW(BufWriter::with_capacity(c, mock())),
                WStack::BufOverBuf(a, b) => Top::BufW(BufWriter::with_capacity(
                    a,
                    Box::new(BufWriter::with_capacity(b, mock())),
                )),
                WStack::Half => Top::Plain(half()),
                WStack::Join => Top::Plain(Box::new(k::io::join(k::io::empty(), mock()))),
                WStack::BufOverHalf(c) => Top::BufW(BufWriter::with_capacity(c, half())),
                WStack::Stream(rc, wc) => {
                    let r = ReadCore::shared(&[], &[]);
                    Top::Plain(Box::new(k::io::BufStream::with_capacity(
                        rc,
                        wc,
                        MockRW(MockR(r), mock()),
                    )))
                }
            };
            let unbuffered = matches!(s.stack, WStack::Raw | WStack::Half | WStack::Join);
            let mut log = Vec::new();
            // Bytes the program believes written (accepted by the stack).
            let mut pos = 0;
            // No op failed, stalled or was cut short yet: `pos` is exact.
            let mut clean = true;
            for op in &s.ops {
                let mut polls = 0;
                let chunks0 = core.borrow().chunks.len();
                // The result; a count a write may lower at will goes to
                // `count` (informational unless the stack is unbuffered).
                let mut count = String::new();
                let out = match op {
                    WOp::Write { n, cancel } => {
                        let data = stream(pos, *n);
                        let r = run_op(top.wr().write(&data), *cancel, &mut polls);
                        r.fmt(|k| {
                            pos += k;
                            count = format!("{k}");
                            String::new()
                        })
                    }
                    WOp::WriteAll(n) => {
                        let data = stream(pos, *n);
                        pos += n;
                        drive_fmt(top.wr().write_all(&data), None, &mut polls, |()| {
                            String::new()
                        })
                    }
                    WOp::WriteVectored(lens) => {
                        let total: usize = lens.iter().sum();
                        let data = stream(pos, total);
                        let mut at = 0;
                        let slices: Vec<std::io::IoSlice<'_>> = lens
                            .iter()
                            .map(|&l| {
                                at += l;
                                std::io::IoSlice::new(&data[at - l..at])
                            })
                            .collect();
                        let r = run_op(top.wr().write_vectored(&slices), None, &mut polls);
                        r.fmt(|k| {
                            pos += k;
                            count = format!("{k}");
                            String::new()
                        })
                    }
                    WOp::WriteBuf(a, b) | WOp::WriteAllBuf(a, b) => {
                        let data = stream(pos, a + b);
                        let mut buf = (&data[..*a]).chain(&data[*a..]);
                        // Tokio's `write_buf` needs a sized writer: `&mut dyn`.
                        let mut w = top.wr();
                        let r = if let WOp::WriteBuf(..) = op {
                            let f = AsyncWriteExt::write_buf(&mut w, &mut buf);
                            drive_fmt(f, None, &mut polls, |_| String::new())
                        } else {
                            let f = AsyncWriteExt::write_all_buf(&mut w, &mut buf);
                            drive_fmt(f, None, &mut polls, |()| String::new())
                        };
                        let left = buf.remaining();
                        pos += a + b - left;
                        // How far the buffer advanced is exact even on an
                        // error, but depends on the chunking.
                        count = format!("left={left}");
                        r
                    }
                    WOp::Num(i) => {
                        let w = top.wr();
                        let (r, size) = write_num!(w, *i, pos, &mut polls);
                        pos += size;
                        r
                    }
                    WOp::Flush => drive_fmt(top.wr().flush(), None, &mut polls, |()| String::new()),
                    WOp::Shutdown => {
                        drive_fmt(top.wr().shutdown(), None, &mut polls, |()| String::new())
                    }
                };
                if !out.starts_with("Ok") {
                    clean = false;
                }
                let c = core.borrow();
                let synced = matches!(op, WOp::Flush | WOp::Shutdown) && out.starts_with("Ok");
                let buffer: &[u8] = match &top {
                    Top::BufW(w) if !matches!(s.stack, WStack::BufOverBuf(..)) => w.buffer(),
                    _ => &[],
                };
                // What the mock got, then what the `BufWriter` holds, must be
                // what the program wrote, once flushed or where the whole
                // stack is visible.
                let visible = unbuffered
                    || matches!(s.stack, WStack::Buf(_) | WStack::BufOverHalf(_))
                    || synced;
                let intact = if clean && visible {
                    let mut all = c.got.clone();
                    all.extend_from_slice(buffer);
                    if all == stream(0, pos) {
                        " intact"
                    } else {
                        " LOST-OR-DUPLICATED"
                    }
                } else {
                    ""
                };
                let emptied = if synced && !top.state().is_empty() {
                    format!(" buffer_len={}", buffer.len())
                } else {
                    String::new()
                };
                let (hard_count, info_count) = if unbuffered {
                    (count, String::new())
                } else {
                    (String::new(), count)
                };
                let hard = format!("{out} {hard_count}{intact}{emptied}");
                let info = format!(
                    "polls={polls} {info_count} writes={:?} got={}{} flushes={} shutdowns={}",
                    &c.chunks[chunks0..],
                    c.digest(),
                    top.state(),
                    c.flushes,
                    c.shutdowns
                );
                log.push(Step::new(op, hard, info));
            }
            log
        }
    };
}

for_both!(writers);
