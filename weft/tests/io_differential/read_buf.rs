//! `ReadBuf` on its own: random sequences of its safe methods (and
//! `assume_init` after writing the bytes it vouches for) on a buffer made
//! by `new` or `uninit`, logging `filled()`, how much is initialised,
//! `remaining()` and `capacity()` after each; a panic is logged as such
//! (the messages are each crate's own, which the README allows).

use std::mem::MaybeUninit;

use crate::harness::{cut, for_both, quietly, show, Rng, Shrink, Step};

#[derive(Clone, Copy, Debug)]
pub enum BOp {
    PutSlice(usize),
    Advance(usize),
    SetFilled(usize),
    /// `initialize_unfilled_to(n)`, then writes into what it returned.
    InitUnfilledTo(usize),
    InitUnfilled,
    Clear,
    /// Writes `n` bytes into `unfilled_mut()`, then `assume_init(n)`.
    WriteAssumeInit(usize),
    /// `take(n)`, `m` bytes put in the sub-buffer, then the parent's
    /// `assume_init` and `advance` by what it got (as `Take` does).
    Take(usize, usize),
    /// Changes the first filled byte through `filled_mut()`.
    FilledMut,
}

#[derive(Clone, Debug)]
pub struct BufScript {
    pub cap: usize,
    pub uninit: bool,
    pub ops: Vec<BOp>,
}

impl Shrink for BufScript {
    fn parts(&self) -> Vec<usize> {
        vec![self.ops.len()]
    }

    fn without(&self, _: usize, at: usize, n: usize) -> Self {
        BufScript {
            ops: cut(&self.ops, at, n),
            ..self.clone()
        }
    }
}

pub fn gen(rng: &mut Rng) -> BufScript {
    let cap = rng.range(0, 24);
    let n = |rng: &mut Rng| rng.range(0, cap + 3);
    let ops = (0..rng.range(1, 20))
        .map(|_| match rng.pick(&[4, 3, 2, 2, 1, 1, 2, 2, 1]) {
            0 => BOp::PutSlice(n(rng)),
            1 => BOp::Advance(n(rng)),
            2 => BOp::SetFilled(n(rng)),
            3 => BOp::InitUnfilledTo(n(rng)),
            4 => BOp::InitUnfilled,
            5 => BOp::Clear,
            6 => BOp::WriteAssumeInit(n(rng)),
            7 => BOp::Take(n(rng), n(rng)),
            _ => BOp::FilledMut,
        })
        .collect();
    BufScript {
        cap,
        uninit: rng.coin(),
        ops,
    }
}

macro_rules! read_buf {
    () => {
        use k::io::ReadBuf;

        fn state(b: &ReadBuf<'_>) -> String {
            format!(
                "filled={} init={} remaining={} cap={}",
                show(b.filled()),
                b.initialized().len(),
                b.remaining(),
                b.capacity()
            )
        }

        pub fn run(s: &BufScript) -> Vec<Step> {
            let mut init = vec![7u8; s.cap];
            let mut raw = vec![MaybeUninit::<u8>::uninit(); s.cap];
            let mut b = if s.uninit {
                ReadBuf::uninit(&mut raw)
            } else {
                ReadBuf::new(&mut init)
            };
            let mut log = Vec::new();
            let mut tag = b'A';
            for op in &s.ops {
                tag = if tag == b'Z' { b'A' } else { tag + 1 };
                let r = quietly(|| match *op {
                    BOp::PutSlice(n) => b.put_slice(&vec![tag; n]),
                    BOp::Advance(n) => b.advance(n),
                    BOp::SetFilled(n) => b.set_filled(n),
                    BOp::InitUnfilledTo(n) => b.initialize_unfilled_to(n).fill(tag),
                    BOp::InitUnfilled => {
                        let _ = b.initialize_unfilled();
                    }
                    BOp::Clear => b.clear(),
                    BOp::WriteAssumeInit(n) => {
                        if n <= b.remaining() {
                            // SAFETY: the `n` bytes are written before
                            // `assume_init` vouches for them.
                            unsafe {
                                for x in &mut b.unfilled_mut()[..n] {
                                    x.write(tag);
                                }
                                b.assume_init(n);
                            }
                        }
                    }
                    BOp::Take(n, m) => {
                        let got = {
                            let mut sub = b.take(n);
                            let m = m.min(sub.remaining());
                            sub.put_slice(&vec![tag; m]);
                            sub.filled().len()
                        };
                        // SAFETY: the sub-buffer initialised `got` bytes
                        // of the parent's unfilled part.
                        unsafe { b.assume_init(got) };
                        b.advance(got);
                    }
                    BOp::FilledMut => {
                        if let Some(x) = b.filled_mut().first_mut() {
                            *x = tag;
                        }
                    }
                });
                let out = if r.is_ok() { "ok" } else { "PANIC" };
                log.push(Step::new(op, format!("{out} {}", state(&b)), String::new()));
            }
            log
        }
    };
}

for_both!(read_buf);
