//! The scripted mock reader and writer, written once and given both
//! crates' traits by `mock_impls!`.
//!
//! Scripts are tied to stream positions, not to calls, so that two
//! implementations that read or write in different chunk sizes still meet
//! the same events at the same byte: a reader's `Data(n)` makes the next
//! `n` source bytes available (handed out over as many reads as the callers'
//! buffers need); an event after it is met only once those bytes are read.
//! A writer's `Accept(n)` lets the next `n` bytes through, over as many
//! writes as it takes. Reads and writes of zero bytes meet no event. Once
//! its events are used up, a reader hands out the rest of its source, then
//! end of stream; a writer accepts everything; flush and shutdown succeed.
//!
//! `Pending(Now)` wakes the caller's waker before returning `Pending`;
//! `Pending(Later)` hands it to `harness::defer_wake`, woken between polls.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::harness::{defer_wake, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Interrupted,
    WouldBlock,
    BrokenPipe,
    Other,
}

impl Kind {
    pub fn err(self) -> io::Error {
        let k = match self {
            Kind::Interrupted => io::ErrorKind::Interrupted,
            Kind::WouldBlock => io::ErrorKind::WouldBlock,
            Kind::BrokenPipe => io::ErrorKind::BrokenPipe,
            Kind::Other => io::ErrorKind::Other,
        };
        io::Error::new(k, "scripted error")
    }

    /// A random kind, `Interrupted` the likeliest.
    pub fn gen(rng: &mut Rng) -> Kind {
        match rng.pick(&[4, 2, 2, 1]) {
            0 => Kind::Interrupted,
            1 => Kind::WouldBlock,
            2 => Kind::BrokenPipe,
            _ => Kind::Other,
        }
    }
}

/// When a `Pending` wakes its caller.
#[derive(Clone, Copy, Debug)]
pub enum Wk {
    Now,
    Later,
}

impl Wk {
    fn pend(self, cx: &Context<'_>) {
        match self {
            Wk::Now => cx.waker().wake_by_ref(),
            Wk::Later => defer_wake(cx.waker()),
        }
    }

    pub fn gen(rng: &mut Rng) -> Wk {
        if rng.coin() {
            Wk::Now
        } else {
            Wk::Later
        }
    }
}

/// A reader's event.
#[derive(Clone, Copy, Debug)]
pub enum REv {
    Data(usize),
    Pending(Wk),
    Err(Kind),
    /// One read of zero bytes (end of stream, for now), however much
    /// source is left.
    Eof,
}

/// A writer's event.
#[derive(Clone, Copy, Debug)]
pub enum WEv {
    Accept(usize),
    Pending(Wk),
    Err(Kind),
    /// One write that returns `Ok(0)`.
    Zero,
}

/// A flush's or shutdown's event.
#[derive(Clone, Copy, Debug)]
pub enum FEv {
    Ok,
    Pending(Wk),
    Err(Kind),
}

pub fn gen_read_events(rng: &mut Rng, max: usize) -> Vec<REv> {
    (0..rng.range(0, max))
        .map(|_| match rng.pick(&[10, 3, 2, 1]) {
            0 => REv::Data(rng.size()),
            1 => REv::Pending(Wk::gen(rng)),
            2 => REv::Err(Kind::gen(rng)),
            _ => REv::Eof,
        })
        .collect()
}

pub fn gen_write_events(rng: &mut Rng, max: usize) -> Vec<WEv> {
    (0..rng.range(0, max))
        .map(|_| match rng.pick(&[10, 3, 2, 1]) {
            0 => WEv::Accept(rng.size()),
            1 => WEv::Pending(Wk::gen(rng)),
            2 => WEv::Err(Kind::gen(rng)),
            _ => WEv::Zero,
        })
        .collect()
}

pub fn gen_flush_events(rng: &mut Rng, max: usize) -> Vec<FEv> {
    (0..rng.range(0, max))
        .map(|_| match rng.pick(&[3, 3, 1]) {
            0 => FEv::Ok,
            1 => FEv::Pending(Wk::gen(rng)),
            _ => FEv::Err(Kind::gen(rng)),
        })
        .collect()
}

