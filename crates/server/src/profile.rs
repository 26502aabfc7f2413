//! Differential profiles: a profile job is asked when a PR comparison ends slower (and by
//! `/benchgate profile`); the agent runs both sides under perf and uploads folded stacks; this
//! module serves the differential flame graph and the function changes. Profiled runs are
//! never samples: the profiler changes timings.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use benchgate_api::agent::ProfileRequest;
use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, NewProfileJob, OutboxId, Priority,
};
use serde::Serialize;

use crate::report::{self, ProfileView};
use crate::tasks::{Context, TaskError};
use crate::{ApiError, AppState};

/// Runs per side when a maintainer asks and automatic profiles are off.
const ASKED_RUNS: u32 = 3;

/// Asks for a profile of `comparison` on its runner label, once per `origin`; `true` when a
/// job was added. Priority `NORMAL`, created after the comparison's own jobs: it runs after them.
async fn ask(
    cx: &Context,
    comparison: &Comparison,
    request: ProfileRequest,
    origin: String,
) -> Result<bool, TaskError> {
    let job = NewProfileJob {
        request,
        priority: Priority::NORMAL,
        max_attempts: cx.config.max_attempts,
        origin,
    };
    match cx.store.request_profile(comparison.id, &job).await {
        Ok(id) => Ok(id.is_some()),
        // Superseded or cancelled meanwhile: a newer head will be judged on its own.
        Err(benchgate_store::StoreError::Conflict(why)) => {
            tracing::info!(comparison = %comparison.id, %why, "profile not asked");
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// `/benchgate profile [BENCHMARK]` from `by`, carried out by outbox row `row`.
pub async fn request(
    cx: &Context,
    comparison: &Comparison,
    rows: Vec<String>,
    by: &str,
    row: OutboxId,
) -> Result<bool, TaskError> {
    let runs = match cx.config.profile_runs {
        0 => ASKED_RUNS,
        n => n,
    };
    let request = ProfileRequest {
        runs,
        rows,
        requested_by: by.to_owned(),
    };
    ask(
        cx,
        comparison,
        request,
        format!("profile:{}:outbox:{}", comparison.id, row.0),
    )
    .await
}

/// After a PR comparison ended with a gated row decided slower: one profile, asked by the verdict.
pub async fn after_verdict(cx: &Context, loaded: &report::LoadedReport) -> Result<(), TaskError> {
    let c = &loaded.comparison;
    let runs = cx.config.profile_runs;
    if runs == 0 || c.state != ComparisonState::Done || c.pr_number.is_none() {
        return Ok(());
    }
    // Gated rows decided slower, whatever `fail_on` makes of them: report-only suites want to
    // know where the time went too.
    let failing: Vec<String> = loaded
        .input
        .results
        .iter()
        .filter(|r| benchgate_stats::is_regression(r, benchgate_api::FailOn::Regression))
        .map(|r| benchgate_store::model::acceptance_row(&r.name, &r.metric))
        .collect();
    if failing.is_empty() {
        return Ok(());
    }
    let request = ProfileRequest {
        runs,
        rows: failing,
        requested_by: "verdict".to_owned(),
    };
    if ask(cx, c, request, format!("profile:{}:verdict", c.id)).await? {
        tracing::info!(comparison = %c.id, runs, "slower verdict: profile asked");
    }
    Ok(())
}

/// The newest profile of a comparison that has stacks, with its runner's name.
async fn newest(
    app: &AppState,
    id: i64,
) -> Result<(benchgate_store::StoredProfile, String), ApiError> {
    let profiles = app.store.comparison_profiles(ComparisonId(id)).await?;
    let Some(profile) = profiles.into_iter().next() else {
        return Err(ApiError::NotFound(format!(
            "comparison {id} has no profile"
        )));
    };
    let runner = app
        .store
        .runner(profile.runner_id)
        .await?
        .map_or_else(|| format!("runner {}", profile.runner_id), |r| r.name);
    Ok((profile, runner))
}

/// `GET /comparisons/{id}/profile.svg`: the differential flame graph, base to head (red: more
/// of head's samples, blue: fewer). Frame names come from PR code, so the SVG's own script is
/// not allowed to run: it is a picture.
pub async fn svg(State(app): State<AppState>, Path(id): Path<i64>) -> Result<Response, ApiError> {
    let (profile, runner) = newest(&app, id).await?;
    let Some(event) = profile.event.as_deref() else {
        return Err(ApiError::NotFound(format!(
            "comparison {id} was not profiled: {}",
            profile
                .unavailable
                .as_deref()
                .unwrap_or("no profiler on the runner")
        )));
    };
    let parse = |text: &str| benchgate_profile::Folded::parse(text).unwrap_or_default();
    let (how, _) = report::profile_source(event);
    let title = format!(
        "comparison #{id}: head vs base, {} on {runner}, {} run(s) per side",
        how.replace('`', ""),
        profile.runs
    );
    let svg = benchgate_profile::differential_svg(
        &parse(&profile.base_folded),
        &parse(&profile.head_folded),
        &title,
    )
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("drawing the flame graph: {e}")))?;
    let mut response = svg.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("image/svg+xml"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}

/// `GET /api/v1/comparisons/{id}/profile`: what the newest profile says.
#[derive(Debug, Serialize)]
pub struct ProfileJson {
    pub comparison: i64,
    pub runner: String,
    /// `cycles` or `cpu-clock`; absent when no profiler could run.
    pub event: Option<String>,
    pub unavailable: Option<String>,
    pub runs: i64,
    pub base_samples: u64,
    pub head_samples: u64,
    pub lacks_symbols: bool,
    /// Every function whose share changed, largest change first.
    pub functions: Vec<benchgate_profile::FunctionChange>,
    pub svg: Option<String>,
}

/// `GET /api/v1/comparisons/{id}/profile`.
pub async fn json(
    State(app): State<AppState>,
    Path(id): Path<i64>,
) -> Result<Json<ProfileJson>, ApiError> {
    let (profile, runner) = newest(&app, id).await?;
    let url = app.config.github.comparison_url(id);
    let (event, unavailable, runs) = (
        profile.event.clone(),
        profile.unavailable.clone(),
        profile.runs,
    );
    Ok(Json(
        match report::profile_view(profile, runner.clone(), &url) {
            ProfileView::Ready(p) => ProfileJson {
                comparison: id,
                runner,
                event,
                unavailable,
                runs,
                base_samples: p.base_samples,
                head_samples: p.head_samples,
                lacks_symbols: p.lacks_symbols,
                functions: p.functions,
                svg: Some(p.svg_url),
            },
            _ => ProfileJson {
                comparison: id,
                runner,
                event,
                unavailable,
                runs,
                base_samples: 0,
                head_samples: 0,
                lacks_symbols: false,
                functions: Vec::new(),
                svg: None,
            },
        },
    ))
}
