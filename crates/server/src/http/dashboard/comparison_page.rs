//! `/comparisons/{id}`: per benchmark the PR comment's table with plots of the rounds and of the
//! interval narrowing, the jobs with their logs, and the link to the PR. Rows read in the
//! comment's order (`benchgate_stats::order`): the summary, the decided rows regressions first,
//! then the undecided and unchanged folded away, then the rows a rule ignores.
//!
//! Reads the stored results, this comparison's samples only, and the floors of its runners.

use std::collections::HashMap;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Html;
use benchgate_api::BenchmarkResult;
use benchgate_stats::modified_z_outliers;
use benchgate_store::{Comparison, ComparisonId, Job, RunnerId, Store, StoredResult};
use chrono::{DateTime, Utc};

use super::format::{log_spread_pct, seconds, standing_class};
use super::plot;
use super::render;
use super::rounds::{PairedSeries, paired_series, running_intervals};
use crate::{ApiError, AppState};
use benchgate_stats::words;
use benchgate_stats::words::short_sha;

/// One row of the table and its two plots.
struct BenchmarkView {
    /// Its place among all the comparison's rows, 1-based: the id of its plots' section.
    anchor: usize,
    runner: String,
    name: String,
    metric: String,
    base: String,
    head: String,
    change: String,
    rounds: usize,
    verdict: String,
    verdict_class: &'static str,
    outliers: usize,
    /// The rounds plot and the interval-narrowing plot; `None` without a base/head pair (a
    /// benchmark on one side only, or results whose samples are gone), which empty axes
    /// would only disguise.
    plots: Option<(String, String)>,
}

