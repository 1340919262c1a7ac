//! Filesystem operations, as `tokio::fs` offers them (part of issue #14).
//!
//! Owns: the free functions and `asyncify`; the types live one per file
//! ([`File`], [`FileTimes`], [`OpenOptions`], [`DirBuilder`],
//! [`ReadDir`]/[`DirEntry`]).
//! Every operation runs the std call on the blocking pool (as Tokio does),
//! so it never blocks a worker; the io_uring driver is meant to take them
//! over later.
//!
//! Like every blocking-pool operation, these need a runtime: called outside
//! one they panic, naming the fix.
//!
//! Every path call and open first waits for the `File` writes to regular
//! files begun before it (`write_order.rs`), so it sees a write that
//! returned, flushed or not.

mod dir_builder;
mod file;
mod file_buf;
mod file_times;
mod open_options;
mod read_dir;
pub(crate) mod write_order;

pub use dir_builder::DirBuilder;
pub use file::File;
pub use file_times::FileTimes;
pub use open_options::OpenOptions;
pub use read_dir::{read_dir, DirEntry, ReadDir};

use crate::runtime::io::uring::{PathCall, PathOp};
use crate::task::JoinError;
use std::fs::{Metadata, Permissions};
use std::io;
use std::path::{Path, PathBuf};

/// Run a blocking filesystem call on the blocking pool, after the `File`
/// writes begun before it (write_order.rs).
pub(crate) async fn asyncify<F, T>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    write_order::after_earlier_writes().await;
    match crate::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => Err(background_failed(e)),
    }
}

/// What a filesystem call fails with when its blocking task never ran or
/// never finished (its runtime shut down): Tokio's error, kind `Other` and
/// text `background task failed`, with the task's `JoinError` as its
/// source, which says why.
pub(crate) fn background_failed(why: JoinError) -> io::Error {
    io::Error::other(BackgroundTaskFailed(why))
}

#[derive(Debug)]
struct BackgroundTaskFailed(JoinError);

impl std::fmt::Display for BackgroundTaskFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("background task failed")
    }
}

impl std::error::Error for BackgroundTaskFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Run `call` on the current runtime's io_uring ring, if it has rings
/// that support it; `None` means: use the blocking pool.
async fn on_ring(call: PathCall, path: &Path, to: Option<&Path>) -> Option<io::Result<()>> {
    let driver = PathOp::supported()?;
    write_order::after_earlier_writes().await;
    Some(match PathOp::new(driver, call, path, to) {
        Ok(op) => op.await.map(drop),
        Err(e) => Err(e),
    })
}

/// The whole contents of a file.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-fs-doc-{}", std::process::id()));
/// weft::fs::create_dir_all(&dir).await?;
/// let file = dir.join("hello.txt");
/// weft::fs::write(&file, b"hello").await?;
/// assert_eq!(weft::fs::read(&file).await?, b"hello");
/// assert_eq!(weft::fs::read_to_string(&file).await?, "hello");
/// weft::fs::remove_dir_all(&dir).await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
///
/// With the io_uring driver, the open and the reads run on the worker's
/// ring instead of the blocking pool (the result is the same).
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    if crate::runtime::io::uring::FileOp::current_driver().is_some() {
        return read_on_ring(path.as_ref()).await;
    }
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read(path)).await
}

/// `fs::read` through the ring: open, then read until the end of the file
/// into a `Vec` that starts at 64 KiB and doubles when full (std uses the
/// file's length as a hint instead, which would cost a `statx` more).
/// It grows only when full: reserving a fresh chunk after every read
/// pushed small files' buffers past malloc's mmap threshold, and the
/// mmap/munmap per call (page faults, TLB shootdowns) cost 3× the CPU.
async fn read_on_ring(path: &Path) -> io::Result<Vec<u8>> {
    use crate::io::AsyncReadExt;
    const CHUNK: usize = 64 * 1024;
    let mut file = File::open(path).await?;
    let mut contents = Vec::with_capacity(CHUNK);
    loop {
        if contents.len() == contents.capacity() {
            contents.reserve(contents.len());
        }
        if file.read_buf(&mut contents).await? == 0 {
            return Ok(contents);
        }
    }
}

/// The whole contents of a UTF-8 file.
///
/// # Errors
/// As [`read`], and `InvalidData` if the contents are not UTF-8.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    if crate::runtime::io::uring::FileOp::current_driver().is_some() {
        let bytes = read_on_ring(path.as_ref()).await?;
        return String::from_utf8(bytes).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        });
    }
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_to_string(path)).await
}

/// Create or truncate a file and write `contents` to it.
///
/// With the io_uring driver, the open and the writes run on the worker's
/// ring instead of the blocking pool; it returns once every byte is
/// written (or with the write's error).
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    if crate::runtime::io::uring::FileOp::current_driver().is_some() {
        use crate::io::AsyncWriteExt;
        let mut file = File::create(path).await?;
        file.write_all(contents.as_ref()).await?;
        return file.flush().await;
    }
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    asyncify(move || std::fs::write(path, contents)).await
}

/// Copy a file's contents and permissions; returns the bytes copied.
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify(move || std::fs::copy(from, to)).await
}

/// Rename a file or directory, replacing `to` if it exists.
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let call = PathCall::Rename { to: 0 };
    if let Some(done) = on_ring(call, from.as_ref(), Some(to.as_ref())).await {
        return done;
    }
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify(move || std::fs::rename(from, to)).await
}

/// Create a directory.
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    // std's mode for a new directory (the umask applies).
    let call = PathCall::CreateDir { mode: 0o777 };
    if let Some(done) = on_ring(call, path.as_ref(), None).await {
        return done;
    }
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir(path)).await
}

/// Create a directory and any missing parents.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir_all(path)).await
}

/// Remove a file.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let call = PathCall::Remove { dir: false };
    if let Some(done) = on_ring(call, path.as_ref(), None).await {
        return done;
    }
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_file(path)).await
}

/// Remove an empty directory.
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let call = PathCall::Remove { dir: true };
    if let Some(done) = on_ring(call, path.as_ref(), None).await {
        return done;
    }
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_dir(path)).await
}

/// Remove a directory and everything in it.
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_dir_all(path)).await
}

/// A file's metadata, following symbolic links.
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::metadata(path)).await
}

/// A file's metadata, not following a final symbolic link.
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::symlink_metadata(path)).await
}

/// The absolute path with every link and `..` resolved.
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::canonicalize(path)).await
}

/// Create a hard link `link` to `original`.
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify(move || std::fs::hard_link(original, link)).await
}

/// Create a symbolic link `link` pointing at `original` (Unix).
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify(move || std::os::unix::fs::symlink(original, link)).await
}

/// Where a symbolic link points.
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_link(path)).await
}

/// Change a file's permissions.
pub async fn set_permissions(path: impl AsRef<Path>, perm: Permissions) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::set_permissions(path, perm)).await
}

/// Whether `path` exists (an error if that cannot be told, e.g. no
/// permission to look).
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = path.as_ref().to_owned();
    asyncify(move || path.try_exists()).await
}
