//! weft-bench: weft against Tokio, head to head, in one process.
//!
//! ```text
//! cargo run --release -p weft-bench [-- OPTIONS]
//!   --suite <name>      run only one suite: `scheduler`, `sync` or `io`
//!                       (default: all); repeatable, or a comma list
//!   --filter <substr>   run only workloads whose name contains it; repeatable,
//!                       or a comma list (--filter spawn,ping). Sync and I/O
//!                       workload names start with `sync_` and `io_`
//!   --quick             CI smoke run: 1 warm-up + 3 samples, short samples
//!   --iters <N>         timed samples per side (default 21)
//!   --no-write          print only; leave BENCHMARKS.md and ratios.svg alone
//!   --list              print the workload names and exit
//! ```
//!
//! Each workload builds its weft and Tokio instances up front (runtimes
//! outside the timed region unless the workload says otherwise), then the
//! harness alternates them sample by sample. The results go to stdout, to the
//! marked section of `BENCHMARKS.md` at the workspace root, and to
//! `weft-bench/ratios.svg`.
//!
//! There are three suites, each with its own table, geometric mean, section
//! and chart: `scheduler` (`<!-- bench:scheduler:start -->`, `ratios.svg`),
//! `sync` (`<!-- bench:sync:start -->`, `sync_ratios.svg`) and `io`
//! (`<!-- bench:io:start -->`, `io_ratios.svg`). A run
//! rewrites only the sections of suites it ran at least one workload of.
//!
//! Layout: `harness` (timing and statistics), `report` (table, markdown,
//! SVG), `workloads` (one module per family).

#[macro_use]
mod echo;
mod harness;
mod report;
mod workloads;

use harness::{Config, Stats};
use report::{Meta, Outcome, Row};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use workloads::{Kind, Suite};

/// Parsed command line.
struct Options {
    suites: Vec<Suite>,
    filters: Vec<String>,
    quick: bool,
    iters: Option<usize>,
    write: bool,
    list: bool,
}

const USAGE: &str = "usage: cargo run --release -p weft-bench -- \
[--suite scheduler|sync|io[,...]]... [--filter SUBSTR[,SUBSTR...]]... [--quick] [--iters N] \
[--no-write] [--list]

  --suite NAME   run one suite: `scheduler` (Tokio's rt_* benches, oneshot, spawn_blocking,
                 floors) or `sync` (mpsc, Notify, Semaphore, Mutex, RwLock, watch,
                 broadcast vs tokio::sync; names start with `sync_`) or `io` (TCP echo,
                 timers, the clock; names start with `io_`).
                 Default: all. Each suite writes only its own marked section of
                 BENCHMARKS.md (bench:scheduler / bench:sync / bench:io) and chart
                 (weft-bench/ratios.svg / sync_ratios.svg / io_ratios.svg)
  --filter SUB   only workloads whose name contains SUB (e.g. --filter sync_mpsc)
  --quick        smoke run: 1 warm-up + 3 samples of ~5 ms per side
  --iters N      timed samples per side (default 21)
  --no-write     print only; touch no file
  --list         print the workload names (with their suite) and exit";

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        suites: Vec::new(),
        filters: Vec::new(),
        quick: false,
        iters: None,
        write: true,
        list: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "--filter" => o.filters.extend(
                value("--filter")?
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            ),
            "--suite" => {
                for name in value("--suite")?.split(',').map(str::trim) {
                    let suite = Suite::ALL
                        .into_iter()
                        .find(|s| s.name() == name)
                        .ok_or_else(|| format!("--suite: unknown suite {name:?}"))?;
                    if !o.suites.contains(&suite) {
                        o.suites.push(suite);
                    }
                }
            }
            "--iters" => {
                let v = value("--iters")?;
                let n: usize = v
                    .parse()
                    .map_err(|_| format!("--iters: not a number: {v}"))?;
                if n == 0 {
                    return Err("--iters must be at least 1".into());
                }
                o.iters = Some(n);
            }
            "--quick" => o.quick = true,
            "--no-write" => o.write = false,
            "--list" => o.list = true,
            // Cargo passes `--bench` when run as a bench target; harmless.
            "--bench" => {}
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok(o)
}

/// The workspace root, where `BENCHMARKS.md` lives.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("weft-bench sits inside the workspace")
        .to_path_buf()
}

