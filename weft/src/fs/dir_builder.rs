//! [`DirBuilder`]: create a directory with options, as
//! `tokio::fs::DirBuilder` (part of issue #14).
//!
//! Owns: the options (`recursive`, and on Unix the permission `mode`) and
//! `create`, which builds a `std::fs::DirBuilder` from them and runs it on
//! the blocking pool. The builder needs no runtime; `create` does.

use super::asyncify;
use std::io;
use std::path::Path;

/// Creates directories: one level, or with every missing parent.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("weft-dir-builder-doc-{}", std::process::id()));
/// weft::fs::DirBuilder::new().recursive(true).create(dir.join("a/b")).await?;
/// assert!(weft::fs::metadata(dir.join("a/b")).await?.is_dir());
/// weft::fs::remove_dir_all(&dir).await?;
/// # std::io::Result::Ok(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default, Clone)]
pub struct DirBuilder {
    recursive: bool,
    #[cfg(unix)]
    mode: Option<u32>,
}

impl DirBuilder {
    /// Not recursive, default permissions.
    pub fn new() -> DirBuilder {
        DirBuilder::default()
    }

    /// Whether `create` makes missing parents too (and then succeeds if the
    /// directory already exists).
    pub fn recursive(&mut self, recursive: bool) -> &mut DirBuilder {
        self.recursive = recursive;
        self
    }

    /// Create `path` on the blocking pool.
    ///
    /// # Errors
    /// As `std::fs::DirBuilder::create`: not recursive, `NotFound` if the
    /// parent is missing and `AlreadyExists` if `path` exists.
    ///
    /// # Panics
    /// Outside a runtime.
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref().to_owned();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(self.recursive);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, mode);
        }
        asyncify(move || builder.create(path)).await
    }
}

#[cfg(unix)]
impl DirBuilder {
    /// The permission bits new directories get (before the umask); `0o777`
    /// by default.
    pub fn mode(&mut self, mode: u32) -> &mut DirBuilder {
        self.mode = Some(mode);
        self
    }
}
