//! Timing and statistics: how a workload is sampled and summarised.
//!
//! A workload provides one [`Side`] per runtime. The harness times the two
//! sides in the same process, alternating weft and Tokio sample by sample
//! (ABAB...), so slow drift on a shared machine (frequency changes, a
//! neighbour's build) lands on both sides instead of on whichever ran second.
//!
//! One *sample* is `setup`, then `reps` calls of `run` under a single clock
//! read, then `teardown`; the reported figure is the sample's time divided by
//! `reps`, i.e. the time of one workload iteration. `reps` is calibrated once
//! per workload so a sample lasts about the target time (short workloads are
//! otherwise dominated by timer and scheduling jitter) and is the same for
//! both sides, so both do identical work per sample. This mirrors Criterion,
//! which the Tokio benches use: `b.iter` runs the routine many times per
//! clock read.

use std::time::{Duration, Instant};

/// One runtime's instance of a workload.
///
/// Only `run` is timed. `setup` and `teardown` bracket every sample and hold
/// what must not be measured: starting and stopping background load, or
/// building and dropping a runtime that Tokio's bench creates per sample.
pub trait Side {
    /// Untimed, before each sample.
    fn setup(&mut self) {}
    /// One iteration of the workload: the only timed code.
    fn run(&mut self);
    /// Untimed, after each sample.
    fn teardown(&mut self) {}
}

/// How many samples to take and how long each should last.
#[derive(Clone, Debug)]
pub struct Config {
    /// Samples per side thrown away before measuring (caches, allocator
    /// pools and the runtimes' queues warm up).
    pub warmup: usize,
    /// Timed samples per side.
    pub iters: usize,
    /// Wanted duration of one sample; decides `reps`.
    pub target: Duration,
}

/// Per-iteration times (nanoseconds) of both sides of one workload.
#[derive(Clone, Debug)]
pub struct PairSamples {
    /// Workload iterations per sample.
    pub reps: u32,
    /// Tokio's per-iteration time of each sample, in the order taken.
    pub tokio: Vec<f64>,
    /// weft's per-iteration time of each sample, in the order taken.
    pub weft: Vec<f64>,
}

/// Per-iteration times (nanoseconds) of a single-sided measurement.
#[derive(Clone, Debug)]
pub struct SoloSamples {
    /// Iterations per sample.
    pub reps: u32,
    /// Per-iteration time of each sample.
    pub ns: Vec<f64>,
}

/// Take one sample and return the time of one iteration in nanoseconds.
fn sample(side: &mut dyn Side, reps: u32) -> f64 {
    side.setup();
    let start = Instant::now();
    for _ in 0..reps {
        side.run();
    }
    let elapsed = start.elapsed();
    side.teardown();
    elapsed.as_nanos() as f64 / f64::from(reps)
}

/// Iterations per sample so the faster side's sample lasts about `target`,
/// while the slower side's stays within a few targets (a workload where one
/// runtime is far slower must not blow up the total run time).
fn reps_for(target: Duration, fast_ns: f64, slow_ns: f64) -> u32 {
    let target_ns = target.as_nanos() as f64;
    let want = (target_ns / fast_ns.max(1.0)).ceil();
    let cap = (4.0 * target_ns / slow_ns.max(1.0)).floor();
    want.min(cap).clamp(1.0, 100_000.0) as u32
}

/// Measure both sides, alternating weft and Tokio every sample.
pub fn measure_pair(tokio: &mut dyn Side, weft: &mut dyn Side, cfg: &Config) -> PairSamples {
    // One single-iteration sample of each side: calibration, and the first
    // touch of each runtime (thread start-up, first allocations).
    let w1 = sample(weft, 1);
    let t1 = sample(tokio, 1);
    let reps = reps_for(cfg.target, w1.min(t1), w1.max(t1));

    for _ in 0..cfg.warmup {
        sample(weft, reps);
        sample(tokio, reps);
    }
    let mut out = PairSamples {
        reps,
        tokio: Vec::with_capacity(cfg.iters),
        weft: Vec::with_capacity(cfg.iters),
    };
    for _ in 0..cfg.iters {
        out.weft.push(sample(weft, reps));
        out.tokio.push(sample(tokio, reps));
    }
    out
}

/// Measure a single side (the floor rows, which involve no runtime).
pub fn measure_solo(side: &mut dyn Side, cfg: &Config) -> SoloSamples {
    let once = sample(side, 1);
    let reps = reps_for(cfg.target, once, once);
    for _ in 0..cfg.warmup {
        sample(side, reps);
    }
    let ns = (0..cfg.iters).map(|_| sample(side, reps)).collect();
    SoloSamples { reps, ns }
}

/// Order statistics of a set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// Smallest sample.
    pub min: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median: the headline figure, robust to the odd preempted sample.
    pub median: f64,
    /// 75th percentile.
    pub p75: f64,
    /// Largest sample.
    pub max: f64,
}

impl Stats {
    /// Summarise `xs` (must be non-empty).
    pub fn of(xs: &[f64]) -> Stats {
        assert!(!xs.is_empty(), "no samples to summarise");
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        Stats {
            min: v[0],
            p25: quantile(&v, 0.25),
            median: quantile(&v, 0.5),
            p75: quantile(&v, 0.75),
            max: v[v.len() - 1],
        }
    }

    /// Interquartile range as a percentage of the median: the spread figure
    /// in the table (unlike min–max it ignores one unlucky sample).
    pub fn iqr_pct(&self) -> f64 {
        100.0 * (self.p75 - self.p25) / self.median
    }

    /// Full range as a percentage of the median.
    pub fn range_pct(&self) -> f64 {
        100.0 * (self.max - self.min) / self.median
    }
}

/// Linear-interpolated quantile of sorted data (the "type 7" definition).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Ratio of each Tokio sample to the weft sample taken right before it.
/// Neighbouring samples share the machine's momentary state, so the spread
/// of these paired ratios says how stable the comparison is, which the two
/// sides' own spreads do not.
pub fn paired_ratios(s: &PairSamples) -> Vec<f64> {
    s.tokio.iter().zip(&s.weft).map(|(t, w)| t / w).collect()
}

/// Geometric mean: the right average for ratios (2× and 0.5× cancel out).
pub fn geomean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.p25, 1.75);
        assert_eq!(s.p75, 3.25);
    }

    #[test]
    fn geomean_of_reciprocals_is_one() {
        assert!((geomean(&[2.0, 0.5]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn reps_respect_target_and_cap() {
        let ms = Duration::from_millis(10);
        // 1 ms per iteration on both sides: 10 reps fill the target.
        assert_eq!(reps_for(ms, 1e6, 1e6), 10);
        // The slow side (100 ms) would take 1 s at 10 reps: capped to 1.
        assert_eq!(reps_for(ms, 1e6, 1e8), 1);
        // Never zero.
        assert_eq!(reps_for(ms, 1e9, 1e9), 1);
    }
}