/// One job (a batch of rounds, or a retry of it) with its log.
struct JobView {
    id: i64,
    /// A profile job: profiled runs after the verdict, no rounds.
    profile: bool,
    state: &'static str,
    runner: String,
    rounds: i64,
    attempts: i64,
    max_attempts: i64,
    started: String,
    took: String,
    last_error: Option<String>,
    log_tail: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/comparison.html")]
struct ComparisonPage {
    comparison: Comparison,
    base_short: String,
    head_short: String,
    /// The PR's base branch when the base measured is its merge base with it.
    merge_base_of: Option<String>,
    /// The base branch moved on since the PR branched, or there is no merge base (the
    /// comment's words).
    base_note: Option<String>,
    created: String,
    pr_url: Option<String>,
    /// `#42`, `merge queue: #11, #12`, or `—`.
    pr_label: String,
    /// What a maintainer reads first, one line per runner (the runner named when there are
    /// several).
    summaries: Vec<String>,
    /// The PR's claims (description and `/benchgate claim` comments), each answered (every one, where the comment lists ten).
    claims: Vec<String>,
    /// This page's rows that decide something, regressions first.
    decided: Vec<BenchmarkView>,
    /// This page's undecided and unchanged rows, folded as the PR comment folds them.
    folded: Vec<BenchmarkView>,
    /// "3 undecided or unchanged rows", the folded section's summary.
    folded_rows: String,
    /// This page's rows a rule of the suite ignores.
    ignored: Vec<BenchmarkView>,
    /// Which rows this page shows, of how many, and the neighbouring pages.
    rows: PageOf,
    jobs: Vec<JobView>,
    profile: Option<ProfileSection>,
}

/// The newest profile: the functions whose share changed most and the flame graph, or why
/// there is none.
struct ProfileSection {
    /// What was profiled, where and how; or why nothing was.
    caption: String,
    /// `(self, total, function)`, largest change first.
    functions: Vec<(String, String, String)>,
    /// The differential flame graph.
    svg: Option<String>,
    lacks_symbols: bool,
}

/// The comparison's newest profile as the page shows it.
async fn profile_section(
    store: &dyn Store,
    c: &Comparison,
) -> Result<Option<ProfileSection>, ApiError> {
    use crate::report::ProfileView;
    let Some(profile) = store.comparison_profiles(c.id).await?.into_iter().next() else {
        return Ok(None);
    };
    let runner = store
        .runner(profile.runner_id)
        .await?
        .map_or_else(|| format!("runner {}", profile.runner_id), |r| r.name);
    let url = format!("/comparisons/{}", c.id);
    Ok(Some(
        match crate::report::profile_view(profile, runner, &url) {
            ProfileView::Ready(p) => ProfileSection {
                caption: {
                    let (how, unit) = crate::report::profile_source(&p.event);
                    format!(
                        "{} on {}, {} run(s) per side: {} base and {} head {unit}. Profiled runs are not samples of the verdict. Change in share of {unit}, head minus base.",
                        how.replace('`', ""),
                        p.runner,
                        p.runs,
                        p.base_samples,
                        p.head_samples
                    )
                },
                functions: p
                    .functions
                    .iter()
                    .take(PROFILE_FUNCTIONS)
                    .map(|f| {
                        (
                            words::percentage_points(f.self_pp),
                            words::percentage_points(f.total_pp),
                            f.function.clone(),
                        )
                    })
                    .collect(),
                svg: Some(p.svg_url),
                lacks_symbols: p.lacks_symbols,
            },
            ProfileView::Unavailable { runner, reason } => ProfileSection {
                caption: format!("Not profiled on {runner}: {reason}."),
                functions: Vec::new(),
                svg: None,
                lacks_symbols: false,
            },
            ProfileView::Pending { .. } | ProfileView::Failed { .. } => return Ok(None),
        },
    ))
}

/// Functions listed on the page; the JSON has every one.
const PROFILE_FUNCTIONS: usize = 20;

/// Benchmarks per page: each brings two plots, so a suite of thousands is paged, and the page
/// stays small whatever a PR's benchmark prints.
pub const ROWS_PER_PAGE: usize = 50;

/// The slice of rows one page shows.
struct PageOf {
    first: usize,
    last: usize,
    total: usize,
    previous: Option<usize>,
    next: Option<usize>,
}

/// `?page=N` (1-based).
#[derive(Debug, serde::Deserialize)]
pub struct PageQuery {
    page: Option<usize>,
}

/// `https://github.com/{owner/name}/pull/{n}` when the comparison belongs to a PR of a GitHub
/// repository (a repository given by URL or path has no PR page).
fn pull_request_url(c: &Comparison) -> Option<String> {
    let n = c.pr_number?;
    let is_owner_name = c.repository.split('/').count() == 2
        && !c.repository.contains(':')
        && !c.repository.starts_with('.');
    is_owner_name.then(|| format!("https://github.com/{}/pull/{n}", c.repository))
}

/// The margin M in percent per (runner, benchmark, metric), from each runner's current floors.
async fn margins(
    store: &dyn Store,
    c: &Comparison,
    runners: impl Iterator<Item = RunnerId>,
) -> Result<HashMap<(RunnerId, String, String), f64>, ApiError> {
    let min_effect = c.config.gate.min_effect;
    let rules = benchgate_api::RuleSet::of(&c.config);
    let mut out = HashMap::new();
    for runner in runners {
        for f in store.runner_noise_floors(runner).await? {
            if f.key.repository_id == c.repository_id {
                let floor = crate::comparison_analysis::stats_floor(&f);
                let min_effect =
                    crate::comparison_analysis::rule_min_effect(&rules, &f.key.benchmark)
                        .unwrap_or(min_effect);
                let m = benchgate_stats::practical_margin(min_effect.ln_1p(), Some(&floor));
                out.insert((runner, f.key.benchmark, f.key.metric), log_spread_pct(m));
            }
        }
    }
    Ok(out)
}

fn benchmark_view(
    anchor: usize,
    runner: &str,
    result: Option<&BenchmarkResult>,
    series: Option<&PairedSeries>,
    margin_pct: Option<f64>,
    n_star: f64,
) -> BenchmarkView {
    let pairs = series.map_or(&[][..], |s| &s.pairs[..]);
    let unit = result
        .map(|r| r.unit.as_str())
        .or(series.map(|s| s.unit.as_str()))
        .unwrap_or("");
    let log_ratios: Vec<f64> = pairs
        .iter()
        .filter(|p| p.base > 0.0 && p.head > 0.0)
        .map(|p| (p.head / p.base).ln())
        .collect();
    let outliers: Vec<usize> = modified_z_outliers(&log_ratios)
        .iter()
        .map(|o| o.index)
        .collect();
    let (name, metric) = match (result, series) {
        (Some(r), _) => (r.name.clone(), r.metric.clone()),
        (None, Some(s)) => (s.benchmark.clone(), s.metric.clone()),
        (None, None) => Default::default(),
    };
    BenchmarkView {
        anchor,
        runner: runner.to_string(),
        name,
        metric: result.map_or(metric, words::metric_label),
        base: result.map_or("—".into(), |r| words::center(r.base_center, unit)),
        head: result.map_or("—".into(), |r| words::center(r.head_center, unit)),
        change: result.map_or("—".into(), words::change),
        rounds: result.map_or(pairs.len(), |r| r.n),
        verdict: result.map_or("not analysed yet".into(), words::verdict),
        verdict_class: result.map_or("open", |r| standing_class(words::row_standing(r))),
        outliers: outliers.len(),
        plots: (!pairs.is_empty()).then(|| {
            (
                plot::rounds(pairs, unit, &outliers),
                plot::interval_narrowing(&running_intervals(pairs, n_star), margin_pct),
            )
        }),
    }
}

fn job_view(job: &Job, runner_names: &HashMap<RunnerId, String>, now: DateTime<Utc>) -> JobView {
    JobView {
        id: job.id.0,
        profile: job.profile.is_some(),
        state: job.state.as_str(),
        runner: job
            .claimed_by
            .and_then(|id| runner_names.get(&id).cloned())
            .unwrap_or_else(|| "—".into()),
        rounds: job.rounds,
        attempts: job.attempts,
        max_attempts: job.max_attempts,
        started: job
            .started_at
            .map_or("not yet".into(), |t| words::age((now - t).num_seconds())),
        took: match (job.started_at, job.finished_at) {
            (Some(s), Some(f)) => words::elapsed(seconds(f - s)),
            (Some(s), None) => format!("{} so far", words::elapsed(seconds(now - s))),
            _ => "—".into(),
        },
        last_error: job.last_error.clone(),
        log_tail: job.log_tail.clone(),
    }
}

/// Where a row stands on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// In the table: a regression, an improvement, a benchmark on one side only.
    Decided,
    /// Folded: undecided, unchanged, or not analysed yet.
    Folded,
    /// Left out of the report by a rule (`ignore = true`).
    Ignored,
}

