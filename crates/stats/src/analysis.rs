//! The one entry point the CLI and the server both call: base and head samples of one benchmark
//! and metric in, every number the report shows out.

use benchgate_api::{BenchmarkResult, Direction, HodgesLehmannResult, ModeShift, ModeSummary};

use crate::confidence_sequence::{ConfidenceSequence, MixtureBoundary};
use crate::drift::{DriftReport, abba_base_first, drift_regression};
use crate::error::{StatsError, check_alpha};
use crate::fixed_interval::t_interval;
use crate::floor::{NoiseFloor, practical_margin};
use crate::floor_sequence::{FLOOR_ALPHA_SHARE, floor_sequence, spread_upper};
use crate::interval::Interval;
use crate::mode_gate;
pub use crate::mode_gate::Basis;
use crate::modes::{PairedModes, paired_modes};
use crate::outliers::{Outlier, modified_z_outliers};
use crate::paired::{
    geometric_mean, has_zero_spread, mean_sd, paired_log_ratios, percent_from_log,
};
use crate::verdict::{DecisionRule, Progress, Verdict, verdict};
use crate::wilcoxon::{HodgesLehmann, WALSH_LIMIT, hodges_lehmann};
use crate::words;

/// Which side ran first in each round, for the position regression.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RoundOrder {
    /// ABBA: base first in even rounds (0, 2, …), head first in odd ones.
    #[default]
    Abba,
    /// One flag per round: `true` when base ran first (seeded random orders).
    BaseFirst(Vec<bool>),
}

/// Tuning of one analysis; the defaults are the documented policy.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisOptions {
    /// Error level of every interval and test (0.05).
    pub alpha: f64,
    /// Planned pairs `n*` the boundary is tuned for, `g = u(alpha)/n*` (20). Fixed before any
    /// A/B data (from the A/A spread); never re-tuned from the data being judged.
    pub n_star: f64,
    /// Policy minimum of the margin M as a fraction (0.01 = 1%).
    pub min_effect: f64,
    /// Past this many total rounds the verdict is "below this runner's resolution" (1000).
    pub rounds_cap: u64,
    /// Run order of each round (ABBA by default).
    pub order: RoundOrder,
    /// Which way is better for this metric: decides whether a larger head is slower or faster.
    pub direction: Direction,
    /// The gate's tolerance as a fraction (0.05 = 5%): an interval whose worse-side bound is
    /// below `ln(1 + T)` is "not slower than +T%". `None`: no such decision.
    pub tolerance: Option<f64>,
    /// Two recordings with one run on a side ([`crate::analyze_runs`]): judge it with the other
    /// side's spread, assuming both are equally spread. Off: such a row has no interval
    /// ([`crate::StatsError::SpreadUnknown`]), since a noisier single run would make false claims.
    pub assume_equal_spread: bool,
    /// The tail guard (`[gate] rare_slow_runs`): the smallest share of head's runs a slow mode
    /// may have and still be seen before a pass (0.05: 1 run in 20). A pass waits for the runs
    /// [`crate::modes::guard_runs`] asks. `None`: no guard (a head that adds rare slow runs can
    /// pass before one shows).
    pub rare_slow_runs: Option<f64>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            n_star: 20.0,
            min_effect: 0.01,
            rounds_cap: 1000,
            order: RoundOrder::Abba,
            direction: Direction::LowerIsBetter,
            tolerance: None,
            assume_equal_spread: false,
            rare_slow_runs: None,
        }
    }
}

