//! [`Buf`]: the one buffer of an `fs::File` (file.rs): bytes read ahead
//! of the caller, or bytes a background write is to write.
//!
//! Invariant: `bytes` is initialised up to its length (it only grows on
//! the blocking pool's path, so a read does not zero it again; a ring read
//! hands back exactly the bytes it read), and `start..end` is the live
//! part.

use crate::io::{IoSlice, ReadBuf};
use std::fs::File as StdFile;
use std::io::{self, Read, Write};

/// The file's one buffer: bytes read ahead of the caller, or bytes a
/// background write is to write. `bytes` is initialised up to its length
/// (it only grows, so a read does not zero it again); `start..end` is the
/// live part.
#[derive(Default)]
pub(super) struct Buf {
    pub(super) bytes: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl Buf {
    /// Bytes read ahead and not handed out yet.
    pub(super) fn unread(&self) -> usize {
        self.end - self.start
    }

    /// Hand out as many unread bytes as fit.
    pub(super) fn copy_to(&mut self, dst: &mut ReadBuf<'_>) {
        let n = self.unread().min(dst.remaining());
        dst.put_slice(&self.bytes[self.start..self.start + n]);
        self.start += n;
    }

    /// Drop the unread bytes; returns how many there were.
    pub(super) fn discard(&mut self) -> usize {
        let n = self.unread();
        self.start = 0;
        self.end = 0;
        n
    }

    /// Make the first `n` bytes usable.
    pub(super) fn reserve(&mut self, n: usize) {
        if self.bytes.len() < n {
            self.bytes.resize(n, 0);
        }
    }

    /// Copy up to `max` bytes from `src`, in order, into the empty buffer;
    /// returns how many.
    pub(super) fn fill_from(&mut self, src: &[IoSlice<'_>], max: usize) -> usize {
        let total = src.iter().map(|s| s.len()).fold(0, usize::saturating_add);
        self.reserve(total.min(max));
        let mut n = 0;
        for slice in src {
            let take = slice.len().min(max - n);
            self.bytes[n..n + take].copy_from_slice(&slice[..take]);
            n += take;
            if n == max {
                break;
            }
        }
        self.start = 0;
        self.end = n;
        n
    }

    /// Read up to `want` bytes from the file's cursor (retrying if a signal
    /// interrupts); they become the unread part.
    pub(super) fn read_from(&mut self, std: &StdFile, want: usize) -> io::Result<usize> {
        self.reserve(want);
        self.start = 0;
        self.end = 0;
        let n = loop {
            match (&*std).read(&mut self.bytes[..want]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                result => break result?,
            }
        };
        self.end = n;
        Ok(n)
    }

    /// The buffer a ring op handed back: a read's bytes (all of them)
    /// become the unread part; a write's are spent.
    pub(super) fn from_ring(read: bool, bytes: Vec<u8>) -> Buf {
        let end = if read { bytes.len() } else { 0 };
        Buf {
            bytes,
            start: 0,
            end,
        }
    }

    /// Write the live part at the file's cursor and empty the buffer.
    pub(super) fn write_to(&mut self, std: &StdFile) -> io::Result<()> {
        let result = (&*std).write_all(&self.bytes[self.start..self.end]);
        self.start = 0;
        self.end = 0;
        result
    }
}
