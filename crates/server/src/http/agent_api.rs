//! The agent protocol under `/api/v1` (wire types in `benchgate_api::agent`): claim a job under
//! a lease, keep it alive, upload rounds, complete or release it. Every write names its lease;
//! a writer that lost it gets 409 and stops.

use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use axum::{Json, Router};
use benchgate_api::agent::{
    ClaimRequest, CompleteRequest, FingerprintRequest, HeartbeatRequest, HeartbeatResponse,
    PROFILE_SIDE_LIMIT, ProfileUpload, ReleaseRequest, RoundUpload, UploadReceipt,
};
use benchgate_store::{Job, JobId, LeaseToken, SampleInput, StoreError};

use crate::http::auth::RunnerAuth;
use crate::job_lifecycle::{self, ClaimProblem};
use crate::{ApiError, AppState};

/// How often a waiting claim asks the store again.
const CLAIM_POLL: Duration = Duration::from_millis(250);

/// Most samples one round may carry; more is a broken harness adapter, not data.
const MAX_SAMPLES_PER_ROUND: usize = 100_000;
/// The most benchmark-and-metric series one round may report: a large suite has thousands,
/// a runaway or hostile one would fill the store and every page with names.
const MAX_SERIES_PER_ROUND: usize = 20_000;

/// Longest benchmark, metric or unit name stored, in bytes.
const MAX_NAME_BYTES: usize = 512;

/// The agent routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/jobs/claim", post(claim))
        .route("/api/v1/jobs/{id}/heartbeat", post(heartbeat))
        .route("/api/v1/jobs/{id}/rounds", post(upload_round))
        .route("/api/v1/jobs/{id}/profile", post(upload_profile))
        .route("/api/v1/jobs/{id}/complete", post(complete))
        .route("/api/v1/jobs/{id}/release", post(release))
        .route("/api/v1/runners/me/fingerprint", put(fingerprint))
}

/// Maps a store error of a fenced write: a lost lease is 409, anything else stays internal.
fn fenced(e: StoreError) -> ApiError {
    match e {
        StoreError::LeaseLost => ApiError::Conflict("lease lost: stop working on this job".into()),
        StoreError::NotFound(what) => ApiError::NotFound(format!("{what} not found")),
        e => e.into(),
    }
}

/// The job, which must be held by this runner; otherwise 404 or 409.
async fn held_job(app: &AppState, id: i64, runner: &RunnerAuth) -> Result<Job, ApiError> {
    let job = app
        .store
        .job(JobId(id))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("job {id} not found")))?;
    if job.claimed_by != Some(runner.0.id) {
        return Err(fenced(StoreError::LeaseLost));
    }
    Ok(job)
}

