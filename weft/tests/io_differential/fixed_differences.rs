//! The differences from Tokio this test found, each as a minimal script,
//! all fixed in weft (d6e40da). Each test now pins Tokio's behaviour down
//! for that case; its doc gives what Tokio does and what weft did before
//! the fix. The fuzzers generate all of these triggers too, except zero
//! capacities and sizes, which panic in both crates.
//!
//! Most were one root cause, Tokio's retry of `ErrorKind::Interrupted`:
//! Tokio's loops (`read_exact`, `read_to_end`, `read_to_string`,
//! `read_until` and so `read_line` / `lines` / `split`, the number readers
//! and writers, `write_all`, `write_all_buf`, `BufWriter`'s flush, `copy`,
//! `copy_buf`, `copy_bidirectional`) call the inner reader or writer again
//! on `Interrupted`; weft's returned it. (Single reads and writes,
//! `read_buf`, `write_buf`, `fill_buf`, return it in both.)

use crate::copies::{CKind, CopyScript, Side};
use crate::harness::assert_same;
use crate::mock::{FEv, Kind, REv, WEv, Wk};
use crate::readers::{ROp, RStack, ReadScript};
use crate::std_types::{SObj, SOp, StdScript, SF};
use crate::writers::{WOp, WStack, WriteScript};
use crate::{COPIES, READERS, STD_TYPES, WRITERS};

const INTR: REv = REv::Err(Kind::Interrupted);

fn read(stack: RStack, src: &[u8], ev: Vec<REv>, ops: Vec<ROp>) -> ReadScript {
    ReadScript {
        src: src.to_vec(),
        ev,
        src2: Vec::new(),
        ev2: Vec::new(),
        stack,
        ops,
    }
}

fn write(stack: WStack, ev: Vec<WEv>, ops: Vec<WOp>) -> WriteScript {
    WriteScript {
        vectored: false,
        ev,
        fev: Vec::new(),
        sev: Vec::new(),
        stack,
        ops,
    }
}

fn side(src: &[u8], rev: Vec<REv>, wev: Vec<WEv>) -> Side {
    Side {
        src: src.to_vec(),
        rev,
        wev,
        fev: Vec::<FEv>::new(),
        sev: Vec::new(),
        vectored: false,
    }
}

// --- `Interrupted` is retried by Tokio's loops (weft's returned it) -------

/// Tokio `Ok(4) "abcd"`; weft `Err(Interrupted)`.
#[test]
fn read_exact_retries_interrupted() {
    let ops = vec![ROp::ReadExact(4)];
    assert_same(&READERS, read(RStack::Raw, b"abcd", vec![INTR], ops));
}

/// Tokio `Ok(2)`, buffer `"xab"`; weft `Err(Interrupted)`, buffer `"xa"`.
#[test]
fn read_to_end_retries_interrupted() {
    let ev = vec![REv::Data(1), INTR];
    assert_same(&READERS, read(RStack::Raw, b"ab", ev, vec![ROp::ReadToEnd]));
}

/// Tokio `Ok(2)`, string `"s:ab"`; weft `Err(Interrupted)`, string `"s:"`.
#[test]
fn read_to_string_retries_interrupted() {
    let ev = vec![REv::Data(1), INTR];
    assert_same(
        &READERS,
        read(RStack::Raw, b"ab", ev, vec![ROp::ReadToString]),
    );
}

/// `read_until` (the loop under `read_line`, `lines` and `split` too):
/// Tokio `Ok(3)` with `"ab\n"` appended; weft `Err(Interrupted)` with `"a"`.
#[test]
fn read_until_retries_interrupted() {
    let ev = vec![REv::Data(1), INTR];
    let ops = vec![ROp::ReadUntil {
        delim: b'\n',
        cancel: None,
    }];
    assert_same(&READERS, read(RStack::Buf(8), b"ab\ncd", ev, ops));
}