/// Everything the engine says about one benchmark and metric; log-scale unless named `_pct`.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkAnalysis {
    /// Number of pairs (for two recordings, the smaller side's runs).
    pub n: usize,
    /// For two recordings compared unpaired ([`crate::analyze_runs`]): the runs of base and
    /// head. `None` for pairs of interleaved runs.
    pub runs: Option<(usize, usize)>,
    pub alpha: f64,
    /// Geometric mean of the base samples: `head_center / base_center = e^d̄` exactly.
    pub base_center: f64,
    /// Geometric mean of the head samples.
    pub head_center: f64,
    /// Mean log-ratio d̄.
    pub mean_log: f64,
    /// Sample sd of the log-ratios.
    pub sd_log: f64,
    /// `100(e^d̄ − 1)`; `+∞` for a change from zero, which has no percentage (the wire form
    /// says `null`).
    pub change_pct: f64,
    /// What the gate uses: the running intersection of the anytime-valid confidence sequence,
    /// widened just enough to hold the estimate when the latest rounds contradict the earlier
    /// ones (`contradicted`), or the current interval when the sequence crossed itself; the
    /// estimate always lies inside its own interval.
    pub interval: Interval,
    /// The confidence-sequence interval at the current n alone.
    pub current_interval: Interval,
    /// Fixed-n t interval: not safe to peek at.
    pub fixed_interval: Interval,
    /// Hodges–Lehmann with the Wilcoxon signed-rank interval; `None` past the Walsh limit.
    pub hodges_lehmann: Option<HodgesLehmann>,
    /// The HL estimate lies outside the fixed t interval or d̄ outside the Wilcoxon interval:
    /// the mean and the median tell different stories (skew or outliers).
    pub estimators_disagree: bool,
    /// Margin M of practical equivalence.
    pub margin: f64,
    /// Layout band from the floor (0 without a layout calibration): a claim needs the whole
    /// interval beyond it.
    pub layout: f64,
    /// The gate's tolerance this row was judged with, as a fraction (see
    /// [`AnalysisOptions::tolerance`]).
    pub tolerance: Option<f64>,
    /// The floor M came from, if any.
    pub floor: Option<NoiseFloor>,
    pub verdict: Verdict,
    /// Bayes factor at "no change" after the last pair; an e-value for e-BH.
    pub e_value: f64,
    /// Anytime-valid p-value `min(1, min_k 1/BF_k)`.
    pub anytime_p_value: f64,
    /// Two intervals of the sequence were disjoint: the model is violated (e.g. drift).
    pub sequence_crossed: bool,
    /// The running intersection excluded the current estimate (or became empty), so a wider
    /// interval that holds it is reported.
    pub contradicted: bool,
    /// Which way is better for this metric.
    pub direction: Direction,
    /// Flagged (and kept) pairs.
    pub outliers: Vec<Outlier>,
    /// Drift and order regression; `None` with too few pairs.
    pub drift: Option<DriftReport>,
    /// The mixture boundary used, for recomputing half-widths.
    pub boundary: MixtureBoundary,
    /// Slow and typical runs of each side; `None` with too few pairs or an exact metric.
    pub modes: Option<PairedModes>,
    /// What the estimate, the interval and the verdict are of.
    pub basis: Basis,
    /// The slow mode's frequency changed (decided at alpha/2 beside the typical run's).
    pub mode_shift: Option<ModeShift>,
    /// Head runs the tail guard asks before the interval's pass counts, when it held one back.
    pub guard_runs: Option<u64>,
}

pub(crate) fn check_options(opts: &AnalysisOptions) -> Result<(), StatsError> {
    check_alpha(opts.alpha)?;
    if !(opts.min_effect.is_finite() && opts.min_effect >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "min_effect",
            value: opts.min_effect,
            expected: "a finite fraction >= 0",
        });
    }
    Ok(())
}

/// `t = 3.1`, or "an exact fit" when the residuals vanish.
fn t_statistic(t: f64) -> String {
    if t.is_finite() {
        format!("t = {t:.1}")
    } else {
        "an exact fit".to_owned()
    }
}

