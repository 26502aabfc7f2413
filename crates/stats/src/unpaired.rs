//! Two recordings made at different times: independent samples of whole runs, not pairs.
//!
//! The unit of replication is a run (a process, fork or launch); values inside one run share
//! its layout, frequency and load, so each run counts once, as its mean. The base and head runs
//! of two recordings were not taken together, so nothing pairs them: the change is the
//! difference of the mean log run values, with the two-sample form of the mixture interval in
//! Welch's form (each side's own spread, `se = √(s_b²/m + s_h²/n)`, Welch–Satterthwaite degrees
//! of freedom), so a head that got noisier, or run counts that differ, do not narrow it. With
//! one run on a side that side has no spread of its own: the row has no interval unless the
//! caller assumes both sides equally spread (`assume_equal_spread`), and then the pooled form is
//! used. Drift
//! between the recordings is not cancelled; only interleaved rounds (`compare`, the service)
//! cancel it.

use crate::analysis::{AnalysisOptions, BenchmarkAnalysis, check_options, exact_analysis};
use crate::confidence_sequence::{MixtureBoundary, welch_sizes};
use crate::error::{SampleSide, StatsError};
use crate::fixed_interval::t_quantile;
use crate::floor::{NoiseFloor, practical_margin};
use crate::interval::Interval;
use crate::paired::{geometric_mean, has_zero_spread, percent_from_log, validate_samples};
use crate::verdict::{DecisionRule, Verdict};

/// Log values, their mean and sum of squared deviations.
struct LogSummary {
    n: usize,
    mean: f64,
    ss: f64,
}

fn log_summary(values: &[f64]) -> LogSummary {
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    LogSummary {
        n: logs.len(),
        mean,
        ss: logs.iter().map(|x| (x - mean).powi(2)).sum(),
    }
}

/// Pooled sd of two log samples, with `m + n − 2` degrees of freedom.
fn pooled_sd(a: &LogSummary, b: &LogSummary) -> f64 {
    ((a.ss + b.ss) / (a.n + b.n - 2) as f64).sqrt()
}

/// Analyses one benchmark and metric from the run values of two recordings: `base[i]` is the
/// value of base run i, `head[j]` of head run j, in no particular order. Fewer than one run on
/// a side, or one run on each, give [`StatsError::OneRunPerSide`]: no spread, so no interval.
/// One run on a side gives [`StatsError::SpreadUnknown`] unless `opts.assume_equal_spread`.
pub fn analyze_runs(
    base: &[f64],
    head: &[f64],
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
) -> Result<BenchmarkAnalysis, StatsError> {
    check_options(opts)?;
    let (m, n) = (base.len(), head.len());
    if m == 0 || n == 0 || m + n < 3 {
        return Err(StatsError::OneRunPerSide { base: m, head: n });
    }
    let boundary = MixtureBoundary::tuned(opts.alpha, opts.n_star)?;
    let margin = practical_margin(opts.min_effect.ln_1p(), floor);
    if m >= 2 && n >= 2 && has_zero_spread(base) && has_zero_spread(head) {
        // A deterministic metric: every run of a side reports the same value.
        return analyze_exact_counts(base[0], head[0], (m, n), opts, floor);
    }
    validate_samples(base, SampleSide::Base)?;
    validate_samples(head, SampleSide::Head)?;
    let (b, h) = (log_summary(base), log_summary(head));
    let mean_log = h.mean - b.mean;
    let spread = Spread::of(&b, &h);
    let (m64, n64) = (m as u64, n as u64);
    let rule = DecisionRule {
        tolerance: opts.tolerance.map(f64::ln_1p),
        ..DecisionRule::new(margin, opts.direction)
    };
    let cap = opts.rounds_cap;
    if matches!(spread, Spread::Pooled(_)) && !opts.assume_equal_spread {
        return Err(StatsError::SpreadUnknown {
            side: if m == 1 {
                SampleSide::Base
            } else {
                SampleSide::Head
            },
            more_if_equal: runs_needed(&boundary, mean_log, &spread, (m, n), &rule, cap),
        });
    }
    let interval = Interval::around(mean_log, spread.half_width(&boundary, m64, n64));
    let fixed_interval = Interval::around(
        mean_log,
        t_quantile(opts.alpha, spread.nu(m64, n64))? * spread.standard_error(m64, n64),
    );
    let at_cap = spread.half_width(&boundary, m64 + cap, n64 + cap);
    let verdict = rule.decide(interval).unwrap_or_else(|| {
        if !rule.resolves(at_cap, mean_log) {
            return Verdict::BelowResolution;
        }
        match runs_needed(&boundary, mean_log, &spread, (m, n), &rule, cap) {
            Some(more) => Verdict::NoResultYet {
                rounds_needed: more,
            },
            None => Verdict::BelowResolution,
        }
    });
    let ln_e = spread.ln_bayes_factor(&boundary, mean_log, m64, n64);
    let e_value = ln_e.exp().min(crate::SATURATED);
    Ok(BenchmarkAnalysis {
        n: m.min(n),
        runs: Some((m, n)),
        alpha: opts.alpha,
        base_center: geometric_mean(base)?,
        head_center: geometric_mean(head)?,
        mean_log,
        // The spread of one base run against one head run, as a pair's would be.
        sd_log: spread.one_against_one(),
        change_pct: percent_from_log(mean_log),
        interval,
        current_interval: interval,
        fixed_interval,
        hodges_lehmann: None,
        estimators_disagree: false,
        margin,
        // A layout floor belongs to a runner's builds; recordings are judged without one.
        layout: 0.0,
        tolerance: opts.tolerance,
        floor: floor.copied(),
        verdict,
        e_value,
        anytime_p_value: (1.0 / e_value).min(1.0),
        sequence_crossed: false,
        contradicted: false,
        direction: opts.direction,
        outliers: Vec::new(),
        drift: None,
        boundary,
        modes: None,
        basis: crate::analysis::Basis::Mean,
        mode_shift: None,
        guard_runs: None,
    })
}