/// Long-polls for a job: answers with the first one claimable under the runner's labels, or
/// 204 when none came within the wait.
#[tracing::instrument(skip_all, fields(runner = %runner.0.name))]
async fn claim(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Json(req): Json<ClaimRequest>,
) -> Result<Response, ApiError> {
    let labels = claim_labels(&runner.0.labels, &req.labels)?;
    let wait = req
        .wait_secs
        .map_or(app.config.claim_wait, Duration::from_secs)
        .min(app.config.claim_wait);
    let lease = app.config.lease;
    let deadline = Instant::now() + wait;
    loop {
        if let Some(claimed) = app.store.claim_job(runner.0.id, &labels, lease).await? {
            match job_lifecycle::describe_claim(&app, &claimed, &runner.0).await {
                Err(ClaimProblem::Store(e)) => {
                    // The database hiccuped, not the job: give it back untouched.
                    let _ = app.store.release_job(claimed.job.id, &claimed.lease).await;
                    tracing::warn!(job = %claimed.job.id, error = %e, "claimed job released: store error");
                    return Err(ApiError::Unavailable(
                        "the database did not answer; try again".into(),
                    ));
                }
                Ok(job) => {
                    tracing::info!(job = %claimed.job.id, attempt = claimed.job.attempts, kind = claimed.job.kind.as_str(), "job claimed");
                    job_lifecycle::after_claim(&app, runner.0.id, &claimed.job).await;
                    return Ok(Json(job).into_response());
                }
                Err(ClaimProblem::Unrunnable(reason)) => {
                    job_lifecycle::reject_unrunnable(&app, &claimed, reason).await?
                }
            }
            continue;
        }
        if Instant::now() >= deadline || app.shutdown.is_cancelled() {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        tokio::select! {
            _ = tokio::time::sleep(CLAIM_POLL) => {}
            _ = app.shutdown.cancelled() => {}
        }
    }
}

/// The labels to claim for: the requested subset of the runner's registered labels (all of
/// them when none requested).
fn claim_labels(registered: &[String], requested: &[String]) -> Result<Vec<String>, ApiError> {
    if requested.is_empty() {
        return Ok(registered.to_vec());
    }
    let labels: Vec<String> = requested
        .iter()
        .filter(|l| registered.contains(l))
        .cloned()
        .collect();
    if labels.is_empty() {
        return Err(ApiError::BadRequest(format!(
            "none of the labels {requested:?} is registered for this runner (registered: {registered:?})"
        )));
    }
    Ok(labels)
}

/// Extends the lease and tells the agent whether the job was cancelled.
#[tracing::instrument(skip_all, fields(job = id, runner = %runner.0.name))]
async fn heartbeat(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Path(id): Path<i64>,
    Json(req): Json<HeartbeatRequest>,
) -> Result<Json<HeartbeatResponse>, ApiError> {
    held_job(&app, id, &runner).await?;
    let lease = app.config.lease;
    let beat = app
        .store
        .heartbeat(JobId(id), &LeaseToken(req.lease_token), lease)
        .await
        .map_err(fenced)?;
    tracing::debug!(rounds_done = req.rounds_done, "heartbeat");
    Ok(Json(HeartbeatResponse {
        lease_expires_at: beat.lease_expires_at,
        cancelled: beat.cancel_requested,
    }))
}

/// Stores one finished round (idempotently, under the lease), then updates the comparison's
/// results for this runner.
#[tracing::instrument(skip_all, fields(job = id, runner = %runner.0.name, round = req.round))]
async fn upload_round(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Path(id): Path<i64>,
    Json(req): Json<RoundUpload>,
) -> Result<Json<UploadReceipt>, ApiError> {
    let job = held_job(&app, id, &runner).await?;
    if req.attempt != job.attempts {
        return Err(fenced(StoreError::LeaseLost));
    }
    check_round(&req, &job)?;
    let upload = benchgate_store::RoundUpload {
        round: req.round,
        samples: req
            .samples
            .into_iter()
            .map(|s| SampleInput {
                side: s.side,
                position: s.position,
                measurement: s.measurement,
            })
            .collect(),
    };
    let receipt = app
        .store
        .upload_round(job.id, &LeaseToken(req.lease_token), &upload)
        .await
        .map_err(fenced)?;
    let progress = job_lifecycle::after_round(&app, &job, &runner.0).await;
    Ok(Json(UploadReceipt {
        inserted: receipt.inserted,
        duplicates: receipt.duplicates,
        decided: progress.answered,
        undecided: progress.undecided,
    }))
}

/// Stores a profile job's stacks (under the lease); the comparison's report then shows them.
#[tracing::instrument(skip_all, fields(job = id, runner = %runner.0.name))]
async fn upload_profile(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Path(id): Path<i64>,
    Json(req): Json<ProfileUpload>,
) -> Result<StatusCode, ApiError> {
    let job = held_job(&app, id, &runner).await?;
    if job.profile.is_none() {
        return Err(ApiError::BadRequest(format!(
            "job {id} measures rounds; upload them to /api/v1/jobs/{id}/rounds"
        )));
    }
    for (side, text) in [("base", &req.base), ("head", &req.head)] {
        if text.len() > PROFILE_SIDE_LIMIT {
            return Err(ApiError::BadRequest(format!(
                "{side} stacks are {} bytes; at most {PROFILE_SIDE_LIMIT} (cap them with benchgate_profile::Limits)",
                text.len()
            )));
        }
        if let Err(e) = benchgate_profile::Folded::parse(text) {
            return Err(ApiError::BadRequest(format!("{side} stacks: {e}")));
        }
    }
    let one_line = |s: Option<String>| {
        s.map(|s| {
            s.lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(300)
                .collect::<String>()
        })
    };
    let profile = benchgate_store::NewProfile {
        event: one_line(req.event),
        unavailable: one_line(req.unavailable),
        runs: i64::from(req.runs),
        base_folded: req.base,
        head_folded: req.head,
    };
    app.store
        .record_profile(job.id, &LeaseToken(req.lease_token), &profile)
        .await
        .map_err(fenced)?;
    tracing::info!(
        event = profile.event.as_deref().unwrap_or("none"),
        unavailable = profile.unavailable.as_deref().unwrap_or(""),
        base_bytes = profile.base_folded.len(),
        head_bytes = profile.head_folded.len(),
        "profile stored"
    );
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses a round the store could not keep faithfully: a NUL byte or an overlong name (names
/// come from the benchmark's own output), a non-finite value, or an absurd number of samples.
fn check_round(req: &RoundUpload, job: &Job) -> Result<(), ApiError> {
    let bad = |what: String| Err(ApiError::BadRequest(format!("round {}: {what}", req.round)));
    if req.round < 0 || req.round >= job.rounds {
        return bad(format!(
            "this job plans rounds 0 to {}; round {} is outside its plan",
            job.rounds - 1,
            req.round
        ));
    }
    if req.samples.len() > MAX_SAMPLES_PER_ROUND {
        return bad(format!(
            "{} samples; at most {MAX_SAMPLES_PER_ROUND} per round",
            req.samples.len()
        ));
    }
    let series: std::collections::HashSet<(&str, &str)> = req
        .samples
        .iter()
        .map(|s| {
            (
                s.measurement.benchmark.as_str(),
                s.measurement.metric.as_str(),
            )
        })
        .collect();
    if series.len() > MAX_SERIES_PER_ROUND {
        return bad(format!(
            "{} benchmark and metric series; at most {MAX_SERIES_PER_ROUND} per round",
            series.len()
        ));
    }
    for s in &req.samples {
        let m = &s.measurement;
        for (field, text) in [
            ("benchmark", &m.benchmark),
            ("metric", &m.metric),
            ("unit", &m.unit),
        ] {
            if text.contains('\0') || text.len() > MAX_NAME_BYTES {
                let shown: String = text.chars().take(60).collect();
                return bad(format!(
                    "{field} name {shown:?} has a NUL byte or is over {MAX_NAME_BYTES} bytes"
                ));
            }
        }
        if let Some(why) = benchgate_api::sample::implausible(m.value) {
            return bad(format!("{} {}: {why}", m.benchmark, m.metric));
        }
    }
    Ok(())
}

/// Ends a job; a finished A/A session updates the runner's noise floor.
#[tracing::instrument(skip_all, fields(job = id, runner = %runner.0.name))]
async fn complete(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Path(id): Path<i64>,
    Json(req): Json<CompleteRequest>,
) -> Result<StatusCode, ApiError> {
    let job = held_job(&app, id, &runner).await?;
    let outcome = req.outcome;
    app.store
        .complete_job(job.id, &LeaseToken(req.lease_token), &outcome)
        .await
        .map_err(fenced)?;
    job_lifecycle::after_complete(&app, &job, &outcome).await;
    Ok(StatusCode::NO_CONTENT)
}

/// Gives the job back to the queue without using up an attempt (the agent is stopping).
#[tracing::instrument(skip_all, fields(job = id, runner = %runner.0.name))]
async fn release(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Path(id): Path<i64>,
    Json(req): Json<ReleaseRequest>,
) -> Result<StatusCode, ApiError> {
    held_job(&app, id, &runner).await?;
    app.store
        .release_job(JobId(id), &LeaseToken(req.lease_token))
        .await
        .map_err(fenced)?;
    tracing::info!("job released");
    Ok(StatusCode::NO_CONTENT)
}

/// Records what machine the runner is (CPU, cores, kernel, governor…).
#[tracing::instrument(skip_all, fields(runner = %runner.0.name))]
async fn fingerprint(
    State(app): State<AppState>,
    runner: RunnerAuth,
    Json(req): Json<FingerprintRequest>,
) -> Result<StatusCode, ApiError> {
    app.store
        .touch_runner(runner.0.id, Some(&req.fingerprint))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
