//! How long a run should measure. The spread of a run's value has two parts: what the run's own
//! length shrinks (how steady its loop was: the standard error a harness reports for its
//! estimate) and what it cannot (code layout, frequency, the machine's state at that moment:
//! the spread between runs). When the first part is small, a run a fraction as long answers in
//! nearly as many rounds, and each round costs a fraction of the time (docs/statistics.md §1b).

/// Pairs needed before a split is stated: fewer say nothing about between-run variance.
pub const MIN_PAIRS: usize = 5;

/// The variance of one series' run values, split (log scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSplit {
    /// Variance of one run's log value: half the variance of the paired log-ratios, so drift
    /// that pairing cancels is not counted.
    pub per_run: f64,
    /// Mean squared standard error the runs reported for their own values.
    pub within: f64,
    pub pairs: usize,
}

impl RunSplit {
    /// From the paired log-ratios `diffs` and the log-scale standard error each run reported
    /// (both sides). `None` with fewer than [`MIN_PAIRS`] pairs, no run errors, or no spread.
    pub fn new(diffs: &[f64], run_se: &[f64]) -> Option<Self> {
        let finite: Vec<f64> = diffs.iter().copied().filter(|d| d.is_finite()).collect();
        let se: Vec<f64> = run_se
            .iter()
            .copied()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .collect();
        if finite.len() < MIN_PAIRS || se.is_empty() {
            return None;
        }
        let n = finite.len() as f64;
        let mean = finite.iter().sum::<f64>() / n;
        let var_d = finite.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let per_run = var_d / 2.0;
        let within = se.iter().map(|s| s * s).sum::<f64>() / se.len() as f64;
        (per_run > 0.0).then_some(RunSplit {
            per_run,
            within,
            pairs: finite.len(),
        })
    }

    /// The share of a run's variance its own length shrinks, in [0, 1]. Sampling noise can make
    /// the reported errors exceed the whole spread; the share is then 1.
    pub fn within_share(&self) -> f64 {
        (self.within / self.per_run).clamp(0.0, 1.0)
    }

    /// Rounds an answer needs with runs `length` times as long (0.25: a quarter), relative to
    /// now: the within part scales with 1/length, the between part stays.
    pub fn rounds_factor(&self, length: f64) -> f64 {
        let s = self.within_share();
        (1.0 - s) + s / length
    }

    /// The shortest relative run length whose rounds grow by at most `rounds_factor` (> 1).
    pub fn shortest_length(&self, rounds_factor: f64) -> f64 {
        let s = self.within_share();
        let spare = rounds_factor - 1.0 + s;
        if spare <= 0.0 {
            1.0
        } else {
            (s / spare).min(1.0)
        }
    }

    /// Seconds of measurement per benchmark that minimise minutes to an answer, for runs that
    /// measure `benchmarks` benchmarks `measured_secs` each beside `fixed_secs` the run spends
    /// regardless (start-up, warm-up, analysis): [`RunSplit::best_measure_secs_for`] with no
    /// warm-up counted apart.
    pub fn best_measure_secs(
        &self,
        measured_secs: f64,
        fixed_secs: f64,
        benchmarks: usize,
    ) -> Option<f64> {
        let cost = RunCost {
            fixed_secs,
            benchmarks,
            warm_up_secs: 0.0,
            per_measured_sec: 1.0,
        };
        self.best_measure_secs_for(measured_secs, &cost)
    }

    /// Seconds of measurement per benchmark that minimise minutes to an answer, for runs that
    /// measured `measured_secs` per benchmark and cost what `cost` says. Rounds scale with
    /// `between + within·t0/t` and a run's cost with `fixed + k·(warm_up + per_measured·t)`;
    /// their product is least at `t = sqrt(within·t0·(fixed + k·warm_up) / (between·k·per_measured))`.
    /// `None` when the between part is nil (longer runs then always pay), nothing in a run
    /// stays whatever its length, or an input is not positive.
    pub fn best_measure_secs_for(&self, measured_secs: f64, cost: &RunCost) -> Option<f64> {
        let between = self.per_run - self.within.min(self.per_run);
        let ok = |x: f64| x.is_finite() && x > 0.0;
        let k = cost.benchmarks as f64;
        let stays = cost.fixed_secs + k * cost.warm_up_secs;
        if !(ok(between)
            && ok(measured_secs)
            && ok(stays)
            && ok(cost.per_measured_sec)
            && cost.fixed_secs >= 0.0
            && cost.warm_up_secs >= 0.0
            && cost.benchmarks > 0)
        {
            return None;
        }
        let w = self.within * measured_secs;
        Some((w * stays / (between * k * cost.per_measured_sec)).sqrt())
    }