/// The spread of the difference: each side's own (Welch) when both have two runs or more, the
/// pooled one when a side has a single run and so no spread of its own.
enum Spread {
    Welch { base: f64, head: f64 },
    Pooled(f64),
}

impl Spread {
    fn of(b: &LogSummary, h: &LogSummary) -> Self {
        if b.n >= 2 && h.n >= 2 {
            let sd = |x: &LogSummary| (x.ss / (x.n - 1) as f64).sqrt();
            Spread::Welch {
                base: sd(b),
                head: sd(h),
            }
        } else {
            Spread::Pooled(pooled_sd(b, h))
        }
    }

    fn half_width(&self, boundary: &MixtureBoundary, m: u64, n: u64) -> f64 {
        match *self {
            Spread::Welch { base, head } => boundary
                .welch_half_width(base, head, m, n)
                .unwrap_or(f64::INFINITY),
            Spread::Pooled(sd) => boundary.two_sample_half_width(sd, m, n),
        }
    }

    fn ln_bayes_factor(&self, boundary: &MixtureBoundary, diff: f64, m: u64, n: u64) -> f64 {
        match *self {
            Spread::Welch { base, head } => {
                boundary.welch_ln_bayes_factor(diff, base, head, m, n, 0.0)
            }
            Spread::Pooled(sd) => boundary.two_sample_ln_bayes_factor(diff, sd, m, n, 0.0),
        }
    }

    /// Degrees of freedom of the spread.
    fn nu(&self, m: u64, n: u64) -> f64 {
        match *self {
            Spread::Welch { base, head } => welch_sizes(base, head, m, n).map_or(1.0, |w| w.2),
            Spread::Pooled(_) => (m + n - 2) as f64,
        }
    }

    /// The standard error of the difference of the mean logs.
    fn standard_error(&self, m: u64, n: u64) -> f64 {
        let (m, n) = (m as f64, n as f64);
        match *self {
            Spread::Welch { base, head } => (base * base / m + head * head / n).sqrt(),
            Spread::Pooled(sd) => sd * (1.0 / m + 1.0 / n).sqrt(),
        }
    }

    /// The spread of one base run against one head run.
    fn one_against_one(&self) -> f64 {
        match *self {
            Spread::Welch { base, head } => (base * base + head * head).sqrt(),
            Spread::Pooled(sd) => sd * std::f64::consts::SQRT_2,
        }
    }
}

/// More runs of each side until the half-width reaches the nearest decision
/// `max(|d̄|, M − |d̄|)`; `None` when not even `cap` more would.
fn runs_needed(
    boundary: &MixtureBoundary,
    mean: f64,
    spread: &Spread,
    (m, n): (usize, usize),
    rule: &DecisionRule,
    cap: u64,
) -> Option<u64> {
    let target = rule.target(mean)?;
    (1..=cap).find(|&k| spread.half_width(boundary, m as u64 + k, n as u64 + k) <= target)
}

