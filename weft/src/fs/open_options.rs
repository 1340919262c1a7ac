//! [`OpenOptions`]: how to open a [`File`], as `tokio::fs::OpenOptions`
//! (part of issue #14).
//!
//! Owns: a `std::fs::OpenOptions` with the same builder methods (the Unix
//! ones, `mode` and `custom_flags`, are inherent as in Tokio), and `open`,
//! which runs std's `open` on the blocking pool. The builder itself never
//! blocks and needs no runtime; `open` does.

use super::{asyncify, File};
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
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// All options off (`open` then fails until one access mode is set).
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Open for writing (at the start, over the existing bytes, unless
    /// `truncate` or `append`).
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Open for appending: every write goes to the end of the file, whatever
    /// the cursor. Implies write access.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Empty an existing file on opening (needs write access).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Create the file if it is missing (needs write or append access).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Create the file, failing with `AlreadyExists` if something is at the
    /// path (atomically; `create` and `truncate` are then ignored).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// Open `path` with these options, on the blocking pool.
    ///
    /// # Errors
    /// As `std::fs::OpenOptions::open`: e.g. `NotFound`, `AlreadyExists`
    /// (with `create_new`), `PermissionDenied`, `InvalidInput` for a
    /// contradictory set of options.
    ///
    /// # Panics
    /// Outside a runtime.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
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
        self
    }

    /// Extra `open(2)` flags (`libc::O_*`), or-ed in. The access mode bits
    /// are masked off: use `read`/`write`/`append` for those.
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
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
        OpenOptions(options)
    }
}
