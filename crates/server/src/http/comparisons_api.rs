//! The admin API: request a comparison of two revisions of a repository by URL or local path,
//! without GitHub (tests, scripts, the demo), and read its state and results.

use std::path::Path as FsPath;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use benchgate_api::agent::{
    ComparisonStatus, CreateComparisonRequest, CreatedComparison, StoredComparisonConfig,
};
use benchgate_store::{ComparisonId, NewComparison, NewJob, NewRepository, Priority};

use crate::http::auth::AdminAuth;
use crate::{ApiError, AppState, comparison_analysis};

/// The admin comparison routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/comparisons", post(create_comparison))
        .route("/api/v1/comparisons/{id}", get(show_comparison))
        .route("/api/v1/history/anchor", post(anchor_now))
        .route("/api/v1/history/bisect", post(bisect_now))
        .route("/api/v1/history/bisections/{id}", get(show_bisection))
        .route(
            "/api/v1/runners/{name}/recalibrate",
            post(recalibrate_runner),
        )
}

/// `POST /api/v1/runners/{name}/recalibrate`: a fresh A/A calibration (and layout sessions) on
/// every repository the runner has a floor for, and its audit flag counted afresh from now.
async fn recalibrate_runner(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Path(name): Path<String>,
) -> Result<Json<crate::audit::Recalibrated>, ApiError> {
    let runner = app
        .store
        .runner_by_name(&name)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no runner named {name:?}")))?;
    if runner.revoked_at.is_some() {
        return Err(ApiError::Conflict(format!("runner {name:?} is revoked")));
    }
    Ok(Json(crate::audit::recalibrate(&app, &runner).await?))
}

/// `POST /api/v1/history/bisect`: search a range of the default branch for the commit that made
/// one benchmark slower.
#[derive(Debug, serde::Deserialize)]
struct BisectRequest {
    repository: String,
    /// Defaults to the one branch with a history.
    branch: Option<String>,
    /// Defaults to the one label of the branch.
    runner_label: Option<String>,
    /// The `[[suite]]` name; defaults to the lone `[benchmark]`.
    suite: Option<String>,
    benchmark: String,
    /// Defaults to the metric of the benchmark's open regression.
    metric: Option<String>,
    /// The last commit without the slowdown, and the first with it (a compared commit's short
    /// sha, or any full sha).
    good: String,
    bad: String,
}

#[derive(Debug, serde::Serialize)]
struct BisectAnswer {
    bisection: i64,
    /// False when the same search was already running.
    new: bool,
    url: String,
}

#[tracing::instrument(skip_all, fields(repository = %req.repository, benchmark = %req.benchmark))]
async fn bisect_now(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Json(req): Json<BisectRequest>,
) -> Result<(StatusCode, Json<BisectAnswer>), ApiError> {
    if app.config.bisect_max_rounds == 0 {
        return Err(ApiError::Conflict(
            "culprit searches are off on this server (--bisect-max-rounds 0)".into(),
        ));
    }
    let suite = req.suite.clone().unwrap_or_default();
    let (repository, series) = histories(
        &app,
        &req.repository,
        req.branch.as_deref(),
        req.runner_label.as_deref(),
    )
    .await?;
    let series: Vec<_> = series.into_iter().filter(|s| s.suite == suite).collect();
    let series = match series.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(ApiError::NotFound(format!(
                "no history of {} has the suite {suite:?}",
                req.repository
            )));
        }
        many => {
            return Err(ApiError::BadRequest(format!(
                "{} histories match; give branch and runner_label: {}",
                many.len(),
                many.iter()
                    .map(|s| format!("{} on {}", s.branch, s.runner_label))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    let all = app
        .store
        .main_comparisons(repository.id, &series.branch)
        .await?;
    let known =
        crate::main_history::commit_sequence(&crate::main_history::ordered_steps(&all, &series));
    let good = resolve_commit(&known, &req.good)?;
    let bad = resolve_commit(&known, &req.bad)?;
    if good == bad {
        return Err(ApiError::BadRequest(
            "good and bad are the same commit".into(),
        ));
    }
    let episodes: Vec<_> = app
        .store
        .regressions(repository.id)
        .await?
        .into_iter()
        .filter(|r| r.series == series && r.benchmark == req.benchmark)
        .collect();
    let metric = match &req.metric {
        Some(m) => m.clone(),
        None => episodes
            .iter()
            .find(|r| r.open)
            .map(|r| r.metric.clone())
            .ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "{} has no open regression to take the metric from; give metric",
                    req.benchmark
                ))
            })?,
    };
    let regression_id = episodes
        .iter()
        .find(|r| r.metric == metric && r.base_sha == good && r.head_sha == bad)
        .map(|r| r.id);
    let (search, new) = app
        .store
        .create_bisection(&benchgate_store::model::NewBisection {
            series,
            benchmark: req.benchmark.clone(),
            metric,
            regression_id,
            source_comparison: None,
            good_sha: good,
            bad_sha: bad,
            requested_by: Some("api".into()),
        })
        .await?;
    tracing::info!(search = search.id, new, "culprit search requested");
    Ok((
        if new {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        Json(BisectAnswer {
            bisection: search.id,
            new,
            url: format!("/api/v1/history/bisections/{}", search.id),
        }),
    ))
}

