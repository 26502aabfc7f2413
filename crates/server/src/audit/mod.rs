//! A runner's audit: canaries run on it when it is idle (one commit against itself, or with
//! planted extra work on head), each scored as someone who stops at the first decision would
//! read it; every "needs N more rounds" is kept with what came. The audit then says, per
//! runner, how often its A/A canaries claimed a change (against α, with the exact interval),
//! how often planted changes were found and how soon, and how well forecasts held.
//! docs/statistics.md §9 explains the rates; docs/operations.md the schedule and its cost.

mod score;
mod view;

pub use score::{after_job, note_forecasts, score_canary, score_unscored};
pub use view::{
    FlagView, ForecastView, PlantedView, RateView, RoundsNow, RunnerAudit, audit_of, flag_words,
    runner_audit,
};

use benchgate_api::agent::Purpose;
use benchgate_store::model::ComparisonKind;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use benchgate_api::agent::{CanarySpec, PlantedBy, StoredComparisonConfig};
use benchgate_store::{
    ComparisonFilter, JobState, NewComparison, NewJob, Priority, Runner, StoreError,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::Domain;
use crate::comparison_analysis::ALPHA;

/// The flag's false-alarm rate over a runner's whole life (until a recalibration by hand): a
/// runner whose A/A canaries claim at α or less is ever flagged at most this often.
pub const FLAG_DELTA: f64 = ALPHA;

/// Canaries queue below everything else, scheduled calibration included.
pub const CANARY_PRIORITY: Priority = Priority(-20);

/// `--canary-every`: one interval for every label, or per label with `*` for the rest;
/// `off` for none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CanaryEvery {
    /// For labels not named; `None`: off.
    pub default: Option<Duration>,
    pub labels: BTreeMap<String, Option<Duration>>,
}

impl CanaryEvery {
    /// The interval of a label; `None` when its canaries are off.
    pub fn of(&self, label: &str) -> Option<Duration> {
        self.labels.get(label).copied().unwrap_or(self.default)
    }
}

impl FromStr for CanaryEvery {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let interval = |t: &str| -> Result<Option<Duration>, String> {
            if t.trim() == "off" {
                Ok(None)
            } else {
                crate::calibration::parse_interval(t).map(Some)
            }
        };
        let mut every = CanaryEvery::default();
        if !text.contains('=') {
            every.default = interval(text)?;
            return Ok(every);
        }
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (label, value) = part.split_once('=').ok_or_else(|| {
                format!("expected LABEL=INTERVAL (or *=INTERVAL), found {part:?}")
            })?;
            match label.trim() {
                "*" => every.default = interval(value)?,
                "" => return Err(format!("a label is missing before {value:?}")),
                label => {
                    every.labels.insert(label.to_owned(), interval(value)?);
                }
            }
        }
        Ok(every)
    }
}

impl fmt::Display for CanaryEvery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word =
            |d: &Option<Duration>| d.map_or("off".to_owned(), |d| format!("{}s", d.as_secs()));
        write!(f, "*={}", word(&self.default))?;
        for (label, d) in &self.labels {
            write!(f, ",{label}={}", word(d))?;
        }
        Ok(())
    }
}

/// clap's parser for `--canary-every`.
pub fn parse_canary_every(text: &str) -> Result<CanaryEvery, String> {
    text.parse()
}

/// One pass of the canary loop (public for tests, which pass the clock).
pub async fn tick(app: &Domain, now: DateTime<Utc>) -> Result<(), StoreError> {
    score_unscored(&app.store).await?;
    let jobs = app.store.active_jobs().await?;
    let runners = app.store.list_runners().await?;
    for runner in runners.iter().filter(|r| r.revoked_at.is_none()) {
        let running = jobs
            .iter()
            .find(|j| j.state == JobState::Running && j.claimed_by == Some(runner.id));
        let waiting = jobs
            .iter()
            .any(|j| j.state == JobState::Queued && !is_canary_job(j) && claimable(j, runner));
        if let Some(job) = running {
            if is_canary_job(job) && waiting {
                // A canary never delays work someone waits for: it ends, unscored.
                if let Some(id) = job.comparison_id {
                    app.store.cancel_comparison(id).await?;
                    tracing::info!(runner = %runner.name, comparison = %id, "canary yields to waiting work");
                }
            }
            continue;
        }
        let queued_canary = jobs
            .iter()
            .any(|j| j.state == JobState::Queued && is_canary_job(j) && claimable(j, runner));
        if waiting || queued_canary {
            continue;
        }
        if let Err(e) = start_due(app, runner, now).await {
            tracing::warn!(runner = %runner.name, error = %e, "cannot start a canary");
        }
    }
    Ok(())
}

fn is_canary_job(job: &benchgate_store::Job) -> bool {
    job.config.purpose() == Purpose::Canary
}

fn claimable(job: &benchgate_store::Job, runner: &Runner) -> bool {
    runner.labels.contains(&job.runner_label)
        && job.pinned_runner_id.is_none_or(|pin| pin == runner.id)
}

