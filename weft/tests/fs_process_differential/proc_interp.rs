//! The process interpreter, written once (`proc_group!`) and expanded for
//! Tokio and weft: runs a `ProcOp` script on a fresh current_thread
//! runtime, one `block_on` per op, over two child slots (each a `Child`
//! plus the stdin/stdout/stderr handles taken out of it).
//!
//! Exit timing is kept out of the logs: `Track` (the same on both sides,
//! as it follows the script and results already compared) knows whether a
//! child can still end on its own, has surely exited, or is stuck (`sleep`,
//! or `cat` whose stdin we still hold), and an op whose outcome would
//! depend on the race between the child's exit and us (killing or
//! `try_wait` on a finite child that may or may not have exited, writing to
//! one, reading a pipe that would never end) is skipped on both, logged
//! as skipped. `AwaitExit` makes "exited, not reaped" deterministic.

use crate::fs_interp::{res, show, unit, TempDir};
use crate::harness::Step;
use crate::proc_ops::{Cmd, Cwd, Io, ProcOp, Prog, CHILDREN};
use std::os::unix::process::ExitStatusExt;

/// What the script knows of the child in a slot.
#[derive(Clone, Copy, Debug, Default)]
pub struct Track {
    pub prog: Option<Prog>,
    /// Ends only when killed (`sleep`, or `cat` fed by such a child).
    pub forever: bool,
    /// `cat` reading a pipe we write: ends when we close it.
    pub cat_piped: bool,
    /// Sent SIGKILL (so it ends soon, with that signal).
    pub killed: bool,
    /// Surely exited (awaited, waited, or `try_wait` said so).
    pub exited: bool,
    /// Its stdout may or may not hold what it was given before a kill.
    pub output_racy: bool,
    /// Bytes were written to its stdin.
    pub fed: bool,
    /// Spawned with `kill_on_drop(true)`.
    pub kill_on_drop: bool,
}

impl Track {
    /// Cannot exit on its own now (`stdin_open`: we hold its stdin pipe).
    pub fn stuck(&self, stdin_open: bool) -> bool {
        !self.exited && !self.killed && (self.forever || (self.cat_piped && stdin_open))
    }

    /// Ends without our help from now on (so its pipes reach EOF).
    pub fn will_end(&self, stdin_open: bool) -> bool {
        !self.stuck(stdin_open)
    }
}

pub fn status(s: std::process::ExitStatus) -> String {
    format!(
        "code={:?} signal={:?} success={}",
        s.code(),
        s.signal(),
        s.success()
    )
}

pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Blocks until `pid` has exited, leaving it unreaped (`WNOWAIT`), so both
/// crates then meet the same exited-but-not-waited child.
pub fn await_exit(pid: u32) -> String {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid only
        // writes it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid siginfo_t; the pid is our own child,
        // not reaped yet (the interpreter checked `id()` is `Some`).
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return "exited".into();
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return format!("waitid failed: {:?}", e.kind());
        }
    }
}

/// The program and arguments for `prog`; `dir` holds the non-executable
/// script.
pub fn program(prog: Prog, dir: &std::path::Path) -> (String, Vec<String>) {
    let sh = |s: &str| ("sh".to_string(), vec!["-c".to_string(), s.to_string()]);
    match prog {
        Prog::True => ("true".into(), vec![]),
        Prog::False => ("false".into(), vec![]),
        Prog::Exit(n) => sh(&format!("exit {n}")),
        Prog::Echo => sh("echo out; echo err >&2"),
        Prog::KillSelf => sh("kill -TERM $$"),
        Prog::Cat => ("cat".into(), vec![]),
        Prog::Sleep => ("sleep".into(), vec!["30".into()]),
        Prog::Missing => ("weft-differential-no-such-program".into(), vec![]),
        Prog::NotExecutable => (dir.join("noexec").display().to_string(), vec![]),
        Prog::EnvPwd => sh("echo \"FOO=$FOO HOME=${HOME:+set}\"; ls | head -3"),
        Prog::Arg0 => sh("tr '\\0' ' ' < /proc/$$/cmdline"),
        Prog::OwnGroup => {
            sh("set -- $(cat /proc/$$/stat); [ \"$5\" = \"$$\" ] && echo own || echo inherited")
        }
        Prog::Uid => ("id".into(), vec!["-u".into()]),
    }
}

/// The script's directory: a non-executable script to spawn, which is
/// also the regular file `Cwd::File` names.
pub fn proc_dir() -> TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("procdiff");
    let f = dir.0.join("noexec");
    std::fs::write(&f, "#!/bin/sh\necho should not run\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    dir
}

