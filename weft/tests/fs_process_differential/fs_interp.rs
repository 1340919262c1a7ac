//! The fs interpreter, written once (`fs_group!`) and expanded for Tokio
//! and weft: runs an `FsOp` script on a fresh current_thread runtime in a
//! fresh temporary directory, one `block_on` per op, and logs what each op
//! showed; after the last op it drops the files still open (writes maybe
//! in flight), drops the runtime (which waits for the blocking pool, so
//! the writes of dropped files land, on Tokio as on weft) and logs the
//! whole tree.
//!
//! What is kept out of the logs, and why:
//! - a path-based op (opening a file included), `File::metadata` and
//!   `Drop` first wait for every open
//!   `File`'s operation in flight (`poll_complete`, whose only effect is to
//!   keep a failed write's error for the next write or flush, on both).
//!   Otherwise what a path-based op sees of a write still running on the
//!   blocking pool is a race on Tokio itself; and weft's `metadata`
//!   waiting for the write is a documented difference (README).
//! - an op on one `File` first waits for the other `File`s' operations in
//!   flight: two `File`s (two descriptors, or clones sharing a cursor) are
//!   not ordered with each other, so a read through one of a write still
//!   in flight through the other is a race on Tokio too (there the
//!   blocking-pool write nearly always wins; on weft's io_uring driver the
//!   write reaches the ring with the next batch, together with the read,
//!   and the kernel often serves the read first).
//! - `sync_all`, `sync_data` and `set_len` on a file opened without write
//!   access (the one way a script's background write fails) are preceded by
//!   a logged `flush`: weft reporting a failed write there, where Tokio
//!   keeps it for the next write or flush, is a documented difference.
//! - `try_into_std` right after a write: whether the blocking thread (or
//!   the ring) has let go of the file yet is timing, so only the result
//!   after waiting (`poll_complete`, then again) is logged.
//! - directories' lengths (filesystem detail) and inode numbers.

use crate::fs_ops::{FsOp, How, SLOTS};
use crate::harness::Step;
use std::future::{poll_fn, Future};
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::Poll;

/// A fresh directory under the temp dir, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("weft-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        // Canonical, so `canonicalize` results can be made relative.
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Undo read-only bits first (a read-only directory cannot be
        // emptied by a non-root user).
        fn writable(p: &Path) {
            if let Ok(m) = std::fs::symlink_metadata(p) {
                if m.file_type().is_symlink() {
                    return;
                }
                let mut perm = m.permissions();
                #[allow(clippy::permissions_set_readonly_false)] // undoing our own bit
                perm.set_readonly(false);
                let _ = std::fs::set_permissions(p, perm);
                if m.is_dir() {
                    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                        writable(&e.path());
                    }
                }
            }
        }
        writable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes as a short readable string.
pub fn show(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            0x20..=0x7e if c != b'\\' => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    format!("\"{s}\"")
}

pub fn res<T>(r: io::Result<T>, ok: impl FnOnce(T) -> String) -> String {
    match r {
        Ok(v) => format!("Ok({})", ok(v)),
        Err(e) => format!("Err({:?})", e.kind()),
    }
}

pub fn unit(r: io::Result<()>) -> String {
    res(r, |()| String::new())
}

/// The deterministic part of a `Metadata`.
pub fn meta(m: std::fs::Metadata) -> String {
    let t = m.file_type();
    let kind = if t.is_dir() {
        "dir".to_string()
    } else if t.is_symlink() {
        format!("symlink len={}", m.len())
    } else if t.is_file() {
        format!("file len={}", m.len())
    } else {
        "other".to_string()
    };
    format!("{kind} ro={}", m.permissions().readonly())
}

/// Every entry under `root`, sorted, with type, length, contents of files,
/// read-only bits and link targets.
pub fn tree(root: &Path) -> String {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in names {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.push(format!("{rel} -> {}", to.display()));
            } else if m.is_dir() {
                out.push(format!("{rel}/ ro={}", m.permissions().readonly()));
                walk(root, &p, out);
            } else {
                let data = std::fs::read(&p).unwrap();
                out.push(format!(
                    "{rel} ro={} {}",
                    m.permissions().readonly(),
                    show(&data)
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.join("; ")
}

/// A `Permissions` with the read-only bit as asked (0o444 / 0o644 for
/// files, 0o555 / 0o755 for directories), so both crates set the same mode
/// whatever the umask.
pub fn perms(path: &Path, readonly: bool) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
    let mode = match (dir, readonly) {
        (true, true) => 0o555,
        (true, false) => 0o755,
        (false, true) => 0o444,
        (false, false) => 0o644,
    };
    std::fs::Permissions::from_mode(mode)
}

/// Polls `fut` once; `None` if it is pending (it is dropped then).
pub async fn poll_once<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    poll_fn(|cx| {
        Poll::Ready(match fut.as_mut().poll(cx) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        })
    })
    .await
}

