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

use crate::auth::AdminAuth;
use crate::{ApiError, AppState, comparison_analysis};

/// The admin comparison routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/comparisons", post(create_comparison))
        .route("/api/v1/comparisons/{id}", get(show_comparison))
        .route("/api/v1/history/anchor", post(anchor_now))
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
    let repository = app
        .store
        .repository_by_name(&req.repository)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("repository {}", req.repository)))?;
    let series: Vec<_> = app
        .store
        .main_series()
        .await?
        .into_iter()
        .filter(|s| s.repository_id == repository.id)
        .filter(|s| req.branch.as_ref().is_none_or(|b| *b == s.branch))
        .filter(|s| {
            req.runner_label
                .as_ref()
                .is_none_or(|l| *l == s.runner_label)
        })
        .collect();
    if series.is_empty() {
        return Err(ApiError::NotFound(format!(
            "no history of {} matches: no push to its default branch was compared yet",
            req.repository
        )));
    }
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
        })
        .await?;
    let plan = comparison_analysis::plan_rounds(
        &app.store,
        repository.id,
        &req.runner_label,
        req.config.gate.min_effect,
        &benchgate_api::RuleSet::new(&req.config.rules),
    )
    .await?;
    let planned_rounds = plan.planned_rounds;
    let config = StoredComparisonConfig {
        config: req.config,
        n_star: plan.per_benchmark,
        github: None,
        main: None,
        merged_pr: None,
        merge_group: None,
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
