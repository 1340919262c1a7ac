//! `read_dir`: a directory's entries, read on the blocking pool in batches.
//!
//! Owns: [`ReadDir`], a state machine that is either idle (holding std's
//! iterator and a buffer of entries already read) or waiting for a batch
//! from the blocking pool (which then holds the iterator). Entries come out
//! in the order std yields them; the first error ends the batch and is
//! reported once.

use super::asyncify;
use crate::task::JoinHandle;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::future::{poll_fn, Future};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// Entries read per trip to the blocking pool (Tokio's number too).
const BATCH: usize = 32;

/// Entries read but not yet handed out, std's iterator, and whether it may
/// have more.
type Batch = (VecDeque<io::Result<DirEntry>>, std::fs::ReadDir, bool);

/// The entries of a directory, from [`read_dir`].
#[derive(Debug)]
pub struct ReadDir(State);

#[derive(Debug)]
enum State {
    Idle(Option<Batch>),
    Pending(JoinHandle<Batch>),
}

/// Open a directory for reading its entries.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-read-dir-doc-{}", std::process::id()));
/// weft::fs::create_dir_all(&dir).await?;
/// weft::fs::write(dir.join("a"), b"").await?;
/// let mut entries = weft::fs::read_dir(&dir).await?;
/// let mut names = Vec::new();
/// while let Some(entry) = entries.next_entry().await? {
///     names.push(entry.file_name());
/// }
/// assert_eq!(names, vec!["a"]);
/// weft::fs::remove_dir_all(&dir).await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    let std = asyncify(move || std::fs::read_dir(path)).await?;
    Ok(ReadDir(State::Idle(Some((VecDeque::new(), std, true)))))
}

impl ReadDir {
    /// The next entry; `None` when there are no more. Cancel-safe.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Poll-style [`ReadDir::next_entry`].
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            match &mut self.0 {
                State::Idle(idle) => {
                    let (buf, _, more) = idle.as_mut().expect("ReadDir state present");
                    if let Some(entry) = buf.pop_front() {
                        return Poll::Ready(entry.map(Some));
                    }
                    if !*more {
                        return Poll::Ready(Ok(None));
                    }
                    let (mut buf, mut std, _) = idle.take().expect("ReadDir state present");
                    self.0 = State::Pending(crate::task::spawn_blocking(move || {
                        let more = next_batch(&mut buf, &mut std);
                        (buf, std, more)
                    }));
                }
                State::Pending(handle) => {
                    let batch =
                        ready!(Pin::new(handle).poll(cx)).map_err(super::background_failed)?;
                    self.0 = State::Idle(Some(batch));
                }
            }
        }
    }
}

/// Read up to [`BATCH`] entries; false once the directory is exhausted (or
/// failed: the error is the last entry).
fn next_batch(buf: &mut VecDeque<io::Result<DirEntry>>, std: &mut std::fs::ReadDir) -> bool {
    for _ in 0..BATCH {
        match std.next() {
            Some(Ok(entry)) => buf.push_back(Ok(DirEntry(Arc::new(entry)))),
            Some(Err(e)) => {
                buf.push_back(Err(e));
                return false;
            }
            None => return false,
        }
    }
    true
}

/// One entry of a [`ReadDir`].
#[derive(Debug, Clone)]
pub struct DirEntry(Arc<std::fs::DirEntry>);

impl DirEntry {
    /// The entry's full path.
    pub fn path(&self) -> PathBuf {
        self.0.path()
    }

    /// The entry's name within its directory.
    pub fn file_name(&self) -> OsString {
        self.0.file_name()
    }

    /// The entry's inode number.
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.0)
    }

    /// The entry's metadata (not following a final symbolic link).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let entry = self.0.clone();
        asyncify(move || entry.metadata()).await
    }

    /// The entry's file type (not following a final symbolic link).
    pub async fn file_type(&self) -> io::Result<FileType> {
        let entry = self.0.clone();
        asyncify(move || entry.file_type()).await
    }
}
