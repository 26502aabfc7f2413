//! The default branch's history: its steps put in the order the branch moved, the chain of
//! paired ratios built from them (docs/statistics.md, "Main's history"), anchor comparisons for
//! creep, and the regressions both raise. How it reads on the API, the dashboard and in CSV is
//! [`view`].

mod view;

use benchgate_store::model::ComparisonKind;
use std::sync::Arc;

use benchgate_api::agent::{Anchor, StoredComparisonConfig};
use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, MainInfo, MainKind, MainSeries, NewComparison,
    NewJob, Priority,
};
use benchgate_store::{Store, StoreError};
use chrono::{DateTime, Utc};

pub use view::{
    AnchorResultView, AnchorView, BenchmarkChainView, ChainPointView, ChainSegmentView,
    SeriesHistory, branch_history, history_csv,
};

/// The series a comparison belongs to, when it is part of a branch's history.
pub fn series_of(c: &Comparison) -> Option<MainSeries> {
    let main = c.main.as_ref()?;
    Some(MainSeries {
        repository_id: c.repository_id,
        branch: main.branch.clone(),
        runner_label: c.runner_label.clone(),
        suite: main.suite.clone(),
    })
}

fn in_series(c: &Comparison, series: &MainSeries) -> bool {
    series_of(c).as_ref() == Some(series)
}

/// A series' steps that count (not folded away, not cancelled), in the order the branch
/// moved: each segment starts at a step whose base no other step reached, and follows base →
/// head from there. A step whose base is no earlier step's head (a force push, a step that
/// failed) starts a new segment.
pub fn ordered_steps<'a>(
    comparisons: &'a [Comparison],
    series: &MainSeries,
) -> Vec<Vec<&'a Comparison>> {
    let mut left: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| in_series(c, series))
        .filter(|c| c.kind() == ComparisonKind::MainStep)
        .filter(|c| {
            !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
        })
        .collect();
    left.sort_by_key(|c| c.id);
    let mut segments = Vec::new();
    while !left.is_empty() {
        let root = left
            .iter()
            .position(|s| {
                !left
                    .iter()
                    .any(|o| o.head_sha == s.base_sha && o.id != s.id)
            })
            .unwrap_or(0);
        let mut segment = vec![left.remove(root)];
        while let Some(next) = left
            .iter()
            .position(|s| s.base_sha == segment[segment.len() - 1].head_sha)
        {
            segment.push(left.remove(next));
        }
        segments.push(segment);
    }
    segments
}

/// The branch's compared commits in order: each segment's base, then every commit its steps
/// cover (a folded step covers several).
pub fn commit_sequence(segments: &[Vec<&Comparison>]) -> Vec<String> {
    let mut seq: Vec<String> = Vec::new();
    for segment in segments {
        if let Some(first) = segment.first()
            && !seq.contains(&first.base_sha)
        {
            seq.push(first.base_sha.clone());
        }
        for step in segment {
            let commits = step
                .main
                .as_ref()
                .map(|m| m.commits.clone())
                .unwrap_or_default();
            for c in commits.into_iter().chain([step.head_sha.clone()]) {
                if !seq.contains(&c) {
                    seq.push(c);
                }
            }
        }
    }
    seq
}

/// The commit an anchor comparison of a series compares the branch's newest compared commit
/// with; `None` when there is no history yet or the anchor is that commit itself.
pub fn resolve_anchor(
    segments: &[Vec<&Comparison>],
    anchor: Anchor,
    now: DateTime<Utc>,
) -> Option<(String, String)> {
    let seq = commit_sequence(segments);
    let head = segments.last()?.last()?.head_sha.clone();
    let at = seq.iter().position(|c| *c == head)?;
    let base = match anchor {
        Anchor::Commits(n) => seq[at.saturating_sub(n as usize)].clone(),
        Anchor::Days(days) => {
            let cutoff = now - chrono::TimeDelta::days(i64::from(days));
            segments
                .iter()
                .flatten()
                .filter(|s| s.created_at <= cutoff)
                .map(|s| s.head_sha.clone())
                .next_back()
                .unwrap_or_else(|| seq[0].clone())
        }
    };
    (base != head).then_some((base, head))
}

