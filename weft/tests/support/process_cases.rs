//! `weft::process` scenarios, shared by `process.rs` (children watched
//! through pidfds) and `process_sigchld.rs` (through `SIGCHLD`). Each is
//! an async body a test runs on its flavour's runtime.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::process::Command;

/// Whether `pid` still exists, zombie or not (`kill(pid, 0)`).
pub fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the pid exists; nothing is sent.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

/// Wait (up to 10 s) until `pid` is gone: exited *and reaped*.
pub async fn gone_within_10s(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !process_exists(pid) {
            return true;
        }
        weft::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// Whether this process holds a pidfd for `pid` (its fdinfo names the pid).
pub fn holds_pidfd_for(pid: u32) -> bool {
    std::fs::read_dir("/proc/self/fdinfo").unwrap().any(|e| {
        let Ok(e) = e else { return false };
        let info = std::fs::read_to_string(e.path()).unwrap_or_default();
        info.lines()
            .any(|l| l.split_whitespace().eq(["Pid:", &pid.to_string()]))
    })
}

pub async fn output_has_status_stdout_and_stderr() {
    let out = Command::new("sh")
        .args(["-c", "echo out; echo err >&2; exit 3"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
}

pub async fn piped_stdin_and_stdout_carry_more_than_a_pipe_buffer() {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // 1 MiB: far past the 64 KiB pipe buffers, so both sides must wait
    // for each other many times.
    let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    let writer = {
        let data = data.clone();
        weft::spawn(async move {
            stdin.write_all(&data).await.unwrap();
            // Dropping stdin is cat's end-of-file.
        })
    };
    let mut echoed = Vec::new();
    stdout.read_to_end(&mut echoed).await.unwrap();
    writer.await.unwrap();
    assert!(
        echoed == data,
        "cat echoed {} bytes, not the same 1 MiB",
        echoed.len()
    );
    assert!(child.wait().await.unwrap().success());
}

pub async fn wait_returns_when_the_child_exits_and_id_is_then_none() {
    let start = Instant::now();
    let mut child = Command::new("sleep").arg("0.2").spawn().unwrap();
    assert!(child.id().is_some());
    assert_eq!(child.try_wait().unwrap(), None);
    let status = weft::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("wait was never woken")
        .unwrap();
    assert!(status.success());
    assert!(start.elapsed() >= Duration::from_millis(150));
    assert_eq!(child.id(), None);
    // A reaped child keeps answering with its status.
    assert_eq!(child.try_wait().unwrap(), Some(status));
    assert_eq!(child.wait().await.unwrap(), status);
    child
        .start_kill()
        .expect("killing a reaped child does nothing");
}

pub async fn kill_stops_the_child_and_reaps_it() {
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id().unwrap();
    child.kill().await.unwrap();
    let status = child.try_wait().unwrap().expect("kill waits for the exit");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(!process_exists(pid), "killed child left a zombie");
}

pub async fn kill_on_drop_kills_and_reaps() {
    let child = Command::new("sleep")
        .arg("30")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    drop(child);
    assert!(
        gone_within_10s(pid).await,
        "kill_on_drop child {pid} still exists"
    );
}

pub async fn dropped_child_runs_on_and_is_reaped_when_it_exits() {
    let marker = std::env::temp_dir().join(format!(
        "weft-process-marker-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_file(&marker);
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 0.1; echo done > '{}'", marker.display()))
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    drop(child);
    assert!(
        gone_within_10s(pid).await,
        "dropped child {pid} became a zombie"
    );
    // It was not killed: it finished its work.
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "done\n");
    std::fs::remove_file(&marker).unwrap();
}

pub async fn status_closes_the_pipes_it_does_not_use() {
    // `cat` with a piped stdin ends only if the pipe is closed.
    let status = weft::time::timeout(
        Duration::from_secs(10),
        Command::new("cat").stdin(Stdio::piped()).status(),
    )
    .await
    .expect("status kept cat's stdin open")
    .unwrap();
    assert!(status.success());
}

pub async fn missing_program_is_not_found() {
    let err = Command::new("/nonexistent/weft-no-such-program")
        .spawn()
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    let err = Command::new("/nonexistent/weft-no-such-program")
        .output()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

pub async fn stdout_of_one_child_is_stdin_of_the_next() {
    let mut first = Command::new("echo")
        .arg("shout")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pipe: Stdio = first.stdout.take().unwrap().try_into().unwrap();
    let out = Command::new("tr")
        .args(["a-z", "A-Z"])
        .stdin(pipe)
        .output()
        .await
        .unwrap();
    assert_eq!(out.stdout, b"SHOUT\n");
    assert!(first.wait().await.unwrap().success());
}

pub async fn many_children_waited_at_once_get_their_own_status() {
    let mut waits = Vec::new();
    for code in 0..24 {
        let mut child = Command::new("sh")
            .args(["-c", &format!("sleep 0.0{}; exit {code}", code % 7)])
            .spawn()
            .unwrap();
        waits.push(weft::spawn(
            async move { (code, child.wait().await.unwrap()) },
        ));
    }
    for wait in waits {
        let (code, status) = weft::time::timeout(Duration::from_secs(20), wait)
            .await
            .expect("a child's wait was never woken")
            .unwrap();
        assert_eq!(status.code(), Some(code));
    }
}

pub async fn env_dir_and_arg0_reach_the_child() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo $WEFT_X; pwd; echo $0"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("WEFT_X", "set")
        .current_dir(&dir)
        .arg0("renamed");
    assert!(!cmd.get_kill_on_drop());
    assert_eq!(cmd.as_std().get_program(), "sh");
    let out = cmd.output().await.unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["set", dir.to_str().unwrap(), "renamed"]);
}
