//! The fs scripts: the ops (`FsOp`) and their random generator.
//!
//! A script works on a fresh temporary directory through a few relative
//! names (files, a directory with a subdirectory, names under a file, two
//! names for symbolic links) and on `SLOTS` slots that may each hold an
//! open `File`. The generator leans towards `File` ops on open slots
//! (writes, reads, seeks, cancelled reads, clones, conversion to std) and
//! interleaves path-based ops on the same names.

use crate::harness::Rng;

/// How many `File`s a script may hold at once.
pub const SLOTS: usize = 3;

/// The names ops use, relative to the script's directory. `a/x` sits under
/// a file (`NotADirectory`); `l` and `m` are meant for symbolic links.
pub const NAMES: &[&str] = &["a", "b", "d", "d/c", "d/e", "d/e/f", "a/x", "l", "m"];

/// Where a symbolic link may point: names above, a missing one, itself.
pub const TARGETS: &[&str] = &["a", "d", "d/c", "nowhere", "l", "m", "../escape"];

/// How a slot's `File` is opened.
#[derive(Clone, Copy, Debug)]
pub enum How {
    Open,
    Create,
    CreateNew,
    /// `OpenOptions` with these switches (invalid mixes included).
    Options {
        read: bool,
        write: bool,
        append: bool,
        truncate: bool,
        create: bool,
        create_new: bool,
    },
}