    /// Minutes to an answer measuring `secs` per benchmark at the cost `then`, relative to
    /// measuring `measured_secs` at the cost `now`: the rounds factor times the ratio of a
    /// run's seconds.
    pub fn minutes_factor(
        &self,
        measured_secs: f64,
        now: &RunCost,
        secs: f64,
        then: &RunCost,
    ) -> f64 {
        self.rounds_factor(secs / measured_secs) * then.secs(secs) / now.secs(measured_secs)
    }
}

/// What one run costs in seconds as a function of the seconds `t` it measures each benchmark:
/// `fixed + benchmarks·(warm_up + per_measured·t)`. The warm-up a harness spends on each
/// benchmark is paid in every run and shortens no round (docs/statistics.md §1b).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunCost {
    /// Seconds a run spends once whatever it measures: start-up, loading, reporting.
    pub fixed_secs: f64,
    pub benchmarks: usize,
    /// Seconds each benchmark warms up whatever the length measured.
    pub warm_up_secs: f64,
    /// Seconds each benchmark spends per second it measures: 1, or 2 when its warm-up is as
    /// long as its measuring.
    pub per_measured_sec: f64,
}

impl RunCost {
    /// The cost of runs that took `run_secs` each measuring `measured_secs` per benchmark: what
    /// is neither warm-up nor measuring is the fixed part. `None` when the warm-up and
    /// measuring stated exceed the run's time (the benchmarks set other lengths themselves).
    pub fn from_run_secs(
        run_secs: f64,
        measured_secs: f64,
        benchmarks: usize,
        warm_up_secs: f64,
        per_measured_sec: f64,
    ) -> Option<Self> {
        let cost = RunCost {
            fixed_secs: 0.0,
            benchmarks,
            warm_up_secs,
            per_measured_sec,
        };
        let fixed_secs = run_secs - cost.secs(measured_secs);
        (fixed_secs.is_finite() && fixed_secs >= 0.0).then_some(RunCost { fixed_secs, ..cost })
    }

    /// A run's seconds when it measures `secs` per benchmark.
    pub fn secs(&self, secs: f64) -> f64 {
        self.fixed_secs
            + self.benchmarks as f64 * (self.warm_up_secs + self.per_measured_sec * secs)
    }

    /// The same runs with each benchmark warming up `warm_up_secs`, whatever it measures.
    pub fn with_warm_up(&self, warm_up_secs: f64) -> Self {
        RunCost {
            warm_up_secs,
            per_measured_sec: 1.0,
            ..*self
        }
    }
}

