//! Row → domain type decoders; compiled into each backend.

use crate::StoreError;
use crate::model::*;
use benchgate_api::agent::StoredComparisonConfig;
use sqlx::Row as _;
use sqlx::types::Json;

type DbRow = <super::Db as sqlx::Database>::Row;

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("unknown {what} {value:?}"))
}

pub(super) fn runner(row: &DbRow) -> Result<Runner, StoreError> {
    Ok(Runner {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        labels: row.try_get::<Json<Vec<String>>, _>("labels")?.0,
        fingerprint: row
            .try_get::<Option<Json<benchgate_api::MachineFingerprint>>, _>("fingerprint")?
            .map(|j| j.0),
        created_at: row.try_get("created_at")?,
        last_seen_at: row.try_get("last_seen_at")?,
        revoked_at: row.try_get("revoked_at")?,
        audit_since: row.try_get("audit_since")?,
    })
}

pub(super) fn repository(row: &DbRow) -> Result<Repository, StoreError> {
    Ok(Repository {
        id: row.try_get("id")?,
        github_id: row.try_get("github_id")?,
        installation_id: row.try_get("installation_id")?,
        full_name: row.try_get("full_name")?,
        clone_url: row.try_get("clone_url")?,
        forge: {
            let word: String = row.try_get("forge")?;
            Forge::parse(&word).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "repository forge {word:?} is not one benchgate knows"
                ))
            })?
        },
        created_at: row.try_get("created_at")?,
        removed_at: row.try_get("removed_at")?,
    })
}

