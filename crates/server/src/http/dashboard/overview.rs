//! `/`: which runners are up, how much work waits, and what recent comparisons found.

use std::collections::BTreeMap;

use askama::Template;
use axum::extract::State;
use axum::response::Html;
use benchgate_api::{BenchmarkResult, VerdictKind};
use benchgate_stats::words::BenchmarkStanding;
use benchgate_store::{
    Comparison, ComparisonFilter, Job, QueueDepth, Runner, RunnerId, Store, StoredResult,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::format::standing_class;
use super::render;
pub use crate::runner_status::RunnerStatus;
use crate::runner_status::running_job;
use crate::{ApiError, AppState};
use benchgate_stats::words::{self, short_sha};

/// Comparisons listed on the front page.
const RECENT: i64 = 20;

/// A runner as the front page and `GET /api/v1/runners` show it.
#[derive(Debug, Clone, Serialize)]
pub struct RunnerSummary {
    pub name: String,
    pub labels: Vec<String>,
    pub status: RunnerStatus,
    pub last_seen_at: Option<DateTime<Utc>>,
    /// The job it is running, if any.
    pub running_job: Option<i64>,
    pub fingerprint: Option<benchgate_api::MachineFingerprint>,
    /// Set while the runner's A/A canaries claim changes credibly more often than α.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_flag: Option<String>,
    #[serde(skip)]
    pub last_seen: String,
}

impl RunnerSummary {
    /// Summarises `runner` given the jobs running now.
    pub fn new(runner: &Runner, active: &[Job], now: DateTime<Utc>) -> Self {
        let running_job = running_job(runner, active);
        let status = RunnerStatus::of(runner, running_job, now);
        Self {
            name: runner.name.clone(),
            labels: runner.labels.clone(),
            status,
            last_seen_at: runner.last_seen_at,
            running_job,
            fingerprint: runner.fingerprint.clone(),
            audit_flag: None,
            last_seen: runner
                .last_seen_at
                .map_or_else(|| "never".into(), |t| words::age((now - t).num_seconds())),
        }
    }
}

/// How many of a comparison's benchmark results reached one verdict.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictCount {
    pub verdict: VerdictKind,
    pub count: usize,
}

/// One count of a comparison's benchmarks as the list shows it: `2 slower`, coloured.
#[derive(Debug, Clone)]
pub struct Pill {
    pub text: String,
    pub class: &'static str,
}

/// A comparison as the front page and `GET /api/v1/comparisons` list it.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonSummary {
    pub id: i64,
    pub repository: String,
    pub pr_number: Option<i64>,
    pub base_sha: String,
    pub head_sha: String,
    pub runner_label: String,
    /// `pull_request`, `merge_group`, `main_step`, `main_anchor`, `canary`, `layout_session`
    /// or `plain`.
    pub kind: &'static str,
    pub state: &'static str,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Counted from the stored results, never recomputed.
    pub verdicts: Vec<VerdictCount>,
    /// Its benchmarks counted per runner as the PR comment's headline counts them.
    #[serde(skip)]
    pub pills: Vec<Pill>,
    #[serde(skip)]
    pub created: String,
    /// `#42`, `merge queue: #11, #12`, or `—`: where the comparison came from.
    #[serde(skip)]
    pub pr_label: String,
}

impl ComparisonSummary {
    /// The base sha, shortened for display.
    pub fn base_short(&self) -> &str {
        short_sha(&self.base_sha)
    }

    /// The head sha, shortened for display.
    pub fn head_short(&self) -> &str {
        short_sha(&self.head_sha)
    }
}

/// The newest comparisons matching `filter`, with their verdicts counted from the stored results.
pub async fn comparison_summaries(
    store: &dyn Store,
    filter: &ComparisonFilter,
    limit: i64,
    now: DateTime<Utc>,
) -> Result<Vec<ComparisonSummary>, ApiError> {
    let mut out = Vec::new();
    for c in store.find_comparisons(filter, limit).await? {
        let results = store.comparison_results(c.id).await?;
        let mut counts: BTreeMap<u8, VerdictCount> = BTreeMap::new();
        for r in &results {
            let kind = r.result.verdict;
            counts
                .entry(verdict_rank(kind))
                .or_insert(VerdictCount {
                    verdict: kind,
                    count: 0,
                })
                .count += 1;
        }
        let pills = pills(&results);
        out.push(summarise(&c, counts.into_values().collect(), pills, now));
    }
    Ok(out)
}

/// The comment's headline as pills: each runner's benchmarks counted by where they stand
/// (`words::standing_counts`), the runners' counts added up; "no results yet" without any.
fn pills(results: &[StoredResult]) -> Vec<Pill> {
    let mut runners: Vec<RunnerId> = results.iter().map(|r| r.runner_id).collect();
    runners.sort();
    runners.dedup();
    let mut counts: BTreeMap<BenchmarkStanding, usize> = BTreeMap::new();
    for runner in runners {
        let rows: Vec<BenchmarkResult> = results
            .iter()
            .filter(|r| r.runner_id == runner)
            .map(|r| r.result.clone())
            .collect();
        for (standing, n) in words::standing_counts(&rows) {
            *counts.entry(standing).or_default() += n;
        }
    }
    if counts.is_empty() {
        return vec![Pill {
            text: words::headline(&[]),
            class: "muted",
        }];
    }
    BenchmarkStanding::ALL
        .into_iter()
        .filter_map(|standing| {
            counts.get(&standing).map(|n| Pill {
                text: format!("{n} {}", standing.words()),
                class: standing_class(standing),
            })
        })
        .collect()
}