/// A compared commit named by a prefix of its sha, or a full sha as given.
fn resolve_commit(known: &[String], name: &str) -> Result<String, ApiError> {
    let name = name.trim().to_ascii_lowercase();
    if name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(name);
    }
    let found: Vec<&String> = known
        .iter()
        .filter(|c| name.len() >= 4 && c.starts_with(&name))
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(ApiError::BadRequest(format!(
            "{name:?} is no compared commit of the branch; give its full sha"
        ))),
        _ => Err(ApiError::BadRequest(format!(
            "{name:?} names {} compared commits; give more of the sha",
            found.len()
        ))),
    }
}

/// `GET /api/v1/history/bisections/{id}`: a search with its probes and outcome.
async fn show_bisection(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Path(id): Path<i64>,
) -> Result<Json<crate::tasks::SearchView>, ApiError> {
    let search = app
        .store
        .bisection(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("culprit search {id}")))?;
    let probes = app.store.bisection_probes(id).await?;
    Ok(Json(crate::tasks::SearchView::new(&search, probes)))
}

/// `POST /api/v1/history/anchor`: compare the default branch now with its anchor (or `base`).
#[derive(Debug, serde::Deserialize)]
struct AnchorRequest {
    repository: String,
    /// Defaults to every branch with a history.
    branch: Option<String>,
    /// Defaults to every label of the branch.
    runner_label: Option<String>,
    /// A commit to compare with instead of the `[main] anchor`.
    base: Option<String>,
}

#[derive(Debug, serde::Serialize)]
struct AnchorAnswer {
    /// The anchor comparisons created (none when each series is at its anchor, or one of the
    /// same commits is already queued).
    comparisons: Vec<i64>,
}

#[tracing::instrument(skip_all, fields(repository = %req.repository))]
async fn anchor_now(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Json(req): Json<AnchorRequest>,
) -> Result<(StatusCode, Json<AnchorAnswer>), ApiError> {
    let (_, series) = histories(
        &app,
        &req.repository,
        req.branch.as_deref(),
        req.runner_label.as_deref(),
    )
    .await?;
    let mut comparisons = Vec::new();
    for s in &series {
        if let Some(id) = crate::main_history::schedule_anchor(
            &app.store,
            app.config.max_attempts,
            s,
            req.base.as_deref(),
            chrono::Utc::now(),
        )
        .await?
        {
            comparisons.push(id.0);
        }
    }
    tracing::info!(
        created = comparisons.len(),
        series = series.len(),
        "anchor comparisons requested"
    );
    Ok((StatusCode::CREATED, Json(AnchorAnswer { comparisons })))
}

/// A repository's histories on `branch` and `runner_label` (each when given); not found when
/// none matches.
async fn histories(
    app: &AppState,
    repository: &str,
    branch: Option<&str>,
    runner_label: Option<&str>,
) -> Result<
    (
        benchgate_store::model::Repository,
        Vec<benchgate_store::model::MainSeries>,
    ),
    ApiError,
> {
    let found = app
        .store
        .repository_by_name(repository)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("repository {repository}")))?;
    let series: Vec<_> = app
        .store
        .main_series()
        .await?
        .into_iter()
        .filter(|s| s.repository_id == found.id)
        .filter(|s| branch.is_none_or(|b| b == s.branch))
        .filter(|s| runner_label.is_none_or(|l| l == s.runner_label))
        .collect();
    if series.is_empty() {
        return Err(ApiError::NotFound(format!(
            "no history of {repository} matches: no push to its default branch was compared yet"
        )));
    }
    Ok((found, series))
}

