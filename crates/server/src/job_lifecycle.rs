//! What follows each step of a job's life, whoever reports it: a claim described for the agent
//! (run length, whether to stop once decided) and the calibration it may need, an uploaded
//! round analysed, a finished job's metrics, noise floor, analysis and canary score. The agent
//! API (`http/agent_api.rs`) calls these after the store accepted the step.

use benchgate_api::agent as wire;
use benchgate_store::{ClaimedJob, Job, JobKind, JobOutcome, RunnerId, StoreError};

use crate::{Domain, calibration, comparison_analysis};

/// Why a claimed job was not handed out.
pub enum ClaimProblem {
    /// The job itself cannot run (its repository is gone, its config unreadable): fail it.
    Unrunnable(String),
    /// The store failed: release the job for a later claim.
    Store(StoreError),
}

/// The wire form of a claimed job, or why it cannot be handed out.
pub async fn describe_claim(
    app: &Domain,
    claimed: &ClaimedJob,
    runner: &benchgate_store::model::Runner,
) -> Result<wire::ClaimedJob, ClaimProblem> {
    let job = &claimed.job;
    let repository = app
        .store
        .repository(job.repository_id)
        .await
        .map_err(ClaimProblem::Store)?
        .ok_or_else(|| ClaimProblem::Unrunnable("the job's repository is gone".into()))?;
    let mut benchmark = job.config.benchmark.clone();
    benchmark.rounds = u32::try_from(job.rounds).unwrap_or(benchmark.rounds);
    let sides = job.config.side_envs().map_err(ClaimProblem::Unrunnable)?;
    if benchmark.measure_auto && job.kind == JobKind::Comparison {
        match crate::run_length::chosen_secs(app.store.as_ref(), runner.id, job)
            .await
            .map_err(ClaimProblem::Store)?
        {
            Some(advice) => {
                benchmark.measure_secs = advice.best_secs.or(benchmark.measure_secs);
                tracing::info!(
                    job = %job.id,
                    measure_secs = ?benchmark.measure_secs,
                    calibration = %advice.calibration,
                    benchmark = %advice.benchmark,
                    within_share = advice.within_share,
                    "run length chosen from this runner's A/A session (measure = \"auto\")"
                );
            }
            None => tracing::info!(
                job = %job.id,
                measure_secs = ?benchmark.measure_secs,
                "no A/A session of this suite on this runner tells a run length yet; \
                 measuring the reference length (measure = \"auto\")"
            ),
        }
    }
    if let (Some(counts), Some(id), JobKind::Comparison) =
        (benchmark.counts, job.comparison_id, job.kind)
        && comparison_analysis::counted_already(&app.store, id, runner, counts.metric())
            .await
            .map_err(ClaimProblem::Store)?
    {
        tracing::info!(job = %job.id, "this comparison's runs are counted already on this runner; the job only times");
        benchmark.counts = None;
    }
    // Decided already (a `/rebench` of an answered comparison): the rounds asked for all run.
    let stop_when_decided = match job.comparison_id {
        Some(id)
            if job.kind == JobKind::Comparison
                && job.profile.is_none()
                && comparison_analysis::stops_when_decided(&job.config) =>
        {
            !comparison_analysis::gate_answered(&app.store, id, runner)
                .await
                .map_err(ClaimProblem::Store)?
        }
        _ => false,
    };
    Ok(wire::ClaimedJob {
        job_id: job.id.0,
        attempt: job.attempts,
        lease_token: claimed.lease.0.clone(),
        lease_expires_at: claimed.lease_expires_at,
        kind: match job.kind {
            JobKind::Comparison => wire::JobKind::Comparison,
            JobKind::Calibration => wire::JobKind::Calibration,
        },
        repository: wire::RepositorySpec {
            name: repository.full_name,
            clone_url: repository.clone_url,
        },
        base_sha: job.base_sha.clone(),
        head_sha: job.head_sha.clone(),
        benchmark,
        heartbeat_secs: (app.config.lease.as_secs() / 3).max(1),
        profile: job.profile.clone(),
        sides,
        stop_when_decided,
    })
}

/// Fails a claimed job no agent could run, so the queue moves on.
pub async fn reject_unrunnable(
    app: &Domain,
    claimed: &ClaimedJob,
    reason: String,
) -> Result<(), StoreError> {
    tracing::warn!(job = %claimed.job.id, %reason, "claimed job cannot run; failed");
    let outcome = JobOutcome::Failed {
        reason,
        log_tail: String::new(),
    };
    match app
        .store
        .complete_job(claimed.job.id, &claimed.lease, &outcome)
        .await
    {
        Ok(()) | Err(StoreError::LeaseLost) => Ok(()),
        Err(e) => Err(e),
    }
}

/// After a job is handed out: a comparison job makes sure its runner has a noise floor.
pub async fn after_claim(app: &Domain, runner: RunnerId, job: &Job) {
    if job.kind == JobKind::Comparison {
        calibration::ensure_calibrated(app, runner, job).await;
    }
}

/// After a round is stored: the comparison's results for this runner, and how far its gate
/// is from an answer (which the agent reads to stop early or to skip decided benchmarks).
pub async fn after_round(
    app: &Domain,
    job: &Job,
    runner: &benchgate_store::model::Runner,
) -> comparison_analysis::GateProgress {
    let Some(comparison) = job.comparison_id else {
        return comparison_analysis::GateProgress::default();
    };
    comparison_analysis::refresh_comparison(app, comparison).await;
    // A store error only costs rounds: the job runs on as planned, every benchmark.
    let progress = comparison_analysis::gate_progress(&app.store, comparison, runner)
        .await
        .unwrap_or_default();
    if progress.answered {
        tracing::info!(comparison = %comparison, "the gate has its answer on this runner");
    }
    progress
}

/// After a job ended: its metrics; an A/A session updates the runner's noise floor; a
/// comparison job's results are analysed again and a canary is scored.
pub async fn after_complete(app: &Domain, job: &Job, outcome: &JobOutcome) {
    let succeeded = matches!(
        outcome,
        JobOutcome::Succeeded { .. } | JobOutcome::IdenticalBuild { .. }
    );
    tracing::info!(succeeded, "job completed");
    app.metrics
        .job_finished(job.kind, succeeded, job.started_at);
    match (job.kind, outcome) {
        (JobKind::Calibration, JobOutcome::Succeeded { .. }) => {
            calibration::record_session(&app.store, job).await;
        }
        (JobKind::Comparison, _) => {
            if let Some(comparison) = job.comparison_id {
                comparison_analysis::refresh_comparison(app, comparison).await;
                crate::audit::after_job(&app.store, comparison).await;
            }
        }
        _ => {}
    }
}