pub(super) fn comparison(row: &DbRow) -> Result<Comparison, StoreError> {
    let state: String = row.try_get("state")?;
    let kind: String = row.try_get("kind")?;
    Ok(Comparison {
        id: row.try_get("id")?,
        repository_id: row.try_get("repository_id")?,
        repository: row.try_get("repository")?,
        pr_number: row.try_get("pr_number")?,
        base_sha: row.try_get("base_sha")?,
        head_sha: row.try_get("head_sha")?,
        runner_label: row.try_get("runner_label")?,
        kind: ComparisonKind::parse(&kind).ok_or_else(|| corrupt("comparison kind", &kind))?,
        config: row.try_get::<Json<StoredComparisonConfig>, _>("config")?.0,
        planned_rounds: row.try_get("planned_rounds")?,
        state: ComparisonState::parse(&state).ok_or_else(|| corrupt("comparison state", &state))?,
        check_run_id: row.try_get("check_run_id")?,
        rounds_generation: row.try_get("rounds_generation")?,
        check_run_generation: row.try_get("check_run_generation")?,
        check_run_completed: row.try_get("check_run_completed")?,
        main: main_info(row)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn main_info(row: &DbRow) -> Result<Option<MainInfo>, StoreError> {
    let Some(branch) = row.try_get::<Option<String>, _>("branch")? else {
        return Ok(None);
    };
    let kind: String = row
        .try_get::<Option<String>, _>("main_kind")?
        .unwrap_or_default();
    let commits: String = row
        .try_get::<Option<String>, _>("main_commits")?
        .unwrap_or_else(|| "[]".into());
    Ok(Some(MainInfo {
        branch,
        kind: MainKind::parse(&kind).ok_or_else(|| corrupt("main kind", &kind))?,
        suite: row
            .try_get::<Option<String>, _>("main_suite")?
            .unwrap_or_default(),
        commits: serde_json::from_str(&commits)
            .map_err(|e| corrupt("main commits", &e.to_string()))?,
    }))
}

pub(super) fn job(row: &DbRow) -> Result<Job, StoreError> {
    let kind: String = row.try_get("kind")?;
    let state: String = row.try_get("state")?;
    Ok(Job {
        id: row.try_get("id")?,
        kind: JobKind::parse(&kind).ok_or_else(|| corrupt("job kind", &kind))?,
        comparison_id: row.try_get("comparison_id")?,
        repository_id: row.try_get("repository_id")?,
        base_sha: row.try_get("base_sha")?,
        head_sha: row.try_get("head_sha")?,
        config: row.try_get::<Json<StoredComparisonConfig>, _>("config")?.0,
        runner_label: row.try_get("runner_label")?,
        pinned_runner_id: row.try_get("pinned_runner_id")?,
        rounds: row.try_get("rounds")?,
        priority: Priority(row.try_get("priority")?),
        state: JobState::parse(&state).ok_or_else(|| corrupt("job state", &state))?,
        cancel_requested: row.try_get("cancel_requested")?,
        lease_expires_at: row.try_get("lease_expires_at")?,
        claimed_by: row.try_get("claimed_by")?,
        attempts: row.try_get("attempts")?,
        max_attempts: row.try_get("max_attempts")?,
        last_error: row.try_get("last_error")?,
        log_tail: row.try_get("log_tail")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        profile: row
            .try_get::<Option<Json<benchgate_api::agent::ProfileRequest>>, _>("profile")?
            .map(|j| j.0),
        identical_build: row
            .try_get::<Option<Json<benchgate_api::agent::IdenticalBuild>>, _>("identical_build")?
            .map(|j| j.0),
    })
}

pub(super) fn profile(row: &DbRow) -> Result<StoredProfile, StoreError> {
    Ok(StoredProfile {
        job_id: row.try_get("job_id")?,
        comparison_id: row.try_get("comparison_id")?,
        runner_id: row.try_get("runner_id")?,
        event: row.try_get("event")?,
        unavailable: row.try_get("unavailable")?,
        runs: row.try_get("runs")?,
        base_folded: row.try_get("base_folded")?,
        head_folded: row.try_get("head_folded")?,
        created_at: row.try_get("created_at")?,
    })
}

pub(super) fn sample(row: &DbRow) -> Result<Sample, StoreError> {
    let side: String = row.try_get("side")?;
    Ok(Sample {
        job_id: row.try_get("job_id")?,
        attempt: row.try_get("attempt")?,
        runner_id: row.try_get("runner_id")?,
        round: row.try_get("round")?,
        side: match side.as_str() {
            "base" => benchgate_api::Side::Base,
            "head" => benchgate_api::Side::Head,
            other => return Err(corrupt("side", other)),
        },
        position: row.try_get("position")?,
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
        unit: row.try_get("unit")?,
        value: row.try_get("value")?,
        lower: row.try_get("lower")?,
        upper: row.try_get("upper")?,
        direction: {
            let name: String = row.try_get("direction")?;
            benchgate_api::Direction::from_name(&name).ok_or_else(|| corrupt("direction", &name))?
        },
        recorded_at: row.try_get("recorded_at")?,
    })
}

pub(super) fn floor_key(row: &DbRow) -> Result<FloorKey, StoreError> {
    Ok(FloorKey {
        runner_id: row.try_get("runner_id")?,
        repository_id: row.try_get("repository_id")?,
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
    })
}

pub(super) fn noise_floor(row: &DbRow) -> Result<NoiseFloor, StoreError> {
    Ok(NoiseFloor {
        key: floor_key(row)?,
        pairs: row.try_get("pairs")?,
        sessions: row.try_get("sessions")?,
        within_spread: row.try_get("within_spread")?,
        between_bias: row.try_get("between_bias")?,
        layout_bias: row.try_get("layout_bias")?,
        layout_lower: row.try_get("layout_lower")?,
        layout_upper: row.try_get("layout_upper")?,
        slow_mode: slow_mode_tally(row)?,
        computed_at: row.try_get("computed_at")?,
    })
}

/// The floor's slow-mode columns, all set or (a floor from before they were counted) none.
fn slow_mode_tally(row: &DbRow) -> Result<Option<SlowModeTally>, StoreError> {
    let runs: Option<i64> = row.try_get("mode_runs")?;
    let slow_runs: Option<i64> = row.try_get("mode_slow_runs")?;
    let sessions: Option<i64> = row.try_get("mode_sessions")?;
    Ok(match (slow_runs, runs, sessions) {
        (Some(slow_runs), Some(runs), Some(sessions)) => Some(SlowModeTally {
            slow_runs,
            runs,
            sessions,
            excess: row.try_get("mode_excess")?,
        }),
        _ => None,
    })
}

pub(super) fn canary_result(row: &DbRow) -> Result<CanaryResult, StoreError> {
    let verdict: String = row.try_get("verdict")?;
    let at: Option<i64> = row.try_get("forecast_at")?;
    let rounds: Option<i64> = row.try_get("forecast_rounds")?;
    Ok(CanaryResult {
        comparison_id: row.try_get("comparison_id")?,
        runner_id: row.try_get("runner_id")?,
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
        planted_pct: row.try_get("planted_pct")?,
        verdict: serde_json::from_value(serde_json::Value::String(verdict.clone()))
            .map_err(|_| corrupt("canary verdict", &verdict))?,
        rounds: row.try_get("rounds")?,
        minutes: row.try_get("minutes")?,
        forecast: at.zip(rounds),
        recorded_at: row.try_get("recorded_at")?,
    })
}

pub(super) fn forecast(row: &DbRow) -> Result<Forecast, StoreError> {
    Ok(Forecast {
        comparison_id: row.try_get("comparison_id")?,
        runner_id: row.try_get("runner_id")?,
        benchmark: row.try_get("benchmark")?,
        metric: row.try_get("metric")?,
        at_rounds: row.try_get("at_rounds")?,
        needed: row.try_get("needed")?,
        made_at: row.try_get("made_at")?,
        decided_rounds: row.try_get("decided_rounds")?,
        decided_at: row.try_get("decided_at")?,
    })
}

pub(super) fn aa_session(row: &DbRow) -> Result<AaSession, StoreError> {
    Ok(AaSession {
        job_id: row.try_get("job_id")?,
        key: floor_key(row)?,
        pairs: row.try_get("pairs")?,
        mean: row.try_get("mean")?,
        spread: row.try_get("spread")?,
        layout: row.try_get("layout")?,
        recorded_at: row.try_get("recorded_at")?,
    })
}

pub(super) fn outbox_message(row: &DbRow, lease: &LeaseToken) -> Result<OutboxMessage, StoreError> {
    Ok(OutboxMessage {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        dedupe_key: row.try_get("dedupe_key")?,
        payload: row.try_get::<Json<serde_json::Value>, _>("payload")?.0,
        priority: Priority(row.try_get("priority")?),
        attempts: row.try_get("attempts")?,
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        lease: lease.clone(),
    })
}