/// Source bytes: letters, line ends, commas, a two-byte UTF-8 character,
/// and now and then a byte that is never valid UTF-8 (if `invalid`).
pub fn gen_source(rng: &mut Rng, max: usize, invalid: bool) -> Vec<u8> {
    let n = rng.range(0, max);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        match rng.pick(&[20, 6, 2, 2, 2, u32::from(invalid), 1]) {
            0 => v.push(b'a' + rng.below(5) as u8),
            1 => v.push(b'\n'),
            2 => v.push(b'\r'),
            3 => v.push(b','),
            4 => v.extend_from_slice("é".as_bytes()),
            5 => v.push(0xff),
            _ => v.push(0),
        }
    }
    v
}

#[derive(Debug)]
pub struct ReadCore {
    src: Vec<u8>,
    pos: usize,
    ev: VecDeque<REv>,
    credit: usize,
    /// Reads that met an event or returned bytes (informational).
    pub calls: usize,
}

impl ReadCore {
    pub fn shared(src: &[u8], ev: &[REv]) -> Rc<RefCell<ReadCore>> {
        Rc::new(RefCell::new(ReadCore {
            src: src.to_vec(),
            pos: 0,
            ev: ev.iter().copied().collect(),
            credit: 0,
            calls: 0,
        }))
    }