/// A row before its view is built: where it goes, its runner, its result and its series.
type Row<'a> = (
    Section,
    RunnerId,
    Option<&'a BenchmarkResult>,
    Option<PairedSeries>,
);

/// The PR comment's summary line per runner, of the rows the report shows (a rule's ignored
/// rows are not counted); prefixed with the runner's name when several runners have results.
fn summaries(
    results: &[StoredResult],
    runners: &[RunnerId],
    name_of: &impl Fn(&RunnerId) -> String,
) -> Vec<String> {
    let per_runner: Vec<(RunnerId, String)> = runners
        .iter()
        .filter_map(|&runner| {
            let shown: Vec<BenchmarkResult> = results
                .iter()
                .filter(|s| s.runner_id == runner && !s.result.is_ignored())
                .map(|s| s.result.clone())
                .collect();
            Some((runner, benchgate_stats::order::summary(&shown)?))
        })
        .collect();
    let several = per_runner.len() > 1;
    per_runner
        .into_iter()
        .map(|(runner, line)| {
            if several {
                let rows: Vec<BenchmarkResult> = results
                    .iter()
                    .filter(|s| s.runner_id == runner)
                    .map(|s| s.result.clone())
                    .collect();
                let name = crate::comparison_analysis::combined_name(&rows)
                    .unwrap_or_else(|| name_of(&runner));
                format!("{name}: {line}")
            } else {
                line
            }
        })
        .collect()
}

