//! From samples to verdicts: runs the statistics engine on every series (interleaved pairs from
//! `compare`, independent runs of two recordings from `analyze`), lets the stats crate's gate
//! mark and judge the rows, and gives the exit status.

use std::collections::HashMap;

use benchgate_api::{AnalysisReport, BenchmarkResult, Direction, RuleSet, VerdictKind};
use benchgate_stats::gate::{GateOutcome, mark_gate, outcome};
use benchgate_stats::{AnalysisOptions, BenchmarkAnalysis, NoiseFloor, RoundOrder, StatsError};

pub use benchgate_api::FailOn;

use crate::samples::{OneSided, PairedSamples, RecordedRuns, SeriesKey};

pub use benchgate_stats::gate::MIN_PAIRS_TO_GIVE_UP;

/// Planned pairs `n*` when none is given (docs/statistics.md §2).
pub const DEFAULT_N_STAR: f64 = 20.0;

/// What the two-sample interval of recordings is tuned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsTuning {
    /// The policy's `n*`, fixed before looking: recording more runs and analysing again keeps
    /// the error level over every look.
    Planned,
    /// Each series' own size `mn/(m+n)`: tightest for the runs at hand (a count fixed before
    /// any value was seen, so the one analysis holds its level), but a later look with more
    /// runs is another test.
    RecordedRuns,
}

/// Whether more rounds would not change this row's answer: the rule that ends a session, and
/// what the progress lines call undecided.
pub fn is_decided(r: &BenchmarkResult) -> bool {
    match r.verdict {
        // Slower but neither selected by e-BH nor within the tolerance: more rounds tell.
        VerdictKind::Slower => !benchgate_stats::waits_for_rounds(r),
        // "Below resolution" extrapolates from the spread; a spread from a handful of pairs is
        // too rough (one slow run inflates it) to give up on the benchmark.
        VerdictKind::BelowResolution => r.n >= MIN_PAIRS_TO_GIVE_UP,
        VerdictKind::NoResultYet | VerdictKind::NotAnalysed => false,
        _ => true,
    }
}

/// The statistics policy of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub alpha: f64,
    pub n_star: f64,
    /// Policy minimum of the margin M, in percent.
    pub min_effect_pct: f64,
    /// The gate's tolerance as a fraction ([`benchgate_stats::AnalysisOptions::tolerance`]);
    /// `None` waits for equivalence.
    pub tolerance: Option<f64>,
    /// The suite's per-benchmark rules (`.benchgate.toml`), first match wins; what the
    /// service's gate applies.
    pub rules: Vec<benchgate_api::BenchmarkRule>,
    /// n* planned per benchmark from an A/A floor, as the service plans a comparison; a
    /// benchmark without one uses `n_star`.
    pub planned: std::collections::BTreeMap<String, u64>,
    /// Recordings with one run on a side: judge them with the other side's spread
    /// ([`benchgate_stats::AnalysisOptions::assume_equal_spread`]); off, they have no interval.
    pub assume_equal_spread: bool,
    /// The tail guard's share ([`benchgate_stats::AnalysisOptions::rare_slow_runs`]); `None`:
    /// off.
    pub rare_slow_runs: Option<f64>,
    /// `[gate] gate_on`: which tier gates ([`benchgate_api::RuleSet::gating`]).
    pub gate_on: benchgate_api::GateOn,
}

/// The engine's analysis of one series, kept beside the results for the margin note.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: SeriesKey,
    pub unit: String,
    /// The analysis, or why it could not analyse (e.g. fewer than 2 pairs).
    pub analysis: Result<BenchmarkAnalysis, StatsError>,
}

/// Every row of a comparison: the engine's analyses and the results people read, in the same
/// order, with the one-sided benchmarks after them.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub alpha: f64,
    pub rows: Vec<Row>,
    /// Every row as `--json` prints it, gate marks set by `benchgate_stats::gate`.
    pub results: Vec<BenchmarkResult>,
    /// `--claim` and `--claims-from` answered from `results`.
    pub claims: Vec<benchgate_api::ClaimAnswer>,
}

impl Evaluation {
    /// The stable JSON report: every row, analysed or not, with its reason when not.
    pub fn report(&self) -> AnalysisReport {
        AnalysisReport {
            alpha: self.alpha,
            benchmarks: self.results.clone(),
            claims: self.claims.clone(),
        }
    }

    /// Whether every gated row has a verdict other than "no result yet", so more rounds would
    /// not change the answer. Rows that cannot be analysed yet (too few pairs) are undecided.
    pub fn all_decided(&self) -> bool {
        let mut gated = self.results.iter().filter(|r| r.gated).peekable();
        gated.peek().is_some() && gated.all(is_decided)
    }