impl How {
    /// Whether the opened file has no write access (so a background write
    /// through it fails with the OS's error).
    pub fn read_only(self) -> bool {
        match self {
            How::Open => true,
            How::Create | How::CreateNew => false,
            How::Options { write, append, .. } => !write && !append,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Pos {
    Start(u64),
    Current(i64),
    End(i64),
}

impl Pos {
    pub fn to_std(self) -> std::io::SeekFrom {
        match self {
            Pos::Start(n) => std::io::SeekFrom::Start(n),
            Pos::Current(n) => std::io::SeekFrom::Current(n),
            Pos::End(n) => std::io::SeekFrom::End(n),
        }
    }
}

/// Bytes to write, shown as text in reports.
#[derive(Clone)]
pub struct Bytes(pub Vec<u8>);

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::fs_interp::show(&self.0))
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

#[derive(Clone, Debug)]
pub enum FsOp {
    // --- on the `File` in `slot` (skipped if the slot is empty) ---
    Open {
        slot: usize,
        path: &'static str,
        how: How,
    },
    /// One `write` call (takes up to `max_buf_size` bytes).
    Write {
        slot: usize,
        data: Bytes,
    },
    WriteAll {
        slot: usize,
        data: Bytes,
    },
    WriteVectored {
        slot: usize,
        a: Bytes,
        b: Bytes,
    },
    Read {
        slot: usize,
        cap: usize,
    },
    /// A `read` polled once and dropped if it is still pending: the read
    /// it started goes on, and its bytes are read ahead of the caller.
    ReadCancelled {
        slot: usize,
        cap: usize,
    },
    ReadToEnd {
        slot: usize,
    },
    Flush {
        slot: usize,
    },
    Shutdown {
        slot: usize,
    },
    SyncAll {
        slot: usize,
    },
    SyncData {
        slot: usize,
    },
    SetLen {
        slot: usize,
        len: u64,
    },
    FileMetadata {
        slot: usize,
    },
    TryClone {
        slot: usize,
        into: usize,
    },
    FileSetPermissions {
        slot: usize,
        readonly: bool,
    },
    IntoStd {
        slot: usize,
    },
    TryIntoStd {
        slot: usize,
    },
    Seek {
        slot: usize,
        to: Pos,
    },
    /// `AsyncSeek::start_seek` alone (no `poll_complete`).
    StartSeek {
        slot: usize,
        to: Pos,
    },
    /// `AsyncSeek::poll_complete` alone.
    PollComplete {
        slot: usize,
    },
    SetMaxBufSize {
        slot: usize,
        size: usize,
    },
    Drop {
        slot: usize,
    },
    // --- by path ---
    FsRead(&'static str),
    FsReadToString(&'static str),
    FsWrite(&'static str, Bytes),
    Copy(&'static str, &'static str),
    Rename(&'static str, &'static str),
    RemoveFile(&'static str),
    RemoveDir(&'static str),
    RemoveDirAll(&'static str),
    CreateDir(&'static str),
    CreateDirAll(&'static str),
    DirBuilder {
        path: &'static str,
        recursive: bool,
    },
    ReadDir(&'static str),
    HardLink(&'static str, &'static str),
    Symlink {
        target: &'static str,
        link: &'static str,
    },
    ReadLink(&'static str),
    Canonicalize(&'static str),
    Metadata(&'static str),
    SymlinkMetadata(&'static str),
    TryExists(&'static str),
    SetPermissions(&'static str, bool),
}

fn data(r: &mut Rng) -> Bytes {
    let n = match r.pick(&[8, 3, 1]) {
        0 => r.range(0, 12),
        1 => r.range(13, 200),
        _ => r.range(201, 5000),
    };
    let first = r.below(26) as usize;
    let mut v: Vec<u8> = (0..n).map(|i| b'a' + ((first + i) % 26) as u8).collect();
    // Sometimes not UTF-8 (for `read_to_string`).
    if n > 0 && r.chance(8) {
        let at = r.below(n as u64) as usize;
        v[at] = 0xff;
    }
    Bytes(v)
}

fn pos(r: &mut Rng) -> Pos {
    match r.pick(&[4, 3, 2]) {
        0 => Pos::Start(r.below(24)),
        1 => Pos::Current(r.range(0, 24) as i64 - 12),
        _ => Pos::End(r.range(0, 14) as i64 - 10),
    }
}

fn how(r: &mut Rng) -> How {
    match r.pick(&[3, 2, 1, 4]) {
        0 => How::Open,
        1 => How::Create,
        2 => How::CreateNew,
        _ => How::Options {
            read: r.chance(60),
            write: r.chance(60),
            append: r.chance(25),
            truncate: r.chance(20),
            create: r.chance(50),
            create_new: r.chance(10),
        },
    }
}

/// A random script of 5 to 40 ops.
pub fn gen(r: &mut Rng) -> Vec<FsOp> {
    let len = r.range(5, 40);
    // Files live mostly at two names, so ops meet on them.
    let file_name = |r: &mut Rng| {
        if r.chance(75) {
            r.one(&["a", "b"])
        } else {
            r.one(NAMES)
        }
    };
    let mut ops = Vec::with_capacity(len);
    for _ in 0..len {
        let slot = r.below(SLOTS as u64) as usize;
        let op = match r.pick(&[
            6, 6, 3, 2, 6, 4, 2, 3, 1, 1, 1, 2, 2, 1, 1, 1, 1, 4, 2, 2, 1, 1, // File
            2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // paths
        ]) {
            0 => FsOp::Open {
                slot,
                path: file_name(r),
                how: how(r),
            },
            1 => FsOp::Write {
                slot,
                data: data(r),
            },
            2 => FsOp::WriteAll {
                slot,
                data: data(r),
            },
            3 => FsOp::WriteVectored {
                slot,
                a: data(r),
                b: data(r),
            },
            4 => FsOp::Read {
                slot,
                cap: r.one(&[1, 3, 8, 16, 100]),
            },
            5 => FsOp::ReadCancelled {
                slot,
                cap: r.one(&[2, 5, 16, 100]),
            },
            6 => FsOp::ReadToEnd { slot },
            7 => FsOp::Flush { slot },
            8 => FsOp::Shutdown { slot },
            9 => FsOp::SyncAll { slot },
            10 => FsOp::SyncData { slot },
            11 => FsOp::SetLen {
                slot,
                len: r.below(30),
            },
            12 => FsOp::FileMetadata { slot },
            13 => FsOp::TryClone {
                slot,
                into: r.below(SLOTS as u64) as usize,
            },
            14 => FsOp::FileSetPermissions {
                slot,
                readonly: r.coin(),
            },
            15 => FsOp::IntoStd { slot },
            16 => FsOp::TryIntoStd { slot },
            17 => FsOp::Seek { slot, to: pos(r) },
            18 => FsOp::StartSeek { slot, to: pos(r) },
            19 => FsOp::PollComplete { slot },
            20 => FsOp::SetMaxBufSize {
                slot,
                size: r.one(&[0, 1, 2, 7, 64, 1, 2, 7, 64]),
            },
            21 => FsOp::Drop { slot },
            22 => FsOp::FsRead(file_name(r)),
            23 => FsOp::FsReadToString(file_name(r)),
            24 => FsOp::FsWrite(file_name(r), data(r)),
            25 => FsOp::Copy(file_name(r), r.one(NAMES)),
            26 => FsOp::Rename(r.one(NAMES), r.one(NAMES)),
            27 => FsOp::RemoveFile(r.one(NAMES)),
            28 => FsOp::RemoveDir(r.one(NAMES)),
            29 => FsOp::RemoveDirAll(r.one(NAMES)),
            30 => FsOp::CreateDir(r.one(NAMES)),
            31 => FsOp::CreateDirAll(r.one(NAMES)),
            32 => FsOp::DirBuilder {
                path: r.one(NAMES),
                recursive: r.coin(),
            },
            33 => FsOp::ReadDir(r.one(&[".", "d", "d/e", "a", "nowhere", "l"])),
            34 => FsOp::HardLink(file_name(r), r.one(NAMES)),
            35 => FsOp::Symlink {
                target: r.one(TARGETS),
                link: r.one(&["l", "m", "a", "d/c"]),
            },
            36 => FsOp::ReadLink(r.one(NAMES)),
            37 => FsOp::Canonicalize(r.one(NAMES)),
            38 => FsOp::Metadata(r.one(NAMES)),
            39 => FsOp::SymlinkMetadata(r.one(NAMES)),
            40 => FsOp::TryExists(r.one(NAMES)),
            _ => FsOp::SetPermissions(r.one(NAMES), r.coin()),
        };
        ops.push(op);
    }
    ops
}