/// Analyses one benchmark and metric from its paired samples (round order, equal lengths).
pub fn analyze_pairs(
    base: &[f64],
    head: &[f64],
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
) -> Result<BenchmarkAnalysis, StatsError> {
    check_options(opts)?;
    if let Some(exact) = exact_from_zero(base, head, opts, floor)? {
        return Ok(exact);
    }
    let d = paired_log_ratios(base, head)?;
    let n = d.len();
    if n < 2 {
        return Err(StatsError::TooFewPairs {
            found: n,
            needed: 2,
        });
    }
    let margin = practical_margin(opts.min_effect.ln_1p(), floor);
    let layout = crate::floor::layout_band(floor);
    let exact = has_zero_spread(base) && has_zero_spread(head);
    let rule = DecisionRule {
        margin,
        layout,
        tolerance: opts.tolerance.map(f64::ln_1p),
        direction: opts.direction,
    };
    // Slow runs are told apart on the "worse" scale, so a throughput's slow mode is its low one.
    let worse_log = |x: &[f64]| -> Vec<f64> {
        let sign = opts.direction.worse_sign();
        x.iter().map(|v| sign * v.ln()).collect()
    };
    let modes = (!exact)
        .then(|| paired_modes(&worse_log(base), &worse_log(head)))
        .flatten();
    let shared = modes.as_ref().is_some_and(PairedModes::shared);
    // A mode both sides show is the machine's or the benchmark's: the typical run is judged on
    // the pairs in which both runs were typical, the mode's frequency apart, each at alpha/2.
    let typical: Vec<usize> = match &modes {
        Some(m) if shared => (0..n).filter(|&i| m.typical_pairs()[i]).collect(),
        _ => (0..n).collect(),
    };
    let basis = if shared && typical.len() >= crate::modes::MIN_TYPICAL_PAIRS {
        Basis::TypicalRun
    } else {
        Basis::Mean
    };
    // The floor's known-spread sequence (large changes in two or three rounds) spends a share
    // of alpha: half on the spread's bound, half on the sequence.
    let floor_alpha = opts.alpha * FLOOR_ALPHA_SHARE;
    let floor_spread = match (basis, exact) {
        (Basis::Mean, false) => floor.and_then(|f| spread_upper(f, floor_alpha / 2.0)),
        _ => None,
    };
    let (judged, level) = match basis {
        Basis::TypicalRun => (typical.iter().map(|&i| d[i]).collect(), opts.alpha / 2.0),
        Basis::Mean if floor_spread.is_some() => (d.clone(), opts.alpha - floor_alpha),
        Basis::Mean => (d.clone(), opts.alpha),
    };
    let boundary = MixtureBoundary::tuned(level, opts.n_star)?;
    let sequence = ConfidenceSequence::from_log_ratios(boundary, 0.0, &judged)?;
    let summary = mean_sd(&judged)?;
    let judged_n = judged.len();

    let mut contradicted = false;
    let mut floor_e = None;
    let mut mode_shift = None;
    let mut guard = None;
    let (interval, fixed_interval, verdict) = if exact {
        // Deterministic metric: every pair says the same, so the change is known exactly.
        let point = Interval::point(summary.mean);
        (point, point, Verdict::Exact)
    } else {
        let running = sequence.running_interval();
        contradicted = sequence.crossed() || !running.contains(summary.mean);
        // Any superset of the running intersection keeps its error level, so widening it just
        // enough to hold the estimate stays valid. An empty intersection (the sequence crossed
        // itself) has nothing to widen: the current interval is reported.
        let interval = if sequence.crossed() {
            sequence.current_interval()
        } else if contradicted {
            Interval {
                lower: running.lower.min(summary.mean),
                upper: running.upper.max(summary.mean),
            }
        } else {
            running
        };
        let tail_seen = basis == Basis::Mean && modes.as_ref().is_some_and(PairedModes::any);
        let unwidened = interval;
        let interval = match &modes {
            Some(m) if tail_seen => {
                let current = sequence.current_interval();
                mode_gate::tail_interval(
                    interval,
                    current,
                    &d,
                    m,
                    &rule,
                    (opts.alpha, opts.n_star),
                )?
            }
            _ => interval,
        };
        let progress = Progress {
            mean: summary.mean,
            sd: summary.sd,
            n: judged_n as u64,
        };
        let mut v = verdict(interval, &boundary, progress, &rule, opts.rounds_cap);
        if let Some(m) = modes.as_ref().filter(|_| tail_seen) {
            let tuning = (opts.alpha, opts.n_star);
            v = mode_gate::held_pass_forecast(v, unwidened, &d, m, &rule, tuning)?;
        }
        let mut interval = interval;
        if let Some((floor_interval, e)) =
            floor_spread.and_then(|sd| floor_sequence(&d, sd, floor_alpha / 2.0))
        {
            floor_e = Some(e);
            (v, interval) =
                mode_gate::floor_claim(v, interval, floor_interval, summary.mean, &rule);
        }
        if let (Basis::TypicalRun, Some(m)) = (basis, &modes) {
            (v, mode_shift) =
                mode_gate::typical_run_verdict(v, m, interval, &rule, (n, judged_n), opts.alpha);
        }
        if let Some(share) = opts.rare_slow_runs {
            (v, guard) = mode_gate::tail_guard(v, interval, &rule, share, opts.alpha, n);
        }
        (
            interval,
            t_interval(summary.mean, summary.sd, judged_n, opts.alpha)?,
            v,
        )
    };

    let hodges_lehmann = if judged_n <= WALSH_LIMIT {
        Some(hodges_lehmann(&judged, opts.alpha)?)
    } else {
        None
    };
    let estimators_disagree = !exact
        && hodges_lehmann.is_some_and(|hl| {
            !fixed_interval.contains(hl.estimate) || !hl.interval.contains(summary.mean)
        });
    let base_first = base_first_flags(&opts.order, n)?;
    // A deterministic metric has no noise to regress; a fit would only show rounding error.
    let drift = if exact {
        None
    } else {
        drift_regression(&d, &base_first, opts.alpha)?
    };
    let pick = |x: &[f64]| -> Vec<f64> { typical.iter().map(|&i| x[i]).collect() };
    let (base_center, head_center) = match basis {
        Basis::TypicalRun => (geometric_mean(&pick(base))?, geometric_mean(&pick(head))?),
        Basis::Mean => (geometric_mean(base)?, geometric_mean(head)?),
    };
    Ok(BenchmarkAnalysis {
        n,
        runs: None,
        alpha: opts.alpha,
        base_center,
        head_center,
        mean_log: summary.mean,
        sd_log: summary.sd,
        change_pct: percent_from_log(summary.mean),
        interval,
        current_interval: sequence.current_interval(),
        fixed_interval,
        hodges_lehmann,
        estimators_disagree,
        margin,
        layout,
        tolerance: opts.tolerance,
        floor: floor.copied(),
        verdict,
        // Two tests at alpha/2 each: their mean is an e-value, at least 1/alpha when either is
        // at least 2/alpha.
        e_value: match (&modes, basis, floor_e) {
            (Some(m), Basis::TypicalRun, _) => (sequence.e_value() + m.e_more_on_head()) / 2.0,
            // Weighted as alpha is shared: significant at 1/alpha when either sequence is.
            (_, _, Some(e)) => {
                (1.0 - FLOOR_ALPHA_SHARE) * sequence.e_value() + FLOOR_ALPHA_SHARE * e
            }
            _ => sequence.e_value(),
        },
        anytime_p_value: sequence.anytime_p_value(),
        sequence_crossed: sequence.crossed(),
        contradicted,
        direction: opts.direction,
        outliers: modified_z_outliers(&d),
        drift,
        boundary,
        modes,
        basis,
        mode_shift,
        guard_runs: guard,
    })
}

