//! `/`: which runners are up, how much work waits, and what recent comparisons found.

use std::collections::BTreeMap;

use askama::Template;
use axum::extract::State;
use axum::response::Html;
use benchgate_api::VerdictKind;
use benchgate_store::{Comparison, ComparisonFilter, Job, JobState, QueueDepth, Runner, Store};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::format::age;
use super::render;
use crate::{ApiError, AppState};
use benchgate_stats::words::short_sha;

/// A runner not seen for this long is offline: agents long-poll and heartbeat far more often.
const OFFLINE_AFTER_SECS: i64 = 120;
/// Comparisons listed on the front page.
const RECENT: i64 = 20;

/// Whether a runner can take work now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunnerStatus {
    Online,
    Busy,
    Offline,
    Revoked,
}

impl RunnerStatus {
    /// Every status, in the order pages list them.
    pub const ALL: [RunnerStatus; 4] = [Self::Online, Self::Busy, Self::Offline, Self::Revoked];

    /// How a status is written on a page (also its CSS class).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Busy => "busy",
            Self::Offline => "offline",
            Self::Revoked => "revoked",
        }
    }
}

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
    #[serde(skip)]
    pub last_seen: String,
}

impl RunnerSummary {
    /// Summarises `runner` given the jobs running now.
    pub fn new(runner: &Runner, active: &[Job], now: DateTime<Utc>) -> Self {
        let running_job = active
            .iter()
            .find(|j| j.state == JobState::Running && j.claimed_by == Some(runner.id))
            .map(|j| j.id.0);
        let recently_seen = runner
            .last_seen_at
            .is_some_and(|t| (now - t).num_seconds() < OFFLINE_AFTER_SECS);
        let status = match (runner.revoked_at, recently_seen, running_job) {
            (Some(_), _, _) => RunnerStatus::Revoked,
            (None, false, _) => RunnerStatus::Offline,
            (None, true, Some(_)) => RunnerStatus::Busy,
            (None, true, None) => RunnerStatus::Online,
        };
        Self {
            name: runner.name.clone(),
            labels: runner.labels.clone(),
            status,
            last_seen_at: runner.last_seen_at,
            running_job,
            fingerprint: runner.fingerprint.clone(),
            last_seen: runner
                .last_seen_at
                .map_or_else(|| "never".into(), |t| age(t, now)),
        }
    }
}

/// How many of a comparison's benchmark results reached one verdict.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictCount {
    pub verdict: VerdictKind,
    pub count: usize,
    #[serde(skip)]
    pub words: &'static str,
    #[serde(skip)]
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
    pub state: &'static str,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Counted from the stored results, never recomputed.
    pub verdicts: Vec<VerdictCount>,
    #[serde(skip)]
    pub created: String,
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
                    words: verdict_short(kind),
                    class: super::format::verdict_class(kind),
                })
                .count += 1;
        }
        out.push(summarise(&c, counts.into_values().collect(), now));
    }
    Ok(out)
}

fn summarise(c: &Comparison, verdicts: Vec<VerdictCount>, now: DateTime<Utc>) -> ComparisonSummary {
    ComparisonSummary {
        id: c.id.0,
        repository: c.repository.clone(),
        pr_number: c.pr_number,
        base_sha: c.base_sha.clone(),
        head_sha: c.head_sha.clone(),
        runner_label: c.runner_label.clone(),
        state: c.state.as_str(),
        created_at: c.created_at,
        updated_at: c.updated_at,
        verdicts,
        created: age(c.created_at, now),
    }
}

/// Regressions first: the order a maintainer wants to read them in.
fn verdict_rank(kind: VerdictKind) -> u8 {
    match kind {
        VerdictKind::Slower => 0,
        VerdictKind::Faster => 1,
        VerdictKind::Exact => 2,
        VerdictKind::Equivalent => 3,
        VerdictKind::NoResultYet => 4,
        VerdictKind::BelowResolution => 5,
        VerdictKind::NotAnalysed => 6,
        VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => 7,
    }
}

/// A verdict in a word or two, as the comparison lists count it.
pub fn verdict_short(kind: VerdictKind) -> &'static str {
    match kind {
        VerdictKind::Slower => "slower",
        VerdictKind::Faster => "faster",
        VerdictKind::Exact => "exact change",
        VerdictKind::Equivalent => "no change",
        VerdictKind::NoResultYet => "no result yet",
        VerdictKind::BelowResolution => "below resolution",
        VerdictKind::NotAnalysed => "not analysed",
        VerdictKind::OnlyInBase | VerdictKind::OnlyInHead => "on one side only",
    }
}

/// Every runner, summarised against the jobs running now.
pub async fn runner_summaries(
    store: &dyn Store,
    now: DateTime<Utc>,
) -> Result<Vec<RunnerSummary>, ApiError> {
    let active = store.active_jobs().await?;
    Ok(store
        .list_runners()
        .await?
        .iter()
        .map(|r| RunnerSummary::new(r, &active, now))
        .collect())
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
