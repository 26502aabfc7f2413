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
    /// regardless (start-up, warm-up, analysis). Rounds scale with `between + within·t0/t` and a
    /// run's cost with `fixed + benchmarks·t`; their product is least at
    /// `t = sqrt(within·t0·fixed / (between·benchmarks))`. `None` when the between part is
    /// nil (longer runs then always pay) or an input is not positive.
    pub fn best_measure_secs(
        &self,
        measured_secs: f64,
        fixed_secs: f64,
        benchmarks: usize,
    ) -> Option<f64> {
        let between = self.per_run - self.within.min(self.per_run);
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(between) && ok(measured_secs) && ok(fixed_secs) && benchmarks > 0) {
            return None;
        }
        let w = self.within * measured_secs;
        Some((w * fixed_secs / (between * benchmarks as f64)).sqrt())
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

    #[test]
    fn criterion_s_95_percent_bounds_give_the_log_standard_error() {
        // [e^-0.0196, e^0.0196] at 95% is ±1.96 standard errors of 0.01.
        let se = log_se_from_bounds((-0.0196f64).exp(), 0.0196f64.exp(), 0.95).unwrap();
        assert!((se - 0.01).abs() < 1e-4, "{se}");
        assert_eq!(log_se_from_bounds(0.0, 1.0, 0.95), None);
        assert_eq!(log_se_from_bounds(2.0, 1.0, 0.95), None);
    }
}