/// Starts a canary on an idle runner when one of its labels is due: A/A twice, then each
/// planted size, on the base of the newest comparison of that label.
/// Comparisons of every kind but `excluded`.
fn all_kinds_but(excluded: &[ComparisonKind]) -> ComparisonFilter {
    ComparisonFilter {
        kinds: ComparisonKind::ALL
            .into_iter()
            .filter(|k| !excluded.contains(k))
            .collect(),
        ..ComparisonFilter::default()
    }
}

async fn start_due(app: &Domain, runner: &Runner, now: DateTime<Utc>) -> Result<(), StoreError> {
    let every = &app.config.canary_every;
    let past = app.store.runner_canaries(runner.id, 1_000).await?;
    // Canaries and layout sessions are not workloads to copy; filtered in the query, so however
    // many of them ran lately, the newest real comparison is found.
    let source = app
        .store
        .find_comparisons(
            &all_kinds_but(&[ComparisonKind::Canary, ComparisonKind::LayoutSession]),
            200,
        )
        .await?
        .into_iter()
        .find(|c| runner.labels.contains(&c.runner_label) && every.of(&c.runner_label).is_some());
    let Some(source) = source else {
        return Ok(());
    };
    let interval = every.of(&source.runner_label).unwrap_or(Duration::MAX);
    let last = past.iter().map(|c| c.created_at).max();
    let due = last.is_none_or(|t| {
        chrono::Duration::from_std(interval).is_ok_and(|d| now.signed_duration_since(t) >= d)
    });
    if !due {
        return Ok(());
    }
    let cycle: Vec<Option<f64>> = [None, None]
        .into_iter()
        .chain(app.config.canary_planted.iter().map(|p| Some(*p)))
        .collect();
    let planted_pct = cycle[past.len() % cycle.len()];
    let spec = CanarySpec {
        runner_id: runner.id.0,
        planted_pct,
        planted_by: if source.config.benchmark.canary_work {
            PlantedBy::Work
        } else {
            PlantedBy::Scale
        },
    };
    let config = StoredComparisonConfig {
        canary: Some(spec),
        ..source.config.clone().without_context()
    };
    let rounds = i64::from(app.config.canary_rounds);
    let created = app
        .store
        .create_comparison(&NewComparison {
            repository_id: source.repository_id,
            pr_number: None,
            base_sha: source.base_sha.clone(),
            head_sha: source.base_sha.clone(),
            runner_label: source.runner_label.clone(),
            config,
            planned_rounds: source.planned_rounds,
            jobs: vec![NewJob {
                rounds,
                priority: CANARY_PRIORITY,
                max_attempts: app.config.max_attempts,
                // One canary per runner and count: a second replica's pass adds nothing.
                origin: Some(format!("canary:{}:{}", runner.id, past.len())),
            }],
            main: None,
            notify: Vec::new(),
        })
        .await;
    match created {
        Ok(c) => {
            tracing::info!(runner = %runner.name, comparison = %c.id, planted = ?planted_pct, rounds, "canary started");
            Ok(())
        }
        Err(StoreError::Conflict(_)) => Ok(()),
        Err(e) if e.to_string().contains("origin") || e.to_string().contains("UNIQUE") => Ok(()),
        Err(e) => Err(e),
    }
}

/// What a recalibration by hand did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recalibrated {
    /// The A/A calibration jobs enqueued, one per repository the runner has a floor for.
    pub calibrations: Vec<i64>,
    /// The audit flag counts A/A canaries from then on.
    pub audit_since: DateTime<Utc>,
}

/// Recalibrates a runner by hand: an A/A calibration (with layout sessions where the suite has
/// `layout_salt`) of the newest compared base of each repository it has a floor for, ahead of
/// other work, and its audit flag counted afresh.
pub async fn recalibrate(app: &Domain, runner: &Runner) -> Result<Recalibrated, StoreError> {
    let repositories: std::collections::BTreeSet<_> = app
        .store
        .runner_noise_floors(runner.id)
        .await?
        .into_iter()
        .map(|f| f.key.repository_id)
        .collect();
    // A canary's suite is the one it copied; the newest real comparison names the workload.
    let recent = app
        .store
        .find_comparisons(&all_kinds_but(&[ComparisonKind::Canary]), 200)
        .await?;
    let mut calibrations = Vec::new();
    for repository in repositories {
        let Some(source) = recent
            .iter()
            .find(|c| c.repository_id == repository && runner.labels.contains(&c.runner_label))
        else {
            continue;
        };
        let job = crate::calibration::request_calibration(
            app,
            runner.id,
            repository,
            &source.base_sha,
            &source.runner_label,
            &source.config,
            Priority::INTERACTIVE,
        )
        .await?;
        calibrations.push(job.0);
    }
    let now = Utc::now();
    app.store.reset_runner_audit(runner.id, now).await?;
    tracing::info!(runner = %runner.name, jobs = calibrations.len(), "recalibrated by hand; the audit flag starts afresh");
    Ok(Recalibrated {
        calibrations,
        audit_since: now,
    })
}
