//! From paired samples to verdicts: runs the statistics engine on every series, marks which
//! series gate the result, and decides the exit status. Shared by `compare` and `analyze`.

use std::collections::HashMap;

use benchgate_api::{AnalysisReport, VerdictKind};
use benchgate_stats::{
    AnalysisOptions, BenchmarkAnalysis, NoiseFloor, RoundOrder, StatsError, Verdict, analyze_pairs,
    gate_selection, gated_mask,
};
use serde::{Deserialize, Serialize};

use crate::samples::{PairedSamples, Series, SeriesKey};

/// Pairs needed before a "below this runner's resolution" verdict may end a session.
pub const MIN_PAIRS_TO_GIVE_UP: usize = 10;

/// When a comparison fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// A gated row (each benchmark's time metric) is slower and selected by e-BH across benchmarks.
    #[default]
    Regression,
    /// A gated benchmark is slower by more than the margin M.
    PracticalRegression,
    /// Never fail (report only).
    Never,
}

/// The statistics policy of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub alpha: f64,
    pub n_star: f64,
    /// Policy minimum of the margin M, in percent.
    pub min_effect_pct: f64,
}

/// The analysis of one benchmark and metric.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: SeriesKey,
    pub unit: String,
    /// Whether this row decides the gate and when a session stops (the benchmark's time metric).
    pub gated: bool,
    /// The engine's analysis, or why it could not analyse (e.g. fewer than 2 pairs).
    pub analysis: Result<BenchmarkAnalysis, StatsError>,
    /// Selected by e-BH over the gated rows' e-values: the multiple-benchmark gate.
    pub ebh_selected: bool,
}

impl Row {
    /// The verdict, when the row could be analysed.
    pub fn verdict(&self) -> Option<Verdict> {
        self.analysis.as_ref().ok().map(|a| a.verdict)
    }

    /// Whether this row is a regression for the gate under `fail_on`.
    pub fn is_regression(&self, fail_on: FailOn) -> bool {
        let Some(Verdict::Slower { practical }) = self.verdict() else {
            return self.exact_regression(fail_on);
        };
        self.gated
            && self.ebh_selected
            && match fail_on {
                FailOn::Regression => true,
                FailOn::PracticalRegression => practical,
                FailOn::Never => false,
            }
    }

    fn exact_regression(&self, fail_on: FailOn) -> bool {
        let Ok(a) = &self.analysis else { return false };
        self.gated
            && a.verdict == Verdict::Exact
            && a.mean_log > 0.0
            && match fail_on {
                FailOn::Regression => true,
                FailOn::PracticalRegression => a.is_practical(),
                FailOn::Never => false,
            }
    }
}

/// Every row of a comparison.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub alpha: f64,
    pub rows: Vec<Row>,
}

impl Evaluation {
    /// The stable JSON report: every row the engine could analyse.
    pub fn report(&self) -> AnalysisReport {
        AnalysisReport {
            alpha: self.alpha,
            benchmarks: self
                .rows
                .iter()
                .filter_map(|r| {
                    let a = r.analysis.as_ref().ok()?;
                    let mut result = a.to_result(&r.key.benchmark, &r.key.metric, &r.unit);
                    result.gated = r.gated;
                    result.selected = r.ebh_selected;
                    Some(result)
                })
                .collect(),
        }
    }

    /// Whether every gated row has a verdict other than "no result yet", so more rounds would
    /// not change the answer. Rows that cannot be analysed yet (too few pairs) are undecided.
    pub fn all_decided(&self) -> bool {
        let mut gated = self.rows.iter().filter(|r| r.gated).peekable();
        gated.peek().is_some()
            && gated.all(|r| match &r.analysis {
                // "Below resolution" extrapolates from the spread; a spread from a handful of
                // pairs is too rough (one slow run inflates it) to give up on the benchmark.
                Ok(a) if a.verdict == Verdict::BelowResolution => a.n >= MIN_PAIRS_TO_GIVE_UP,
                Ok(a) => a.verdict.kind() != VerdictKind::NoResultYet,
                Err(_) => false,
            })
    }

    /// Whether the gate fails.
    pub fn has_regression(&self, fail_on: FailOn) -> bool {
        self.rows.iter().any(|r| r.is_regression(fail_on))
    }
}

/// Analyses every series. `floors` gives a noise floor per series (from A/A data) where known.
pub fn evaluate(
    samples: &PairedSamples,
    policy: &Policy,
    floors: &HashMap<SeriesKey, NoiseFloor>,
) -> Evaluation {
    let primary = primary_metrics(samples.series());
    let mut rows: Vec<Row> = samples
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
                ..AnalysisOptions::default()
            };
            Row {
                key: s.key.clone(),
                unit: s.unit.clone(),
                gated: primary.contains(&s.key),
                analysis: analyze_pairs(&s.base, &s.head, &options, floors.get(&s.key)),
                ebh_selected: false,
            }
        })
        .collect();
    select_by_ebh(&mut rows, policy.alpha);
    Evaluation {
        alpha: policy.alpha,
        rows,
    }
}

/// Marks the gated rows e-BH selects; with one gated row its own interval decides alone.
fn select_by_ebh(rows: &mut [Row], alpha: f64) {
    let gated: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].gated && rows[i].analysis.is_ok())
        .collect();
    let e: Vec<f64> = gated
        .iter()
        .map(|&i| rows[i].analysis.as_ref().map_or(0.0, |a| a.e_value))
        .collect();
    for (&i, s) in gated.iter().zip(gate_selection(&e, alpha)) {
        rows[i].ebh_selected = s;
    }
}

/// Per series, whether it gates (the stats crate's rule, shared with the server's check run).
fn primary_metrics(series: &[Series]) -> Vec<SeriesKey> {
    let keys: Vec<(&str, &str)> = series
        .iter()
        .map(|s| (s.key.benchmark.as_str(), s.key.metric.as_str()))
        .collect();
    series
        .iter()
        .zip(gated_mask(&keys))
        .filter(|(_, gated)| *gated)
        .map(|(s, _)| s.key.clone())
        .collect()
}