fn summarise(
    c: &Comparison,
    verdicts: Vec<VerdictCount>,
    pills: Vec<Pill>,
    now: DateTime<Utc>,
) -> ComparisonSummary {
    ComparisonSummary {
        id: c.id.0,
        repository: c.repository.clone(),
        pr_number: c.pr_number,
        base_sha: c.base_sha.clone(),
        head_sha: c.head_sha.clone(),
        runner_label: c.runner_label.clone(),
        kind: c.kind.as_str(),
        state: c.state.as_str(),
        created_at: c.created_at,
        updated_at: c.updated_at,
        verdicts,
        pills,
        created: words::age((now - c.created_at).num_seconds()),
        pr_label: pr_label(c),
    }
}

/// Which PR a comparison belongs to, with merge-queue comparisons labelled as such.
pub fn pr_label(c: &Comparison) -> String {
    if let Some(n) = c.pr_number {
        return format!("#{n}");
    }
    let Some(group) = &c.config.merge_group else {
        return "—".to_owned();
    };
    let prs: Vec<String> = group
        .prs
        .iter()
        .filter(|pr| group.step_of.is_none() || pr.sha == c.head_sha)
        .map(crate::tasks::group_pr_name)
        .collect();
    match group.step_of {
        None => format!("merge queue: {}", prs.join(", ")),
        Some(_) => format!("merge queue, {}'s commit", prs.join(", ")),
    }
}

/// Regressions first: the order a maintainer wants to read them in.
fn verdict_rank(kind: VerdictKind) -> u8 {
    match kind {
        VerdictKind::Slower => 0,
        VerdictKind::Faster => 1,
        VerdictKind::Exact => 2,
        VerdictKind::Equivalent | VerdictKind::NotSlower => 3,
        VerdictKind::NoResultYet => 4,
        VerdictKind::BelowResolution => 5,
        VerdictKind::NotAnalysed => 6,
        VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => 7,
    }
}

/// Every runner, summarised against the jobs running now.
pub async fn runner_summaries(
    store: &dyn Store,
    now: DateTime<Utc>,
) -> Result<Vec<RunnerSummary>, ApiError> {
    let active = store.active_jobs().await?;
    let mut summaries = Vec::new();
    for runner in store.list_runners().await? {
        let mut summary = RunnerSummary::new(&runner, &active, now);
        summary.audit_flag = audit_flag(store, &runner).await?;
        summaries.push(summary);
    }
    Ok(summaries)
}

/// The runner's audit warning, if it is flagged.
pub async fn audit_flag(
    store: &dyn Store,
    runner: &benchgate_store::Runner,
) -> Result<Option<String>, ApiError> {
    let audit = crate::audit::runner_audit(store, runner).await?;
    Ok(crate::audit::flag_words(&audit))
}

#[derive(Template)]
#[template(path = "dashboard/index.html")]
struct OverviewPage {
    runners: Vec<RunnerSummary>,
    queue: QueueDepth,
    comparisons: Vec<ComparisonSummary>,
}

/// The front page: runners, queue depth, recent comparisons; or, on an empty installation,
/// what to do first.
pub async fn page(State(app): State<AppState>) -> Result<Html<String>, ApiError> {
    let now = Utc::now();
    let page = OverviewPage {
        runners: runner_summaries(app.store.as_ref(), now).await?,
        queue: app.store.queue_depth().await?,
        comparisons: comparison_summaries(
            app.store.as_ref(),
            &ComparisonFilter::default(),
            RECENT,
            now,
        )
        .await?,
    };
    render(&page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::result;

    fn stored(runner: i64, result: BenchmarkResult) -> StoredResult {
        StoredResult {
            runner_id: RunnerId(runner),
            result,
            updated_at: crate::report::fixtures::now(),
        }
    }

    /// The list counts benchmarks as the comment's headline does: a benchmark whose time and
    /// instructions are both slower is one slower benchmark, an unchanged exact count is no
    /// change, and each runner's benchmarks count once per runner.
    #[test]
    fn pills_count_benchmarks_as_the_headline_does() {
        let text = |results: &[StoredResult]| -> Vec<String> {
            pills(results).into_iter().map(|p| p.text).collect()
        };
        let time = result("parse", VerdictKind::Slower, 6.5, [4.1, 9.0]);
        let mut instructions = time.clone();
        instructions.metric = "instructions".into();
        let mut allocations = result("render", VerdictKind::Exact, 0.0, [0.0, 0.0]);
        allocations.metric = "allocations".into();
        let one = [
            stored(1, time.clone()),
            stored(1, instructions),
            stored(1, allocations),
        ];
        assert_eq!(text(&one), ["1 slower", "1 no change"]);
        assert_eq!(pills(&one)[0].class, "slower");
        let two = [stored(1, time.clone()), stored(2, time)];
        assert_eq!(text(&two), ["2 slower"]);
        assert_eq!(text(&[]), ["no results yet"]);
    }
}