    /// Bytes read so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// One read into `room` free bytes.
    pub fn read(&mut self, cx: &Context<'_>, room: usize) -> Poll<io::Result<Vec<u8>>> {
        if room == 0 {
            return Poll::Ready(Ok(Vec::new()));
        }
        self.calls += 1;
        loop {
            let left = self.src.len() - self.pos;
            if self.credit > 0 && left > 0 {
                let n = self.credit.min(room).min(left);
                self.credit -= n;
                self.pos += n;
                return Poll::Ready(Ok(self.src[self.pos - n..self.pos].to_vec()));
            }
            self.credit = 0;
            match self.ev.pop_front() {
                None if left > 0 => self.credit = left,
                None => return Poll::Ready(Ok(Vec::new())),
                Some(REv::Data(n)) => self.credit = n,
                Some(REv::Pending(w)) => {
                    w.pend(cx);
                    return Poll::Pending;
                }
                Some(REv::Err(k)) => return Poll::Ready(Err(k.err())),
                Some(REv::Eof) => return Poll::Ready(Ok(Vec::new())),
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct WriteCore {
    ev: VecDeque<WEv>,
    credit: usize,
    fev: VecDeque<FEv>,
    sev: VecDeque<FEv>,
    /// Every byte accepted, in order.
    pub got: Vec<u8>,
    /// The size of each accepted write (informational).
    pub chunks: Vec<usize>,
    pub flushes: usize,
    pub shutdowns: usize,
    /// `got.len()` at the last successful flush or shutdown.
    pub synced: Option<usize>,
}

impl WriteCore {
    pub fn shared(ev: &[WEv], fev: &[FEv], sev: &[FEv]) -> Rc<RefCell<WriteCore>> {
        Rc::new(RefCell::new(WriteCore {
            ev: ev.iter().copied().collect(),
            fev: fev.iter().copied().collect(),
            sev: sev.iter().copied().collect(),
            ..WriteCore::default()
        }))
    }

    /// One write of the concatenation of `bufs`.
    pub fn write(&mut self, cx: &Context<'_>, bufs: &[&[u8]]) -> Poll<io::Result<usize>> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total == 0 {
            return Poll::Ready(Ok(0));
        }
        loop {
            if self.credit > 0 {
                let n = self.credit.min(total);
                self.credit -= n;
                let mut left = n;
                for b in bufs {
                    let k = left.min(b.len());
                    self.got.extend_from_slice(&b[..k]);
                    left -= k;
                }
                self.chunks.push(n);
                return Poll::Ready(Ok(n));
            }
            match self.ev.pop_front() {
                None => self.credit = usize::MAX,
                Some(WEv::Accept(n)) => self.credit = n,
                Some(WEv::Pending(w)) => {
                    w.pend(cx);
                    return Poll::Pending;
                }
                Some(WEv::Err(k)) => return Poll::Ready(Err(k.err())),
                Some(WEv::Zero) => return Poll::Ready(Ok(0)),
            }
        }
    }

    pub fn flush(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        let r = Self::sync(self.fev.pop_front(), cx);
        if let Poll::Ready(Ok(())) = r {
            self.synced = Some(self.got.len());
        }
        r
    }

    pub fn shutdown(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        self.shutdowns += 1;
        let r = Self::sync(self.sev.pop_front(), cx);
        if let Poll::Ready(Ok(())) = r {
            self.synced = Some(self.got.len());
        }
        r
    }

    fn sync(ev: Option<FEv>, cx: &Context<'_>) -> Poll<io::Result<()>> {
        match ev {
            None | Some(FEv::Ok) => Poll::Ready(Ok(())),
            Some(FEv::Pending(w)) => {
                w.pend(cx);
                Poll::Pending
            }
            Some(FEv::Err(k)) => Poll::Ready(Err(k.err())),
        }
    }

    /// A short, comparable digest of what was accepted: length and hash.
    pub fn digest(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &self.got {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        format!("{}B#{:04x}", self.got.len(), h & 0xffff)
    }
}

/// The bytes a program writes: byte `i` of its output stream.
pub fn stream(from: usize, n: usize) -> Vec<u8> {
    (from..from + n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(7))
        .collect()
}

/// Defines, in the expanding module (with its `k`), the mock types with
/// `k`'s traits: `MockR` (a reader), `MockW` (a writer that keeps the
/// trait's default, non-vectored `poll_write_vectored`), `MockWV` (a
/// vectored writer) and `MockRW<W>` (a reader and a writer in one).
macro_rules! mock_impls {
    () => {
        #[allow(unused_imports)]
        use std::cell::RefCell as MockCell;
        #[allow(unused_imports)]
        use std::rc::Rc as MockRc;
        #[allow(unused_imports)]
        use $crate::mock::{ReadCore, WriteCore};

        pub struct MockR(pub MockRc<MockCell<ReadCore>>);

        impl k::io::AsyncRead for MockR {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut k::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let got = std::task::ready!(self.0.borrow_mut().read(cx, buf.remaining()))?;
                buf.put_slice(&got);
                std::task::Poll::Ready(Ok(()))
            }
        }

        pub struct MockW(pub MockRc<MockCell<WriteCore>>);

        impl k::io::AsyncWrite for MockW {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.0.borrow_mut().write(cx, &[buf])
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.0.borrow_mut().flush(cx)
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.0.borrow_mut().shutdown(cx)
            }
        }

        pub struct MockWV(pub MockRc<MockCell<WriteCore>>);

        impl k::io::AsyncWrite for MockWV {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.0.borrow_mut().write(cx, &[buf])
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let v: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
                self.0.borrow_mut().write(cx, &v)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.0.borrow_mut().flush(cx)
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.0.borrow_mut().shutdown(cx)
            }
        }

        /// A writer over `core`, vectored or not.
        #[allow(dead_code)]
        pub fn mock_writer(
            core: &MockRc<MockCell<WriteCore>>,
            vectored: bool,
        ) -> Box<dyn k::io::AsyncWrite + Unpin> {
            if vectored {
                Box::new(MockWV(MockRc::clone(core)))
            } else {
                Box::new(MockW(MockRc::clone(core)))
            }
        }

        pub struct MockRW<W>(pub MockR, pub W);

        impl<W: Unpin> k::io::AsyncRead for MockRW<W> {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut k::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                k::io::AsyncRead::poll_read(std::pin::Pin::new(&mut self.0), cx, buf)
            }
        }

        impl<W: k::io::AsyncWrite + Unpin> k::io::AsyncWrite for MockRW<W> {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                k::io::AsyncWrite::poll_write(std::pin::Pin::new(&mut self.1), cx, buf)
            }

            fn poll_write_vectored(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                k::io::AsyncWrite::poll_write_vectored(std::pin::Pin::new(&mut self.1), cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                k::io::AsyncWrite::is_write_vectored(&self.1)
            }

            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                k::io::AsyncWrite::poll_flush(std::pin::Pin::new(&mut self.1), cx)
            }

            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                k::io::AsyncWrite::poll_shutdown(std::pin::Pin::new(&mut self.1), cx)
            }
        }
    };
}
pub(crate) use mock_impls;
