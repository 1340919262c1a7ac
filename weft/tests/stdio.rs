//! `weft::io::{stdin, stdout, stderr}` (a slice of issue #14), run in a
//! child process whose standard streams are pipes: it echoes its input
//! upper-cased in many small writes (order must hold), then writes to
//! stderr.

use std::io::Write;
use std::process::{Command, Stdio};

const CHILD: &str = "WEFT_STDIO_CHILD";

fn child() {
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut input = Vec::new();
        weft::io::stdin().read_to_end(&mut input).await.unwrap();
        let mut out = weft::io::stdout();
        // Many small writes: each is accepted at once and finishes in the
        // background, in order.
        for byte in input.to_ascii_uppercase() {
            out.write_all(&[byte]).await.unwrap();
        }
        out.flush().await.unwrap();
        let mut err = weft::io::stderr();
        err.write_all(b"done on stderr").await.unwrap();
        err.flush().await.unwrap();
    });
}

#[test]
fn stdin_stdout_stderr_through_pipes() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stdin_stdout_stderr_through_pipes",
            "--nocapture",
            "--quiet",
        ])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text: String = (0..2000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    proc.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = proc.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&text.to_ascii_uppercase()),
        "the echoed text was lost or reordered: {stdout:?}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("done on stderr"));
}
