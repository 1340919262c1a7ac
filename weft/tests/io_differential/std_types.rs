//! Objects that are always ready: std's `Cursor` (over `Vec<u8>`,
//! `&mut [u8]`, `&mut Vec<u8>`, `Box<[u8]>`), `Vec<u8>` and `&[u8]` as
//! Tokio's traits; `BufReader`, `BufWriter` and `BufStream` over a
//! `Cursor` (with seeking through the buffers); `empty`, `repeat`, `sink`.
//!
//! After each op the log holds its result and the object's state (the
//! cursor's position and contents, what the buffers hold). `poll_complete`
//! called with no seek in flight is unspecified by Tokio: informational.

use std::io::{Cursor, SeekFrom};

use crate::harness::{cut, drive_fmt, for_both, run_op, show, Rng, Shrink, Step};
use crate::mock::stream;

#[derive(Clone, Copy, Debug)]
pub enum SObj {
    CursorVec,
    CursorMutSlice,
    CursorMutVec,
    CursorBox,
    Vec,
    Slice,
    BufReader(usize),
    BufWriter(usize),
    BufStream(usize, usize),
    Empty,
    Repeat(u8),
    Sink,
}

#[derive(Clone, Copy, Debug)]
pub enum SF {
    Start(u64),
    End(i64),
    Current(i64),
}

impl SF {
    fn std(self) -> SeekFrom {
        match self {
            SF::Start(n) => SeekFrom::Start(n),
            SF::End(n) => SeekFrom::End(n),
            SF::Current(n) => SeekFrom::Current(n),
        }
    }
}

#[derive(Clone, Debug)]
pub enum SOp {
    Read(usize),
    ReadExact(usize),
    ReadToEnd,
    Write(usize),
    WriteAll(usize),
    WriteVectored(Vec<usize>),
    Flush,
    Shutdown,
    Seek(SF),
    StreamPosition,
    Rewind,
    FillBuf,
    Consume(usize),
    /// `poll_complete` with no seek started (informational).
    PollComplete,
    IsWriteVectored,
}

#[derive(Clone, Debug)]
pub struct StdScript {
    pub obj: SObj,
    /// Initial contents (of a cursor, `Vec` or slice).
    pub init: Vec<u8>,
    pub ops: Vec<SOp>,
}

impl Shrink for StdScript {
    fn parts(&self) -> Vec<usize> {
        vec![self.ops.len(), self.init.len()]
    }

    fn without(&self, part: usize, at: usize, n: usize) -> Self {
        let mut s = self.clone();
        match part {
            0 => s.ops = cut(&s.ops, at, n),
            _ => s.init = cut(&s.init, at, n),
        }
        s
    }
}

pub fn gen(rng: &mut Rng) -> StdScript {
    let cap = |rng: &mut Rng| rng.range(0, 40);
    // A read buffer, never of capacity zero: that panics in both crates (as
    // documented), which `buf_reader_with_capacity_zero` covers.
    let rcap = |rng: &mut Rng| rng.range(1, 40);
    let obj = match rng.pick(&[3, 2, 2, 1, 2, 2, 4, 4, 3, 1, 1, 1]) {
        0 => SObj::CursorVec,
        1 => SObj::CursorMutSlice,
        2 => SObj::CursorMutVec,
        3 => SObj::CursorBox,
        4 => SObj::Vec,
        5 => SObj::Slice,
        6 => SObj::BufReader(rcap(rng)),
        7 => SObj::BufWriter(cap(rng)),
        8 => SObj::BufStream(rcap(rng), cap(rng)),
        9 => SObj::Empty,
        10 => SObj::Repeat(rng.below(256) as u8),
        _ => SObj::Sink,
    };
    let init = (0..rng.range(0, 80))
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let n = |rng: &mut Rng| rng.range(0, 50);
    let off = |rng: &mut Rng| rng.range(0, 100) as i64 - 50;
    let ops = (0..rng.range(1, 16))
        .map(
            |_| match rng.pick(&[4, 1, 1, 4, 1, 2, 1, 1, 4, 1, 1, 2, 2, 1, 1]) {
                0 => SOp::Read(n(rng)),
                1 => SOp::ReadExact(n(rng)),
                2 => SOp::ReadToEnd,
                3 => SOp::Write(n(rng)),
                4 => SOp::WriteAll(n(rng)),
                5 => SOp::WriteVectored((0..rng.range(0, 4)).map(|_| n(rng)).collect()),
                6 => SOp::Flush,
                7 => SOp::Shutdown,
                8 => SOp::Seek(match rng.below(3) {
                    0 => SF::Start(rng.range(0, 120) as u64),
                    1 => SF::End(off(rng)),
                    _ => SF::Current(off(rng)),
                }),
                9 => SOp::StreamPosition,
                10 => SOp::Rewind,
                11 => SOp::FillBuf,
                12 => SOp::Consume(rng.range(0, 20)),
                13 => SOp::PollComplete,
                _ => SOp::IsWriteVectored,
            },
        )
        .collect();
    StdScript { obj, init, ops }
}