fn base_first_flags(order: &RoundOrder, n: usize) -> Result<Vec<bool>, StatsError> {
    match order {
        RoundOrder::Abba => Ok(abba_base_first(n)),
        RoundOrder::BaseFirst(flags) if flags.len() == n => Ok(flags.clone()),
        RoundOrder::BaseFirst(flags) => Err(StatsError::OrderLength {
            rounds: n,
            flags: flags.len(),
        }),
    }
}

/// A deterministic counter that is zero on a side (`0 B/op` before, `16 B/op` after): no
/// log-ratio exists, but the change is exact. `None` for everything else, which goes through
/// the log-ratio analysis (and a noisy metric with zeros is refused there).
fn exact_from_zero(
    base: &[f64],
    head: &[f64],
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
) -> Result<Option<BenchmarkAnalysis>, StatsError> {
    let constant = |x: &[f64]| x.first().copied().filter(|_| has_zero_spread(x));
    let (Some(b), Some(h)) = (constant(base), constant(head)) else {
        return Ok(None);
    };
    if base.len() != head.len() || base.len() < 2 || (b != 0.0 && h != 0.0) || b < 0.0 || h < 0.0 {
        return Ok(None);
    }
    exact_analysis(b, h, base.len(), None, opts, floor).map(Some)
}

