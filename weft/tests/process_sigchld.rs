//! The `weft::process` scenarios again, with children watched through
//! `SIGCHLD` instead of pidfds (the fallback for kernels and sandboxes
//! without them), forced by `WEFT_PROCESS_SIGCHLD`.

#[macro_use]
mod support;
#[path = "support/process_cases.rs"]
mod cases;

/// Every test calls this before it spawns: weft reads the variable at the
/// process's first spawn.
fn force_sigchld() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("WEFT_PROCESS_SIGCHLD", "1"));
}

rt_test! {
    #[test]
    fn output_has_status_stdout_and_stderr() {
        crate::force_sigchld();
        rt().block_on(crate::cases::output_has_status_stdout_and_stderr());
    }

    #[test]
    fn piped_stdin_and_stdout_carry_more_than_a_pipe_buffer() {
        crate::force_sigchld();
        rt().block_on(crate::cases::piped_stdin_and_stdout_carry_more_than_a_pipe_buffer());
    }

    #[test]
    fn wait_returns_when_the_child_exits_and_id_is_then_none() {
        crate::force_sigchld();
        rt().block_on(crate::cases::wait_returns_when_the_child_exits_and_id_is_then_none());
    }

    #[test]
    fn kill_stops_the_child_and_reaps_it() {
        crate::force_sigchld();
        rt().block_on(crate::cases::kill_stops_the_child_and_reaps_it());
    }

    #[test]
    fn kill_on_drop_kills_and_reaps() {
        crate::force_sigchld();
        rt().block_on(crate::cases::kill_on_drop_kills_and_reaps());
    }

    #[test]
    fn dropped_child_runs_on_and_is_reaped_when_it_exits() {
        crate::force_sigchld();
        rt().block_on(crate::cases::dropped_child_runs_on_and_is_reaped_when_it_exits());
    }

    #[test]
    fn status_closes_the_pipes_it_does_not_use() {
        crate::force_sigchld();
        rt().block_on(crate::cases::status_closes_the_pipes_it_does_not_use());
    }

    #[test]
    fn missing_program_is_not_found() {
        crate::force_sigchld();
        rt().block_on(crate::cases::missing_program_is_not_found());
    }

    #[test]
    fn stdout_of_one_child_is_stdin_of_the_next() {
        crate::force_sigchld();
        rt().block_on(crate::cases::stdout_of_one_child_is_stdin_of_the_next());
    }

    #[test]
    fn many_children_waited_at_once_get_their_own_status() {
        crate::force_sigchld();
        rt().block_on(crate::cases::many_children_waited_at_once_get_their_own_status());
    }

    #[test]
    fn env_dir_and_arg0_reach_the_child() {
        crate::force_sigchld();
        rt().block_on(crate::cases::env_dir_and_arg0_reach_the_child());
    }

    #[test]
    fn no_pidfd_is_opened() {
        crate::force_sigchld();
        rt().block_on(async {
            let mut child = weft::process::Command::new("sleep").arg("0.05").spawn().unwrap();
            assert!(!crate::cases::holds_pidfd_for(child.id().unwrap()));
            child.wait().await.unwrap();
        });
    }
}
