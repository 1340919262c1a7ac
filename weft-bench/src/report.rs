//! Presenting results: the terminal table, the `BENCHMARKS.md` section, and
//! the SVG chart of ratios, plus the facts about the run that make a number
//! reproducible (machine, date, commit, command).
//!
//! The chart is hand-written SVG on purpose: a bar per workload needs no
//! plotting crate, and weft-bench keeps its dependencies to the two runtimes.

use crate::harness::{Config, Stats};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};
use std::{fs, io};

/// Marks the generated part of `BENCHMARKS.md`; text outside survives runs.
pub const START_MARKER: &str = "<!-- bench:scheduler:start -->";
/// End of the generated part.
pub const END_MARKER: &str = "<!-- bench:scheduler:end -->";

/// Where one suite's results go: its marked section of `BENCHMARKS.md` and
/// its chart in `weft-bench/`.
pub struct Section {
    /// Start marker of the generated section.
    pub start: &'static str,
    /// End marker of the generated section.
    pub end: &'static str,
    /// File name of the chart, inside `weft-bench/`.
    pub svg: &'static str,
}

/// The scheduler suite's section (the original one) and chart.
pub const SCHEDULER: Section = Section {
    start: START_MARKER,
    end: END_MARKER,
    svg: "ratios.svg",
};

/// The sync suite's section and chart.
pub const SYNC: Section = Section {
    start: "<!-- bench:sync:start -->",
    end: "<!-- bench:sync:end -->",
    svg: "sync_ratios.svg",
};

/// The I/O suite's section and chart.
pub const IO: Section = Section {
    start: "<!-- bench:io:start -->",
    end: "<!-- bench:io:end -->",
    svg: "io_ratios.svg",
};

/// The result of one workload.
pub enum Outcome {
    /// weft against Tokio.
    Compare {
        /// Tokio's per-iteration times.
        tokio: Stats,
        /// weft's per-iteration times.
        weft: Stats,
        /// Tokio median / weft median (> 1: weft faster).
        ratio: f64,
        /// Per-pair Tokio/weft ratios (see `harness::paired_ratios`).
        paired: Stats,
        /// Iterations per sample.
        reps: u32,
    },
    /// A runtime-free lower bound.
    Floor {
        /// Per-iteration (10,000 tasks) times.
        stats: Stats,
        /// Iterations per sample.
        reps: u32,
    },
}

/// One row of the report.
pub struct Row {
    /// Workload name.
    pub name: &'static str,
    /// What one iteration is.
    pub note: &'static str,
    /// Its numbers.
    pub outcome: Outcome,
}

/// Facts about the run, printed above the table.
pub struct Meta {
    /// Logical CPUs available to the process.
    pub nproc: usize,
    /// `model name` from /proc/cpuinfo.
    pub cpu: String,
    /// UTC date and time of the run.
    pub date: String,
    /// Commit the binary was built from, plus a fingerprint of uncommitted
    /// changes in weft/ if there were any.
    pub commit: String,
    /// Tokio version from Cargo.lock.
    pub tokio_version: String,
    /// `rustc -V`.
    pub rustc: String,
    /// 1-minute load average when the run started; set `load_end` at the
    /// end. On a shared machine these say how much the run competed.
    pub load_start: String,
    /// 1-minute load average when the run finished (filled in by the driver).
    pub load_end: String,
    /// The command line that reproduces this run.
    pub command: String,
    /// Sampling settings.
    pub config: Config,
    /// Size of the spawn_many_local task future (for the floor note).
    pub task_future_bytes: usize,
}

