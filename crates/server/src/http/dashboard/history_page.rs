//! `/history?repository=owner/name&branch=main`: the default branch's history per suite and
//! label — each benchmark's chain plotted with its band, every step linked to its comparison
//! and commits, the anchor comparisons that look for creep, and the regressions found. The
//! same data is JSON at `/api/v1/history` and CSV at `/api/v1/history.csv`.

use askama::Template;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse};
use benchgate_store::model::Regression;
use serde::{Deserialize, Serialize};

use super::plot::{self, ChainDot};
use super::render;
use crate::main_history::{SeriesHistory, branch_history, history_csv};
use crate::tasks::SearchView;
use crate::{ApiError, AppState};
use benchgate_stats::words::{self, short_sha};

#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    /// `owner/name`, as the comparisons list names it.
    repository: String,
    /// Defaults to the branch the repository's history was kept for.
    branch: Option<String>,
}

/// A repository branch's history and its regression episodes.
#[derive(Debug, Serialize)]
pub struct HistoryView {
    pub repository: String,
    pub branch: String,
    pub series: Vec<SeriesHistory>,
    pub regressions: Vec<Regression>,
    /// Culprit searches of the branch, newest first.
    pub bisections: Vec<SearchView>,
}

async fn history_view(app: &AppState, q: &HistoryQuery) -> Result<HistoryView, ApiError> {
    let repository = app
        .store
        .repository_by_name(&q.repository)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("repository {}", q.repository)))?;
    let branch = match &q.branch {
        Some(b) => b.clone(),
        None => app
            .store
            .main_series()
            .await?
            .into_iter()
            .find(|s| s.repository_id == repository.id)
            .map(|s| s.branch)
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "no history of {}: no push to its default branch was compared yet",
                    q.repository
                ))
            })?,
    };
    let series = branch_history(
        app.store.as_ref(),
        repository.id,
        &repository.full_name,
        &branch,
    )
    .await?;
    let regressions = app
        .store
        .regressions(repository.id)
        .await?
        .into_iter()
        .filter(|r| r.series.branch == branch)
        .collect();
    let mut bisections = Vec::new();
    for b in app.store.bisections(repository.id).await? {
        // A merge group's search runs on the group's ref; it belongs to the branch it merges
        // into, where its culprit landed.
        let into = match b.source_comparison {
            Some(group) => app
                .store
                .comparison(group)
                .await?
                .and_then(|c| c.config.merge_group)
                .map(|g| g.base_ref),
            None => None,
        };
        if b.series.branch == branch || into.as_deref() == Some(branch.as_str()) {
            let probes = app.store.bisection_probes(b.id).await?;
            bisections.push(SearchView::new(&b, probes));
        }
    }
    Ok(HistoryView {
        repository: repository.full_name,
        branch,
        series,
        regressions,
        bisections,
    })
}

/// `GET /api/v1/history?repository=&branch=`.
pub async fn json(
    State(app): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<HistoryView>, ApiError> {
    Ok(Json(history_view(&app, &q).await?))
}

/// `GET /api/v1/history.csv?repository=&branch=`: one row per benchmark and step.
pub async fn csv(
    State(app): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let view = history_view(&app, &q).await?;
    let name = format!(
        "benchgate-history-{}-{}.csv",
        view.repository.replace('/', "_"),
        view.branch
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        history_csv(&view.series),
    ))
}

#[derive(Template)]
#[template(path = "dashboard/history.html")]
struct HistoryPage {
    repository: String,
    branch: String,
    series: Vec<SeriesBlock>,
    regressions: Vec<RegressionRow>,
    searches: Vec<SearchRow>,
}

struct SearchRow {
    id: i64,
    benchmark: String,
    good: String,
    bad: String,
    commits: usize,
    summary: String,
}

struct SeriesBlock {
    heading: String,
    pending: usize,
    benchmarks: Vec<BenchmarkBlock>,
    anchors: Vec<AnchorRow>,
}

struct BenchmarkBlock {
    name: String,
    plots: Vec<String>,
    steps: Vec<StepRow>,
}

struct StepRow {
    comparison: i64,
    base: String,
    head: String,
    commits: usize,
    pairs: usize,
    step: String,
    chain: String,
}

