//! Keeps each PR's comment and check run in step with its comparison's progress. Every few
//! seconds it looks at the comparisons that are running, queued or changed recently and, when
//! one moved (new rounds, or a queued one's place in line), enqueues a report row for the
//! comment and one for the check run. The rows' dedupe keys coalesce a burst into one GitHub
//! edit, and the tick bounds the edit rate.
//!
//! State changes (done, failed, superseded, cancelled) do not depend on this: the store writes
//! the same rows in the transaction that changes the state, so a comparison that finishes long
//! after newer ones were created, or while no server runs, is reported all the same.

use benchgate_store::model::ComparisonKind;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use benchgate_store::model::{Comparison, ComparisonId, ComparisonState};
use benchgate_store::{Store, StoreError};
use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::tasks::{OutboxTask, ReportCheck, ReportComment};

/// Finished comparisons are reported again if they changed within this window (covers a
/// restart between a job's completion and its report).
const RECENT: chrono::TimeDelta = chrono::TimeDelta::minutes(15);

/// How many of the newest comparisons each tick looks at besides the running ones.
const RECENT_LIMIT: i64 = 50;

/// What was last reported about a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Progress {
    state: ComparisonState,
    updated_at: DateTime<Utc>,
    results: usize,
    pairs: usize,
    results_at: Option<DateTime<Utc>>,
    /// A queued comparison's place in its label's queue: when the queue moves (a job ahead
    /// is claimed, ends or is cancelled, or one jumps ahead), its comment and check say so.
    place: Option<usize>,
}