/// The log-scale standard error of a value whose harness reported the two-sided `confidence`
/// interval `[lower, upper]` around it (criterion: 0.95). `None` for a degenerate interval.
pub fn log_se_from_bounds(lower: f64, upper: f64, confidence: f64) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, Normal};
    if !(lower > 0.0 && upper >= lower && upper.is_finite() && confidence > 0.0 && confidence < 1.0)
    {
        return None;
    }
    let z = Normal::standard().inverse_cdf(0.5 + confidence / 2.0);
    Some((upper.ln() - lower.ln()) / (2.0 * z))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(per_run: f64, within: f64) -> RunSplit {
        RunSplit {
            per_run,
            within,
            pairs: 20,
        }
    }

    #[test]
    fn a_run_s_variance_is_half_the_variance_of_its_pairs() {
        // var of [-0.02, 0, 0.02, 0, -0.02, 0.02] = 0.00032, so 0.00016 per run.
        let d = [-0.02, 0.0, 0.02, 0.0, -0.02, 0.02];
        let s = RunSplit::new(&d, &[0.004, 0.004]).unwrap();
        assert!((s.per_run - 0.00016).abs() < 1e-12, "{s:?}");
        assert!((s.within - 0.000016).abs() < 1e-12);
        assert!((s.within_share() - 0.1).abs() < 1e-9);
        assert_eq!(RunSplit::new(&d[..4], &[0.004]), None, "too few pairs");
        assert_eq!(RunSplit::new(&d, &[]), None, "no run reported an error");
        assert_eq!(RunSplit::new(&[0.01; 6], &[0.004]), None, "no spread");
    }

    #[test]
    fn shorter_runs_cost_rounds_only_through_the_within_part() {
        let s = split(1.0, 0.02);
        assert!((s.rounds_factor(1.0) - 1.0).abs() < 1e-12);
        // A fifth of the length: 0.98 + 0.02·5 = 1.08 times the rounds.
        assert!((s.rounds_factor(0.2) - 1.08).abs() < 1e-12);
        let l = s.shortest_length(1.1);
        assert!((s.rounds_factor(l) - 1.1).abs() < 1e-9 && l < 0.2, "{l}");
        // Where the run's own error is all there is, no shorter run is free.
        assert_eq!(split(1.0, 1.0).shortest_length(1.1), 1.0 / 1.1);
        assert_eq!(split(1.0, 2.0).within_share(), 1.0);
    }

    #[test]
    fn the_best_length_balances_fixed_cost_against_within_run_noise() {
        let s = split(0.01, 0.0001);
        let t = s.best_measure_secs(5.0, 2.0, 4).unwrap();
        // minutes ∝ (between + within·t0/t)·(fixed + n·t), least where its derivative is 0.
        let cost = |t: f64| (0.0099 + 0.0005 / t) * (2.0 + 4.0 * t);
        assert!(cost(t) < cost(t * 1.05) && cost(t) < cost(t * 0.95), "{t}");
        assert_eq!(split(0.01, 0.01).best_measure_secs(5.0, 2.0, 4), None);
        assert_eq!(s.best_measure_secs(5.0, 0.0, 4), None);
    }

    /// Between 0.01, within 0.0001 at 1 s, four benchmarks each warming up 1 s and nothing
    /// else fixed: t = sqrt(0.0001·1·(0 + 4·1) / (0.01·4·1)) = 0.1 s. A warm-up as long as the
    /// measuring (`per_measured_sec` 2, none fixed) and 4 s of start-up instead:
    /// t = sqrt(0.0001·4 / (0.01·4·2)) = 0.0707 s.
    #[test]
    fn a_warm_up_per_benchmark_is_a_cost_no_length_shrinks() {
        let s = split(0.0101, 0.0001);
        let warm = RunCost {
            fixed_secs: 0.0,
            benchmarks: 4,
            warm_up_secs: 1.0,
            per_measured_sec: 1.0,
        };
        let t = s.best_measure_secs_for(1.0, &warm).unwrap();
        assert!((t - 0.1).abs() < 1e-9, "{t}");
        // The same as a fixed 4 s counted without a warm-up.
        assert!((s.best_measure_secs(1.0, 4.0, 4).unwrap() - t).abs() < 1e-12);
        let scaled = RunCost {
            fixed_secs: 4.0,
            benchmarks: 4,
            warm_up_secs: 0.0,
            per_measured_sec: 2.0,
        };
        let t = s.best_measure_secs_for(1.0, &scaled).unwrap();
        assert!((t - 0.005f64.sqrt()).abs() < 1e-9, "{t}");
        // minutes ∝ (between + within/t)·(4 + 8t), least where its derivative is 0.
        let cost = |t: f64| (0.01 + 0.0001 / t) * (4.0 + 8.0 * t);
        assert!(cost(t) < cost(t * 1.05) && cost(t) < cost(t * 0.95));
        let nothing_stays = RunCost {
            fixed_secs: 0.0,
            warm_up_secs: 0.0,
            ..warm
        };
        assert_eq!(s.best_measure_secs_for(1.0, &nothing_stays), None);
    }

    /// Runs of 10 s measuring 4 benchmarks 1 s each after 1 s warm-ups: 2 s fixed. Warming up
    /// 0.2 s and measuring 0.1 s then costs 2 + 4·0.3 = 3.2 s a run, for 0.0101/… rounds.
    #[test]
    fn the_minutes_compare_rounds_times_seconds_per_run() {
        let now = RunCost::from_run_secs(10.0, 1.0, 4, 1.0, 1.0).unwrap();
        assert_eq!(now.fixed_secs, 2.0);
        assert_eq!(now.secs(1.0), 10.0);
        assert_eq!(
            RunCost::from_run_secs(7.0, 1.0, 4, 1.0, 1.0),
            None,
            "more than the run"
        );
        let then = now.with_warm_up(0.2);
        assert!((then.secs(0.1) - 3.2).abs() < 1e-12);
        let s = split(0.0101, 0.0001);
        // Rounds: (0.01 + 0.0001·10)/0.0101 = 1.0891; time: 3.2/10.
        let f = s.minutes_factor(1.0, &now, 0.1, &then);
        assert!((f - 1.089_108_910_891_089 * 0.32).abs() < 1e-9, "{f}");
    }

    #[test]
    fn criterion_s_95_percent_bounds_give_the_log_standard_error() {
        // [e^-0.0196, e^0.0196] at 95% is ±1.96 standard errors of 0.01.
        let se = log_se_from_bounds((-0.0196f64).exp(), 0.0196f64.exp(), 0.95).unwrap();
        assert!((se - 0.01).abs() < 1e-4, "{se}");
        assert_eq!(log_se_from_bounds(0.0, 1.0, 0.95), None);
        assert_eq!(log_se_from_bounds(2.0, 1.0, 0.95), None);
    }
}