/// Creates a comparison and its jobs, with `n*` planned from the runners' current floors.
#[tracing::instrument(skip_all, fields(repository = %req.repository))]
async fn create_comparison(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Json(req): Json<CreateComparisonRequest>,
) -> Result<(StatusCode, Json<CreatedComparison>), ApiError> {
    let rounds = i64::from(req.config.benchmark.rounds);
    let jobs = i64::from(req.jobs.unwrap_or(1).max(1));
    if rounds < 2 || jobs > rounds {
        return Err(ApiError::BadRequest(format!(
            "need at least 2 rounds and no more jobs than rounds (rounds {rounds}, jobs {jobs})"
        )));
    }
    if req.runner_label.trim().is_empty() {
        return Err(ApiError::BadRequest(
            "runner_label must not be empty".into(),
        ));
    }
    let base_sha = resolve_revision(&req.repository, &req.base).await?;
    let head_sha = resolve_revision(&req.repository, &req.head).await?;
    let repository = app
        .store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: req.repository.clone(),
            clone_url: req.repository.clone(),
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await?;
    let plan = comparison_analysis::plan_rounds(
        &app.store,
        repository.id,
        &req.runner_label,
        req.config.gate.min_effect,
        &benchgate_api::RuleSet::of(&req.config),
    )
    .await?;
    let planned_rounds = plan.planned_rounds;
    let config = StoredComparisonConfig {
        n_star: plan.per_benchmark,
        ..req.config.into()
    };
    let created = app
        .store
        .create_comparison(&NewComparison {
            repository_id: repository.id,
            pr_number: None,
            base_sha: base_sha.clone(),
            head_sha: head_sha.clone(),
            runner_label: req.runner_label,
            config,
            planned_rounds,
            main: None,
            jobs: split_rounds(rounds, jobs, app.config.max_attempts),
            notify: Vec::new(),
        })
        .await?;
    tracing::info!(comparison = %created.id, jobs = created.jobs.len(), ?planned_rounds, "comparison requested");
    Ok((
        StatusCode::CREATED,
        Json(CreatedComparison {
            id: created.id.0,
            base_sha,
            head_sha,
            jobs: created.jobs.iter().map(|j| j.0).collect(),
            planned_rounds,
        }),
    ))
}

/// A comparison's state and per-runner results.
async fn show_comparison(
    State(app): State<AppState>,
    _admin: AdminAuth,
    Path(id): Path<i64>,
) -> Result<Json<ComparisonStatus>, ApiError> {
    comparison_analysis::comparison_report(&app.store, ComparisonId(id))
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("comparison {id} not found")))
}

/// `rounds` spread over `jobs` jobs as evenly as possible.
fn split_rounds(rounds: i64, jobs: i64, max_attempts: i64) -> Vec<NewJob> {
    (0..jobs)
        .map(|i| NewJob {
            rounds: rounds / jobs + i64::from(i < rounds % jobs),
            priority: Priority::NORMAL,
            max_attempts,
            origin: None,
        })
        .collect()
}

/// A full sha as given; otherwise a ref resolved with `git rev-parse` in a local repository.
async fn resolve_revision(repository: &str, revision: &str) -> Result<String, ApiError> {
    let is_sha = revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit());
    if is_sha {
        return Ok(revision.to_ascii_lowercase());
    }
    if revision.starts_with('-') || revision.is_empty() {
        return Err(ApiError::BadRequest(format!(
            "invalid revision {revision:?}"
        )));
    }
    if !FsPath::new(repository).is_dir() {
        return Err(ApiError::BadRequest(format!(
            "{revision:?} is not a full sha, and refs can be resolved only in a local repository path"
        )));
    }
    let output = tokio::process::Command::new("git")
        .arg("-C")
        .arg(repository)
        .args(["rev-parse", "--verify", "--end-of-options"])
        .arg(format!("{revision}^{{commit}}"))
        .output()
        .await
        .map_err(|e| anyhow::anyhow!("cannot run git: {e}"))?;
    if !output.status.success() {
        return Err(ApiError::BadRequest(format!(
            "cannot resolve {revision:?} in {repository}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_split_evenly() {
        let rounds: Vec<i64> = split_rounds(10, 3, 3).iter().map(|j| j.rounds).collect();
        assert_eq!(rounds, [4, 3, 3]);
    }
}
