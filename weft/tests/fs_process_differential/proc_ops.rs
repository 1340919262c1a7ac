//! The process scripts: the ops (`ProcOp`), a table of named scenarios,
//! and a random composition of ops over two child slots.
//!
//! Programs are chosen so that every observation can be made
//! deterministic: a finite program (`true`, `false`, `sh -c ...`) ends on
//! its own, `cat` ends when its stdin closes, `sleep` ends only when
//! killed. The interpreter tracks which is which and skips (on both
//! crates alike) an op whose outcome would depend on timing.

use crate::harness::Rng;

/// How many children a script may hold at once.
pub const CHILDREN: usize = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prog {
    True,
    False,
    /// `sh -c 'exit N'`.
    Exit(u8),
    /// `sh -c 'echo out; echo err >&2'`.
    Echo,
    /// `sh -c 'kill -TERM $$'`: ends by a signal.
    KillSelf,
    /// Reads stdin, writes it to stdout; ends at end of input.
    Cat,
    /// `sleep 30` (exec'd directly, so a kill ends the pipe's writer too).
    Sleep,
    /// A name no `PATH` holds.
    Missing,
    /// A script file without an execute bit.
    NotExecutable,
    /// Prints `$FOO`, `$HOME` and the working directory's name.
    EnvPwd,
    /// Prints `$0` (for `arg0`).
    Arg0,
    /// Prints whether its process group is its own (`process_group(0)`).
    OwnGroup,
    /// `id -u` (for `uid`).
    Uid,
}

impl Prog {
    /// Ends on its own, whatever its stdin.
    pub fn finite(self) -> bool {
        !matches!(self, Prog::Cat | Prog::Sleep)
    }

