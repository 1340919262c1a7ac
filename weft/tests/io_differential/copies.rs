//! `copy`, `copy_buf` and `copy_bidirectional` (and `_with_sizes`) between
//! scripted mocks, optionally through a `BufWriter` (or, for `copy_buf`, a
//! `BufReader` or a `&[u8]`), each driven to its end.
//!
//! Compared strictly: success or failure, the counts, that the writer got
//! the whole source (a prefix of it on failure) and was flushed (and, for
//! `copy_bidirectional`, shut down) at the end. When the writer never
//! returns `Pending`, every `Pending` of the copy comes from the reader (or
//! a flush), and Tokio's `copy` / `copy_buf` flush what they wrote before
//! waiting for the reader: how much was written but not yet flushed at each
//! of the copy's `Pending`s is compared too. Which error is reported when
//! both sides fail, and the chunking, are informational (Tokio's `copy`
//! reads ahead while the writer is not ready).

use crate::harness::{cut, fire_deferred, for_both, Rng, Shrink, Step};
use crate::mock::{gen_flush_events, gen_read_events, gen_source, gen_write_events};
use crate::mock::{FEv, REv, WEv};

#[derive(Clone, Copy, Debug)]
pub enum CKind {
    Copy,
    /// `copy` into a `BufWriter` of this capacity.
    CopyIntoBuf(usize),
    /// `copy_buf` from a `BufReader` of this capacity.
    CopyBuf(usize),
    /// `copy_buf` from a `BufReader` into a `BufWriter`.
    CopyBufIntoBuf(usize, usize),
    /// `copy_buf` from the source as a `&[u8]` (no read events).
    CopyBufSlice,
    Bidi,
    BidiSizes(usize, usize),
}

/// One side: what it reads (its source and events) and how its writer
/// behaves.
#[derive(Clone, Debug)]
pub struct Side {
    pub src: Vec<u8>,
    pub rev: Vec<REv>,
    pub wev: Vec<WEv>,
    pub fev: Vec<FEv>,
    pub sev: Vec<FEv>,
    pub vectored: bool,
}

#[derive(Clone, Debug)]
pub struct CopyScript {
    pub kind: CKind,
    /// `copy*` read from `a` and write to `b`.
    pub a: Side,
    pub b: Side,
}

impl Shrink for CopyScript {
    fn parts(&self) -> Vec<usize> {
        let (a, b) = (&self.a, &self.b);
        vec![
            a.src.len(),
            a.rev.len(),
            a.wev.len(),
            a.fev.len(),
            a.sev.len(),
            b.src.len(),
            b.rev.len(),
            b.wev.len(),
            b.fev.len(),
            b.sev.len(),
        ]
    }

    fn without(&self, part: usize, at: usize, n: usize) -> Self {
        let mut s = self.clone();
        let side = if part < 5 { &mut s.a } else { &mut s.b };
        match part % 5 {
            0 => side.src = cut(&side.src, at, n),
            1 => side.rev = cut(&side.rev, at, n),
            2 => side.wev = cut(&side.wev, at, n),
            3 => side.fev = cut(&side.fev, at, n),
            _ => side.sev = cut(&side.sev, at, n),
        }
        s
    }
}

fn side(rng: &mut Rng, writer_pends: bool) -> Side {
    let mut wev = gen_write_events(rng, 10);
    let mut fev = gen_flush_events(rng, 3);
    if writer_pends {
        // Tokio's `copy` reads ahead while its writer is not ready, so it
        // may flush less often: a flush that fails or waits would then
        // land on different flushes.
        fev.retain(|e| matches!(e, FEv::Ok));
    } else {
        wev.retain(|e| !matches!(e, WEv::Pending(_)));
    }
    Side {
        src: gen_source(rng, 400, false),
        rev: gen_read_events(rng, 12),
        wev,
        fev,
        sev: gen_flush_events(rng, 2),
        vectored: rng.coin(),
    }
}

pub fn gen(rng: &mut Rng) -> CopyScript {
    let cap = |rng: &mut Rng| rng.range(1, 64);
    // Never zero: a zero size panics in both crates (as documented), which
    // `copy_bidirectional_with_sizes_zero` covers.
    let kind = match rng.pick(&[3, 2, 2, 2, 1, 3, 2]) {
        0 => CKind::Copy,
        1 => CKind::CopyIntoBuf(cap(rng)),
        2 => CKind::CopyBuf(cap(rng)),
        3 => CKind::CopyBufIntoBuf(cap(rng), cap(rng)),
        4 => CKind::CopyBufSlice,
        5 => CKind::Bidi,
        _ => CKind::BidiSizes(cap(rng), cap(rng)),
    };
    let pends = rng.coin();
    let (a, b) = (side(rng, pends), side(rng, pends));
    CopyScript { kind, a, b }
}

/// Whether a writer's events include `Pending`.
fn pends(s: &Side) -> bool {
    s.wev.iter().any(|e| matches!(e, WEv::Pending(_)))
}

