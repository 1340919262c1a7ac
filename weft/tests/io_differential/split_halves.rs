//! `io::split` bookkeeping, one fixed scenario on both crates: halves
//! report `is_pair_of` for their own partner only, `is_write_vectored` of
//! the write half is the stream's, `unsplit` gives back the stream with
//! its state (buffered bytes, closed direction), and unsplitting halves
//! of different streams panics.

use crate::harness::{drive_fmt, for_both, quietly, show};

macro_rules! split_halves {
    () => {
        use k::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};

        pub fn run() -> Vec<String> {
            let mut log = Vec::new();
            let mut polls = 0;
            let (a, mut b) = k::io::duplex(8);
            let (c, _d) = k::io::duplex(8);
            let (mut ar, mut aw) = k::io::split(a);
            let (cr, cw) = k::io::split(c);
            log.push(format!(
                "pairs: {} {} {} {}",
                ar.is_pair_of(&aw),
                aw.is_pair_of(&ar),
                ar.is_pair_of(&cw),
                cw.is_pair_of(&ar)
            ));
            log.push(format!("vectored: {}", aw.is_write_vectored()));
            log.push(drive_fmt(aw.write(b"hello world"), None, &mut polls, |n| {
                format!("{n}")
            }));
            log.push(drive_fmt(b.write(b"xyz"), None, &mut polls, |n| {
                format!("{n}")
            }));
            let mut buf = [0u8; 2];
            log.push(drive_fmt(ar.read(&mut buf), None, &mut polls, |n| {
                format!("{n}")
            }));
            log.push(drive_fmt(aw.shutdown(), None, &mut polls, |()| {
                String::new()
            }));
            let mut a = ar.unsplit(aw);
            let mut rest = Vec::new();
            log.push(
                drive_fmt(a.read_to_end(&mut rest), None, &mut polls, |n| {
                    format!("{n}")
                }) + &show(&rest),
            );
            log.push(drive_fmt(a.write(b"z"), None, &mut polls, |n| {
                format!("{n}")
            }));
            let mut got = Vec::new();
            drop(a);
            log.push(
                drive_fmt(b.read_to_end(&mut got), None, &mut polls, |n| {
                    format!("{n}")
                }) + &show(&got),
            );
            let (er, _) = k::io::split(k::io::duplex(1).0);
            let bad = quietly(move || drop(er.unsplit(cw)));
            log.push(format!("unrelated unsplit panics: {}", bad.is_err()));
            drop(cr);
            log
        }
    };
}

for_both!(split_halves);

#[test]
fn split_halves_match_tokio() {
    assert_eq!(on_tokio::run(), on_weft::run());
}