/// The analysis of a deterministic metric: every sample of base is `b`, of head `h` (both
/// non-negative), so the change is known exactly; `runs` as [`BenchmarkAnalysis::runs`].
pub(crate) fn exact_analysis(
    b: f64,
    h: f64,
    n: usize,
    runs: Option<(usize, usize)>,
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
) -> Result<BenchmarkAnalysis, StatsError> {
    // ±∞ on the log scale: from zero no percentage exists; to zero it is −100%.
    let mean_log = if b == h {
        0.0
    } else if b == 0.0 {
        f64::INFINITY
    } else if h == 0.0 {
        f64::NEG_INFINITY
    } else {
        h.ln() - b.ln()
    };
    let boundary = MixtureBoundary::tuned(opts.alpha, opts.n_star)?;
    let point = Interval::point(mean_log);
    let changed = b != h;
    Ok(BenchmarkAnalysis {
        n,
        runs,
        alpha: opts.alpha,
        base_center: b,
        head_center: h,
        mean_log,
        sd_log: 0.0,
        change_pct: percent_from_log(mean_log),
        interval: point,
        current_interval: point,
        fixed_interval: point,
        hodges_lehmann: None,
        estimators_disagree: false,
        margin: practical_margin(opts.min_effect.ln_1p(), floor),
        layout: crate::floor::layout_band(floor),
        tolerance: opts.tolerance,
        floor: floor.copied(),
        verdict: Verdict::Exact,
        e_value: if changed { crate::SATURATED } else { 1.0 },
        anytime_p_value: if changed { 0.0 } else { 1.0 },
        sequence_crossed: false,
        contradicted: false,
        direction: opts.direction,
        outliers: Vec::new(),
        drift: None,
        boundary,
        modes: None,
        basis: Basis::Mean,
        mode_shift: None,
        guard_runs: None,
    })
}

impl BenchmarkAnalysis {
    /// The wire form `benchgate analyze --json` prints; infinite bounds become `null`.
    pub fn to_result(&self, name: &str, metric: &str, unit: &str) -> BenchmarkResult {
        let mut result = BenchmarkResult {
            rule: None,
            runners: Vec::new(),
            name: name.to_owned(),
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            direction: self.direction,
            n: self.n,
            runs: self.runs.map(|(b, h)| [b, h]),
            base_center: Some(self.base_center).filter(|c| crate::storable(*c)),
            head_center: Some(self.head_center).filter(|c| crate::storable(*c)),
            change_pct: crate::storable(self.change_pct).then_some(self.change_pct),
            // A point at ±∞ (a change from or to zero) has no percentage bounds.
            interval_pct: self.interval.to_percent(),
            fixed_interval_pct: self.fixed_interval.to_percent(),
            verdict: self.verdict.kind(),
            practical: self.is_practical(),
            rounds_needed: self.verdict.rounds_needed(),
            e_value: self.e_value,
            // A floor absurd enough to overflow the percentage still serialises as a number.
            margin_pct: Some(self.margin_pct())
                .filter(|m| m.is_finite())
                .map_or(crate::SATURATED, |m| m.min(crate::SATURATED)),
            layout_pct: (self.layout > 0.0)
                .then(|| percent_from_log(self.layout))
                .filter(|p| crate::storable(*p)),
            tolerance_pct: self.tolerance.map(|t| 100.0 * t),
            // A lone row gates alone; `gate::mark_gate` decides for a whole comparison.
            gated: true,
            selected: true,
            hodges_lehmann: self.hodges_lehmann_result(),
            warnings: Vec::new(),
            reason: None,
            modes: self.mode_summary(),
            guard_runs: self.guard_runs,
        };
        // The modes first: they say what the interval is of.
        result.warnings = crate::mode_words::modes(&result)
            .into_iter()
            .chain(self.warnings())
            .collect();
        result
    }