/// `read_u32`: Tokio `Ok(0x61626364)`; weft `Err(Interrupted)`.
#[test]
fn read_number_retries_interrupted() {
    let ev = vec![REv::Data(2), INTR];
    assert_same(&READERS, read(RStack::Raw, b"abcd", ev, vec![ROp::Num(4)]));
}

/// Tokio `Ok`, all 4 bytes written; weft `Err(Interrupted)`.
#[test]
fn write_all_retries_interrupted() {
    let ev = vec![WEv::Err(Kind::Interrupted)];
    assert_same(&WRITERS, write(WStack::Raw, ev, vec![WOp::WriteAll(4)]));
}

/// Tokio `Ok`, nothing left; weft `Err(Interrupted)`, 4 bytes left.
#[test]
fn write_all_buf_retries_interrupted() {
    let ev = vec![WEv::Err(Kind::Interrupted)];
    assert_same(
        &WRITERS,
        write(WStack::Raw, ev, vec![WOp::WriteAllBuf(2, 2)]),
    );
}

/// `write_u32`: Tokio `Ok`; weft `Err(Interrupted)`.
#[test]
fn write_number_retries_interrupted() {
    let ev = vec![WEv::Err(Kind::Interrupted)];
    assert_same(&WRITERS, write(WStack::Raw, ev, vec![WOp::Num(4)]));
}

/// `BufWriter::flush` over a writer that says `Interrupted` once: Tokio
/// `Ok` (all written); weft `Err(Interrupted)`.
#[test]
fn buf_writer_flush_retries_interrupted() {
    let ev = vec![WEv::Err(Kind::Interrupted)];
    let ops = vec![WOp::Write { n: 4, cancel: None }, WOp::Flush];
    assert_same(&WRITERS, write(WStack::Buf(16), ev, ops));
}

/// `copy`, the reader says `Interrupted`: Tokio `Ok(3)`; weft `Err`.
#[test]
fn copy_retries_interrupted_read() {
    let s = CopyScript {
        kind: CKind::Copy,
        a: side(b"abc", vec![INTR], Vec::new()),
        b: side(b"", Vec::new(), Vec::new()),
    };
    assert_same(&COPIES, s);
}

/// `copy`, the writer says `Interrupted`: Tokio `Ok(3)`; weft `Err`.
#[test]
fn copy_retries_interrupted_write() {
    let s = CopyScript {
        kind: CKind::Copy,
        a: side(b"abc", Vec::new(), Vec::new()),
        b: side(b"", Vec::new(), vec![WEv::Err(Kind::Interrupted)]),
    };
    assert_same(&COPIES, s);
}

/// `copy_buf` (from a `BufReader`): Tokio `Ok(3)`; weft `Err`.
#[test]
fn copy_buf_retries_interrupted() {
    let s = CopyScript {
        kind: CKind::CopyBuf(8),
        a: side(b"abc", vec![INTR], Vec::new()),
        b: side(b"", Vec::new(), Vec::new()),
    };
    assert_same(&COPIES, s);
}

/// `copy_bidirectional`: Tokio `Ok((3, 0))`; weft `Err`.
#[test]
fn copy_bidirectional_retries_interrupted() {
    let s = CopyScript {
        kind: CKind::Bidi,
        a: side(b"abc", vec![INTR], Vec::new()),
        b: side(b"", Vec::new(), Vec::new()),
    };
    assert_same(&COPIES, s);
}

// --- What an I/O error leaves behind ---------------------------------------

/// `read_line` hits an error after reading `"a"`: Tokio keeps `"a"` in the
/// string (documented: "buf may contain some bytes already read in the
/// event that all data read so far was valid UTF-8"); weft drops it, so the
/// bytes are lost to the program.
#[test]
fn read_line_keeps_partial_line_on_error() {
    let ev = vec![REv::Data(1), REv::Err(Kind::Other)];
    let ops = vec![ROp::ReadLine];
    assert_same(&READERS, read(RStack::Buf(8), b"ab\n", ev, ops));
}