    /// Writes to stdout or stderr (so `inherit` would clutter the output).
    pub fn prints(self) -> bool {
        !matches!(
            self,
            Prog::True | Prog::False | Prog::Exit(_) | Prog::KillSelf | Prog::Sleep
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    Null,
    Piped,
    Inherit,
    /// stdin only: the stdout of the child in that slot
    /// (`Stdio::try_from(ChildStdout)`).
    StdoutOf(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cwd {
    Same,
    /// The script's temporary directory.
    Temp,
    Missing,
    /// A regular file.
    File,
}

#[derive(Clone, Debug)]
pub struct Cmd {
    pub prog: Prog,
    pub stdin: Io,
    pub stdout: Io,
    pub stderr: Io,
    pub kill_on_drop: bool,
    pub env: bool,
    pub env_clear: bool,
    pub cwd: Cwd,
    pub arg0: bool,
    pub process_group: bool,
    /// `uid(65534)`, applied only when the test runs as root.
    pub uid: bool,
}

impl Cmd {
    pub fn new(prog: Prog) -> Cmd {
        Cmd {
            prog,
            stdin: Io::Null,
            stdout: Io::Null,
            stderr: Io::Null,
            kill_on_drop: false,
            env: false,
            env_clear: false,
            cwd: Cwd::Same,
            arg0: false,
            process_group: false,
            uid: false,
        }
    }

    pub fn io(mut self, stdin: Io, stdout: Io, stderr: Io) -> Cmd {
        (self.stdin, self.stdout, self.stderr) = (stdin, stdout, stderr);
        self
    }
}

#[derive(Clone, Debug)]
pub enum ProcOp {
    Spawn {
        slot: usize,
        cmd: Cmd,
    },
    Status(Cmd),
    Output(Cmd),
    /// `child.stdin.take()` into the slot's own handle (logs `is_some`).
    TakeStdin(usize),
    TakeStdout(usize),
    TakeStderr(usize),
    /// `write_all` + `flush` on the slot's stdin (taken, or still in the
    /// `Child`).
    WriteStdin(usize, Vec<u8>),
    ShutdownStdin(usize),
    DropStdin(usize),
    /// `read_to_end` of the slot's stdout / stderr.
    ReadStdout(usize),
    ReadStderr(usize),
    /// `ChildStdout::into_owned_fd`, then a blocking read of it to the end.
    StdoutIntoFd(usize),
    /// Block (in `waitid(WNOWAIT)`, outside both crates) until the child
    /// has exited, without reaping it.
    AwaitExit(usize),
    Wait(usize),
    TryWait(usize),
    Kill(usize),
    StartKill(usize),
    Id(usize),
    WaitWithOutput(usize),
    DropChild(usize),
}

/// Hand-written scenarios, each checked on its own.
pub fn scenarios() -> Vec<(&'static str, Vec<ProcOp>)> {
    use Io::*;
    use ProcOp::*;
    let piped = |p| Cmd::new(p).io(Piped, Piped, Piped);
    let spawn = |cmd| Spawn { slot: 0, cmd };
    vec![
        (
            "spawn errors",
            vec![
                Status(Cmd::new(Prog::Missing)),
                Output(Cmd::new(Prog::NotExecutable)),
                spawn(Cmd {
                    cwd: Cwd::Missing,
                    ..Cmd::new(Prog::True)
                }),
                spawn(Cmd {
                    cwd: Cwd::File,
                    ..Cmd::new(Prog::True)
                }),
                Id(0),
            ],
        ),
        (
            "statuses",
            vec![
                Status(Cmd::new(Prog::True)),
                Status(Cmd::new(Prog::False)),
                Status(Cmd::new(Prog::Exit(77))),
                Status(Cmd::new(Prog::KillSelf)),
                Output(Cmd::new(Prog::Echo)),
            ],
        ),
        (
            "cat echoes stdin, EOF on drop",
            vec![
                spawn(piped(Prog::Cat)),
                TakeStdin(0),
                TakeStdin(0),
                WriteStdin(0, b"hello".to_vec()),
                DropStdin(0),
                ReadStdout(0),
                ReadStdout(0),
                Wait(0),
                Wait(0),
                Id(0),
            ],
        ),
        (
            "kill twice, kill after exit, try_wait around it",
            vec![
                spawn(piped(Prog::Sleep)),
                TryWait(0),
                Id(0),
                StartKill(0),
                Kill(0),
                Kill(0),
                StartKill(0),
                TryWait(0),
                Id(0),
                ReadStdout(0),
            ],
        ),
        (
            "kill an exited, unreaped child",
            vec![
                spawn(Cmd::new(Prog::Exit(3))),
                AwaitExit(0),
                Id(0),
                StartKill(0),
                TryWait(0),
                Kill(0),
                Wait(0),
            ],
        ),
        (
            "write to a child that exited",
            vec![
                spawn(piped(Prog::True)),
                TakeStdin(0),
                AwaitExit(0),
                WriteStdin(0, b"late".to_vec()),
                ShutdownStdin(0),
                Wait(0),
                WriteStdin(0, b"later".to_vec()),
            ],
        ),
        (
            "kill_on_drop ends the child",
            vec![
                spawn(Cmd {
                    kill_on_drop: true,
                    ..piped(Prog::Sleep)
                }),
                TakeStdout(0),
                DropChild(0),
                ReadStdout(0),
            ],
        ),
        (
            "wait_with_output, with a pipe taken",
            vec![
                spawn(piped(Prog::Echo)),
                TakeStderr(0),
                WaitWithOutput(0),
                ReadStderr(0),
            ],
        ),
        (
            "builder: env, env_clear, current_dir, arg0, process_group, uid",
            vec![
                Output(Cmd {
                    env: true,
                    cwd: Cwd::Temp,
                    ..Cmd::new(Prog::EnvPwd)
                }),
                Output(Cmd {
                    env: true,
                    env_clear: true,
                    ..Cmd::new(Prog::EnvPwd)
                }),
                Output(Cmd {
                    arg0: true,
                    ..Cmd::new(Prog::Arg0)
                }),
                Output(Cmd {
                    process_group: true,
                    ..Cmd::new(Prog::OwnGroup)
                }),
                Output(Cmd::new(Prog::OwnGroup)),
                Output(Cmd {
                    uid: true,
                    ..Cmd::new(Prog::Uid)
                }),
            ],
        ),
        (
            "a child's stdout as another's stdin, and into_owned_fd",
            vec![
                spawn(Cmd::new(Prog::Echo).io(Null, Piped, Null)),
                Spawn {
                    slot: 1,
                    cmd: Cmd::new(Prog::Cat).io(StdoutOf(0), Piped, Null),
                },
                TakeStdout(0),
                StdoutIntoFd(1),
                Wait(0),
                Wait(1),
            ],
        ),
    ]
}

fn prog(r: &mut Rng) -> Prog {
    match r.pick(&[2, 2, 2, 3, 1, 5, 5, 1, 1, 1, 1, 1, 1]) {
        0 => Prog::True,
        1 => Prog::False,
        2 => Prog::Exit(r.below(256) as u8),
        3 => Prog::Echo,
        4 => Prog::KillSelf,
        5 => Prog::Cat,
        6 => Prog::Sleep,
        7 => Prog::Missing,
        8 => Prog::NotExecutable,
        9 => Prog::EnvPwd,
        10 => Prog::Arg0,
        11 => Prog::OwnGroup,
        _ => Prog::Uid,
    }
}

fn io(r: &mut Rng) -> Io {
    match r.pick(&[2, 5, 1]) {
        0 => Io::Null,
        1 => Io::Piped,
        _ => Io::Inherit,
    }
}

fn cmd(r: &mut Rng, slot: usize) -> Cmd {
    let prog = prog(r);
    let mut c = Cmd {
        prog,
        stdin: io(r),
        stdout: io(r),
        stderr: io(r),
        kill_on_drop: r.chance(40),
        env: r.chance(30),
        env_clear: r.chance(10),
        cwd: match r.pick(&[16, 2, 1, 1]) {
            0 => Cwd::Same,
            1 => Cwd::Temp,
            2 => Cwd::Missing,
            _ => Cwd::File,
        },
        arg0: r.chance(20),
        process_group: r.chance(20),
        uid: r.chance(10),
    };
    // Nothing reads the test's own stdin or writes into its output.
    if c.stdin == Io::Inherit {
        c.stdin = Io::Null;
    }
    if prog.prints() || prog == Prog::Cat {
        for s in [&mut c.stdout, &mut c.stderr] {
            if *s == Io::Inherit {
                *s = Io::Null;
            }
        }
    }
    if prog == Prog::Cat && r.chance(30) {
        c.stdin = Io::StdoutOf(1 - slot);
    }
    c
}

/// A random script of 4 to 16 ops over two child slots; it starts by
/// spawning into slot 0 (and often slot 1), so most ops meet a child.
pub fn gen(r: &mut Rng) -> Vec<ProcOp> {
    let len = r.range(3, 14);
    let mut ops = Vec::with_capacity(len + 2);
    for slot in 0..CHILDREN {
        if slot == 0 || r.chance(50) {
            let mut c = cmd(r, slot);
            c.cwd = Cwd::Same;
            ops.push(ProcOp::Spawn { slot, cmd: c });
        }
    }
    for _ in 0..len {
        let s = r.below(CHILDREN as u64) as usize;
        let op = match r.pick(&[2, 1, 1, 3, 3, 1, 4, 1, 3, 4, 2, 1, 3, 3, 2, 2, 2, 2, 1, 2]) {
            0 => ProcOp::Spawn {
                slot: s,
                cmd: cmd(r, s),
            },
            1 => {
                let mut c = cmd(r, s);
                if !c.prog.finite() {
                    c.prog = Prog::Echo;
                }
                ProcOp::Status(c)
            }
            2 => {
                let mut c = cmd(r, s);
                if !c.prog.finite() {
                    c.prog = Prog::EnvPwd;
                }
                ProcOp::Output(c)
            }
            3 => ProcOp::TakeStdin(s),
            4 => ProcOp::TakeStdout(s),
            5 => ProcOp::TakeStderr(s),
            6 => ProcOp::WriteStdin(s, r.one(&[&b"x"[..], b"hello\n", b"two\nlines\n"]).to_vec()),
            7 => ProcOp::ShutdownStdin(s),
            8 => ProcOp::DropStdin(s),
            9 => ProcOp::ReadStdout(s),
            10 => ProcOp::ReadStderr(s),
            11 => ProcOp::StdoutIntoFd(s),
            12 => ProcOp::AwaitExit(s),
            13 => ProcOp::Wait(s),
            14 => ProcOp::TryWait(s),
            15 => ProcOp::Kill(s),
            16 => ProcOp::StartKill(s),
            17 => ProcOp::Id(s),
            18 => ProcOp::WaitWithOutput(s),
            _ => ProcOp::DropChild(s),
        };
        ops.push(op);
    }
    ops
}