impl Meta {
    /// Gather the facts; anything unavailable reads "unknown".
    pub fn collect(
        workspace: &Path,
        command: String,
        config: Config,
        task_future_bytes: usize,
    ) -> Meta {
        let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
        let cpu = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        // What was measured is what the binary was built from (see
        // build.rs); HEAD may have moved since, which is worth saying.
        let mut commit = env!("WEFT_BENCH_BUILT_FROM").to_string();
        if let Some(head) = run_text(workspace, "git", &["rev-parse", "--short", "HEAD"]) {
            if !commit.starts_with(&head) {
                commit.push_str(&format!("; HEAD is now {head}"));
            }
        }
        let tokio_version = fs::read_to_string(workspace.join("Cargo.lock"))
            .ok()
            .and_then(|lock| {
                let at = lock.find("name = \"tokio\"\nversion = \"")?;
                let rest = &lock[at + "name = \"tokio\"\nversion = \"".len()..];
                Some(rest[..rest.find('"')?].to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let rustc = run_text(workspace, "rustc", &["-V"]).unwrap_or_else(|| "unknown".into());
        Meta {
            nproc,
            cpu,
            date: utc_now(),
            commit,
            tokio_version,
            rustc,
            load_start: load_average(),
            load_end: String::new(),
            command,
            config,
            task_future_bytes,
        }
    }
}

/// The 1-minute load average from /proc/loadavg, or "unknown".
pub fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "unknown".into())
}

/// Stdout of a command, trimmed, if it ran and succeeded.
fn run_text(dir: &Path, cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// "YYYY-MM-DD HH:MM UTC" without a date crate (days-to-civil conversion,
/// proleptic Gregorian calendar).
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A duration in nanoseconds with a readable unit and 3 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// A ratio with at least two significant digits, even far below 1.
pub fn fmt_ratio_plain(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        return format!("{r}");
    }
    if r >= 0.095 {
        format!("{r:.2}")
    } else {
        let decimals = 1 + (-r.log10()).ceil() as usize;
        format!("{r:.decimals$}")
    }
}

/// As `fmt_ratio_plain`, with the slowdown spelled out when weft is more
/// than 2× slower, e.g. "0.0037 (1/270)": tiny ratios are hard to read.
pub fn fmt_ratio(r: f64) -> String {
    let plain = fmt_ratio_plain(r);
    if r.is_finite() && r > 0.0 && r < 0.5 {
        let slower = 1.0 / r;
        let digits = if slower >= 10.0 { 0 } else { 1 };
        format!("{plain} (1/{slower:.digits$})")
    } else {
        plain
    }
}

/// Ratios of the comparison rows, in table order.
pub fn ratios(rows: &[Row]) -> Vec<(&'static str, f64)> {
    rows.iter()
        .filter_map(|r| match r.outcome {
            Outcome::Compare { ratio, .. } => Some((r.name, ratio)),
            Outcome::Floor { .. } => None,
        })
        .collect()
}

fn find<'a>(rows: &'a [Row], name: &str) -> Option<&'a Outcome> {
    rows.iter().find(|r| r.name == name).map(|r| &r.outcome)
}

/// One line per floor row: its cost, and how far spawn_many_local is above
/// it on each runtime (when spawn_many_local ran too).
fn floor_lines(rows: &[Row]) -> Vec<String> {
    let per_task = |ns: f64| ns / crate::workloads::NUM_SPAWN as f64;
    let spawn = match find(rows, "spawn_many_local") {
        Some(Outcome::Compare { tokio, weft, .. }) => Some((tokio.median, weft.median)),
        _ => None,
    };
    let mut lines = Vec::new();
    for r in rows {
        if let Outcome::Floor { stats, reps } = &r.outcome {
            let mut line = format!(
                "`{}`: {} per 10,000 tasks = {} per task (IQR {:.1}%, reps {})",
                r.name,
                fmt_ns(stats.median),
                fmt_ns(per_task(stats.median)),
                stats.iqr_pct(),
                reps
            );
            if let Some((tokio, weft)) = spawn {
                let _ = write!(
                    line,
                    "; spawn_many_local per task: weft {} = {:.1}× this floor, Tokio {} = {:.1}×",
                    fmt_ns(per_task(weft)),
                    weft / stats.median,
                    fmt_ns(per_task(tokio)),
                    tokio / stats.median
                );
            }
            lines.push(line);
        }
    }
    lines
}

/// The table for the terminal.
pub fn print_table(rows: &[Row], geomean: f64) {
    println!();
    println!(
        "{:<31} {:>11} {:>11} {:>14} {:>17} {:>17} {:>15} {:>5}",
        "workload",
        "tokio",
        "weft",
        "ratio",
        "tokio IQR/range",
        "weft IQR/range",
        "pair p25-p75",
        "reps"
    );
    println!("{}", "-".repeat(128));
    for r in rows {
        if let Outcome::Compare {
            tokio,
            weft,
            ratio,
            paired,
            reps,
        } = &r.outcome
        {
            println!(
                "{:<31} {:>11} {:>11} {:>14} {:>17} {:>17} {:>15} {:>5}",
                r.name,
                fmt_ns(tokio.median),
                fmt_ns(weft.median),
                fmt_ratio(*ratio),
                format!("{:.1}% / {:.0}%", tokio.iqr_pct(), tokio.range_pct()),
                format!("{:.1}% / {:.0}%", weft.iqr_pct(), weft.range_pct()),
                format!(
                    "{}–{}",
                    fmt_ratio_plain(paired.p25),
                    fmt_ratio_plain(paired.p75)
                ),
                reps,
            );
        }
    }
    println!("{}", "-".repeat(128));
    println!("geometric mean of ratios (Tokio time / weft time, > 1 = weft faster): {geomean:.3}");
    for line in floor_lines(rows) {
        println!("floor {line}");
    }
}

