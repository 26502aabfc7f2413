//! A branch's history as the API and the dashboard show it: per series, the chain of paired
//! ratios per benchmark, its anchor comparisons, and the same as CSV.

use benchgate_store::model::ComparisonKind;
use std::collections::{BTreeMap, HashMap};

use benchgate_stats::chain::{ChainStep, chain};
use benchgate_store::model::{Comparison, ComparisonState, MainSeries, RepositoryId};
use benchgate_store::{Store, StoreError};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{in_series, ordered_steps, series_of};
use crate::comparison_analysis::{ALPHA, NStarPlan, pair_samples};

/// The chain's value at one step, as the API and the dashboard show it.
#[derive(Debug, Clone, Serialize)]
pub struct ChainPointView {
    pub comparison: i64,
    pub base: String,
    pub head: String,
    /// Commits this step covers (more than one when pushes were folded).
    pub commits: usize,
    pub pairs: usize,
    /// This step alone, at its share of alpha.
    pub step_change_pct: f64,
    pub step_interval_pct: [Option<f64>; 2],
    /// The segment's first base against this head; simultaneous over the whole segment.
    pub chain_change_pct: f64,
    pub chain_interval_pct: [Option<f64>; 2],
    pub at: DateTime<Utc>,
}

/// One benchmark's chain over one segment of the branch.
#[derive(Debug, Clone, Serialize)]
pub struct ChainSegmentView {
    /// The commit the segment's chain is relative to.
    pub anchor: String,
    pub points: Vec<ChainPointView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchmarkChainView {
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    pub segments: Vec<ChainSegmentView>,
}

/// One anchor comparison and what it found.
#[derive(Debug, Clone, Serialize)]
pub struct AnchorView {
    pub comparison: i64,
    pub state: String,
    pub base: String,
    pub head: String,
    /// The compared commits between them: what a creep is spread over.
    pub commits: Vec<String>,
    pub results: Vec<AnchorResultView>,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnchorResultView {
    pub benchmark: String,
    pub metric: String,
    pub change_pct: Option<f64>,
    pub interval_pct: [Option<f64>; 2],
    pub verdict: benchgate_api::VerdictKind,
    pub practical: bool,
    /// Its change and verdict as the report words them, for the page.
    #[serde(skip)]
    pub words: String,
}

/// A series' whole history: the chains, the anchor comparisons and the steps still to run.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesHistory {
    pub repository: String,
    pub branch: String,
    pub runner_label: String,
    /// `""` for a lone `[benchmark]`.
    pub suite: String,
    pub alpha: f64,
    pub benchmarks: Vec<BenchmarkChainView>,
    pub anchors: Vec<AnchorView>,
    /// Steps queued or running, oldest first.
    pub pending: Vec<i64>,
}

/// Every series of one branch of a repository.
pub async fn branch_history(
    store: &dyn Store,
    repository_id: RepositoryId,
    repository: &str,
    branch: &str,
) -> Result<Vec<SeriesHistory>, StoreError> {
    let all = store.main_comparisons(repository_id, branch).await?;
    let mut series: Vec<MainSeries> = all.iter().filter_map(series_of).collect();
    series.sort();
    series.dedup();
    let mut out = Vec::with_capacity(series.len());
    for s in series {
        out.push(series_history(store, &all, &s, repository).await?);
    }
    Ok(out)
}

async fn series_history(
    store: &dyn Store,
    all: &[Comparison],
    series: &MainSeries,
    repository: &str,
) -> Result<SeriesHistory, StoreError> {
    let segments = ordered_steps(all, series);
    let mut pending = Vec::new();
    // (benchmark, metric) → unit and the done steps' log-ratios.
    let mut per_benchmark: BTreeMap<(String, String), (String, Vec<StepRatios>)> = BTreeMap::new();
    let mut step_of: HashMap<usize, &Comparison> = HashMap::new();
    let mut index = 0usize;
    let mut segment_of_step: Vec<usize> = Vec::new();
    for (segment_no, segment) in segments.iter().enumerate() {
        for step in segment {
            if !step.state.is_finished() {
                pending.push(step.id.0);
                continue;
            }
            if step.state != ComparisonState::Done {
                continue;
            }
            let plan = NStarPlan {
                per_benchmark: step.config.n_star.clone(),
                fallback: step.planned_rounds,
            };
            let mut best: BTreeMap<(String, String), crate::series_cache::Pairs> = BTreeMap::new();
            for runner in store.comparison_samples(step.id).await? {
                for (key, pairs) in pair_samples(&runner.samples) {
                    if best
                        .get(&key)
                        .is_none_or(|b| b.base.len() < pairs.base.len())
                    {
                        best.insert(key, pairs);
                    }
                }
            }
            for ((benchmark, metric), pairs) in best {
                let ratios: Vec<f64> = pairs
                    .base
                    .iter()
                    .zip(&pairs.head)
                    .filter(|(b, h)| **b > 0.0 && **h > 0.0)
                    .map(|(b, h)| (h / b).ln())
                    .collect();
                let n_star = plan.n_star(&benchmark);
                let entry = per_benchmark
                    .entry((benchmark, metric))
                    .or_insert_with(|| (pairs.unit.clone(), Vec::new()));
                entry.1.push(StepRatios {
                    index,
                    ratios,
                    n_star,
                    segment: segment_no,
                });
            }
            step_of.insert(index, step);
            segment_of_step.push(segment_no);
            index += 1;
        }
    }
    let mut benchmarks = Vec::new();
    for ((benchmark, metric), (unit, steps)) in per_benchmark {
        let mut segments_view: Vec<ChainSegmentView> = Vec::new();
        let mut by_segment: BTreeMap<usize, Vec<&StepRatios>> = BTreeMap::new();
        for s in &steps {
            by_segment.entry(s.segment).or_default().push(s);
        }
        for (_, these) in by_segment {
            let chain_steps: Vec<ChainStep> = these
                .iter()
                .map(|s| ChainStep {
                    log_ratios: &s.ratios,
                    n_star: s.n_star,
                })
                .collect();
            let Ok(points) = chain(&chain_steps, ALPHA) else {
                continue;
            };
            let first = step_of[&these[0].index];
            let mut view = ChainSegmentView {
                anchor: first.base_sha.clone(),
                points: Vec::with_capacity(points.len()),
            };
            for (point, s) in points.iter().zip(&these) {
                let (step, ratios) = (step_of[&s.index], &s.ratios);
                view.points.push(ChainPointView {
                    comparison: step.id.0,
                    base: step.base_sha.clone(),
                    head: step.head_sha.clone(),
                    commits: step.main.as_ref().map_or(1, |m| m.commits.len().max(1)),
                    pairs: ratios.len(),
                    step_change_pct: pct(point.step_estimate),
                    step_interval_pct: [
                        finite_pct(point.step_interval.lower),
                        finite_pct(point.step_interval.upper),
                    ],
                    chain_change_pct: pct(point.estimate),
                    chain_interval_pct: [
                        finite_pct(point.interval.lower),
                        finite_pct(point.interval.upper),
                    ],
                    at: step.updated_at,
                });
            }
            segments_view.push(view);
        }
        benchmarks.push(BenchmarkChainView {
            benchmark,
            metric,
            unit,
            segments: segments_view,
        });
    }
    let mut anchors = Vec::new();
    for c in all
        .iter()
        .filter(|c| in_series(c, series) && c.kind() == ComparisonKind::MainAnchor)
    {
        let results = store
            .comparison_results(c.id)
            .await?
            .into_iter()
            .filter(|r| r.result.gated)
            .map(|r| AnchorResultView {
                words: format!(
                    "{}, {}",
                    benchgate_stats::words::change(&r.result),
                    benchgate_stats::words::verdict(&r.result)
                ),
                benchmark: r.result.name,
                metric: r.result.metric,
                change_pct: r.result.change_pct,
                interval_pct: r.result.interval_pct,
                verdict: r.result.verdict,
                practical: r.result.practical,
            })
            .collect();
        anchors.push(AnchorView {
            comparison: c.id.0,
            state: c.state.as_str().to_owned(),
            base: c.base_sha.clone(),
            head: c.head_sha.clone(),
            commits: c
                .main
                .as_ref()
                .map(|m| m.commits.clone())
                .unwrap_or_default(),
            results,
            at: c.created_at,
        });
    }
    Ok(SeriesHistory {
        repository: repository.to_owned(),
        branch: series.branch.clone(),
        runner_label: series.runner_label.clone(),
        suite: series.suite.clone(),
        alpha: ALPHA,
        benchmarks,
        anchors,
        pending,
    })
}

/// One done step's paired log-ratios of one benchmark and metric.
struct StepRatios {
    index: usize,
    ratios: Vec<f64>,
    n_star: f64,
    segment: usize,
}

fn pct(log_ratio: f64) -> f64 {
    log_ratio.exp_m1() * 100.0
}

fn finite_pct(log_ratio: f64) -> Option<f64> {
    log_ratio.is_finite().then(|| pct(log_ratio))
}

/// The history as CSV: one row per benchmark and step.
pub fn history_csv(history: &[SeriesHistory]) -> String {
    let mut out = String::from(
        "repository,branch,runner_label,suite,benchmark,metric,unit,segment_anchor,comparison,\
         base,head,commits,pairs,step_change_pct,step_lower_pct,step_upper_pct,chain_change_pct,\
         chain_lower_pct,chain_upper_pct\n",
    );
    let num = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_default();
    for s in history {
        for b in &s.benchmarks {
            for segment in &b.segments {
                for p in &segment.points {
                    let fields = [
                        csv_field(&s.repository),
                        csv_field(&s.branch),
                        csv_field(&s.runner_label),
                        csv_field(&s.suite),
                        csv_field(&b.benchmark),
                        csv_field(&b.metric),
                        csv_field(&b.unit),
                        segment.anchor.clone(),
                        p.comparison.to_string(),
                        p.base.clone(),
                        p.head.clone(),
                        p.commits.to_string(),
                        p.pairs.to_string(),
                        num(Some(p.step_change_pct)),
                        num(p.step_interval_pct[0]),
                        num(p.step_interval_pct[1]),
                        num(Some(p.chain_change_pct)),
                        num(p.chain_interval_pct[0]),
                        num(p.chain_interval_pct[1]),
                    ];
                    out.push_str(&fields.join(","));
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Quotes a CSV field when it holds a comma, quote or newline; a leading `=`, `+`, `-` or `@`
/// is prefixed with `'` so a spreadsheet never runs a benchmark name as a formula.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