macro_rules! proc_group {
    () => {
        use k::io::{AsyncReadExt, AsyncWriteExt};
        use k::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
        use std::process::Stdio;

        #[derive(Default)]
        struct Slot {
            child: Option<Child>,
            stdin: Option<ChildStdin>,
            stdout: Option<ChildStdout>,
            stderr: Option<ChildStderr>,
            t: Track,
        }

        impl Slot {
            fn stdin_open(&self) -> bool {
                self.stdin.is_some() || self.child.as_ref().is_some_and(|c| c.stdin.is_some())
            }

            /// After `wait` (which closes the child's own stdin handle).
            fn will_end_after_wait(&self) -> bool {
                self.t.will_end(self.stdin.is_some())
            }

            fn stdin(&mut self) -> Option<&mut ChildStdin> {
                match &mut self.stdin {
                    Some(s) => Some(s),
                    None => self.child.as_mut().and_then(|c| c.stdin.as_mut()),
                }
            }

            fn take_stdout(&mut self) -> Option<ChildStdout> {
                self.stdout
                    .take()
                    .or_else(|| self.child.as_mut().and_then(|c| c.stdout.take()))
            }

            fn take_stderr(&mut self) -> Option<ChildStderr> {
                self.stderr
                    .take()
                    .or_else(|| self.child.as_mut().and_then(|c| c.stderr.take()))
            }

            /// A kill was sent: what the child was given may be lost.
            fn kill_sent(&mut self) {
                if !self.t.exited {
                    self.t.killed = true;
                    if self.t.fed || self.t.prog.is_some_and(|p| p.finite()) {
                        self.t.output_racy = true;
                    }
                }
            }
        }

        pub fn run(script: &[ProcOp]) -> Vec<Step> {
            let dir = proc_dir();
            let rt = k::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let mut slots: [Slot; CHILDREN] = Default::default();
            let mut log = Vec::with_capacity(script.len());
            for op in script {
                let seen = rt.block_on(step(&dir.0, &mut slots, op));
                log.push(Step {
                    op: format!("{op:?}"),
                    seen,
                });
            }
            // Leave no child behind (not logged).
            rt.block_on(async {
                for s in &mut slots {
                    s.stdin = None;
                    if let Some(c) = &mut s.child {
                        let _ = c.start_kill();
                        let _ = c.wait().await;
                    }
                }
            });
            drop(slots);
            drop(rt);
            log
        }

        fn stdio(io: Io, slots: &mut [Slot; CHILDREN]) -> Result<Stdio, String> {
            Ok(match io {
                Io::Null => Stdio::null(),
                Io::Piped => Stdio::piped(),
                Io::Inherit => Stdio::inherit(),
                Io::StdoutOf(i) => match slots[i].take_stdout() {
                    None => return Err("(no stdout to take)".into()),
                    // Tokio implements `TryInto` (not `TryFrom`) for this.
                    Some(out) => TryInto::<Stdio>::try_into(out)
                        .map_err(|e: std::io::Error| format!("Err({:?})", e.kind()))?,
                },
            })
        }

        fn command(
            cmd: &Cmd,
            dir: &std::path::Path,
            slots: &mut [Slot; CHILDREN],
        ) -> Result<Command, String> {
            let (prog, args) = program(cmd.prog, dir);
            let mut c = Command::new(prog);
            c.args(args);
            c.stdin(stdio(cmd.stdin, slots)?);
            c.stdout(stdio(cmd.stdout, slots)?);
            c.stderr(stdio(cmd.stderr, slots)?);
            c.kill_on_drop(cmd.kill_on_drop);
            if cmd.env_clear {
                c.env_clear();
            }
            if cmd.env {
                c.env("FOO", "bar");
            }
            match cmd.cwd {
                Cwd::Same => {}
                Cwd::Temp => {
                    c.current_dir(dir);
                }
                Cwd::Missing => {
                    c.current_dir(dir.join("missing"));
                }
                Cwd::File => {
                    c.current_dir(dir.join("noexec"));
                }
            }
            if cmd.arg0 {
                c.arg0("renamed");
            }
            if cmd.process_group {
                c.process_group(0);
            }
            if cmd.uid && running_as_root() {
                c.uid(65534);
            }
            Ok(c)
        }

        async fn read_all<R: AsyncReadExt + Unpin>(r: &mut R) -> String {
            let mut v = Vec::new();
            let got = r.read_to_end(&mut v).await;
            format!("{} {}", res(got, |n| n.to_string()), show(&v))
        }

        async fn step(dir: &std::path::Path, slots: &mut [Slot; CHILDREN], op: &ProcOp) -> String {
            match op {
                ProcOp::Spawn { slot, cmd } => {
                    // The slot's old child and handles go (as a program
                    // reusing a variable would drop them).
                    let old = std::mem::take(&mut slots[*slot]);
                    drop(old);
                    let upstream_stuck = match cmd.stdin {
                        Io::StdoutOf(i) => {
                            let u = &slots[i];
                            u.t.stuck(u.stdin_open())
                        }
                        _ => false,
                    };
                    let mut c = match command(cmd, dir, slots) {
                        Ok(c) => c,
                        Err(e) => return e,
                    };
                    match c.spawn() {
                        Ok(child) => {
                            let s = &mut slots[*slot];
                            s.t = Track {
                                prog: Some(cmd.prog),
                                forever: cmd.prog == Prog::Sleep
                                    || (cmd.prog == Prog::Cat && upstream_stuck),
                                cat_piped: cmd.prog == Prog::Cat && cmd.stdin == Io::Piped,
                                kill_on_drop: cmd.kill_on_drop,
                                ..Track::default()
                            };
                            let seen = format!(
                                "Ok id={} stdin={} stdout={} stderr={}",
                                child.id().is_some(),
                                child.stdin.is_some(),
                                child.stdout.is_some(),
                                child.stderr.is_some()
                            );
                            s.child = Some(child);
                            seen
                        }
                        Err(e) => format!("Err({:?})", e.kind()),
                    }
                }
                ProcOp::Status(cmd) => match command(cmd, dir, slots) {
                    Err(e) => e,
                    // `status` closes the pipes it made at its first poll:
                    // whether a program that prints wrote before that
                    // (exit 0) or after (SIGPIPE) is timing.
                    Ok(mut c) => {
                        let piped = cmd.stdout == Io::Piped || cmd.stderr == Io::Piped;
                        if piped && (cmd.prog.prints() || cmd.prog == Prog::Cat) {
                            res(c.status().await, |_| {
                                "a status (racing its pipes' close)".into()
                            })
                        } else {
                            res(c.status().await, status)
                        }
                    }
                },
                ProcOp::Output(cmd) => match command(cmd, dir, slots) {
                    Err(e) => e,
                    Ok(mut c) => res(c.output().await, |o| {
                        format!(
                            "{} out={} err={}",
                            status(o.status),
                            show(&o.stdout),
                            show(&o.stderr)
                        )
                    }),
                },
                ProcOp::TakeStdin(i) => {
                    let s = &mut slots[*i];
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    let got = c.stdin.take();
                    let seen = format!("is_some={}", got.is_some());
                    if got.is_some() {
                        s.stdin = got;
                    }
                    seen
                }
                ProcOp::TakeStdout(i) => {
                    let s = &mut slots[*i];
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    let got = c.stdout.take();
                    let seen = format!("is_some={}", got.is_some());
                    if got.is_some() {
                        s.stdout = got;
                    }
                    seen
                }
                ProcOp::TakeStderr(i) => {
                    let s = &mut slots[*i];
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    let got = c.stderr.take();
                    let seen = format!("is_some={}", got.is_some());
                    if got.is_some() {
                        s.stderr = got;
                    }
                    seen
                }
                ProcOp::WriteStdin(i, data) => {
                    let s = &mut slots[*i];
                    // Deterministic while the child cannot have exited
                    // (it waits for this pipe or is stuck), or once it
                    // surely has (the write then fails).
                    let open = s.stdin_open();
                    let sure = s.t.exited || s.t.stuck(open) || (s.t.cat_piped && open);
                    let (exited, killed) = (s.t.exited, s.t.killed);
                    let Some(w) = s.stdin() else {
                        return "(no stdin)".into();
                    };
                    if !sure || (killed && !exited) {
                        return "(skipped: races the child's exit)".into();
                    }
                    let r = async {
                        w.write_all(data).await?;
                        w.flush().await
                    }
                    .await;
                    if r.is_ok() {
                        s.t.fed = true;
                    }
                    unit(r)
                }
                ProcOp::ShutdownStdin(i) => match slots[*i].stdin() {
                    None => "(no stdin)".into(),
                    Some(w) => unit(w.shutdown().await),
                },
                ProcOp::DropStdin(i) => {
                    let s = &mut slots[*i];
                    if s.stdin.take().is_some() {
                        return "dropped the taken handle".into();
                    }
                    match s.child.as_mut().and_then(|c| c.stdin.take()) {
                        Some(_) => "dropped the child's handle".into(),
                        None => "(no stdin)".into(),
                    }
                }
                ProcOp::ReadStdout(i) | ProcOp::ReadStderr(i) | ProcOp::StdoutIntoFd(i) => {
                    let s = &mut slots[*i];
                    let ends = s.t.will_end(s.stdin_open());
                    let racy = s.t.output_racy;
                    if let ProcOp::ReadStderr(_) = op {
                        let Some(mut r) = s.take_stderr() else {
                            return "(no stderr)".into();
                        };
                        let seen = if !ends {
                            "(skipped: would never end)".into()
                        } else if racy {
                            let _ = read_all(&mut r).await;
                            "(read; contents race a kill)".into()
                        } else {
                            read_all(&mut r).await
                        };
                        s.stderr = Some(r);
                        return seen;
                    }
                    let Some(mut r) = s.take_stdout() else {
                        return "(no stdout)".into();
                    };
                    if let ProcOp::StdoutIntoFd(_) = op {
                        let fd = match r.into_owned_fd() {
                            Ok(fd) => fd,
                            Err(e) => return format!("Err({:?})", e.kind()),
                        };
                        if !ends {
                            return "Ok (not read: would never end)".into();
                        }
                        let mut f = std::fs::File::from(fd);
                        let mut v = Vec::new();
                        let got = std::io::Read::read_to_end(&mut f, &mut v);
                        if racy {
                            return "Ok (read; contents race a kill)".into();
                        }
                        return format!(
                            "Ok, blocking read: {} {}",
                            res(got, |n| n.to_string()),
                            show(&v)
                        );
                    }
                    let seen = if !ends {
                        "(skipped: would never end)".into()
                    } else if racy {
                        let _ = read_all(&mut r).await;
                        "(read; contents race a kill)".into()
                    } else {
                        read_all(&mut r).await
                    };
                    s.stdout = Some(r);
                    seen
                }
                ProcOp::AwaitExit(i) => {
                    let s = &mut slots[*i];
                    let ends = s.t.will_end(s.stdin_open());
                    let Some(pid) = s.child.as_ref().and_then(|c| c.id()) else {
                        return "(no unreaped child)".into();
                    };
                    if !ends {
                        return "(skipped: would never end)".into();
                    }
                    s.t.exited = true;
                    await_exit(pid)
                }
                ProcOp::Wait(i) => {
                    let s = &mut slots[*i];
                    let ends = s.will_end_after_wait();
                    let racy = s.t.output_racy;
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    if !ends {
                        return "(skipped: would never end)".into();
                    }
                    let r = c.wait().await;
                    if r.is_ok() {
                        s.t.exited = true;
                    }
                    if racy && s.t.prog.is_some_and(|p| p.finite()) {
                        // Killed before or after it exited: either status.
                        return res(r, |_| "a status".into());
                    }
                    res(r, status)
                }
                ProcOp::TryWait(i) => {
                    let s = &mut slots[*i];
                    let open = s.stdin_open();
                    let (exited, stuck) = (s.t.exited, s.t.stuck(open));
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    if !exited && !stuck {
                        return "(skipped: races the child's exit)".into();
                    }
                    let r = c.try_wait();
                    if s.t.output_racy && s.t.prog.is_some_and(|p| p.finite()) {
                        return res(r, |o| format!("is_some={}", o.is_some()));
                    }
                    res(r, |o| o.map_or("None".into(), status))
                }
                ProcOp::Kill(i) | ProcOp::StartKill(i) => {
                    let s = &mut slots[*i];
                    let open = s.stdin_open();
                    let sure = s.t.exited || s.t.killed || s.t.stuck(open);
                    let Some(c) = &mut s.child else {
                        return "(no child)".into();
                    };
                    if !sure {
                        return "(skipped: races the child's exit)".into();
                    }
                    let r = if let ProcOp::Kill(_) = op {
                        c.kill().await
                    } else {
                        c.start_kill()
                    };
                    s.kill_sent();
                    if let (ProcOp::Kill(_), Ok(())) = (op, &r) {
                        s.t.exited = true;
                    }
                    unit(r)
                }
                ProcOp::Id(i) => match &slots[*i].child {
                    None => "(no child)".into(),
                    Some(c) => format!("is_some={}", c.id().is_some()),
                },
                ProcOp::WaitWithOutput(i) => {
                    let s = &mut slots[*i];
                    let ends = s.will_end_after_wait();
                    let racy = s.t.output_racy;
                    if s.child.is_none() {
                        return "(no child)".into();
                    }
                    if !ends {
                        return "(skipped: would never end)".into();
                    }
                    let c = s.child.take().unwrap();
                    s.t.exited = true;
                    let r = c.wait_with_output().await;
                    if racy {
                        return res(r, |_| "(contents race a kill)".into());
                    }
                    res(r, |o| {
                        format!(
                            "{} out={} err={}",
                            status(o.status),
                            show(&o.stdout),
                            show(&o.stderr)
                        )
                    })
                }
                ProcOp::DropChild(i) => {
                    let s = &mut slots[*i];
                    let Some(c) = s.child.take() else {
                        return "(no child)".into();
                    };
                    drop(c);
                    if s.t.kill_on_drop {
                        s.kill_sent();
                    }
                    String::new()
                }
            }
        }
    };
}

crate::harness::for_both!(proc_group);
