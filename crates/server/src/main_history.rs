//! The default branch's history: its steps put in the order the branch moved, the chain of
//! paired ratios built from them (docs/statistics.md, "Main's history"), anchor comparisons for
//! creep, and the regressions both raise.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use benchgate_api::agent::{Anchor, StoredComparisonConfig};
use benchgate_stats::chain::{ChainStep, chain};
use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, MainInfo, MainKind, MainSeries, NewComparison,
    NewJob, Priority, RepositoryId,
};
use benchgate_store::{Store, StoreError};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::comparison_analysis::{ALPHA, NStarPlan, pair_samples};

/// The series a comparison belongs to, when it is part of a branch's history.
pub fn series_of(c: &Comparison) -> Option<MainSeries> {
    let main = c.main.as_ref()?;
    Some(MainSeries {
        repository_id: c.repository_id,
        branch: main.branch.clone(),
        runner_label: c.runner_label.clone(),
        suite: main.suite.clone(),
    })
}

fn in_series(c: &Comparison, series: &MainSeries) -> bool {
    series_of(c).as_ref() == Some(series)
}

/// A series' steps that count (not folded away, not cancelled), in the order the branch
/// moved: each segment starts at a step whose base no other step reached, and follows base →
/// head from there. A step whose base is no earlier step's head (a force push, a step that
/// failed) starts a new segment.
pub fn ordered_steps<'a>(
    comparisons: &'a [Comparison],
    series: &MainSeries,
) -> Vec<Vec<&'a Comparison>> {
    let mut left: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| in_series(c, series))
        .filter(|c| c.main.as_ref().is_some_and(|m| m.kind == MainKind::Step))
        .filter(|c| {
            !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
        })
        .collect();
    left.sort_by_key(|c| c.id);
    let mut segments = Vec::new();
    while !left.is_empty() {
        let root = left
            .iter()
            .position(|s| {
                !left
                    .iter()
                    .any(|o| o.head_sha == s.base_sha && o.id != s.id)
            })
            .unwrap_or(0);
        let mut segment = vec![left.remove(root)];
        while let Some(next) = left
            .iter()
            .position(|s| s.base_sha == segment[segment.len() - 1].head_sha)
        {
            segment.push(left.remove(next));
        }
        segments.push(segment);
    }
    segments
}

/// The branch's compared commits in order: each segment's base, then every commit its steps
/// cover (a folded step covers several).
pub fn commit_sequence(segments: &[Vec<&Comparison>]) -> Vec<String> {
    let mut seq: Vec<String> = Vec::new();
    for segment in segments {
        if let Some(first) = segment.first()
            && !seq.contains(&first.base_sha)
        {
            seq.push(first.base_sha.clone());
        }
        for step in segment {
            let commits = step
                .main
                .as_ref()
                .map(|m| m.commits.clone())
                .unwrap_or_default();
            for c in commits.into_iter().chain([step.head_sha.clone()]) {
                if !seq.contains(&c) {
                    seq.push(c);
                }
            }
        }
    }
    seq
}

/// The commit an anchor comparison of a series compares the branch's newest compared commit
/// with; `None` when there is no history yet or the anchor is that commit itself.
pub fn resolve_anchor(
    segments: &[Vec<&Comparison>],
    anchor: Anchor,
    now: DateTime<Utc>,
) -> Option<(String, String)> {
    let seq = commit_sequence(segments);
    let head = segments.last()?.last()?.head_sha.clone();
    let at = seq.iter().position(|c| *c == head)?;
    let base = match anchor {
        Anchor::Commits(n) => seq[at.saturating_sub(n as usize)].clone(),
        Anchor::Days(days) => {
            let cutoff = now - chrono::TimeDelta::days(i64::from(days));
            segments
                .iter()
                .flatten()
                .filter(|s| s.created_at <= cutoff)
                .map(|s| s.head_sha.clone())
                .next_back()
                .unwrap_or_else(|| seq[0].clone())
        }
    };
    (base != head).then_some((base, head))
}