/// Runs until `cancel` fires.
pub async fn run(store: Arc<dyn Store>, every: Duration, cancel: CancellationToken) {
    let mut reported: HashMap<ComparisonId, Progress> = HashMap::new();
    loop {
        if let Err(e) = tick(store.as_ref(), &mut reported).await {
            tracing::warn!(error = %e, "report watcher: store error; trying again next tick");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

async fn tick(
    store: &dyn Store,
    reported: &mut HashMap<ComparisonId, Progress>,
) -> Result<(), StoreError> {
    let now = Utc::now();
    let searching = searched_groups(store).await?;
    for comparison in candidates(store, &searching).await? {
        let progress = progress(store, &comparison).await?;
        // Measuring, or finished slower with its culprit search still running: either way the
        // queue waits on a check that is not complete.
        let waiting = !comparison.state.is_finished()
            || (searching.contains(&comparison.id) && !comparison.check_run_completed);
        let overdue = comparison.kind() == ComparisonKind::MergeGroup
            && waiting
            && now >= crate::tasks::merge_group_deadline(&comparison);
        if overdue {
            // The check concludes with what was measured; writing it cancels the jobs.
            tracing::info!(comparison = %comparison.id, searching = searching.contains(&comparison.id), "merge group past its deadline");
        } else if reported.get(&comparison.id) == Some(&progress) {
            continue;
        }
        let comparison_id = comparison.id.0;
        // A queued comparison's comment says where it waits; one with nothing queued (a
        // fork's, waiting for approval) says so when created, and the check run alone follows.
        let quiet = progress.state == ComparisonState::Queued
            && progress.results == 0
            && progress.place.is_none();
        if !quiet && comparison.pr_number.is_some() {
            store
                .enqueue_outbox(&ReportComment { comparison_id }.message())
                .await?;
        }
        store
            .enqueue_outbox(&ReportCheck { comparison_id }.message())
            .await?;
        tracing::debug!(comparison = comparison_id, state = ?progress.state, pairs = progress.pairs, "report enqueued");
        reported.insert(comparison.id, progress);
    }
    Ok(())
}

/// The merge groups whose culprit search is running.
async fn searched_groups(store: &dyn Store) -> Result<HashSet<ComparisonId>, StoreError> {
    let mut groups = HashSet::new();
    for id in store.running_bisections().await? {
        if let Some(source) = store.bisection(id).await?.and_then(|b| b.source_comparison) {
            groups.insert(source);
        }
    }
    Ok(groups)
}

/// PR comparisons with jobs in the queue, those that changed recently, and merge groups whose
/// culprit search runs (their check may be due at the deadline long after they finished).
async fn candidates(
    store: &dyn Store,
    searching: &HashSet<ComparisonId>,
) -> Result<Vec<Comparison>, StoreError> {
    let since = Utc::now() - RECENT;
    let mut found: HashMap<ComparisonId, Comparison> = HashMap::new();
    for id in searching {
        if let Some(c) = store.comparison(*id).await? {
            found.insert(c.id, c);
        }
    }
    for c in store.recent_comparisons(RECENT_LIMIT).await? {
        if reported_on_github(&c) && (!c.state.is_finished() || c.updated_at > since) {
            found.insert(c.id, c);
        }
    }
    for job in store.active_jobs().await? {
        let Some(id) = job.comparison_id else {
            continue;
        };
        if found.contains_key(&id) {
            continue;
        }
        if let Some(c) = store.comparison(id).await?
            && reported_on_github(&c)
        {
            found.insert(id, c);
        }
    }
    let mut list: Vec<_> = found.into_values().collect();
    list.sort_by_key(|c| c.id);
    Ok(list)
}

/// A PR's comparison, or a merge group's (its check; a step rewrites its group's check).
fn reported_on_github(c: &Comparison) -> bool {
    c.pr_number.is_some() || c.config.merge_group.is_some()
}

async fn progress(store: &dyn Store, c: &Comparison) -> Result<Progress, StoreError> {
    let results = store.comparison_results(c.id).await?;
    let place = match c.state {
        ComparisonState::Queued => store.queue_place(c.id).await?.map(|p| p.ahead.len() + 1),
        _ => None,
    };
    Ok(Progress {
        state: c.state,
        updated_at: c.updated_at,
        results: results.len(),
        pairs: results.iter().map(|r| r.result.n).sum(),
        results_at: results.iter().map(|r| r.updated_at).max(),
        place,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::*;

    /// Delivers every due outbox row; their dedupe keys, sorted.
    async fn drain(store: &dyn Store) -> Vec<String> {
        let claimed = store
            .claim_outbox(100, Duration::from_secs(60))
            .await
            .unwrap();
        for m in &claimed {
            store.outbox_delivered(m.id, &m.lease).await.unwrap();
        }
        let mut keys: Vec<String> = claimed
            .into_iter()
            .map(|m| m.dedupe_key.unwrap_or(m.kind))
            .collect();
        keys.sort();
        keys
    }

    async fn store_with_repo(dir: &tempfile::TempDir) -> (Arc<dyn Store>, Repository) {
        let url = format!("sqlite://{}", dir.path().join("watch.db").display());
        let store = benchgate_store::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        let repo = store
            .upsert_repository(&NewRepository {
                github_id: None,
                installation_id: None,
                full_name: "acme/widgets".into(),
                clone_url: "https://example.invalid/acme/widgets.git".into(),
                forge: benchgate_store::model::Forge::GitHub,
            })
            .await
            .unwrap();
        (store, repo)
    }

    /// PR `pr`'s comparison with one queued job of 10 rounds on label `x`.
    async fn queued(store: &dyn Store, repo: &Repository, pr: i64) -> CreatedComparison {
        store
            .create_comparison(&NewComparison {
                repository_id: repo.id,
                pr_number: Some(pr),
                base_sha: "b".repeat(40),
                head_sha: format!("{pr}").repeat(40),
                runner_label: "x".into(),
                config: serde_json::from_value(
                    serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
                )
                .unwrap(),
                planned_rounds: Some(20),
                main: None,
                jobs: vec![NewJob {
                    rounds: 10,
                    priority: Priority::NORMAL,
                    max_attempts: 3,
                    origin: None,
                }],
                notify: Vec::new(),
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn writing_the_check_run_is_not_progress_to_report_again() {
        let dir = tempfile::tempdir().unwrap();
        let (store, repo) = store_with_repo(&dir).await;
        let c = queued(store.as_ref(), &repo, 7).await;
        drain(store.as_ref()).await;
        let mut reported = HashMap::new();
        tick(store.as_ref(), &mut reported).await.unwrap();
        assert_eq!(
            drain(store.as_ref()).await,
            [
                format!("report.check:{}", c.id),
                format!("report.comment:{}", c.id)
            ],
            "the queued comparison's check, and its comment saying where it waits"
        );

        // What the check-run task does once GitHub accepted the write.
        let run = CheckRunRecord {
            check_run_id: 42,
            generation: 0,
            completed: false,
        };
        store.record_check_run(c.id, run).await.unwrap();
        tick(store.as_ref(), &mut reported).await.unwrap();
        assert!(
            drain(store.as_ref()).await.is_empty(),
            "nothing moved, nothing to report"
        );
    }

    /// The job ahead of a queued comparison is claimed: its place moved from 2nd to 1st, so
    /// its comment and check are written again; while nothing ahead moves, they are not.
    #[tokio::test]
    async fn a_queued_comparison_is_reported_again_when_its_place_moves() {
        let dir = tempfile::tempdir().unwrap();
        let (store, repo) = store_with_repo(&dir).await;
        let first = queued(store.as_ref(), &repo, 7).await;
        let second = queued(store.as_ref(), &repo, 8).await;
        let mut reported = HashMap::new();
        tick(store.as_ref(), &mut reported).await.unwrap();
        drain(store.as_ref()).await;
        tick(store.as_ref(), &mut reported).await.unwrap();
        assert!(
            drain(store.as_ref()).await.is_empty(),
            "the queue did not move"
        );

        let runner = store.add_runner("r1", &["x".into()]).await.unwrap().runner;
        let claim = store
            .claim_job(runner.id, &["x".into()], Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claim.job.comparison_id, Some(first.id));
        drain(store.as_ref()).await; // the first one's state change, written by the store
        tick(store.as_ref(), &mut reported).await.unwrap();
        let keys = drain(store.as_ref()).await;
        assert!(
            keys.contains(&format!("report.comment:{}", second.id))
                && keys.contains(&format!("report.check:{}", second.id)),
            "{keys:?}"
        );
        assert_eq!(reported[&second.id].place, Some(1));
        tick(store.as_ref(), &mut reported).await.unwrap();
        assert!(drain(store.as_ref()).await.is_empty());
    }
}