/// The command that reproduces this run, for the report.
fn command_line(args: &[String]) -> String {
    let mut cmd = String::from("cargo run --release -p weft-bench");
    if !args.is_empty() {
        cmd.push_str(" --");
        for a in args {
            cmd.push(' ');
            cmd.push_str(a);
        }
    }
    cmd
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Ok(o) => o,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("weft-bench: {msg}");
            }
            eprintln!("{USAGE}");
            return if msg.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };

    if opts.list {
        for suite in Suite::ALL {
            for w in suite.workloads() {
                println!("{:<34} {}", w.name, suite.name());
            }
        }
        return ExitCode::SUCCESS;
    }
    let selected: Vec<(Suite, Vec<workloads::Workload>)> = Suite::ALL
        .into_iter()
        .filter(|s| opts.suites.is_empty() || opts.suites.contains(s))
        .map(|s| {
            let ws: Vec<_> = s
                .workloads()
                .into_iter()
                .filter(|w| {
                    opts.filters.is_empty()
                        || opts.filters.iter().any(|f| w.name.contains(f.as_str()))
                })
                .collect();
            (s, ws)
        })
        .filter(|(_, ws)| !ws.is_empty())
        .collect();
    if selected.is_empty() {
        eprintln!(
            "weft-bench: no workload matches {:?}; see --list",
            opts.filters
        );
        return ExitCode::from(2);
    }

    // Defaults: 21 samples of ~50 ms leave a stable median on a noisy
    // 2-core machine in well under a minute of measuring. Quick mode only
    // proves everything runs.
    let config = if opts.quick {
        Config {
            warmup: 1,
            iters: opts.iters.unwrap_or(3),
            target: Duration::from_millis(5),
        }
    } else {
        Config {
            warmup: 3,
            iters: opts.iters.unwrap_or(21),
            target: Duration::from_millis(50),
        }
    };
    let root = workspace_root();
    let mut meta = Meta::collect(
        &root,
        command_line(&args),
        config.clone(),
        workloads::floor::task_future_size(),
    );
    println!("weft-bench: {}", meta.command);
    println!(
        "{} CPUs, {}; {}; built from {}; {}, Tokio {}; load average {}",
        meta.nproc,
        meta.cpu,
        meta.date,
        meta.commit,
        meta.rustc,
        meta.tokio_version,
        meta.load_start
    );
    println!(
        "{} warm-up + {} timed samples per side, ~{} ms each, weft/Tokio alternating",
        config.warmup,
        config.iters,
        config.target.as_millis()
    );

    for (suite, selected) in &selected {
        if let Err(e) = run_suite(*suite, selected, &config, &mut meta, &root, opts.write) {
            eprintln!("weft-bench: writing the report failed: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Measure one suite's selected workloads, print its table and, with
/// `write`, rewrite its section of `BENCHMARKS.md` and its chart.
fn run_suite(
    suite: Suite,
    selected: &[workloads::Workload],
    config: &Config,
    meta: &mut Meta,
    root: &Path,
    write: bool,
) -> std::io::Result<()> {
    let section = match suite {
        Suite::Scheduler => &report::SCHEDULER,
        Suite::Sync => &report::SYNC,
        Suite::Io => &report::IO,
    };
    meta.load_start = report::load_average();
    let mut rows = Vec::with_capacity(selected.len());
    for w in selected {
        eprint!("  {:<31} ", w.name);
        let outcome = match w.kind {
            Kind::Compare { tokio, weft } => {
                // Both instances live for the whole workload so that samples
                // can alternate; the idle one's workers sit parked.
                let mut t = tokio();
                let mut f = weft();
                let s = harness::measure_pair(t.as_mut(), f.as_mut(), config);
                drop((t, f));
                let (ts, fs) = (Stats::of(&s.tokio), Stats::of(&s.weft));
                Outcome::Compare {
                    ratio: ts.median / fs.median,
                    paired: Stats::of(&harness::paired_ratios(&s)),
                    tokio: ts,
                    weft: fs,
                    reps: s.reps,
                }
            }
            Kind::Floor(make) => {
                let mut side = make();
                let s = harness::measure_solo(side.as_mut(), config);
                Outcome::Floor {
                    stats: Stats::of(&s.ns),
                    reps: s.reps,
                }
            }
        };
        match &outcome {
            Outcome::Compare {
                tokio, weft, ratio, ..
            } => eprintln!(
                "tokio {:>10}  weft {:>10}  ratio {ratio:.2}",
                report::fmt_ns(tokio.median),
                report::fmt_ns(weft.median)
            ),
            Outcome::Floor { stats, .. } => eprintln!("{:>10}", report::fmt_ns(stats.median)),
        }
        rows.push(Row {
            name: w.name,
            note: w.note,
            outcome,
        });
    }

    meta.load_end = report::load_average();
    let ratios: Vec<f64> = report::ratios(&rows).into_iter().map(|(_, r)| r).collect();
    let geomean = harness::geomean(&ratios);
    println!("\nsuite {}:", suite.name());
    report::print_table(&rows, geomean);

    if write {
        let md_path = root.join("BENCHMARKS.md");
        let svg_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(section.svg);
        report::write_markdown(
            &md_path,
            &report::markdown(&rows, geomean, meta, section),
            section,
        )?;
        std::fs::write(&svg_path, report::svg(&rows, geomean, meta))?;
        println!("\nwrote {} and {}", md_path.display(), svg_path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn filters_accumulate_and_split() {
        let o = parse_args(&args(&[
            "--filter",
            "spawn,ping",
            "--filter=yield",
            "--quick",
        ]))
        .unwrap();
        assert_eq!(o.filters, ["spawn", "ping", "yield"]);
        assert!(o.quick && o.write);
    }

    #[test]
    fn iters_and_no_write() {
        let o = parse_args(&args(&["--iters", "12", "--no-write"])).unwrap();
        assert_eq!(o.iters, Some(12));
        assert!(!o.write);
        assert!(parse_args(&args(&["--iters", "0"])).is_err());
        assert!(parse_args(&args(&["--bogus"])).is_err());
    }

    #[test]
    fn suites_parse() {
        let o = parse_args(&args(&["--suite", "sync", "--suite=scheduler,sync"])).unwrap();
        assert_eq!(o.suites, [Suite::Sync, Suite::Scheduler]);
        assert!(parse_args(&args(&["--suite", "bogus"])).is_err());
    }

    #[test]
    fn sync_names_carry_the_prefix() {
        // `--filter sync_` must select exactly the sync suite.
        for suite in Suite::ALL {
            for w in suite.workloads() {
                assert_eq!(
                    w.name.starts_with("sync_"),
                    suite == Suite::Sync,
                    "{}",
                    w.name
                );
            }
        }
    }

    #[test]
    fn io_names_carry_the_prefix() {
        for suite in Suite::ALL {
            for w in suite.workloads() {
                assert_eq!(w.name.starts_with("io_"), suite == Suite::Io, "{}", w.name);
            }
        }
    }

    #[test]
    fn workload_names_unique() {
        let mut names: Vec<_> = workloads::all().iter().map(|w| w.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