/// How many compared commits lie after `base` up to and including `head`.
pub fn commits_between(seq: &[String], base: &str, head: &str) -> Vec<String> {
    let from = seq.iter().position(|c| c == base);
    let to = seq.iter().position(|c| c == head);
    match (from, to) {
        (Some(f), Some(t)) if f < t => seq[f + 1..=t].to_vec(),
        _ => vec![head.to_owned()],
    }
}

/// Creates an anchor comparison of a series: its newest step's head against `base` (or the
/// series' `[main] anchor` when `base` is `None`), on the series' label, with its newest
/// config. `None` when there is nothing to compare.
pub async fn schedule_anchor(
    store: &Arc<dyn Store>,
    max_attempts: i64,
    series: &MainSeries,
    base: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<ComparisonId>, StoreError> {
    let all = store
        .main_comparisons(series.repository_id, &series.branch)
        .await?;
    let segments = ordered_steps(&all, series);
    let Some(newest) = segments.last().and_then(|s| s.last()).copied() else {
        return Ok(None);
    };
    let stored = newest.config.clone();
    let settings = stored.main.clone().unwrap_or_default();
    let (base, head) = match base {
        Some(b) if b != newest.head_sha => (b.to_owned(), newest.head_sha.clone()),
        Some(_) => return Ok(None),
        None => match resolve_anchor(&segments, settings.anchor, now) {
            // One commit apart, the anchor comparison would repeat that commit's step.
            Some((base, head))
                if commits_between(&commit_sequence(&segments), &base, &head).len() > 1 =>
            {
                (base, head)
            }
            _ => return Ok(None),
        },
    };
    let active = all.iter().any(|c| {
        in_series(c, series)
            && c.kind() == ComparisonKind::MainAnchor
            && c.base_sha == base
            && c.head_sha == head
            && !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled | ComparisonState::Failed
            )
    });
    if active {
        return Ok(None);
    }
    let seq = commit_sequence(&segments);
    let rounds = i64::from(stored.config.benchmark.rounds);
    let config = StoredComparisonConfig {
        github: None,
        ..stored
    };
    let created = match store
        .create_comparison(&NewComparison {
            repository_id: series.repository_id,
            pr_number: None,
            base_sha: base.clone(),
            head_sha: head.clone(),
            runner_label: series.runner_label.clone(),
            config,
            planned_rounds: newest.planned_rounds,
            jobs: vec![NewJob {
                rounds,
                priority: Priority::HISTORY,
                max_attempts,
                origin: None,
            }],
            main: Some(MainInfo {
                branch: series.branch.clone(),
                kind: MainKind::Anchor,
                suite: series.suite.clone(),
                commits: commits_between(&seq, &base, &head),
            }),
            notify: Vec::new(),
        })
        .await
    {
        Ok(created) => created,
        // Another replica scheduled it a moment ago.
        Err(StoreError::Conflict(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    tracing::info!(comparison = %created.id, base = %base, head = %head, label = %series.runner_label, "anchor comparison scheduled");
    Ok(Some(created.id))
}

/// Schedules the anchor comparison of every series whose `[main] schedule` is due: none run
/// within the schedule, and the branch moved since the last one.
pub async fn schedule_due_anchors(
    store: &Arc<dyn Store>,
    max_attempts: i64,
    now: DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut scheduled = 0;
    for series in store.main_series().await? {
        let all = store
            .main_comparisons(series.repository_id, &series.branch)
            .await?;
        let segments = ordered_steps(&all, &series);
        let Some(newest) = segments.last().and_then(|s| s.last()) else {
            continue;
        };
        let settings = newest.config.main.clone().unwrap_or_default();
        let Some(hours) = settings.schedule_hours.filter(|_| settings.enabled) else {
            continue;
        };
        let last_anchor = all
            .iter()
            .filter(|c| in_series(c, &series))
            .filter(|c| c.kind() == ComparisonKind::MainAnchor)
            .max_by_key(|c| c.id);
        let due = match last_anchor {
            None => true,
            Some(a) => {
                a.head_sha != newest.head_sha
                    && a.created_at + chrono::TimeDelta::hours(i64::from(hours)) <= now
            }
        };
        if due
            && schedule_anchor(store, max_attempts, &series, None, now)
                .await?
                .is_some()
        {
            scheduled += 1;
        }
    }
    Ok(scheduled)
}

/// Asks every running culprit search for its next step. The store wakes a search when a
/// comparison it waits on ends; this covers one that ended before the search noted the wait.
pub(crate) async fn wake_searches(store: &Arc<dyn Store>) -> Result<(), StoreError> {
    for id in store.running_bisections().await? {
        store
            .enqueue_outbox(&benchgate_store::model::NewOutboxMessage::bisection_step(
                id,
            ))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::RepositoryId;

    fn step(
        id: i64,
        base: &str,
        head: &str,
        state: ComparisonState,
        commits: &[&str],
    ) -> Comparison {
        Comparison {
            id: ComparisonId(id),
            repository_id: RepositoryId(1),
            repository: "o/r".into(),
            pr_number: None,
            base_sha: base.into(),
            head_sha: head.into(),
            runner_label: "l".into(),
            kind: benchgate_store::ComparisonKind::MainStep,
            config: serde_json::from_value(
                serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            planned_rounds: None,
            state,
            check_run_id: None,
            rounds_generation: 0,
            check_run_generation: 0,
            check_run_completed: false,
            main: Some(MainInfo {
                branch: "main".into(),
                kind: MainKind::Step,
                suite: String::new(),
                commits: commits.iter().map(|c| (*c).to_owned()).collect(),
            }),
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    fn series() -> MainSeries {
        MainSeries {
            repository_id: RepositoryId(1),
            branch: "main".into(),
            runner_label: "l".into(),
            suite: String::new(),
        }
    }

    #[test]
    fn steps_follow_the_branch_not_the_order_they_were_created_in() {
        use ComparisonState::*;
        // c1→c2 was scheduled before c0→c1 (outbox rows run out of order); c2→c3 was folded.
        let all = vec![
            step(1, "c1", "c2", Done, &["c2"]),
            step(2, "c0", "c1", Done, &["c1"]),
            step(3, "c2", "c3", Superseded, &["c3"]),
            step(4, "c2", "c4", Done, &["c3", "c4"]),
            step(5, "x9", "x10", Done, &["x10"]),
        ];
        let segments = ordered_steps(&all, &series());
        let ids: Vec<Vec<i64>> = segments
            .iter()
            .map(|s| s.iter().map(|c| c.id.0).collect())
            .collect();
        assert_eq!(ids, vec![vec![2, 1, 4], vec![5]]);
        let seq = commit_sequence(&segments);
        assert_eq!(seq, ["c0", "c1", "c2", "c3", "c4", "x9", "x10"]);
        assert_eq!(commits_between(&seq, "c1", "c4"), ["c2", "c3", "c4"]);
    }

    #[test]
    fn an_anchor_counts_back_along_the_compared_commits() {
        use ComparisonState::*;
        let all = vec![
            step(1, "c0", "c1", Done, &["c1"]),
            step(2, "c1", "c2", Done, &["c2"]),
            step(3, "c2", "c4", Done, &["c3", "c4"]),
        ];
        let segments = ordered_steps(&all, &series());
        let now = Utc::now();
        assert_eq!(
            resolve_anchor(&segments, Anchor::Commits(2), now),
            Some(("c2".into(), "c4".into()))
        );
        assert_eq!(
            resolve_anchor(&segments, Anchor::Commits(100), now),
            Some(("c0".into(), "c4".into()))
        );
        // Nothing is 30 days old: the oldest compared commit.
        assert_eq!(
            resolve_anchor(&segments, Anchor::Days(30), now),
            Some(("c0".into(), "c4".into()))
        );
    }
}
