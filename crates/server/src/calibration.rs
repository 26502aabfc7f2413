//! A/A calibration: the same sha on both sides, pinned to one runner, gives that runner's noise
//! floor per (repository, benchmark, metric). Enqueued when a runner first serves a repository,
//! again every `BENCHGATE_CALIBRATION_INTERVAL`, and on demand (`/rebench aa`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use benchgate_stats::paired::{mean_sd, paired_log_ratios};
use benchgate_store::{
    AaSession, ComparisonId, FloorKey, Job, JobId, NewCalibration, NoiseFloor, Priority,
    RepositoryId, RunnerId, RunnerSeries, Store, StoreError,
};
use chrono::Utc;

use crate::Domain;
use crate::comparison_analysis::{ALPHA, pair_samples};
use benchgate_api::agent::StoredComparisonConfig;

/// Fewest measured rounds of an A/A session (two pairs give no usable spread).
pub const MIN_ROUNDS: i64 = 5;

/// Parses an interval such as `24h`, `30m`, `90s`, `2d` or `1h30m` (a bare number is seconds).
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let bad = || format!("expected an interval such as \"24h\", \"30m\" or \"90s\", got {text:?}");
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let (mut total, mut number) = (0u64, String::new());
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = number.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
        number.clear();
    }
    if !number.is_empty() || total == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

/// An A/A job of `sha` pinned to one runner, at least [`MIN_ROUNDS`] rounds.
fn calibration_job(
    app: &Domain,
    runner_id: RunnerId,
    repository_id: RepositoryId,
    sha: &str,
    runner_label: &str,
    config: &StoredComparisonConfig,
    priority: Priority,
) -> NewCalibration {
    let rounds = i64::from(config.config.benchmark.rounds).max(MIN_ROUNDS);
    NewCalibration {
        runner_id,
        repository_id,
        sha: sha.to_owned(),
        runner_label: runner_label.to_owned(),
        config: config.clone(),
        rounds,
        priority,
        max_attempts: app.config.max_attempts,
    }
}

/// Layout sessions per layout calibration: builds compared in pairs, each with fresh salts;
/// as many as the layout spread needs to count, so one calibration is enough.
pub const LAYOUT_SESSIONS: usize = benchgate_stats::floor::MIN_LAYOUT_SESSIONS;

/// When the suite has `layout_salt`, enqueues [`LAYOUT_SESSIONS`] A/A sessions beside `aa`,
/// each with its sides built under two fresh salts, so the floor learns how far code layout
/// alone moves a benchmark. Returns the jobs enqueued.
async fn enqueue_layout_sessions(
    store: &Arc<dyn Store>,
    aa: &NewCalibration,
) -> Result<Vec<JobId>, StoreError> {
    if aa.config.benchmark.layout_salt.is_none() {
        return Ok(Vec::new());
    }
    let mut jobs = Vec::with_capacity(LAYOUT_SESSIONS);
    for _ in 0..LAYOUT_SESSIONS {
        let salt = || uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let mut config = aa.config.clone();
        config.layout = Some(benchgate_api::agent::LayoutSalts {
            base: salt(),
            head: salt(),
        });
        let job = store
            .enqueue_calibration(&NewCalibration {
                config,
                ..aa.clone()
            })
            .await?;
        jobs.push(job);
    }
    tracing::info!(runner = %aa.runner_id, repository = %aa.repository_id, jobs = jobs.len(), "layout sessions enqueued");
    Ok(jobs)
}

/// Enqueues an A/A job of `sha` pinned to one runner (`/rebench aa`), with layout sessions
/// when the suite has `layout_salt`.
pub async fn request_calibration(
    app: &Domain,
    runner_id: RunnerId,
    repository_id: RepositoryId,
    sha: &str,
    runner_label: &str,
    config: &StoredComparisonConfig,
    priority: Priority,
) -> Result<JobId, StoreError> {
    let new = calibration_job(
        app,
        runner_id,
        repository_id,
        sha,
        runner_label,
        config,
        priority,
    );
    let job = app.store.enqueue_calibration(&new).await?;
    tracing::info!(job = %job, runner = %runner_id, repository = %repository_id, rounds = new.rounds, "calibration enqueued");
    enqueue_layout_sessions(&app.store, &new).await?;
    Ok(job)
}

/// `/rebench aa`: a fresh A/A session of the comparison's base on every runner of its label,
/// ahead of other work. Returns the jobs enqueued.
pub async fn calibrate_comparison(
    app: &Domain,
    id: ComparisonId,
) -> Result<Vec<JobId>, StoreError> {
    let comparison = app
        .store
        .comparison(id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("comparison {id}")))?;
    let mut jobs = Vec::new();
    for runner in app.store.list_runners().await? {
        if runner.revoked_at.is_none() && runner.labels.contains(&comparison.runner_label) {
            let job = request_calibration(
                app,
                runner.id,
                comparison.repository_id,
                &comparison.base_sha,
                &comparison.runner_label,
                &comparison.config,
                Priority::INTERACTIVE,
            )
            .await?;
            jobs.push(job);
        }
    }
    Ok(jobs)
}

