//! [`OpenOptions`]: how to open a [`File`], as `tokio::fs::OpenOptions`
//! (part of issue #14).
//!
//! Owns: a `std::fs::OpenOptions` with the same builder methods (the Unix
//! ones, `mode` and `custom_flags`, are inherent as in Tokio), a copy of
//! what was set ([`OpenFlags`]), and `open`, which runs std's `open` on the
//! blocking pool, or, on a runtime whose I/O driver is io_uring, an
//! `openat` on the worker's ring (`runtime/io/uring/path.rs`). The builder
//! itself never blocks and needs no runtime; `open` does.
//!
//! Invariant: the ring opens with exactly the `open(2)` flags std would
//! pass (`OpenFlags::to_open_flags`, checked against std for every
//! combination in `tests/io_uring_fs.rs`); a combination std refuses
//! before calling the kernel, and options built from a std
//! `OpenOptions` (whose settings cannot be read back), take std's own
//! path on the blocking pool, so errors stay std's.

use super::{asyncify, File};
use crate::runtime::io::uring::{FileOp, PathOp};
use std::io;
use std::path::Path;

/// Options for opening a file: which access, whether to create, truncate
/// or append. All start off; set them, then [`open`](OpenOptions::open).
/// The same as `std::fs::OpenOptions`, with an `async` `open` that gives a
/// [`File`].
///
/// ```
/// use weft::fs::OpenOptions;
/// use weft::io::AsyncWriteExt;
///
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-open-options-doc-{}", std::process::id()));
/// weft::fs::create_dir_all(&dir).await?;
/// let log = dir.join("log.txt");
/// for line in ["one\n", "two\n"] {
///     let mut file = OpenOptions::new().append(true).create(true).open(&log).await?;
///     file.write_all(line.as_bytes()).await?;
///     file.flush().await?;
/// }
/// assert_eq!(weft::fs::read_to_string(&log).await?, "one\ntwo\n");
/// weft::fs::remove_dir_all(&dir).await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions, Option<OpenFlags>);

/// What the builder methods set, to compute `open(2)`'s flags for the
/// ring (`None` in [`OpenOptions`] when built from std's).
#[derive(Clone, Copy, Debug, Default)]
struct OpenFlags {
    read: bool,
    write: bool,
    append: bool,
    truncate: bool,
    create: bool,
    create_new: bool,
    mode: Option<u32>,
    custom_flags: i32,
}

impl OpenFlags {
    /// The flags and mode std's `open` passes to `open(2)` on Linux, or
    /// `None` for a combination std refuses itself (no access mode;
    /// creating or truncating without write access; truncating in append
    /// mode).
    fn to_open_flags(self) -> Option<(i32, u32)> {
        let access = match (self.read, self.write, self.append) {
            (true, false, false) => libc::O_RDONLY,
            (false, true, false) => libc::O_WRONLY,
            (true, true, false) => libc::O_RDWR,
            (false, _, true) => libc::O_WRONLY | libc::O_APPEND,
            (true, _, true) => libc::O_RDWR | libc::O_APPEND,
            (false, false, false) => return None,
        };
        let creates = self.truncate || self.create || self.create_new;
        match (self.write, self.append) {
            (false, false) if creates => return None,
            (_, true) if self.truncate && !self.create_new => return None,
            _ => {}
        }
        let creation = match (self.create, self.truncate, self.create_new) {
            (_, _, true) => libc::O_CREAT | libc::O_EXCL,
            (true, true, false) => libc::O_CREAT | libc::O_TRUNC,
            (true, false, false) => libc::O_CREAT,
            (false, true, false) => libc::O_TRUNC,
            (false, false, false) => 0,
        };
        let flags = libc::O_CLOEXEC | access | creation | (self.custom_flags & !libc::O_ACCMODE);
        Some((flags, self.mode.unwrap_or(0o666)))
    }
}

impl OpenOptions {
    /// All options off (`open` then fails until one access mode is set).
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new(), Some(OpenFlags::default()))
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        if let Some(flags) = &mut self.1 {
            flags.read = read;
        }
        self
    }

    /// Open for writing (at the start, over the existing bytes, unless
    /// `truncate` or `append`).
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        if let Some(flags) = &mut self.1 {
            flags.write = write;
        }
        self
    }

    /// Open for appending: every write goes to the end of the file, whatever
    /// the cursor. Implies write access.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        if let Some(flags) = &mut self.1 {
            flags.append = append;
        }
        self
    }

    /// Empty an existing file on opening (needs write access).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        if let Some(flags) = &mut self.1 {
            flags.truncate = truncate;
        }
        self
    }

    /// Create the file if it is missing (needs write or append access).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        if let Some(flags) = &mut self.1 {
            flags.create = create;
        }
        self
    }

    /// Create the file, failing with `AlreadyExists` if something is at the
    /// path (atomically; `create` and `truncate` are then ignored).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        if let Some(flags) = &mut self.1 {
            flags.create_new = create_new;
        }
        self
    }

    /// Open `path` with these options, on the blocking pool (or, with the
    /// io_uring driver, on the worker's ring: same flags, same errors).
    ///
    /// # Errors
    /// As `std::fs::OpenOptions::open`: e.g. `NotFound`, `AlreadyExists`
    /// (with `create_new`), `PermissionDenied`, `InvalidInput` for a
    /// contradictory set of options.
    ///
    /// # Panics
    /// Outside a runtime.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let ring = self.1.and_then(OpenFlags::to_open_flags);
        if let (Some((flags, mode)), Some(driver)) = (ring, FileOp::current_driver()) {
            // After the writes begun before it, as `asyncify` below.
            super::write_order::after_earlier_writes().await;
            match PathOp::open(driver, path.as_ref(), flags, mode)?.await {
                // The ring first tries an open that does not block, and a
                // FIFO opened for writing with no reader then fails with
                // ENXIO where open(2) waits for one: that open goes to the
                // blocking pool, which waits, as Tokio's does. (A FIFO
                // opened for reading does not wait for a writer on the
                // ring: README, differences.)
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
                opened => return Ok(File::from_std(opened?)),
            }
        }
        let path = path.as_ref().to_owned();
        let options = self.0.clone();
        let std = asyncify(move || options.open(path)).await?;
        Ok(File::from_std(std))
    }
}

#[cfg(unix)]
impl OpenOptions {
    /// The permission bits a newly created file gets (before the umask);
    /// `0o666` by default.
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::mode(&mut self.0, mode);
        if let Some(flags) = &mut self.1 {
            flags.mode = Some(mode);
        }
        self
    }

    /// Extra `open(2)` flags (`libc::O_*`), or-ed in. The access mode bits
    /// are masked off: use `read`/`write`/`append` for those.
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
        if let Some(set) = &mut self.1 {
            set.custom_flags = flags;
        }
        self
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options, None)
    }
}
