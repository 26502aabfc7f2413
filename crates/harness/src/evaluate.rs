//! From paired samples to verdicts: runs the statistics engine on every series, lets the stats
//! crate's gate mark and judge the rows, and gives the exit status. Shared by `compare` and
//! `analyze`.

use std::collections::HashMap;

use benchgate_api::{AnalysisReport, BenchmarkResult, Direction, VerdictKind};
use benchgate_stats::gate::{GateOutcome, mark_gate, outcome};
use benchgate_stats::{AnalysisOptions, BenchmarkAnalysis, NoiseFloor, RoundOrder, StatsError};

pub use benchgate_api::FailOn;

use crate::samples::{OneSided, PairedSamples, SeriesKey};

/// Pairs needed before a "below this runner's resolution" verdict may end a session.
pub const MIN_PAIRS_TO_GIVE_UP: usize = 10;

/// The statistics policy of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub alpha: f64,
    pub n_star: f64,
    /// Policy minimum of the margin M, in percent.
    pub min_effect_pct: f64,
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
}

impl Evaluation {
    /// The stable JSON report: every row, analysed or not, with its reason when not.
    pub fn report(&self) -> AnalysisReport {
        AnalysisReport {
            alpha: self.alpha,
            benchmarks: self.results.clone(),
        }
    }

    /// Whether every gated row has a verdict other than "no result yet", so more rounds would
    /// not change the answer. Rows that cannot be analysed yet (too few pairs) are undecided.
    pub fn all_decided(&self) -> bool {
        let mut gated = self.results.iter().filter(|r| r.gated).peekable();
        gated.peek().is_some()
            && gated.all(|r| match r.verdict {
                // "Below resolution" extrapolates from the spread; a spread from a handful of
                // pairs is too rough (one slow run inflates it) to give up on the benchmark.
                VerdictKind::BelowResolution => r.n >= MIN_PAIRS_TO_GIVE_UP,
                VerdictKind::NoResultYet | VerdictKind::NotAnalysed => false,
                _ => true,
            })
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
    let rows: Vec<Row> = samples
        .series()
        .iter()
        .map(|s| {
            let options = AnalysisOptions {
                alpha: policy.alpha,
                n_star: policy.n_star,
                min_effect: policy.min_effect_pct / 100.0,
                // Files given to `analyze` carry no run order: fit no order effect rather
                // than assume ABBA and report one that may not exist.
                order: RoundOrder::BaseFirst(if s.base_first.len() == s.base.len() {
                    s.base_first.clone()
                } else {
                    vec![true; s.base.len()]
                }),
                direction: s.direction,
                ..AnalysisOptions::default()
            };
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
    let mut results: Vec<BenchmarkResult> = rows
        .iter()
        .zip(samples.series())
        .map(|(row, s)| result_of(row, s.direction, s.base.len()))
        .chain(samples.one_sided().iter().map(one_sided_result))
        .collect();
    mark_gate(
        &mut results,
        policy.alpha,
        &benchgate_api::RuleSet::default(),
    );
    Evaluation {
        alpha: policy.alpha,
        rows,
        results,
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