/// `Lines::next_line` hits an error after reading `"a"`; the next call
/// returns the line: Tokio `"ab"` (the partial line stays in the `Lines`);
/// weft `"b"` (dropped).
#[test]
fn lines_keeps_partial_line_on_error() {
    let ev = vec![REv::Data(1), REv::Err(Kind::WouldBlock)];
    let ops = vec![
        ROp::NextLine { cancel: None },
        ROp::NextLine { cancel: None },
    ];
    assert_same(&READERS, read(RStack::Buf(8), b"ab\n", ev, ops));
}

/// `Split::next_segment`, as `lines`: Tokio `"ab"`, weft `"b"`.
#[test]
fn split_keeps_partial_segment_on_error() {
    let ev = vec![REv::Data(1), REv::Err(Kind::WouldBlock)];
    let seg = ROp::NextSegment {
        delim: b',',
        cancel: None,
    };
    let ops = vec![seg.clone(), seg];
    assert_same(&READERS, read(RStack::Buf(8), b"ab,", ev, ops));
}

// --- Others -----------------------------------------------------------------

/// `copy_buf` whose reader is not ready: Tokio flushes the writer first
/// (bytes read but not flushed at that `Pending`: 0), as `copy` does; weft
/// waits with 2 bytes unflushed (into a `BufWriter` they stay there, which
/// can stall a request/response exchange).
#[test]
fn copy_buf_flushes_when_reader_pending() {
    let s = CopyScript {
        kind: CKind::CopyBuf(8),
        a: side(
            b"ab",
            vec![REv::Data(2), REv::Pending(Wk::Later)],
            Vec::new(),
        ),
        b: side(b"", Vec::new(), Vec::new()),
    };
    assert_same(&COPIES, s);
}

/// A relative seek through `BufStream` (a `BufReader` over a `BufWriter`,
/// whose seek fails only in `poll_complete`) fails; then a read: Tokio
/// returns the byte still buffered (`"a"`, its buffer kept); weft `""`
/// (it discarded the buffer when the seek started), losing it.
#[test]
fn buf_reader_failed_seek_keeps_buffer() {
    let s = StdScript {
        obj: SObj::BufStream(8, 8),
        init: b"a".to_vec(),
        ops: vec![SOp::FillBuf, SOp::Seek(SF::Current(-5)), SOp::Read(4)],
    };
    assert_same(&STD_TYPES, s);
}

/// `empty()` as a writer: Tokio's is vectored (`is_write_vectored` true,
/// `write_vectored` takes every slice: `Ok(5)`); weft's is not (false,
/// `Ok(2)`, the first slice only).
#[test]
fn empty_write_vectored() {
    let s = StdScript {
        obj: SObj::Empty,
        init: Vec::new(),
        ops: vec![SOp::IsWriteVectored, SOp::WriteVectored(vec![2, 3])],
    };
    assert_same(&STD_TYPES, s);
}

/// `BufReader::with_capacity(0, ..)` (so `BufStream::with_capacity(0, ..)`
/// too): Tokio panics, as documented; weft makes a reader whose reads go
/// straight through and whose `fill_buf` is always empty (end of stream).
#[test]
fn buf_reader_with_capacity_zero() {
    let ops = vec![ROp::Read { n: 1, cancel: None }];
    assert_same(&READERS, read(RStack::Buf(0), b"a", Vec::new(), ops));
}

/// `copy_bidirectional_with_sizes` with a zero size: Tokio panics, as
/// documented; weft uses a one-byte buffer.
#[test]
fn copy_bidirectional_with_sizes_zero() {
    let s = CopyScript {
        kind: CKind::BidiSizes(0, 1),
        a: side(b"ab", Vec::new(), Vec::new()),
        b: side(b"", Vec::new(), Vec::new()),
    };
    assert_same(&COPIES, s);
}