/// A runner just claimed an A/B job: if it never calibrated on this repository, an A/A job
/// of the job's base goes ahead of its other work. Failures are logged; the claim stands.
pub async fn ensure_calibrated(app: &Domain, runner_id: RunnerId, job: &Job) {
    // The store checks and enqueues under the runner's row lock: claims on two replicas at
    // once still enqueue one job.
    let new = calibration_job(
        app,
        runner_id,
        job.repository_id,
        &job.base_sha,
        &job.runner_label,
        &job.config,
        Priority::INTERACTIVE,
    );
    let result = match app.store.enqueue_calibration_unless_since(&new, None).await {
        Ok(Some(id)) => {
            tracing::info!(job = %id, runner = %runner_id, repository = %job.repository_id, "first calibration enqueued");
            enqueue_layout_sessions(&app.store, &new).await.map(drop)
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        tracing::error!(runner = %runner_id, error = ?e, "cannot enqueue first calibration");
    }
}

/// A calibration job succeeded: records its session per benchmark and metric and recomputes
/// each floor from all its sessions. Failures are logged.
/// (The background loop records it later if this fails: see [`record_missing_sessions`].)
#[tracing::instrument(skip_all, fields(job = %job.id))]
pub async fn record_session(store: &Arc<dyn Store>, job: &Job) {
    if let Err(e) = record_session_inner(store, job).await {
        tracing::error!(error = ?e, "cannot update the noise floor");
    }
}

/// Calibration jobs looked at per pass of [`record_missing_sessions`].
const MISSING_SESSIONS_BATCH: i64 = 20;

/// Records the sessions of calibration jobs that finished within the last `interval` but have
/// none: the server stopped, or the store failed, between completing the job and recording
/// its session (older ones have been followed by a newer calibration). Recording replaces an
/// earlier record of the same job, so a job recorded twice is harmless. Returns how many jobs
/// gained a session.
pub async fn record_missing_sessions(
    store: &Arc<dyn Store>,
    interval: Duration,
) -> Result<usize, StoreError> {
    let jobs = store
        .calibrations_without_session(ago(interval), MISSING_SESSIONS_BATCH)
        .await?;
    let mut recorded = 0;
    for job in &jobs {
        // A job whose samples give no usable session stays without one; it is retried each
        // pass until it is older than the interval, hence no louder log for it.
        let sessions = record_session_inner(store, job).await?;
        if sessions > 0 {
            tracing::warn!(job = %job.id, sessions, "recorded a calibration session lost at completion");
            recorded += 1;
        } else {
            tracing::debug!(job = %job.id, "calibration job has no usable session");
        }
    }
    Ok(recorded)
}

/// Records a job's sessions and recomputes their floors; returns how many sessions it had.
async fn record_session_inner(store: &Arc<dyn Store>, job: &Job) -> Result<usize, StoreError> {
    let mut samples: HashMap<JobId, Vec<RunnerSeries>> = HashMap::new();
    samples.insert(job.id, store.job_samples(job.id).await?);
    let mut keys = Vec::new();
    for series in &samples[&job.id] {
        for ((benchmark, metric), pairs) in pair_samples(&series.samples) {
            let Ok(d) = paired_log_ratios(&pairs.base, &pairs.head) else {
                continue;
            };
            let Ok(summary) = mean_sd(&d) else { continue };
            if d.len() < 2 {
                continue;
            }
            let key = FloorKey {
                runner_id: series.runner_id,
                repository_id: job.repository_id,
                benchmark,
                metric,
            };
            store
                .record_aa_session(&AaSession {
                    job_id: Some(job.id),
                    key: key.clone(),
                    pairs: d.len() as i64,
                    mean: summary.mean,
                    spread: summary.sd,
                    layout: job.config.layout.is_some(),
                    recorded_at: Utc::now(),
                })
                .await?;
            keys.push(key);
        }
    }
    let recorded = keys.len();
    for key in keys {
        update_floor(store, &key, &mut samples).await?;
    }
    Ok(recorded)
}

/// Recomputes one floor from the raw log-ratios of every session recorded for it: the A/A
/// sessions give `s_aa` and `tau_b`, the layout sessions (sides built with different salts)
/// the spread between builds, by the same formula as `tau_b`.
async fn update_floor(
    store: &Arc<dyn Store>,
    key: &FloorKey,
    samples: &mut HashMap<JobId, Vec<RunnerSeries>>,
) -> Result<(), StoreError> {
    let mut sessions = Vec::new();
    let mut layout_sessions = Vec::new();
    // The A/A sessions' runs per side, for the slow mode's frequency beside the floor.
    let mut aa_runs = Vec::new();
    let mut direction = benchgate_api::Direction::default();
    for session in store.aa_sessions(key).await? {
        let Some(job_id) = session.job_id else {
            continue;
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = samples.entry(job_id) {
            slot.insert(store.job_samples(job_id).await?);
        }
        let found = samples[&job_id]
            .iter()
            .filter(|s| s.runner_id == key.runner_id)
            .filter_map(|s| {
                pair_samples(&s.samples).remove(&(key.benchmark.clone(), key.metric.clone()))
            })
            .filter_map(|p| Some((paired_log_ratios(&p.base, &p.head).ok()?, p)))
            .find(|(d, _)| d.len() >= 2);
        let Some((log_ratios, pairs)) = found else {
            continue;
        };
        if session.layout {
            layout_sessions.push(log_ratios);
        } else {
            sessions.push(log_ratios);
            direction = pairs.direction;
            aa_runs.push((pairs.base, pairs.head));
        }
    }
    // None below the minimum of salted builds; an interval from there on.
    let layout = match benchgate_stats::floor::layout_spread(&layout_sessions, ALPHA) {
        Ok(layout) => layout,
        Err(e) => {
            tracing::warn!(benchmark = %key.benchmark, metric = %key.metric, error = %e, "no layout spread from these sessions");
            None
        }
    };
    let floor = match benchgate_stats::NoiseFloor::from_sessions(&sessions) {
        Ok(floor) => floor,
        Err(e) => {
            tracing::warn!(benchmark = %key.benchmark, metric = %key.metric, error = %e, "no floor from these sessions");
            return Ok(());
        }
    };
    let slow_mode = crate::floor_modes::tally(&aa_runs, direction);
    store
        .update_noise_floor(&NoiseFloor {
            key: key.clone(),
            pairs: floor.pairs as i64,
            sessions: floor.sessions as i64,
            within_spread: floor.s_aa,
            between_bias: floor.tau_b,
            layout_bias: layout.map(|l| l.point),
            layout_lower: layout.map(|l| l.lower),
            layout_upper: layout.map(|l| l.upper),
            slow_mode: Some(slow_mode.clone()),
            computed_at: Utc::now(),
        })
        .await?;
    tracing::info!(runner = %key.runner_id, benchmark = %key.benchmark, metric = %key.metric, sessions = floor.sessions, s_aa = floor.s_aa, tau_b = floor.tau_b, layout_sessions = layout_sessions.len(), tau_layout = ?layout.map(|l| (l.lower, l.point, l.upper)), slow_runs = slow_mode.slow_runs, mode_runs = slow_mode.runs, "noise floor updated");
    Ok(())
}

/// `interval` before now, but not before the Unix epoch (every database can store that).
fn ago(interval: Duration) -> chrono::DateTime<Utc> {
    let epoch = chrono::DateTime::<Utc>::UNIX_EPOCH;
    chrono::Duration::from_std(interval)
        .ok()
        .and_then(|d| Utc::now().checked_sub_signed(d))
        .map_or(epoch, |t| t.max(epoch))
}

pub(crate) async fn recalibrate_due(app: &Domain, interval: Duration) -> Result<(), StoreError> {
    let due_before = ago(interval);
    let comparisons = app.store.recent_comparisons(200).await?;
    let runners = app.store.list_runners().await?;
    let mut seen = HashSet::new();
    // Newest comparison first: its base is the sha to measure.
    for comparison in &comparisons {
        for runner in runners
            .iter()
            .filter(|r| r.revoked_at.is_none() && r.labels.contains(&comparison.runner_label))
        {
            if !seen.insert((runner.id, comparison.repository_id)) {
                continue;
            }
            let last = app
                .store
                .latest_calibration(runner.id, comparison.repository_id)
                .await?;
            if last.is_some_and(|t| t < due_before) {
                let new = calibration_job(
                    app,
                    runner.id,
                    comparison.repository_id,
                    &comparison.base_sha,
                    &comparison.runner_label,
                    &comparison.config,
                    Priority::BACKGROUND,
                );
                // Checked again under the runner's lock: another replica may have just done it.
                if let Some(id) = app
                    .store
                    .enqueue_calibration_unless_since(&new, Some(due_before))
                    .await?
                {
                    tracing::info!(job = %id, runner = %runner.id, "recalibration enqueued");
                    enqueue_layout_sessions(&app.store, &new).await?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_like_humantime() {
        for (text, secs) in [
            ("24h", 86_400),
            ("30m", 1800),
            ("90s", 90),
            ("1h30m", 5400),
            ("2d", 172_800),
            ("45", 45),
        ] {
            assert_eq!(
                parse_interval(text),
                Ok(Duration::from_secs(secs)),
                "{text}"
            );
        }
        for text in ["", "h", "10x", "5m3", "0s"] {
            assert!(parse_interval(text).is_err(), "{text:?} should be rejected");
        }
    }
}
