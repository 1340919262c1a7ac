//! `weft::process` on every flavour, children watched through pidfds
//! (the scenarios are in `support/process_cases.rs`; `process_sigchld.rs`
//! runs them again through `SIGCHLD`).

#[macro_use]
mod support;
#[path = "support/process_cases.rs"]
mod cases;

use std::time::Duration;

rt_test! {
    #[test]
    fn output_has_status_stdout_and_stderr() {
        rt().block_on(crate::cases::output_has_status_stdout_and_stderr());
    }

    #[test]
    fn piped_stdin_and_stdout_carry_more_than_a_pipe_buffer() {
        rt().block_on(crate::cases::piped_stdin_and_stdout_carry_more_than_a_pipe_buffer());
    }

    #[test]
    fn wait_returns_when_the_child_exits_and_id_is_then_none() {
        rt().block_on(crate::cases::wait_returns_when_the_child_exits_and_id_is_then_none());
    }

    #[test]
    fn kill_stops_the_child_and_reaps_it() {
        rt().block_on(crate::cases::kill_stops_the_child_and_reaps_it());
    }

    #[test]
    fn kill_on_drop_kills_and_reaps() {
        rt().block_on(crate::cases::kill_on_drop_kills_and_reaps());
    }

    #[test]
    fn dropped_child_runs_on_and_is_reaped_when_it_exits() {
        rt().block_on(crate::cases::dropped_child_runs_on_and_is_reaped_when_it_exits());
    }

    #[test]
    fn status_closes_the_pipes_it_does_not_use() {
        rt().block_on(crate::cases::status_closes_the_pipes_it_does_not_use());
    }

    #[test]
    fn missing_program_is_not_found() {
        rt().block_on(crate::cases::missing_program_is_not_found());
    }

    #[test]
    fn stdout_of_one_child_is_stdin_of_the_next() {
        rt().block_on(crate::cases::stdout_of_one_child_is_stdin_of_the_next());
    }

    #[test]
    fn many_children_waited_at_once_get_their_own_status() {
        rt().block_on(crate::cases::many_children_waited_at_once_get_their_own_status());
    }

    #[test]
    fn env_dir_and_arg0_reach_the_child() {
        rt().block_on(crate::cases::env_dir_and_arg0_reach_the_child());
    }
}

/// A running child holds a pidfd (so no thread and no signal handler
/// watches it), and it is closed once the child is reaped.
#[test]
fn a_running_child_is_watched_through_a_pidfd() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut child = weft::process::Command::new("sleep")
            .arg("0.05")
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        assert!(cases::holds_pidfd_for(pid));
        child.wait().await.unwrap();
        drop(child);
        assert!(!cases::holds_pidfd_for(pid), "the pidfd outlived the child");
    });
}

/// A child dropped unreaped whose runtime then shuts down is kept on the
/// orphan list and reaped by a later spawn after it exits.
#[test]
fn orphan_of_a_shut_down_runtime_is_reaped_by_a_later_spawn() {
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pid = rt.block_on(async {
        let child = weft::process::Command::new("sleep")
            .arg("0.1")
            .spawn()
            .unwrap();
        child.id().unwrap()
    });
    drop(rt);
    // (Other tests' spawns in this binary may sweep it first.)
    std::thread::sleep(Duration::from_millis(300));
    let rt = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let out = weft::process::Command::new("true").output().await.unwrap();
        assert!(out.status.success());
    });
    assert!(
        !cases::process_exists(pid),
        "the later spawn did not reap the orphan"
    );
}

/// Children spawned on one runtime and waited on another after the first
/// has shut down: the wait watches each again on the waiting runtime and
/// returns its status once it exits (each is still running when its wait
/// begins, so the first runtime's watch has to be replaced).
#[test]
fn children_outliving_their_runtime_are_waited_on_another() {
    let spawn = || {
        weft::process::Command::new("sh")
            .args(["-c", "sleep 0.1; exit 3"])
            .spawn()
            .unwrap()
    };
    let first = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut a, mut b) = first.block_on(async { (spawn(), spawn()) });
    drop(first);
    let current = weft::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(current.block_on(a.wait()).unwrap().code(), Some(3));
    let multi = weft::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(multi.block_on(b.wait()).unwrap().code(), Some(3));
}