struct AnchorRow {
    comparison: i64,
    base: String,
    head: String,
    commits: usize,
    state: String,
    results: String,
}

struct RegressionRow {
    benchmark: String,
    kind: &'static str,
    change: String,
    opened_by: i64,
    status: String,
    issue: String,
    /// What its culprit search found, if one ran.
    culprit: String,
}

/// The page.
pub async fn page(
    State(app): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Html<String>, ApiError> {
    let view = history_view(&app, &q).await?;
    let series = view
        .series
        .iter()
        .map(|s| SeriesBlock {
            heading: if s.suite.is_empty() {
                format!("on {}", s.runner_label)
            } else {
                format!("{} on {}", s.suite, s.runner_label)
            },
            pending: s.pending.len(),
            benchmarks: s
                .benchmarks
                .iter()
                .map(|b| BenchmarkBlock {
                    name: format!("{} ({}, {})", b.benchmark, b.metric, b.unit),
                    plots: b
                        .segments
                        .iter()
                        .map(|seg| {
                            let dots: Vec<ChainDot> = seg
                                .points
                                .iter()
                                .enumerate()
                                .map(|(i, p)| ChainDot {
                                    step: (i + 1) as f64,
                                    change_pct: p.chain_change_pct,
                                    lower_pct: p.chain_interval_pct[0],
                                    upper_pct: p.chain_interval_pct[1],
                                })
                                .collect();
                            plot::chain(
                                &dots,
                                &format!(
                                    "{} against {}, step by step",
                                    b.benchmark,
                                    short_sha(&seg.anchor)
                                ),
                            )
                        })
                        .collect(),
                    steps: b
                        .segments
                        .iter()
                        .flat_map(|seg| seg.points.iter())
                        .map(|p| StepRow {
                            comparison: p.comparison,
                            base: short_sha(&p.base).to_owned(),
                            head: short_sha(&p.head).to_owned(),
                            commits: p.commits,
                            pairs: p.pairs,
                            step: words::estimate(p.step_change_pct, p.step_interval_pct),
                            chain: words::estimate(p.chain_change_pct, p.chain_interval_pct),
                        })
                        .collect(),
                })
                .collect(),
            anchors: s
                .anchors
                .iter()
                .map(|a| AnchorRow {
                    comparison: a.comparison,
                    base: short_sha(&a.base).to_owned(),
                    head: short_sha(&a.head).to_owned(),
                    commits: a.commits.len(),
                    state: a.state.clone(),
                    results: a
                        .results
                        .iter()
                        .map(|r| format!("{}: {}", r.benchmark, r.words))
                        .collect::<Vec<_>>()
                        .join("; "),
                })
                .collect(),
        })
        .collect();
    let regressions = view
        .regressions
        .iter()
        .map(|r| RegressionRow {
            benchmark: format!("{} ({})", r.benchmark, r.metric),
            kind: r.kind.as_str(),
            change: {
                // Stored as fractions; an unbounded side is stored as an infinity.
                let bound = |b: f64| b.is_finite().then_some(b * 100.0);
                words::estimate(r.change * 100.0, [bound(r.lower), bound(r.upper)])
            },
            opened_by: r.opened_by.0,
            status: match (r.open, r.closed_by) {
                (true, _) => "open".to_owned(),
                (false, Some(by)) => format!("gone (comparison {by})"),
                (false, None) => "closed".to_owned(),
            },
            issue: r.issue_number.map(|n| format!("#{n}")).unwrap_or_default(),
            culprit: view
                .bisections
                .iter()
                .find(|b| b.regression_id == Some(r.id))
                .map(|b| b.summary.clone())
                .unwrap_or_default(),
        })
        .collect();
    let searches = view
        .bisections
        .iter()
        .map(|b| SearchRow {
            id: b.id,
            benchmark: format!("{} ({})", b.benchmark, b.metric),
            good: short_sha(&b.good).to_owned(),
            bad: short_sha(&b.bad).to_owned(),
            commits: b.commits.len().saturating_sub(1),
            summary: b.summary.clone(),
        })
        .collect();
    render(&HistoryPage {
        repository: view.repository,
        branch: view.branch,
        series,
        regressions,
        searches,
    })
}