/// `Pin` for a `&mut` to an `Unpin` value (the `AsyncSeek` calls).
pub fn pin<T: Unpin>(t: &mut T) -> Pin<&mut T> {
    Pin::new(t)
}

macro_rules! fs_group {
    () => {
        use k::io::{AsyncReadExt, AsyncSeek, AsyncSeekExt, AsyncWriteExt};

        type File = k::fs::File;

        struct World {
            root: std::path::PathBuf,
            files: [Option<File>; SLOTS],
            /// Per slot: opened without write access.
            read_only: [bool; SLOTS],
        }

        /// Waits for `f`'s operation in flight (its outcome is kept by
        /// the file, as the module doc explains).
        async fn settle(f: &mut File) {
            let _ = poll_fn(|cx| pin(f).poll_complete(cx)).await;
        }

        pub fn run(script: &[FsOp]) -> Vec<Step> {
            let dir = TempDir::new("fsdiff");
            let rt = k::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let mut w = World {
                root: dir.0.clone(),
                files: Default::default(),
                read_only: [false; SLOTS],
            };
            let mut log = Vec::with_capacity(script.len() + 1);
            for op in script {
                let seen = rt.block_on(step(&mut w, op));
                log.push(Step {
                    op: format!("{op:?}"),
                    seen,
                });
            }
            // Dropped with writes maybe in flight, inside the runtime (as
            // a program would); then the runtime goes, waiting for them.
            {
                let _in = rt.enter();
                drop(std::mem::take(&mut w.files));
            }
            drop(rt);
            log.push(Step {
                op: "(final tree)".into(),
                seen: tree(&dir.0),
            });
            log
        }

        async fn step(w: &mut World, op: &FsOp) -> String {
            let root = w.root.clone();
            let p = |name: &str| root.join(name);
            let slot = match *op {
                FsOp::Open { slot, .. }
                | FsOp::Write { slot, .. }
                | FsOp::WriteAll { slot, .. }
                | FsOp::WriteVectored { slot, .. }
                | FsOp::Read { slot, .. }
                | FsOp::ReadCancelled { slot, .. }
                | FsOp::ReadToEnd { slot }
                | FsOp::Flush { slot }
                | FsOp::Shutdown { slot }
                | FsOp::SyncAll { slot }
                | FsOp::SyncData { slot }
                | FsOp::SetLen { slot, .. }
                | FsOp::FileMetadata { slot }
                | FsOp::TryClone { slot, .. }
                | FsOp::FileSetPermissions { slot, .. }
                | FsOp::IntoStd { slot }
                | FsOp::TryIntoStd { slot }
                | FsOp::Seek { slot, .. }
                | FsOp::StartSeek { slot, .. }
                | FsOp::PollComplete { slot }
                | FsOp::SetMaxBufSize { slot, .. }
                | FsOp::Drop { slot } => Some(slot),
                _ => None,
            };
            if let FsOp::Open { slot, path, how } = *op {
                // Opening is path-based too (it may create or truncate):
                // the open files' writes land first.
                for f in w.files.iter_mut().flatten() {
                    settle(f).await;
                }
                let mut o = File::options();
                let r = match how {
                    How::Open => File::open(p(path)).await,
                    How::Create => File::create(p(path)).await,
                    How::CreateNew => File::create_new(p(path)).await,
                    How::Options {
                        read,
                        write,
                        append,
                        truncate,
                        create,
                        create_new,
                    } => {
                        o.read(read)
                            .write(write)
                            .append(append)
                            .truncate(truncate)
                            .create(create)
                            .create_new(create_new);
                        o.open(p(path)).await
                    }
                };
                let seen = res(
                    r.as_ref().map(drop).map_err(|e| io::Error::from(e.kind())),
                    |()| String::new(),
                );
                if let Ok(f) = r {
                    w.files[slot] = Some(f);
                    w.read_only[slot] = how.read_only();
                }
                return seen;
            }
            if let Some(slot) = slot {
                if w.files[slot].is_none() {
                    return "(no file)".into();
                }
                // Other `File`s' operations in flight land first.
                for (i, f) in w.files.iter_mut().enumerate() {
                    if let (true, Some(f)) = (i != slot, f) {
                        settle(f).await;
                    }
                }
                return file_op(w, slot, op).await;
            }
            // A path-based op: first let every file's write land.
            for f in w.files.iter_mut().flatten() {
                settle(f).await;
            }
            path_op(&root, op).await
        }

        async fn file_op(w: &mut World, slot: usize, op: &FsOp) -> String {
            let read_only = w.read_only[slot];
            let f = w.files[slot].as_mut().unwrap();
            match op {
                FsOp::Write { data, .. } => res(f.write(data).await, |n| n.to_string()),
                FsOp::WriteAll { data, .. } => unit(f.write_all(data).await),
                FsOp::WriteVectored { a, b, .. } => {
                    let bufs = [io::IoSlice::new(a), io::IoSlice::new(b)];
                    res(f.write_vectored(&bufs).await, |n| n.to_string())
                }
                FsOp::Read { cap, .. } => {
                    let mut buf = vec![0; *cap];
                    let r = f.read(&mut buf).await;
                    res(r, |n| show(&buf[..n]))
                }
                FsOp::ReadCancelled { cap, .. } => {
                    // Whether the one poll finds the read done is timing
                    // (a blocking-pool thread may finish it first, above
                    // all on a loaded machine). A read that failed or hit
                    // the end leaves the file as a dropped one does (the
                    // next read fails or ends the same way), so those
                    // read as "Pending"; one that got bytes is marked `~`
                    // (see `harness::differs_at`).
                    // The dropped read is then waited for (`settle`), so
                    // a `start_seek` next does not see it in flight on one
                    // crate only; its bytes stay read ahead.
                    settle(f).await;
                    let mut buf = vec![0; *cap];
                    let seen = match poll_once(f.read(&mut buf)).await {
                        None | Some(Err(_)) | Some(Ok(0)) => "Pending or failed (dropped)".into(),
                        Some(Ok(n)) => format!("~Ok({})", show(&buf[..n])),
                    };
                    settle(f).await;
                    seen
                }
                FsOp::ReadToEnd { .. } => {
                    let mut buf = Vec::new();
                    let r = f.read_to_end(&mut buf).await;
                    format!("{} {}", res(r, |n| n.to_string()), show(&buf))
                }
                FsOp::Flush { .. } => unit(f.flush().await),
                FsOp::Shutdown { .. } => unit(f.shutdown().await),
                FsOp::SyncAll { .. } | FsOp::SyncData { .. } | FsOp::SetLen { .. } => {
                    let flushed = if read_only {
                        format!("flush {}; ", unit(f.flush().await))
                    } else {
                        String::new()
                    };
                    let r = match op {
                        FsOp::SyncAll { .. } => f.sync_all().await,
                        FsOp::SyncData { .. } => f.sync_data().await,
                        FsOp::SetLen { len, .. } => f.set_len(*len).await,
                        _ => unreachable!(),
                    };
                    flushed + &unit(r)
                }
                FsOp::FileMetadata { .. } => {
                    settle(f).await;
                    res(f.metadata().await, meta)
                }
                FsOp::TryClone { into, .. } => match f.try_clone().await {
                    Ok(c) => {
                        w.files[*into] = Some(c);
                        w.read_only[*into] = read_only;
                        "Ok".into()
                    }
                    Err(e) => format!("Err({:?})", e.kind()),
                },
                FsOp::FileSetPermissions { readonly, .. } => {
                    // A file's modes (a slot may hold a directory opened
                    // read-only; only the read-only bit is compared).
                    let perm = {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::Permissions::from_mode(if *readonly { 0o444 } else { 0o644 })
                    };
                    unit(f.set_permissions(perm).await)
                }
                FsOp::IntoStd { .. } => {
                    let f = w.files[slot].take().unwrap();
                    let std = f.into_std().await;
                    let at = io::Seek::stream_position(&mut &std);
                    w.files[slot] = Some(File::from_std(std));
                    format!("cursor {}", res(at, |n| n.to_string()))
                }
                FsOp::TryIntoStd { .. } => {
                    let f = w.files[slot].take().unwrap();
                    let std = match f.try_into_std() {
                        Ok(std) => std,
                        Err(mut f) => {
                            settle(&mut f).await;
                            match f.try_into_std() {
                                Ok(std) => std,
                                Err(f) => {
                                    w.files[slot] = Some(f);
                                    return "Err(file) after waiting".into();
                                }
                            }
                        }
                    };
                    let at = io::Seek::stream_position(&mut &std);
                    w.files[slot] = Some(File::from_std(std));
                    format!("cursor {}", res(at, |n| n.to_string()))
                }
                FsOp::Seek { to, .. } => res(f.seek(to.to_std()).await, |n| n.to_string()),
                FsOp::StartSeek { to, .. } => unit(pin(f).start_seek(to.to_std())),
                FsOp::PollComplete { .. } => {
                    res(poll_fn(|cx| pin(f).poll_complete(cx)).await, |n| {
                        n.to_string()
                    })
                }
                FsOp::SetMaxBufSize { size, .. } => {
                    f.set_max_buf_size(*size);
                    format!("max_buf_size {}", f.max_buf_size())
                }
                FsOp::Drop { .. } => {
                    settle(f).await;
                    w.files[slot] = None;
                    String::new()
                }
                _ => unreachable!("not a File op: {op:?}"),
            }
        }

        async fn path_op(root: &std::path::Path, op: &FsOp) -> String {
            let p = |name: &str| root.join(name);
            let rel = |q: std::path::PathBuf| match q.strip_prefix(root) {
                Ok(r) => format!("<root>/{}", r.display()),
                Err(_) => q.display().to_string(),
            };
            match op {
                FsOp::FsRead(a) => res(k::fs::read(p(a)).await, |v| show(&v)),
                FsOp::FsReadToString(a) => {
                    res(k::fs::read_to_string(p(a)).await, |s| show(s.as_bytes()))
                }
                FsOp::FsWrite(a, data) => unit(k::fs::write(p(a), &data.0).await),
                FsOp::Copy(a, b) => res(k::fs::copy(p(a), p(b)).await, |n| n.to_string()),
                FsOp::Rename(a, b) => unit(k::fs::rename(p(a), p(b)).await),
                FsOp::RemoveFile(a) => unit(k::fs::remove_file(p(a)).await),
                FsOp::RemoveDir(a) => unit(k::fs::remove_dir(p(a)).await),
                FsOp::RemoveDirAll(a) => unit(k::fs::remove_dir_all(p(a)).await),
                FsOp::CreateDir(a) => unit(k::fs::create_dir(p(a)).await),
                FsOp::CreateDirAll(a) => unit(k::fs::create_dir_all(p(a)).await),
                FsOp::DirBuilder { path, recursive } => unit(
                    k::fs::DirBuilder::new()
                        .recursive(*recursive)
                        .create(p(path))
                        .await,
                ),
                FsOp::ReadDir(a) => {
                    let mut rd = match k::fs::read_dir(p(a)).await {
                        Ok(rd) => rd,
                        Err(e) => return format!("Err({:?})", e.kind()),
                    };
                    let mut out = Vec::new();
                    loop {
                        match rd.next_entry().await {
                            Ok(None) => break,
                            Ok(Some(e)) => {
                                let name = e.file_name().to_string_lossy().into_owned();
                                let path_ok = e.path() == p(a).join(&name);
                                let ty = res(e.file_type().await, |t| {
                                    format!(
                                        "dir={} file={} link={}",
                                        t.is_dir(),
                                        t.is_file(),
                                        t.is_symlink()
                                    )
                                });
                                let m = res(e.metadata().await, meta);
                                out.push(format!("{name} path_ok={path_ok} {ty} {m}"));
                            }
                            Err(e) => {
                                out.push(format!("Err({:?})", e.kind()));
                                break;
                            }
                        }
                    }
                    out.sort();
                    format!("[{}]", out.join(", "))
                }
                FsOp::HardLink(a, b) => unit(k::fs::hard_link(p(a), p(b)).await),
                FsOp::Symlink { target, link } => unit(k::fs::symlink(target, p(link)).await),
                FsOp::ReadLink(a) => res(k::fs::read_link(p(a)).await, |t| t.display().to_string()),
                FsOp::Canonicalize(a) => res(k::fs::canonicalize(p(a)).await, rel),
                FsOp::Metadata(a) => res(k::fs::metadata(p(a)).await, meta),
                FsOp::SymlinkMetadata(a) => res(k::fs::symlink_metadata(p(a)).await, meta),
                FsOp::TryExists(a) => res(k::fs::try_exists(p(a)).await, |b| b.to_string()),
                FsOp::SetPermissions(a, readonly) => {
                    unit(k::fs::set_permissions(p(a), perms(&p(a), *readonly)).await)
                }
                _ => unreachable!("not a path op: {op:?}"),
            }
        }
    };
}

crate::harness::for_both!(fs_group);