    /// The slow runs of each side in wire form, when either side had one.
    pub fn mode_summary(&self) -> Option<ModeSummary> {
        let m = self.modes.as_ref().filter(|m| m.any())?;
        Some(ModeSummary {
            runs: m.base.slow.len(),
            base_slow: m.base.slow_count(),
            head_slow: m.head.slow_count(),
            slow_pct: m
                .excess
                .map(percent_from_log)
                .filter(|p| crate::storable(*p)),
            typical_run: self.basis == Basis::TypicalRun,
            shift: self.mode_shift,
        })
    }

    /// The Hodges–Lehmann diagnostic in percent; `None` for an exact metric (nothing to
    /// estimate) or past the Walsh limit.
    pub fn hodges_lehmann_result(&self) -> Option<HodgesLehmannResult> {
        let hl = self
            .hodges_lehmann
            .filter(|_| self.verdict != Verdict::Exact)?;
        let estimate_pct = Some(percent_from_log(hl.estimate)).filter(|p| crate::storable(*p))?;
        Some(HodgesLehmannResult {
            estimate_pct,
            interval_pct: hl.interval.to_percent(),
            confidence: hl.achieved_confidence,
        })
    }

    /// Hints beyond the verdict, one short sentence each, most serious first. None of them
    /// changes the verdict: each is a check of the model on this row (docs/statistics.md §5–6).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        // An estimate outside the running interval (`contradicted`) is no sign of trouble at
        // any stated error level, so it gets no hint: the interval is widened to hold it, which
        // stays valid, and the JSON says so. A crossed sequence happens with probability at
        // most alpha when the model holds: that one is worth a line.
        if self.sequence_crossed {
            out.push(
                "the interval sequence crossed itself: the model does not fit (did the machine \
                 or the workload change during the job?); the interval shown is this round's"
                    .to_owned(),
            );
        }
        if let Some(drift) = &self.drift {
            let slope = drift.per_round;
            if slope.significant {
                out.push(format!(
                    "drift: head/base moves {} per round ({})",
                    words::percent(percent_from_log(slope.estimate)),
                    t_statistic(slope.t)
                ));
            }
            if let Some(order) = drift.order.filter(|c| c.significant) {
                // d = ln(head/base) is +β when base ran first: β > 0 means the run in second
                // place is slower by e^β − 1, whichever side it is.
                let p = percent_from_log(order.estimate);
                out.push(format!(
                    "run order matters: the second run of each pair is {} {} ({}); \
                     interleaving cancels it on average",
                    words::unsigned_percent(p),
                    if p > 0.0 { "slower" } else { "faster" },
                    t_statistic(order.t.abs())
                ));
            }
        }
        if let (true, Some(hl)) = (self.estimators_disagree, self.hodges_lehmann) {
            out.push(format!(
                "mean and median disagree (skew or outliers): Hodges–Lehmann {} vs mean {}",
                words::percent(percent_from_log(hl.estimate)),
                words::percent(percent_from_log(self.mean_log))
            ));
        }
        out
    }

    /// Practical: beyond ±M (for an exact change, |d̄| > M).
    pub fn is_practical(&self) -> bool {
        match self.verdict {
            Verdict::Exact => self.mean_log.abs() > self.margin,
            v => v.is_practical(),
        }
    }

    /// M in percent.
    pub fn margin_pct(&self) -> f64 {
        percent_from_log(self.margin)
    }
}