/// A counter its harness counts deterministically (allocations per op, instructions under
/// callgrind), with every value of a side equal: compared exactly, whatever the number of
/// runs, one on each side included — a count needs no replication to be known. `runs` are the
/// runs of base and head.
pub fn analyze_exact_counts(
    base: f64,
    head: f64,
    runs: (usize, usize),
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
) -> Result<BenchmarkAnalysis, StatsError> {
    check_options(opts)?;
    for (value, side) in [(base, SampleSide::Base), (head, SampleSide::Head)] {
        if !value.is_finite() || value < 0.0 {
            return Err(StatsError::NonPositive {
                side,
                index: 0,
                value,
            });
        }
    }
    exact_analysis(base, head, runs.0.min(runs.1), Some(runs), opts, floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> AnalysisOptions {
        AnalysisOptions::default()
    }

    /// A/A: 20 quiet base runs and one head run from a noisier process. Pooling would borrow
    /// the base's spread for the head and claim a change; by default there is no interval.
    #[test]
    fn one_run_on_a_side_has_no_interval_unless_equal_spreads_are_assumed() {
        let base: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i % 5) * 0.2).collect();
        let head = [104.0];
        let e = analyze_runs(&base, &head, &opts(), None).unwrap_err();
        assert!(
            matches!(
                e,
                StatsError::SpreadUnknown {
                    side: SampleSide::Head,
                    more_if_equal: Some(1)
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "one run on the head: its spread is unknown; run it at least once more (if it is as \
             spread as the other side, ~1 more run of each would settle it)"
        );
        let head = [110.0];
        let assumed = AnalysisOptions {
            assume_equal_spread: true,
            ..opts()
        };
        let a = analyze_runs(&base, &head, &assumed, None).unwrap();
        assert_eq!(
            a.verdict,
            Verdict::Slower { practical: true },
            "the claim pooling makes"
        );
        let e = analyze_runs(&head, &base, &opts(), None).unwrap_err();
        assert!(e.to_string().starts_with("one run on the base"), "{e}");
    }

    #[test]
    fn one_run_per_side_has_no_interval() {
        let e = analyze_runs(&[1.0], &[2.0], &opts(), None).unwrap_err();
        assert_eq!(e, StatsError::OneRunPerSide { base: 1, head: 1 });
        assert!(e.to_string().starts_with("one run per side"), "{e}");
    }

    #[test]
    fn the_interval_is_the_two_sample_mixture_around_the_difference_of_means() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5, 99.5, 101.5];
        let head: Vec<f64> = base.iter().map(|v| v * 1.3).collect();
        let a = analyze_runs(&base, &head, &opts(), None).unwrap();
        assert!((a.mean_log - 1.3f64.ln()).abs() < 1e-12);
        assert_eq!(a.runs, Some((8, 8)));
        assert_eq!(a.verdict, Verdict::Slower { practical: true });
        // Pooled sd of the logs; both sides have the same spread here.
        let logs: Vec<f64> = base.iter().map(|v: &f64| v.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 8.0;
        let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 7.0).sqrt();
        let half = a.boundary.two_sample_half_width(sd, 8, 8);
        assert!((a.interval.upper - a.mean_log - half).abs() < 1e-12);
        // Wider than the fixed-n t interval: it holds at every number of runs.
        assert!(a.interval.lower < a.fixed_interval.lower);
    }

    #[test]
    fn the_two_sample_boundary_with_equal_halves_of_pairs_matches_its_definition() {
        // The set where the two-sample Bayes factor stays below 1/alpha is the interval.
        let b = MixtureBoundary::tuned(0.05, 20.0).unwrap();
        let (sd, m, n) = (0.05, 12, 9);
        let half = b.two_sample_half_width(sd, m, n);
        let at = |x: f64| b.two_sample_ln_bayes_factor(x, sd, m, n, 0.0);
        let threshold = 20f64.ln();
        assert!((at(half) - threshold).abs() < 1e-9, "{}", at(half));
        assert!(at(0.99 * half) < threshold && at(1.01 * half) > threshold);
    }

    #[test]
    fn an_undecided_row_says_how_many_more_runs_of_each_side() {
        let base = [100.0, 104.0, 98.0, 102.0];
        let head = [103.0, 107.0, 101.0, 105.0];
        let a = analyze_runs(&base, &head, &opts(), None).unwrap();
        let Verdict::NoResultYet { rounds_needed } = a.verdict else {
            panic!("{:?}", a.verdict)
        };
        let b = log_summary(&base);
        let h = log_summary(&head);
        let sd = pooled_sd(&b, &h);
        let target = a.mean_log.abs().max(a.margin - a.mean_log.abs());
        let k = rounds_needed;
        assert!(a.boundary.two_sample_half_width(sd, 4 + k, 4 + k) <= target);
        assert!(a.boundary.two_sample_half_width(sd, 3 + k, 3 + k) > target);
    }

    #[test]
    fn constant_counters_are_exact() {
        let a = analyze_runs(&[16.0, 16.0], &[24.0, 24.0, 24.0], &opts(), None).unwrap();
        assert_eq!(a.verdict, Verdict::Exact);
        assert!((a.change_pct - 50.0).abs() < 1e-9);
        let z = analyze_runs(&[0.0, 0.0], &[8.0, 8.0], &opts(), None).unwrap();
        assert_eq!(z.mean_log, f64::INFINITY);
    }
}