/// How many compared commits lie after `base` up to and including `head`.
pub fn commits_between(seq: &[String], base: &str, head: &str) -> Vec<String> {
    let from = seq.iter().position(|c| c == base);
    let to = seq.iter().position(|c| c == head);
    match (from, to) {
        (Some(f), Some(t)) if f < t => seq[f + 1..=t].to_vec(),
        _ => vec![head.to_owned()],
    }
}

/// Creates an anchor comparison of a series: its newest step's head against `base` (or the
/// series' `[main] anchor` when `base` is `None`), on the series' label, with its newest
/// config. `None` when there is nothing to compare.
pub async fn schedule_anchor(
    store: &Arc<dyn Store>,
    max_attempts: i64,
    series: &MainSeries,
    base: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<ComparisonId>, StoreError> {
    let all = store
        .main_comparisons(series.repository_id, &series.branch)
        .await?;
    let segments = ordered_steps(&all, series);
    let Some(newest) = segments.last().and_then(|s| s.last()).copied() else {
        return Ok(None);
    };
    let stored = newest.config.clone();
    let settings = stored.main.clone().unwrap_or_default();
    let (base, head) = match base {
        Some(b) if b != newest.head_sha => (b.to_owned(), newest.head_sha.clone()),
        Some(_) => return Ok(None),
        None => match resolve_anchor(&segments, settings.anchor, now) {
            // One commit apart, the anchor comparison would repeat that commit's step.
            Some((base, head))
                if commits_between(&commit_sequence(&segments), &base, &head).len() > 1 =>
            {
                (base, head)
            }
            _ => return Ok(None),
        },
    };
    let active = all.iter().any(|c| {
        in_series(c, series)
            && c.main.as_ref().is_some_and(|m| m.kind == MainKind::Anchor)
            && c.base_sha == base
            && c.head_sha == head
            && !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled | ComparisonState::Failed
            )
    });
    if active {
        return Ok(None);
    }
    let seq = commit_sequence(&segments);
    let rounds = i64::from(stored.config.benchmark.rounds);
    let config = StoredComparisonConfig {
        github: None,
        ..stored
    };
    let created = match store
        .create_comparison(&NewComparison {
            repository_id: series.repository_id,
            pr_number: None,
            base_sha: base.clone(),
            head_sha: head.clone(),
            runner_label: series.runner_label.clone(),
            config,
            planned_rounds: newest.planned_rounds,
            jobs: vec![NewJob {
                rounds,
                priority: Priority::HISTORY,
                max_attempts,
                origin: None,
            }],
            main: Some(MainInfo {
                branch: series.branch.clone(),
                kind: MainKind::Anchor,
                suite: series.suite.clone(),
                commits: commits_between(&seq, &base, &head),
            }),
            notify: Vec::new(),
        })
        .await
    {
        Ok(created) => created,
        // Another replica scheduled it a moment ago.
        Err(StoreError::Conflict(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    tracing::info!(comparison = %created.id, base = %base, head = %head, label = %series.runner_label, "anchor comparison scheduled");
    Ok(Some(created.id))
}

/// Schedules the anchor comparison of every series whose `[main] schedule` is due: none run
/// within the schedule, and the branch moved since the last one.
pub async fn schedule_due_anchors(
    store: &Arc<dyn Store>,
    max_attempts: i64,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut scheduled = 0;
    for series in store.main_series().await? {
        let all = store
            .main_comparisons(series.repository_id, &series.branch)
            .await?;
        let segments = ordered_steps(&all, &series);
        let Some(newest) = segments.last().and_then(|s| s.last()) else {
            continue;
        };
        let settings = newest.config.main.clone().unwrap_or_default();
        let Some(hours) = settings.schedule_hours.filter(|_| settings.enabled) else {
            continue;
        };
        let last_anchor = all
            .iter()
            .filter(|c| in_series(c, &series))
            .filter(|c| c.main.as_ref().is_some_and(|m| m.kind == MainKind::Anchor))
            .max_by_key(|c| c.id);
        let due = match last_anchor {
            None => true,
            Some(a) => {
                a.head_sha != newest.head_sha
                    && a.created_at + chrono::TimeDelta::hours(i64::from(hours)) <= now
            }
        };
        if due
            && schedule_anchor(store, max_attempts, &series, None, now)
                .await?
                .is_some()
        {
            scheduled += 1;
        }
    }
    Ok(scheduled)
}

/// Asks every running culprit search for its next step. The store wakes a search when a
/// comparison it waits on ends; this covers one that ended before the search noted the wait.
pub(crate) async fn wake_searches(store: &Arc<dyn Store>) -> Result<(), StoreError> {
    for id in store.running_bisections().await? {
        store
            .enqueue_outbox(&benchgate_store::model::NewOutboxMessage::bisection_step(
                id,
            ))
            .await?;
    }
    Ok(())
}

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
    for c in all.iter().filter(|c| {
        in_series(c, series) && c.main.as_ref().is_some_and(|m| m.kind == MainKind::Anchor)
    }) {
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
    use benchgate_store::model::RepositoryId;

    fn step(
        id: i64,
        base: &str,
        head: &str,
        state: ComparisonState,
        commits: &[&str],
    ) -> Comparison {
        Comparison {
            id: ComparisonId(id),
            repository_id: RepositoryId(1),
            repository: "o/r".into(),
            pr_number: None,
            base_sha: base.into(),
            head_sha: head.into(),
            runner_label: "l".into(),
            config: serde_json::from_value(
                serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            planned_rounds: None,
            state,
            check_run_id: None,
            rounds_generation: 0,
            check_run_generation: 0,
            check_run_completed: false,
            main: Some(MainInfo {
                branch: "main".into(),
                kind: MainKind::Step,
                suite: String::new(),
                commits: commits.iter().map(|c| (*c).to_owned()).collect(),
            }),
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    fn series() -> MainSeries {
        MainSeries {
            repository_id: RepositoryId(1),
            branch: "main".into(),
            runner_label: "l".into(),
            suite: String::new(),
        }
    }

    #[test]
    fn steps_follow_the_branch_not_the_order_they_were_created_in() {
        use ComparisonState::*;
        // c1→c2 was scheduled before c0→c1 (outbox rows run out of order); c2→c3 was folded.
        let all = vec![
            step(1, "c1", "c2", Done, &["c2"]),
            step(2, "c0", "c1", Done, &["c1"]),
            step(3, "c2", "c3", Superseded, &["c3"]),
            step(4, "c2", "c4", Done, &["c3", "c4"]),
            step(5, "x9", "x10", Done, &["x10"]),
        ];
        let segments = ordered_steps(&all, &series());
        let ids: Vec<Vec<i64>> = segments
            .iter()
            .map(|s| s.iter().map(|c| c.id.0).collect())
            .collect();
        assert_eq!(ids, vec![vec![2, 1, 4], vec![5]]);
        let seq = commit_sequence(&segments);
        assert_eq!(seq, ["c0", "c1", "c2", "c3", "c4", "x9", "x10"]);
        assert_eq!(commits_between(&seq, "c1", "c4"), ["c2", "c3", "c4"]);
    }

    #[test]
    fn an_anchor_counts_back_along_the_compared_commits() {
        use ComparisonState::*;
        let all = vec![
            step(1, "c0", "c1", Done, &["c1"]),
            step(2, "c1", "c2", Done, &["c2"]),
            step(3, "c2", "c4", Done, &["c3", "c4"]),
        ];
        let segments = ordered_steps(&all, &series());
        let now = Utc::now();
        assert_eq!(
            resolve_anchor(&segments, Anchor::Commits(2), now),
            Some(("c2".into(), "c4".into()))
        );
        assert_eq!(
            resolve_anchor(&segments, Anchor::Commits(100), now),
            Some(("c0".into(), "c4".into()))
        );
        // Nothing is 30 days old: the oldest compared commit.
        assert_eq!(
            resolve_anchor(&segments, Anchor::Days(30), now),
            Some(("c0".into(), "c4".into()))
        );
    }

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