/// The generated section of `BENCHMARKS.md`, markers included.
pub fn markdown(rows: &[Row], geomean: f64, meta: &Meta, section: &Section) -> String {
    let mut s = String::new();
    let c = &meta.config;
    // `writeln!` into a String cannot fail; the results are ignored.
    let _ = writeln!(s, "{}", section.start);
    let _ = writeln!(
        s,
        "<!-- Generated by weft-bench; edits between these markers are overwritten. -->\n"
    );
    let _ = writeln!(s, "- **Command:** `{}`", meta.command);
    let _ = writeln!(s, "- **Date:** {}", meta.date);
    let _ = writeln!(s, "- **Built from:** `{}`", meta.commit);
    let _ = writeln!(
        s,
        "- **Machine:** {} CPUs (nproc), {}",
        meta.nproc, meta.cpu
    );
    let _ = writeln!(
        s,
        "- **Toolchain:** {}, Tokio {}",
        meta.rustc, meta.tokio_version
    );
    let _ = writeln!(
        s,
        "- **Load average (1 min):** {} at start, {} at end (a busy machine inflates times \
         and spreads; alternating samples keeps the ratios comparable)",
        meta.load_start, meta.load_end
    );
    let _ = writeln!(
        s,
        "- **Sampling:** {} warm-up + {} timed samples per side, weft and Tokio alternating \
         sample by sample in one process; a sample times `reps` back-to-back iterations \
         (calibrated to ≈{} ms, same for both sides) and the figures are per iteration.\n",
        c.warmup,
        c.iters,
        c.target.as_millis()
    );
    let _ = writeln!(
        s,
        "| Workload | Tokio median | weft median | Ratio | Tokio spread | weft spread | Paired ratio p25–p75 | reps |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        if let Outcome::Compare {
            tokio,
            weft,
            ratio,
            paired,
            reps,
        } = &r.outcome
        {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | **{}** | {:.1}% ({:.0}%) | {:.1}% ({:.0}%) | {}–{} | {} |",
                r.name,
                fmt_ns(tokio.median),
                fmt_ns(weft.median),
                fmt_ratio(*ratio),
                tokio.iqr_pct(),
                tokio.range_pct(),
                weft.iqr_pct(),
                weft.range_pct(),
                fmt_ratio_plain(paired.p25),
                fmt_ratio_plain(paired.p75),
                reps
            );
        }
    }
    let _ = writeln!(s, "\n**Geometric mean of ratios: {geomean:.3}**\n");
    let _ = writeln!(
        s,
        "Ratio = Tokio median / weft median: > 1 means weft is faster. Spread = IQR as % of the \
         median (min–max range as % in parentheses). Paired ratio: the quartiles of Tokio/weft \
         computed per adjacent pair of samples, i.e. how stable the comparison itself is.\n"
    );
    let floors = floor_lines(rows);
    if !floors.is_empty() {
        let _ = writeln!(
            s,
            "**Floor** (no runtime; the spawn_many_local task future is {} bytes):\n",
            meta.task_future_bytes
        );
        for line in floors {
            let _ = writeln!(s, "- {line}");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "![Tokio/weft ratio per workload](weft-bench/{})\n",
        section.svg
    );
    let _ = writeln!(s, "Workload notes (one iteration is):\n");
    for r in rows {
        let _ = writeln!(s, "- `{}`: {}", r.name, r.note);
    }
    let _ = writeln!(s, "\n{}", section.end);
    s
}

/// Replace the marked section of `path` with `section`, creating the file
/// (with a short preamble) if needed and appending the section if the
/// markers are missing, so hand-written text outside the markers survives.
pub fn write_markdown(path: &Path, section: &str, markers: &Section) -> io::Result<()> {
    let old = match fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::from(
            "# Benchmarks\n\nweft against Tokio, measured by `weft-bench` \
             (`cargo run --release -p weft-bench`).\n\n",
        ),
        Err(e) => return Err(e),
    };
    let section = section.trim_end();
    let new = match (old.find(markers.start), old.find(markers.end)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{}{}", &old[..a], section, &old[b + markers.end.len()..])
        }
        _ => format!("{}\n\n{}\n", old.trim_end(), section),
    };
    fs::write(path, new)
}

