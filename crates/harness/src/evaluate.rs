//! From paired samples to verdicts: runs the statistics engine on every series, marks which
//! series gate the result, and decides the exit status. Shared by `compare` and `analyze`.

use std::collections::HashMap;

use benchgate_api::{AnalysisReport, VerdictKind};
use benchgate_stats::{
    AnalysisOptions, BenchmarkAnalysis, NoiseFloor, RoundOrder, StatsError, Verdict, analyze_pairs,
    e_benjamini_hochberg,
};
use serde::{Deserialize, Serialize};

use crate::formats::{command, metric};
use crate::samples::{PairedSamples, Series, SeriesKey};

/// Pairs needed before a "below this runner's resolution" verdict may end a session.
pub const MIN_PAIRS_TO_GIVE_UP: usize = 10;

/// When a comparison fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// Any gated benchmark is slower.
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
                    Some(a.to_result(&r.key.benchmark, &r.key.metric, &r.unit))
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
                order: if s.base_first.len() == s.base.len() {
                    RoundOrder::BaseFirst(s.base_first.clone())
                } else {
                    RoundOrder::Abba
                },
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
    if gated.len() <= 1 {
        for i in gated {
            rows[i].ebh_selected = true;
        }
        return;
    }
    let e: Vec<f64> = gated
        .iter()
        .map(|&i| rows[i].analysis.as_ref().map_or(0.0, |a| a.e_value))
        .collect();
    if let Ok(selected) = e_benjamini_hochberg(&e, alpha) {
        for (&i, s) in gated.iter().zip(selected) {
            rows[i].ebh_selected = s;
        }
    }
}

/// Per benchmark, the metric that gates: its time (`time` or the command's `wall_time`) when it
/// has one, otherwise every metric it reports.
fn primary_metrics(series: &[Series]) -> Vec<SeriesKey> {
    let is_time = |m: &str| m == metric::TIME || m == command::WALL_TIME;
    let mut out = Vec::new();
    for s in series {
        let has_time = series
            .iter()
            .any(|o| o.key.benchmark == s.key.benchmark && is_time(&o.key.metric));
        if !has_time || is_time(&s.key.metric) {
            out.push(s.key.clone());
        }
    }
    out
}