/// A comparison's page; `NotFound` for an unknown id.
pub async fn page(
    State(app): State<AppState>,
    Path(id): Path<i64>,
    Query(query): Query<PageQuery>,
) -> Result<Html<String>, ApiError> {
    let store = app.store.as_ref();
    let now = Utc::now();
    let c = store
        .comparison(ComparisonId(id))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no comparison {id}")))?;
    let results = store.comparison_results(c.id).await?;
    let samples = store.comparison_samples(c.id).await?;
    let jobs = store.comparison_jobs(c.id).await?;
    let runner_names: HashMap<RunnerId, String> = store
        .list_runners()
        .await?
        .into_iter()
        .map(|r| (r.id, r.name))
        .collect();
    let mut runner_ids: Vec<RunnerId> = results
        .iter()
        .map(|r| r.runner_id)
        .chain(samples.iter().map(|s| s.runner_id))
        .collect();
    runner_ids.sort();
    runner_ids.dedup();
    let margins = margins(store, &c, runner_ids.iter().copied()).await?;
    let plan = crate::comparison_analysis::NStarPlan {
        per_benchmark: c.config.n_star.clone(),
        fallback: c.planned_rounds,
    };

    // Each runner's paired series, in upload order; a stored result takes its own below.
    let mut series: HashMap<(RunnerId, String, String), PairedSeries> = HashMap::new();
    let mut series_order = Vec::new();
    for runner_series in &samples {
        for s in paired_series(&runner_series.samples) {
            let key = (
                runner_series.runner_id,
                s.benchmark.clone(),
                s.metric.clone(),
            );
            series_order.push(key.clone());
            series.insert(key, s);
        }
    }
    let name_of = |id: &RunnerId| {
        runner_names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    };
    // Every row in report order, then series without a result yet, then what a rule ignores;
    // views with their plots are built for this page's rows only.
    let plain: Vec<BenchmarkResult> = results.iter().map(|s| s.result.clone()).collect();
    let mut rows: Vec<Row> = Vec::new();
    let mut ignored = Vec::new();
    for i in benchgate_stats::report_order(&plain) {
        let stored = &results[i];
        let key = (
            stored.runner_id,
            stored.result.name.clone(),
            stored.result.metric.clone(),
        );
        let section = if stored.result.is_ignored() {
            Section::Ignored
        } else if benchgate_stats::standing(&stored.result).is_decided() {
            Section::Decided
        } else {
            Section::Folded
        };
        let row = (
            section,
            stored.runner_id,
            Some(&stored.result),
            series.remove(&key),
        );
        match section {
            Section::Ignored => ignored.push(row),
            _ => rows.push(row),
        }
    }
    // Runners combined into another's rows show no rows of their own.
    let combined: Vec<&str> = results
        .iter()
        .flat_map(|r| r.result.runners.iter().skip(1).map(String::as_str))
        .collect();
    for key in series_order {
        if combined.contains(&name_of(&key.0).as_str()) {
            continue;
        }
        if let Some(s) = series.remove(&key) {
            rows.push((Section::Folded, key.0, None, Some(s)));
        }
    }
    rows.extend(ignored);
    let pages = rows.len().div_ceil(ROWS_PER_PAGE).max(1);
    let at = query.page.unwrap_or(1).clamp(1, pages);
    let first = (at - 1) * ROWS_PER_PAGE;
    let (mut decided, mut folded, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (section, runner, result, s)) in rows.iter().enumerate().skip(first).take(ROWS_PER_PAGE)
    {
        let (name, metric) = match (result, s) {
            (Some(r), _) => (r.name.clone(), r.metric.clone()),
            (None, Some(s)) => (s.benchmark.clone(), s.metric.clone()),
            (None, None) => Default::default(),
        };
        let m = margins.get(&(*runner, name.clone(), metric)).copied();
        let runner_name = result
            .filter(|r| !r.runners.is_empty())
            .map_or_else(|| name_of(runner), |r| r.runners.join(" + "));
        let view = benchmark_view(
            i + 1,
            &runner_name,
            *result,
            s.as_ref(),
            m,
            plan.n_star(&name),
        );
        match section {
            Section::Decided => decided.push(view),
            Section::Folded => folded.push(view),
            Section::Ignored => ignored.push(view),
        }
    }
    let shown = decided.len() + folded.len() + ignored.len();
    let rows_shown = PageOf {
        first: first + 1,
        last: first + shown,
        total: rows.len(),
        previous: (at > 1).then(|| at - 1),
        next: (at < pages).then(|| at + 1),
    };
    let summaries = summaries(&results, &runner_ids, &name_of);
    let claims = match c.config.github.as_ref() {
        Some(github) => {
            let rows: Vec<_> = results.iter().map(|r| r.result.clone()).collect();
            benchgate_claims::lines(&crate::report::pr_claims_answered(github, &rows))
        }
        None => Vec::new(),
    };
    let profile = profile_section(store, &c).await?;

    let branch = c.config.github.as_ref().and_then(|g| g.branch.as_ref());
    let page = ComparisonPage {
        base_short: short_sha(&c.base_sha).to_string(),
        head_short: short_sha(&c.head_sha).to_string(),
        merge_base_of: branch
            .filter(|b| !b.no_merge_base)
            .map(|b| b.base_ref.clone()),
        base_note: branch.and_then(|b| crate::report::branch_note(b, &c.base_sha, "PR")),
        created: words::age((now - c.created_at).num_seconds()),
        pr_url: pull_request_url(&c),
        pr_label: super::overview::pr_label(&c),
        summaries,
        claims,
        decided,
        folded_rows: words::count(folded.len(), "undecided or unchanged row"),
        folded,
        ignored,
        rows: rows_shown,
        jobs: jobs
            .iter()
            .map(|j| job_view(j, &runner_names, now))
            .collect(),
        profile,
        comparison: c,
    };
    render(&page)
}