/// Horizontal bar chart of the ratios on a log₂ scale centred on 1.0, so
/// "2× faster" and "2× slower" are bars of equal length on either side.
pub fn svg(rows: &[Row], geomean: f64, meta: &Meta) -> String {
    let mut bars: Vec<(&str, f64)> = ratios(rows);
    bars.push(("geometric mean", geomean));
    let (label_w, plot_w, row_h, top) = (210.0, 520.0, 24.0, 54.0);
    let width = label_w + plot_w + 70.0;
    let height = top + row_h * bars.len() as f64 + 44.0;
    // Axis reach in powers of two: at least 1/2..2, at most 1/16..16 so
    // one extreme workload does not flatten every other bar; bars beyond
    // are cut at the edge and their label says "off scale".
    const MAX_REACH: f64 = 4.0;
    let reach = bars
        .iter()
        .filter(|(_, r)| r.is_finite() && *r > 0.0)
        .map(|(_, r)| r.log2().abs())
        .fold(1.0_f64, f64::max)
        .ceil()
        .min(MAX_REACH);
    let x_of = |r: f64| label_w + plot_w / 2.0 + (r.log2() / reach).clamp(-1.0, 1.0) * plot_w / 2.0;
    let x1 = x_of(1.0);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="20" font-size="14" font-weight="bold">Tokio time / weft time per workload (log scale; right of 1.0 = weft faster)</text>"#,
        10
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555">{} · {} · {} CPUs · {}</text>"##,
        xml_escape(&meta.date),
        xml_escape(&meta.commit),
        meta.nproc,
        xml_escape(&meta.cpu)
    );
    // Grid lines at powers of two.
    let bottom = top + row_h * bars.len() as f64;
    for k in -(reach as i32)..=(reach as i32) {
        let r = 2f64.powi(k);
        let x = x_of(r);
        let (stroke, w) = if k == 0 { ("#000", 1.5) } else { ("#ddd", 1.0) };
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="{stroke}" stroke-width="{w}"/>"#,
            top - 4.0
        );
        let label = if k >= 0 {
            format!("{}", 1u64 << k)
        } else {
            format!("1/{}", 1u64 << -k)
        };
        let _ = writeln!(
            s,
            r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#333">{label}</text>"##,
            bottom + 16.0
        );
    }
    for (i, (name, r)) in bars.iter().enumerate() {
        let y = top + row_h * i as f64;
        let is_mean = i + 1 == bars.len();
        let fill = if is_mean {
            "#1565c0"
        } else if *r >= 1.0 {
            "#2e7d32"
        } else {
            "#c62828"
        };
        let xr = if r.is_finite() && *r > 0.0 {
            x_of(*r)
        } else {
            x1
        };
        let (x, w) = if xr >= x1 {
            (x1, xr - x1)
        } else {
            (xr, x1 - xr)
        };
        let weight = if is_mean {
            r#" font-weight="bold""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end"{weight}>{}</text>"#,
            label_w - 8.0,
            y + row_h * 0.65,
            xml_escape(name)
        );
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}"/>"#,
            y + 4.0,
            w.max(1.0),
            row_h - 8.0
        );
        // Labels go outside the bar, or inside it when the bar reaches
        // the plot's edge (then there is no room outside).
        let off_scale = r.log2().abs() > reach;
        let label = if off_scale {
            format!("{} (off scale)", fmt_ratio(*r))
        } else {
            fmt_ratio(*r)
        };
        let (tx, anchor, colour) = match (xr >= x1, off_scale) {
            (true, false) => (xr + 4.0, "start", "black"),
            (false, false) => (xr - 4.0, "end", "black"),
            (true, true) => (xr - 4.0, "end", "white"),
            (false, true) => (xr + 4.0, "start", "white"),
        };
        let _ = writeln!(
            s,
            r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="{colour}"{weight}>{}</text>"#,
            y + row_h * 0.65,
            xml_escape(&label)
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="10" y="{:.1}" fill="#555">{}</text>"##,
        bottom + 34.0,
        xml_escape(&meta.command)
    );
    let _ = writeln!(s, "</svg>");
    s
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_replaced_and_rest_kept() {
        let dir = std::env::temp_dir().join(format!("weft-bench-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("B.md");
        fs::write(
            &path,
            format!("head\n{START_MARKER}\nold\n{END_MARKER}\ntail\n"),
        )
        .unwrap();
        write_markdown(
            &path,
            &format!("{START_MARKER}\nnew\n{END_MARKER}\n"),
            &SCHEDULER,
        )
        .unwrap();
        let got = fs::read_to_string(&path).unwrap();
        assert_eq!(
            got,
            format!("head\n{START_MARKER}\nnew\n{END_MARKER}\ntail\n")
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn units() {
        assert_eq!(fmt_ns(12.0), "12.0 ns");
        assert_eq!(fmt_ns(1_500.0), "1.50 µs");
        assert_eq!(fmt_ns(250_000_000.0), "250 ms");
        assert_eq!(fmt_ratio(1.234), "1.23");
        assert_eq!(fmt_ratio(0.0037), "0.0037 (1/270)");
        assert_eq!(fmt_ratio(0.25), "0.25 (1/4.0)");
    }
}