macro_rules! copies {
    () => {
        crate::mock::mock_impls!();
        use k::io::{AsyncWrite, BufReader, BufWriter};
        use std::future::Future;
        use std::task::{Context, Poll};

        fn cores(s: &Side) -> (MockRc<MockCell<ReadCore>>, MockRc<MockCell<WriteCore>>) {
            (
                ReadCore::shared(&s.src, &s.rev),
                WriteCore::shared(&s.wev, &s.fev, &s.sev),
            )
        }

        /// How one side's writer ended: the whole source of the other
        /// side, or a prefix; flushed (or shut down) after its last byte.
        fn ending(w: &WriteCore, src: &[u8], ok: bool) -> (String, String) {
            let whole = w.got == src;
            let prefix = src.starts_with(&w.got);
            let synced = w.synced == Some(w.got.len());
            let hard = match (ok, whole, prefix) {
                (true, true, _) => format!("whole{}", if synced { " synced" } else { " UNSYNCED" }),
                (true, false, _) => format!("PARTIAL {}", w.digest()),
                (false, _, true) => "prefix".to_string(),
                (false, _, false) => format!("NOT-A-PREFIX {}", w.digest()),
            };
            let info = format!(
                "{} writes={} flushes={} shutdowns={}",
                w.digest(),
                w.chunks.len(),
                w.flushes,
                w.shutdowns
            );
            (hard, info)
        }

        pub fn run(s: &CopyScript) -> Vec<Step> {
            let (ra, wa) = cores(&s.a);
            let (rb, wb) = cores(&s.b);
            let mut log = Vec::new();
            // Bytes read but not yet flushed at each `Pending` of the copy
            // (compared when the writer never pends).
            let mut at_pending: Vec<usize> = Vec::new();
            let bidi = matches!(s.kind, CKind::Bidi | CKind::BidiSizes(..));
            let out: String;
            {
                let mut reader: Box<dyn k::io::AsyncBufRead + Unpin> = match s.kind {
                    CKind::CopyBuf(c) | CKind::CopyBufIntoBuf(c, _) => {
                        Box::new(BufReader::with_capacity(c, MockR(MockRc::clone(&ra))))
                    }
                    CKind::CopyBufSlice => {
                        let leaked: &'static [u8] = Box::leak(s.a.src.clone().into_boxed_slice());
                        Box::new(leaked)
                    }
                    // Unused: a `BufReader` whose inner reader is read
                    // directly by `copy` (large reads bypass its buffer).
                    _ => Box::new(BufReader::with_capacity(1, MockR(MockRc::clone(&ra)))),
                };
                let mut plain_r = MockR(MockRc::clone(&ra));
                let mut writer: Box<dyn AsyncWrite + Unpin> = match s.kind {
                    CKind::CopyIntoBuf(c) | CKind::CopyBufIntoBuf(_, c) => {
                        Box::new(BufWriter::with_capacity(c, mock_writer(&wb, s.b.vectored)))
                    }
                    _ => mock_writer(&wb, s.b.vectored),
                };
                let mut end_a = MockRW(MockR(MockRc::clone(&ra)), mock_writer(&wa, s.a.vectored));
                let mut end_b = MockRW(MockR(MockRc::clone(&rb)), mock_writer(&wb, s.b.vectored));
                let fut: std::pin::Pin<Box<dyn Future<Output = std::io::Result<String>> + '_>> =
                    match s.kind {
                        CKind::Copy | CKind::CopyIntoBuf(_) => Box::pin(async {
                            k::io::copy(&mut plain_r, &mut writer)
                                .await
                                .map(|n| format!("{n}"))
                        }),
                        CKind::CopyBuf(_) | CKind::CopyBufIntoBuf(..) | CKind::CopyBufSlice => {
                            Box::pin(async {
                                k::io::copy_buf(&mut reader, &mut writer)
                                    .await
                                    .map(|n| format!("{n}"))
                            })
                        }
                        CKind::Bidi => Box::pin(async {
                            k::io::copy_bidirectional(&mut end_a, &mut end_b)
                                .await
                                .map(|n| format!("{n:?}"))
                        }),
                        CKind::BidiSizes(x, y) => Box::pin(async move {
                            k::io::copy_bidirectional_with_sizes(&mut end_a, &mut end_b, x, y)
                                .await
                                .map(|n| format!("{n:?}"))
                        }),
                    };
                let mut fut = fut;
                let (count, waker) = crate::harness::counting_waker();
                let mut cx = Context::from_waker(&waker);
                let mut polls = 0;
                out = loop {
                    let seen = count.get();
                    polls += 1;
                    match fut.as_mut().poll(&mut cx) {
                        Poll::Ready(Ok(v)) => break format!("Ok({v})"),
                        Poll::Ready(Err(e)) => break format!("Err {:?}", e.kind()),
                        Poll::Pending => {}
                    }
                    // Read from the source but not yet flushed out.
                    let read = ra.borrow().pos();
                    at_pending.push(read.saturating_sub(wb.borrow().synced.unwrap_or(0)));
                    fire_deferred();
                    if count.get() == seen || polls > 100_000 {
                        break "Stalled".into();
                    }
                };
            }
            let ok = out.starts_with("Ok");
            // Which error wins when both sides fail is informational.
            let (hard, kind) = match out.strip_prefix("Err ") {
                Some(k) => ("Err".to_string(), k.to_string()),
                None => (out.clone(), String::new()),
            };
            let (b_hard, b_info) = ending(&wb.borrow(), &s.a.src, ok);
            let mut hard = format!("{hard} b:{b_hard}");
            let mut info = format!("{kind} b:{b_info}");
            if bidi {
                let (a_hard, a_info) = ending(&wa.borrow(), &s.b.src, ok);
                hard += &format!(" a:{a_hard}");
                info += &format!(" a:{a_info}");
                if ok {
                    hard += &format!(
                        " shut down: a {} b {}",
                        wa.borrow().shutdowns > 0,
                        wb.borrow().shutdowns > 0
                    );
                }
            }
            let pending = format!(" unflushed at each Pending: {at_pending:?}");
            if !bidi && !pends(&s.b) {
                hard += &pending;
            } else {
                info += &pending;
            }
            info += &format!(" read: a {} b {}", ra.borrow().calls, rb.borrow().calls);
            log.push(Step::new(s.kind, hard, info));
            log
        }
    };
}

for_both!(copies);
