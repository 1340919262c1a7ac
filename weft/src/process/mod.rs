//! Child processes, as `tokio::process`: [`Command`] builds and spawns
//! one, [`Child`] waits for it and holds its standard-stream pipes.
//!
//! Owns: the builder (std's `Command` plus `kill_on_drop`); the child,
//! its pipes and its reaping live in `child` and `reap`. Waiting for a
//! child costs no thread: its exit is a pidfd turning readable on the I/O
//! driver (Linux ≥ 5.3) or a `SIGCHLD` delivery on the signal path, and a
//! child whose `Child` was dropped is still reaped (see `reap`'s module
//! doc), so none is left a zombie.
//!
//! Everything that spawns needs a runtime with the I/O driver, since the
//! pipes and the exit watch are registered with it.
//!
//! ```
//! use weft::process::Command;
//!
//! # weft::runtime::Runtime::new().unwrap().block_on(async {
//! let out = Command::new("echo").arg("hello").output().await?;
//! assert!(out.status.success());
//! assert_eq!(out.stdout, b"hello\n");
//! # std::io::Result::Ok(())
//! # }).unwrap();
//! ```

mod child;
mod reap;

pub use child::{Child, ChildStderr, ChildStdin, ChildStdout};

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

/// A process to spawn: std's [`Command`](std::process::Command) builder,
/// whose spawning methods are asynchronous.
///
/// Defaults as std's: the parent's environment and working directory;
/// stdin, stdout and stderr inherited by [`spawn`](Self::spawn) and
/// [`status`](Self::status); [`output`](Self::output) pipes stdout and
/// stderr (always, overriding what was set, as Tokio does).
#[derive(Debug)]
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
}

impl Command {
    /// A command to run `program` (searched in `PATH` unless it is a path).
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command::from(std::process::Command::new(program))
    }

    /// The std command inside (for its getters).
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// The std command inside, to configure what this type has no method
    /// for (std's platform extension traits).
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// The std command inside; `kill_on_drop` is lost.
    pub fn into_std(self) -> std::process::Command {
        self.std
    }

    /// Add one argument.
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Add arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Set an environment variable for the child.
    pub fn env<K, V>(&mut self, key: K, val: V) -> &mut Command
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.env(key, val);
        self
    }

    /// Set several environment variables for the child.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Remove an environment variable from the child's environment.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Start the child with an empty environment (then add with `env`).
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// The child's working directory.
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// The child's standard input (`Stdio::piped()` makes
    /// [`Child::stdin`] a pipe).
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// The child's standard output (`Stdio::piped()` makes
    /// [`Child::stdout`] a pipe).
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// The child's standard error (`Stdio::piped()` makes
    /// [`Child::stderr`] a pipe).
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Whether dropping the [`Child`] (or the future of
    /// [`status`](Self::status) / [`output`](Self::output)) before the
    /// process exited sends it `SIGKILL`. Off by default: a dropped child
    /// keeps running, and is reaped when it exits.
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// What [`kill_on_drop`](Self::kill_on_drop) set (`false` by default).
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// The child's user id (`setuid` before `exec`).
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.std.uid(id);
        self
    }

    /// The child's group id (`setgid` before `exec`).
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.std.gid(id);
        self
    }

    /// The child's `argv[0]` (the program path is still what runs).
    pub fn arg0<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg0(arg);
        self
    }

    /// Run `f` in the child after `fork` and before `exec`.
    ///
    /// # Safety
    /// As std's `CommandExt::pre_exec`: `f` runs in a forked copy of a
    /// multi-threaded process, so it may only do what is async-signal-safe
    /// (no allocation, no locks another thread may hold).
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds `pre_exec`'s contract (this
        // function's own `# Safety`).
        unsafe { self.std.pre_exec(f) };
        self
    }

    /// Put the child in process group `pgroup` (0: a new group led by the
    /// child).
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        self.std.process_group(pgroup);
        self
    }

    /// Start the process.
    ///
    /// # Errors
    /// From `fork`/`exec` (a missing program is `NotFound`).
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver.
    #[track_caller]
    pub fn spawn(&mut self) -> io::Result<Child> {
        reap::sweep_orphans();
        let std = self.std.spawn()?;
        Child::new(std, self.kill_on_drop)
    }

    /// Start the process now and wait for its exit status. Pipes set on the
    /// command are closed at once (nothing reads or writes them).
    ///
    /// # Errors
    /// From spawning or waiting.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver (when called, not polled).
    #[track_caller]
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> {
        let child = self.spawn();
        async move {
            let mut child = child?;
            drop((child.stdin.take(), child.stdout.take(), child.stderr.take()));
            child.wait().await
        }
    }

    /// Start the process now with stdout and stderr piped, and wait for its
    /// exit and all of its output.
    ///
    /// # Errors
    /// From spawning, reading or waiting.
    ///
    /// # Panics
    /// Outside a runtime with the I/O driver (when called, not polled).
    #[track_caller]
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }
}

impl From<std::process::Command> for Command {
    fn from(std: std::process::Command) -> Command {
        Command {
            std,
            kill_on_drop: false,
        }
    }
}
