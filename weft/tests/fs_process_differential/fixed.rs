//! The differences this test found between weft and Tokio, each as the
//! smallest script that showed it; all fixed in weft, so these pass (and
//! failed before the fix).

use crate::fs_ops::{FsOp, How, Pos};
use crate::harness::assert_same;
use crate::FS;

/// `File::set_len` resets what `poll_complete` reports with no seek in
/// flight to 0 on Tokio (its `set_len` runs as a seek that "lands" at 0);
/// weft kept the last seek's position.
#[test]
fn poll_complete_after_set_len_reports_zero() {
    assert_same(
        &FS,
        vec![
            FsOp::Open {
                slot: 0,
                path: "b",
                how: How::Create,
            },
            FsOp::Seek {
                slot: 0,
                to: Pos::Start(10),
            },
            FsOp::SetLen { slot: 0, len: 18 },
            FsOp::PollComplete { slot: 0 },
        ],
    );
}

/// A seek left in flight (`start_seek` without `poll_complete`) and then
/// finished by a write is not recorded by Tokio: `poll_complete` with no
/// seek in flight still reports the earlier position (0 here). weft
/// recorded it (18).
#[test]
fn seek_finished_by_a_write_is_not_recorded() {
    assert_same(
        &FS,
        vec![
            FsOp::Open {
                slot: 0,
                path: "a",
                how: How::Create,
            },
            FsOp::StartSeek {
                slot: 0,
                to: Pos::Start(18),
            },
            FsOp::Write {
                slot: 0,
                data: crate::fs_ops::Bytes(b"xyzabc".to_vec()),
            },
            FsOp::PollComplete { slot: 0 },
        ],
    );
}

/// The same, finished by a flush instead.
#[test]
fn seek_finished_by_a_flush_is_not_recorded() {
    assert_same(
        &FS,
        vec![
            FsOp::Open {
                slot: 0,
                path: "a",
                how: How::Create,
            },
            FsOp::StartSeek {
                slot: 0,
                to: Pos::Start(18),
            },
            FsOp::Flush { slot: 0 },
            FsOp::PollComplete { slot: 0 },
        ],
    );
}

/// A seek finished by a read is recorded, on both.
#[test]
fn seek_finished_by_a_read_is_recorded() {
    assert_same(
        &FS,
        vec![
            FsOp::FsWrite("a", crate::fs_ops::Bytes(b"0123456789".to_vec())),
            FsOp::Open {
                slot: 0,
                path: "a",
                how: How::Open,
            },
            FsOp::StartSeek {
                slot: 0,
                to: Pos::Start(4),
            },
            FsOp::Read { slot: 0, cap: 3 },
            FsOp::PollComplete { slot: 0 },
        ],
    );
}

/// An empty `write` leaves Tokio's file busy (it still sends the write to
/// the blocking pool), so a `start_seek` right after fails with `Other`;
/// weft's returned without starting anything, and the seek went ahead.
#[test]
fn start_seek_right_after_an_empty_write_fails() {
    assert_same(
        &FS,
        vec![
            FsOp::FsWrite("a", crate::fs_ops::Bytes(b"abcdef".to_vec())),
            FsOp::Open {
                slot: 2,
                path: "a",
                how: How::Open,
            },
            FsOp::Write {
                slot: 2,
                data: crate::fs_ops::Bytes(Vec::new()),
            },
            FsOp::StartSeek {
                slot: 2,
                to: Pos::Start(3),
            },
            FsOp::PollComplete { slot: 2 },
        ],
    );
}

/// `File::set_max_buf_size(0)` panics on Tokio; weft took it, and then
/// every write wrote nothing (`write_all` failed with `WriteZero`).
#[test]
fn set_max_buf_size_zero_panics() {
    assert_same(
        &FS,
        vec![
            FsOp::Open {
                slot: 0,
                path: "a",
                how: How::Create,
            },
            FsOp::SetMaxBufSize { slot: 0, size: 0 },
            FsOp::WriteAll {
                slot: 0,
                data: crate::fs_ops::Bytes(b"abc".to_vec()),
            },
        ],
    );
}