macro_rules! std_types {
    () => {
        use k::io::{
            AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeek, AsyncSeekExt,
            AsyncWrite, AsyncWriteExt, BufReader, BufStream, BufWriter,
        };

        enum Obj {
            CursorVec(Cursor<Vec<u8>>),
            CursorMutSlice(Cursor<&'static mut [u8]>),
            CursorMutVec(Cursor<&'static mut Vec<u8>>),
            CursorBox(Cursor<Box<[u8]>>),
            Vec(Vec<u8>),
            Slice(&'static [u8]),
            BufReader(BufReader<Cursor<Vec<u8>>>),
            BufWriter(BufWriter<Cursor<Vec<u8>>>),
            BufStream(BufStream<Cursor<Vec<u8>>>),
            Empty(k::io::Empty),
            Repeat(k::io::Repeat),
            Sink(k::io::Sink),
        }

        impl Obj {
            fn rd(&mut self) -> Option<&mut (dyn AsyncRead + Unpin)> {
                Some(match self {
                    Obj::CursorVec(x) => x,
                    Obj::CursorMutSlice(x) => x,
                    Obj::CursorMutVec(x) => x,
                    Obj::CursorBox(x) => x,
                    Obj::Slice(x) => x,
                    Obj::BufReader(x) => x,
                    Obj::BufWriter(x) => x,
                    Obj::BufStream(x) => x,
                    Obj::Empty(x) => x,
                    Obj::Repeat(x) => x,
                    Obj::Vec(_) | Obj::Sink(_) => return None,
                })
            }

            fn bufrd(&mut self) -> Option<&mut (dyn AsyncBufRead + Unpin)> {
                Some(match self {
                    Obj::CursorVec(x) => x,
                    Obj::CursorMutSlice(x) => x,
                    Obj::CursorMutVec(x) => x,
                    Obj::CursorBox(x) => x,
                    Obj::Slice(x) => x,
                    Obj::BufReader(x) => x,
                    Obj::BufStream(x) => x,
                    Obj::Empty(x) => x,
                    _ => return None,
                })
            }

            fn wr(&mut self) -> Option<&mut (dyn AsyncWrite + Unpin)> {
                Some(match self {
                    Obj::CursorVec(x) => x,
                    Obj::CursorMutSlice(x) => x,
                    Obj::CursorMutVec(x) => x,
                    Obj::CursorBox(x) => x,
                    Obj::Vec(x) => x,
                    Obj::BufReader(x) => x,
                    Obj::BufWriter(x) => x,
                    Obj::BufStream(x) => x,
                    Obj::Empty(x) => x,
                    Obj::Sink(x) => x,
                    _ => return None,
                })
            }

            // `Empty` is seekable in Tokio only (an API gap, reported).
            fn sk(&mut self) -> Option<&mut (dyn AsyncSeek + Unpin)> {
                Some(match self {
                    Obj::CursorVec(x) => x,
                    Obj::CursorMutSlice(x) => x,
                    Obj::CursorMutVec(x) => x,
                    Obj::CursorBox(x) => x,
                    Obj::BufReader(x) => x,
                    Obj::BufWriter(x) => x,
                    Obj::BufStream(x) => x,
                    _ => return None,
                })
            }

            fn state(&self) -> String {
                match self {
                    Obj::CursorVec(c) => format!("pos={} data={}", c.position(), show(c.get_ref())),
                    Obj::CursorMutSlice(c) => {
                        format!("pos={} data={}", c.position(), show(c.get_ref()))
                    }
                    Obj::CursorMutVec(c) => {
                        format!("pos={} data={}", c.position(), show(c.get_ref()))
                    }
                    Obj::CursorBox(c) => format!("pos={} data={}", c.position(), show(c.get_ref())),
                    Obj::Vec(v) => format!("data={}", show(v)),
                    Obj::Slice(s) => format!("left={}", show(s)),
                    Obj::BufReader(b) => format!(
                        "buffer={} inner pos={}",
                        show(b.buffer()),
                        b.get_ref().position()
                    ),
                    Obj::BufWriter(b) => format!(
                        "buffer={} inner pos={} data={}",
                        show(b.buffer()),
                        b.get_ref().position(),
                        show(b.get_ref().get_ref())
                    ),
                    Obj::BufStream(b) => format!(
                        "inner pos={} data={}",
                        b.get_ref().position(),
                        show(b.get_ref().get_ref())
                    ),
                    Obj::Empty(_) | Obj::Repeat(_) | Obj::Sink(_) => String::new(),
                }
            }
        }

        pub fn run(s: &StdScript) -> Vec<Step> {
            let leak_slice =
                || -> &'static mut [u8] { Box::leak(s.init.clone().into_boxed_slice()) };
            let mut obj = match s.obj {
                SObj::CursorVec => Obj::CursorVec(Cursor::new(s.init.clone())),
                SObj::CursorMutSlice => Obj::CursorMutSlice(Cursor::new(leak_slice())),
                SObj::CursorMutVec => {
                    Obj::CursorMutVec(Cursor::new(Box::leak(Box::new(s.init.clone()))))
                }
                SObj::CursorBox => Obj::CursorBox(Cursor::new(s.init.clone().into_boxed_slice())),
                SObj::Vec => Obj::Vec(s.init.clone()),
                SObj::Slice => Obj::Slice(leak_slice()),
                SObj::BufReader(c) => {
                    Obj::BufReader(BufReader::with_capacity(c, Cursor::new(s.init.clone())))
                }
                SObj::BufWriter(c) => {
                    Obj::BufWriter(BufWriter::with_capacity(c, Cursor::new(s.init.clone())))
                }
                SObj::BufStream(r, w) => {
                    Obj::BufStream(BufStream::with_capacity(r, w, Cursor::new(s.init.clone())))
                }
                SObj::Empty => Obj::Empty(k::io::empty()),
                SObj::Repeat(b) => Obj::Repeat(k::io::repeat(b)),
                SObj::Sink => Obj::Sink(k::io::sink()),
            };
            let mut log = Vec::new();
            let mut pos = 0;
            let mut to_end = Vec::new();
            for op in &s.ops {
                let mut polls = 0;
                let na = || "n/a".to_string();
                let mut info = String::new();
                let out = match op {
                    SOp::Read(n) => obj.rd().map_or_else(na, |r| {
                        let mut b = vec![0u8; *n];
                        let res = run_op(r.read(&mut b), None, &mut polls);
                        res.fmt(|k| show(&b[..k]))
                    }),
                    SOp::ReadExact(n) => obj.rd().map_or_else(na, |r| {
                        let mut b = vec![0u8; *n];
                        let res = run_op(r.read_exact(&mut b), None, &mut polls);
                        res.fmt(|_| show(&b))
                    }),
                    SOp::ReadToEnd => match (&s.obj, obj.rd()) {
                        // `repeat` never ends.
                        (SObj::Repeat(_), _) | (_, None) => na(),
                        (_, Some(r)) => {
                            let res =
                                drive_fmt(r.read_to_end(&mut to_end), None, &mut polls, |k| {
                                    format!("{k}")
                                });
                            format!("{res} {}", show(&to_end))
                        }
                    },
                    SOp::Write(n) => obj.wr().map_or_else(na, |w| {
                        let data = stream(pos, *n);
                        drive_fmt(w.write(&data), None, &mut polls, |k| {
                            pos += k;
                            format!("{k}")
                        })
                    }),
                    SOp::WriteAll(n) => obj.wr().map_or_else(na, |w| {
                        let data = stream(pos, *n);
                        pos += n;
                        drive_fmt(w.write_all(&data), None, &mut polls, |()| String::new())
                    }),
                    SOp::WriteVectored(lens) => obj.wr().map_or_else(na, |w| {
                        let data = stream(pos, lens.iter().sum());
                        let mut at = 0;
                        let slices: Vec<std::io::IoSlice<'_>> = lens
                            .iter()
                            .map(|&l| {
                                at += l;
                                std::io::IoSlice::new(&data[at - l..at])
                            })
                            .collect();
                        drive_fmt(w.write_vectored(&slices), None, &mut polls, |k| {
                            pos += k;
                            format!("{k}")
                        })
                    }),
                    SOp::Flush => obj.wr().map_or_else(na, |w| {
                        drive_fmt(w.flush(), None, &mut polls, |()| String::new())
                    }),
                    SOp::Shutdown => obj.wr().map_or_else(na, |w| {
                        drive_fmt(w.shutdown(), None, &mut polls, |()| String::new())
                    }),
                    SOp::Seek(sf) => obj.sk().map_or_else(na, |x| {
                        drive_fmt(x.seek(sf.std()), None, &mut polls, |p| format!("{p}"))
                    }),
                    SOp::StreamPosition => obj.sk().map_or_else(na, |x| {
                        drive_fmt(x.stream_position(), None, &mut polls, |p| format!("{p}"))
                    }),
                    SOp::Rewind => obj.sk().map_or_else(na, |x| {
                        drive_fmt(x.rewind(), None, &mut polls, |p| format!("{p}"))
                    }),
                    SOp::FillBuf => obj.bufrd().map_or_else(na, |r| {
                        drive_fmt(r.fill_buf(), None, &mut polls, |b| show(b))
                    }),
                    SOp::Consume(n) => obj.bufrd().map_or_else(na, |r| {
                        // No more than a `fill_buf` offers.
                        let res =
                            run_op(r.fill_buf(), None, &mut polls).fmt(|b| format!("{}", b.len()));
                        let avail: usize = res
                            .strip_prefix("Ok(")
                            .and_then(|x| x.strip_suffix(')'))
                            .and_then(|x| x.parse().ok())
                            .unwrap_or(0);
                        r.consume((*n).min(avail));
                        format!("consumed {}", (*n).min(avail))
                    }),
                    SOp::PollComplete => {
                        if let Some(x) = obj.sk() {
                            let f = std::future::poll_fn(|cx| {
                                std::pin::Pin::new(&mut *x).poll_complete(cx)
                            });
                            info = drive_fmt(f, None, &mut polls, |p| format!("{p}"));
                        }
                        String::new()
                    }
                    SOp::IsWriteVectored => obj
                        .wr()
                        .map_or_else(na, |w| format!("{}", w.is_write_vectored())),
                };
                log.push(Step::new(
                    op,
                    format!("{out} | {}", obj.state()),
                    format!("{info} polls={polls}"),
                ));
            }
            log
        }
    };
}

for_both!(std_types);