    /// Whether every row of the benchmarks `named` picks is decided, gated or not: `--until`
    /// stops on the rows a user names.
    pub fn named_decided(&self, named: impl Fn(&str) -> bool) -> bool {
        let mut rows = self.results.iter().filter(|r| named(&r.name)).peekable();
        rows.peek().is_some() && rows.all(is_decided)
    }

    /// Keeps a row "below this runner's resolution" once the session gave up on it
    /// ([`benchgate_stats::gate::hold_given_up`]); `given_up` carries the rows from one
    /// evaluation of the session to the next.
    pub fn hold_given_up(&mut self, given_up: &mut std::collections::BTreeSet<(String, String)>) {
        benchgate_stats::gate::hold_given_up(&mut self.results, given_up);
    }

    /// The benchmarks with a gated row still undecided, each once, in report order.
    pub fn undecided_benchmarks(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in self.results.iter().filter(|r| r.gated && !is_decided(r)) {
            if !names.contains(&r.name) {
                names.push(r.name.clone());
            }
        }
        names
    }

    /// How many benchmarks the rows name.
    pub fn benchmark_count(&self) -> usize {
        self.results
            .iter()
            .map(|r| r.name.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }

    /// What the gate concludes under `fail_on`.
    pub fn outcome(&self, fail_on: FailOn) -> GateOutcome {
        outcome(&self.results, fail_on)
    }

    /// Whether the gate fails.
    pub fn has_regression(&self, fail_on: FailOn) -> bool {
        self.outcome(fail_on) == GateOutcome::Fail
    }
}

/// Analyses every series. `floors` gives a noise floor per series (from A/A data) where known.
pub fn evaluate(
    samples: &PairedSamples,
    policy: &Policy,
    floors: &HashMap<SeriesKey, NoiseFloor>,
) -> Evaluation {
    let rules = RuleSet::new(&policy.rules).gating(policy.gate_on);
    let rows: Vec<Row> = samples
        .series()
        .iter()
        .map(|s| {
            // Rounds of `compare` carry their run order; fit no order effect where it is
            // unknown rather than assume ABBA and report one that may not exist.
            let order = RoundOrder::BaseFirst(if s.base_first.len() == s.base.len() {
                s.base_first.clone()
            } else {
                vec![true; s.base.len()]
            });
            let options = options(policy, &rules, &s.key, s.direction, order);
            Row {
                key: s.key.clone(),
                unit: s.unit.clone(),
                analysis: benchgate_stats::analyze_pairs(
                    &s.base,
                    &s.head,
                    &options,
                    floors.get(&s.key),
                ),
            }
        })
        .collect();
    let pairs: Vec<usize> = samples.series().iter().map(|s| s.base.len()).collect();
    let directions: Vec<Direction> = samples.series().iter().map(|s| s.direction).collect();
    judged(policy, rows, &directions, &pairs, samples.one_sided())
}

/// Analyses every series of two sets of recordings as independent runs
/// ([`benchgate_stats::analyze_runs`]): nothing pairs them, and drift between the recordings is
/// not cancelled. A series with one run on each side has no interval and is not analysed.
pub fn evaluate_runs(
    runs: &RecordedRuns,
    policy: &Policy,
    floors: &HashMap<SeriesKey, NoiseFloor>,
    tuning: RunsTuning,
) -> Evaluation {
    let rules = RuleSet::new(&policy.rules).gating(policy.gate_on);
    let rows: Vec<Row> = runs
        .series()
        .iter()
        .map(|s| {
            let mut options = options(policy, &rules, &s.key, s.direction, RoundOrder::Abba);
            if tuning == RunsTuning::RecordedRuns {
                let (m, n) = (s.base.len() as f64, s.head.len() as f64);
                options.n_star = (m * n / (m + n)).max(1.0);
            }
            let floor = floors.get(&s.key);
            let analysis = if runs.is_exact(s) {
                // A deterministic count needs no replication: one run per side is exact.
                let runs = (s.base.len(), s.head.len());
                benchgate_stats::analyze_exact_counts(s.base[0], s.head[0], runs, &options, floor)
            } else {
                benchgate_stats::analyze_runs(&s.base, &s.head, &options, floor)
            };
            Row {
                key: s.key.clone(),
                unit: s.unit.clone(),
                analysis,
            }
        })
        .collect();
    let sizes: Vec<usize> = runs
        .series()
        .iter()
        .map(|s| s.base.len().min(s.head.len()))
        .collect();
    let directions: Vec<Direction> = runs.series().iter().map(|s| s.direction).collect();
    let mut eval = judged(policy, rows, &directions, &sizes, runs.one_sided());
    for (r, s) in eval.results.iter_mut().zip(runs.series()) {
        r.runs = Some([s.base.len(), s.head.len()]);
    }
    eval
}

/// The engine's options for one series under `policy` (and the rule that matches its name).
fn options(
    policy: &Policy,
    rules: &RuleSet,
    key: &SeriesKey,
    direction: Direction,
    order: RoundOrder,
) -> AnalysisOptions {
    AnalysisOptions {
        alpha: policy.alpha,
        n_star: benchgate_stats::counts::n_star(
            &key.metric,
            policy
                .planned
                .get(&key.benchmark)
                .map_or(policy.n_star, |&n| n.max(2) as f64),
        ),
        min_effect: rules
            .min_effect(&key.benchmark)
            .unwrap_or(policy.min_effect_pct / 100.0),
        order,
        direction,
        tolerance: policy.tolerance,
        assume_equal_spread: policy.assume_equal_spread,
        rare_slow_runs: benchgate_stats::counts::tail_guard(&key.metric, policy.rare_slow_runs),
        ..AnalysisOptions::default()
    }
}

/// The rows as people read them, one-sided ones after, marked by the gate.
fn judged(
    policy: &Policy,
    rows: Vec<Row>,
    directions: &[Direction],
    sizes: &[usize],
    one_sided: &[OneSided],
) -> Evaluation {
    let mut results: Vec<BenchmarkResult> = rows
        .iter()
        .zip(directions.iter().zip(sizes))
        .map(|(row, (direction, n))| result_of(row, *direction, *n))
        .chain(one_sided.iter().map(one_sided_result))
        .collect();
    mark_gate(
        &mut results,
        policy.alpha,
        &RuleSet::new(&policy.rules).gating(policy.gate_on),
    );
    Evaluation {
        alpha: policy.alpha,
        rows,
        results,
        claims: Vec::new(),
    }
}

/// The row people read: the analysis, or why there is none.
fn result_of(row: &Row, direction: Direction, pairs: usize) -> BenchmarkResult {
    let (benchmark, metric) = (&row.key.benchmark, &row.key.metric);
    match &row.analysis {
        Ok(a) => a.to_result(benchmark, metric, &row.unit),
        Err(e) => {
            let mut r = BenchmarkResult::unanalysed(
                benchmark,
                metric,
                &row.unit,
                direction,
                VerdictKind::NotAnalysed,
                e.to_string(),
            );
            r.n = pairs;
            r
        }
    }
}

fn one_sided_result(s: &OneSided) -> BenchmarkResult {
    BenchmarkResult::only_in(
        s.side,
        &s.key.benchmark,
        &s.key.metric,
        &s.unit,
        s.direction,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evaluation(verdict: VerdictKind, n: usize) -> Evaluation {
        let mut r = BenchmarkResult::unanalysed(
            "parse",
            "time",
            "ns",
            Direction::LowerIsBetter,
            verdict,
            String::new(),
        );
        (r.n, r.gated, r.rounds_needed) = (n, true, Some(900));
        Evaluation {
            alpha: 0.05,
            rows: Vec::new(),
            results: vec![r],
            claims: Vec::new(),
        }
    }

    #[test]
    fn a_row_given_up_stays_below_resolution_until_its_interval_decides() {
        let mut given_up = std::collections::BTreeSet::new();
        // Too few pairs to give up: nothing is held.
        evaluation(VerdictKind::BelowResolution, 5).hold_given_up(&mut given_up);
        let mut later = evaluation(VerdictKind::NoResultYet, 6);
        later.hold_given_up(&mut given_up);
        assert_eq!(later.results[0].verdict, VerdictKind::NoResultYet);

        evaluation(VerdictKind::BelowResolution, MIN_PAIRS_TO_GIVE_UP).hold_given_up(&mut given_up);
        let mut later = evaluation(VerdictKind::NoResultYet, 14);
        later.hold_given_up(&mut given_up);
        assert_eq!(later.results[0].verdict, VerdictKind::BelowResolution);
        assert_eq!(later.results[0].rounds_needed, None);
        assert!(later.all_decided());
        let mut decided = evaluation(VerdictKind::NotSlower, 20);
        decided.hold_given_up(&mut given_up);
        assert_eq!(decided.results[0].verdict, VerdictKind::NotSlower);
    }
}
