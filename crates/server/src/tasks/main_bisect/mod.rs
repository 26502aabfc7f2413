//! The culprit search of a regression on the default branch (docs/statistics.md, "Culprit
//! search"): `stats::bisect` says which pair of commits to compare next; this task runs that
//! probe as an interleaved comparison on the series' label, reusing every comparison of the same
//! pair that exists (the confirmation excepted: it runs fresh rounds), adds rounds while the probe's interval leaves its question open, and writes
//! the outcome. A probe that ended is stored and replayed, never measured again, so the search
//! resumes after a restart or on another replica exactly where it stood.

use benchgate_api::Direction;
use benchgate_stats::Interval;
use benchgate_stats::bisect::{self, Next, Outcome, Probe};
use benchgate_stats::words::short_sha;
use benchgate_stats::{ConfidenceSequence, MixtureBoundary};
use benchgate_store::StoreError;
use benchgate_store::model::ComparisonKind;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    Bisection, BisectionProbe, BisectionState, Comparison, ComparisonId, ComparisonState,
    MAIN_BISECT, NewComparison, NewJob, Priority, ProbeEnd, ProbeState, RangeCommit,
};
use serde::{Deserialize, Serialize};

use super::{Context, MarkedComment, OutboxTask, RepoName, TaskError};
use crate::comparison_analysis::{ALPHA, NStarPlan, pair_samples};
use crate::main_history::{ordered_steps, series_of};

mod outcome;
mod range;
mod view;
mod wording;

pub use outcome::{OutcomeKind, SearchOutcome};
use outcome::{failed, outcome_view};
use range::read_range;
pub use view::SearchView;
use wording::culprit_comment;
pub use wording::describe;

/// Take culprit search `bisection_id`'s next step (written by the store with the search, and
/// when a comparison it waits on ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainBisect {
    pub bisection_id: i64,
}

impl OutboxTask for MainBisect {
    const KIND: &'static str = MAIN_BISECT;
    const PRIORITY: Priority = Priority::HISTORY;
    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:{}", Self::KIND, self.bisection_id))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        run(cx, self.bisection_id).await
    }
}

/// The label of the comment on the PR a search names.
pub const CULPRIT_LABEL: &str = "main-culprit";

/// Takes search `id`'s next step.
#[tracing::instrument(skip(cx))]
pub async fn run(cx: &Context, id: i64) -> Result<(), TaskError> {
    let Some(search) = cx.store.bisection(id).await? else {
        return Ok(());
    };
    if search.state != BisectionState::Running {
        return Ok(());
    }
    let commits = match &search.commits {
        Some(commits) => commits.clone(),
        None => match read_range(cx, &search).await? {
            Ok(commits) => {
                cx.store.set_bisection_commits(id, &commits).await?;
                tracing::info!(commits = commits.len() - 1, "culprit search: range read");
                commits
            }
            Err(reason) => return fail(cx, &search, reason).await,
        },
    };
    let n = commits.len() - 1;
    let mut state = bisect::Bisection::new(n, ALPHA);
    let mut probes = cx.store.bisection_probes(id).await?;
    let mut seq = 0i64;
    loop {
        let probe = match state.next_step() {
            Next::Done(outcome) => return finish(cx, &search, &commits, outcome).await,
            Next::Run(probe) => probe,
        };
        let (older, newer) = (&commits[probe.older].sha, &commits[probe.newer].sha);
        let row = match probes.iter().find(|p| p.seq == seq) {
            Some(row) => row.clone(),
            None => {
                match cx.store.add_bisection_probe(id, seq, older, newer).await {
                    Ok(()) | Err(StoreError::Conflict(_)) => {}
                    Err(e) => return Err(e.into()),
                }
                probes = cx.store.bisection_probes(id).await?;
                probes
                    .iter()
                    .find(|p| p.seq == seq)
                    .cloned()
                    .ok_or_else(|| TaskError::Permanent(format!("probe {seq} vanished")))?
            }
        };
        if row.older_sha != *older || row.newer_sha != *newer {
            let reason = format!(
                "probe {seq} compares {} with {}, the search asks for {} with {}",
                short_sha(&row.newer_sha),
                short_sha(&row.older_sha),
                short_sha(newer),
                short_sha(older)
            );
            return fail(cx, &search, reason).await;
        }
        let end = match row.state {
            ProbeState::Running => match measure(cx, &search, &probe, &row).await? {
                Some(end) => {
                    cx.store.end_bisection_probe(id, seq, &end).await?;
                    tracing::info!(
                        seq,
                        older = short_sha(older),
                        newer = short_sha(newer),
                        state = end.state.as_str(),
                        rounds = end.rounds,
                        "culprit search: probe ended"
                    );
                    end
                }
                None => return Ok(()),
            },
            _ => ProbeEnd {
                state: row.state,
                lower: row.lower,
                upper: row.upper,
                rounds: row.rounds,
                comparisons: row.comparisons.clone(),
                note: row.note.clone(),
            },
        };
        match (end.state, end.lower, end.upper) {
            (ProbeState::Decided | ProbeState::Limit, Some(lower), Some(upper)) => {
                state.record(Interval { lower, upper }, end.rounds as u64)
            }
            _ => state.skip(),
        }
        seq += 1;
    }
}

/// Runs probe `row` on: `None` while comparisons of its pair are queued or running (or were just
/// asked for), its end once its interval answers, its rounds reach the limit, or its newer
/// commit cannot be measured.
async fn measure(
    cx: &Context,
    search: &Bisection,
    probe: &Probe,
    row: &BisectionProbe,
) -> Result<Option<ProbeEnd>, TaskError> {
    let series = &search.series;
    let all_of_pair = cx
        .store
        .comparisons_of_pair(
            series.repository_id,
            &series.runner_label,
            &row.older_sha,
            &row.newer_sha,
        )
        .await?;
    // Numbers this probe's next comparison, so a retried row asks for the same one.
    let known = all_of_pair.len();
    // The confirmation runs fresh rounds: the comparison that raised the alarm (or any of the
    // range measured before the search) chose the range and may not also confirm it, or
    // "wrong at most α" would hold only averaged over pushes, not given an alarm.
    let fresh_only = matches!(probe.question, bisect::Question::Confirm);
    let of_pair: Vec<Comparison> = all_of_pair
        .into_iter()
        .filter(|c| !fresh_only || c.created_at >= search.created_at)
        .filter(|c| c.config.suite.clone().unwrap_or_default() == series.suite)
        .filter(|c| {
            !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
        })
        .collect();
    let active: Vec<&Comparison> = of_pair.iter().filter(|c| !c.state.is_finished()).collect();
    if !active.is_empty() {
        for c in active {
            cx.store.bisection_waits_on(search.id, c.id).await?;
        }
        return Ok(None);
    }
    let mut ratios = Vec::new();
    let mut used = Vec::new();
    let mut n_star = None;
    for c in of_pair.iter().filter(|c| c.state == ComparisonState::Done) {
        let before = ratios.len();
        ratios.extend(regression_ratios(cx, c, &search.benchmark, &search.metric).await?);
        if ratios.len() > before {
            used.push(c.id);
            n_star.get_or_insert_with(|| {
                NStarPlan {
                    per_benchmark: c.config.n_star.clone(),
                    fallback: c.planned_rounds,
                }
                .n_star(&search.benchmark)
            });
        }
    }
    let failed: Vec<ComparisonId> = of_pair
        .iter()
        .filter(|c| c.state == ComparisonState::Failed)
        .map(|c| c.id)
        .collect();
    let max_rounds = i64::from(cx.config.bisect_max_rounds);
    let rounds = ratios.len() as i64;
    let interval = match n_star {
        Some(n_star) if !ratios.is_empty() => Some(interval_at(&ratios, probe.alpha, n_star)?),
        _ => None,
    };
    let end = |state, note: Option<String>| ProbeEnd {
        state,
        lower: interval.map(|i| i.lower),
        upper: interval.map(|i| i.upper),
        rounds,
        comparisons: used.clone(),
        note,
    };
    match interval {
        Some(i) if probe.decides(i) => return Ok(Some(end(ProbeState::Decided, None))),
        Some(_) if rounds >= max_rounds => {
            return Ok(Some(end(
                ProbeState::Limit,
                Some(format!("undecided after {rounds} rounds, its limit")),
            )));
        }
        // A pair that fails twice will not measure: what it has is all it gets.
        Some(_) if failed.len() >= 2 => {
            return Ok(Some(end(
                ProbeState::Limit,
                Some(format!("stopped after {} failed comparisons", failed.len())),
            )));
        }
        Some(_) => {}
        None if !failed.is_empty() => {
            let note = format!(
                "could not be built or run: comparison {} failed",
                failed
                    .iter()
                    .map(|id| format!("#{id}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Ok(Some(end(ProbeState::Skipped, Some(note))));
        }
        None if of_pair.iter().any(|c| c.state == ComparisonState::Done) => {
            let note = format!("`{}` was not measured at this commit", search.benchmark);
            return Ok(Some(end(ProbeState::Skipped, Some(note))));
        }
        None => {}
    }
    // More rounds: as many again as the probe has (Pinpoint doubles too), within the limit.
    match add_rounds(cx, search, row, rounds, max_rounds, known).await? {
        Added::Comparison(created) => {
            cx.store.bisection_waits_on(search.id, created).await?;
            Ok(None)
        }
        Added::AskedAlready => Ok(None),
        Added::NoWorkload => Ok(Some(end(
            ProbeState::Skipped,
            Some("no comparison of the branch to take the workload from".into()),
        ))),
    }
}

/// What asking for more rounds did.
enum Added {
    Comparison(ComparisonId),
    /// Another replica (or an earlier try of this row) asked a moment ago; its end wakes the
    /// search.
    AskedAlready,
    /// The series has no comparison whose workload a probe could run.
    NoWorkload,
}

/// Each pair's change on the log scale with a regression positive, from the runner with most
/// pairs.
async fn regression_ratios(
    cx: &Context,
    c: &Comparison,
    benchmark: &str,
    metric: &str,
) -> Result<Vec<f64>, TaskError> {
    let key = (benchmark.to_owned(), metric.to_owned());
    let mut best: Option<crate::series_cache::Pairs> = None;
    for runner in cx.store.comparison_samples(c.id).await? {
        if let Some(pairs) = pair_samples(&runner.samples).remove(&key)
            && best
                .as_ref()
                .is_none_or(|b| b.base.len() < pairs.base.len())
        {
            best = Some(pairs);
        }
    }
    let Some(pairs) = best else {
        return Ok(Vec::new());
    };
    let sign = match pairs.direction {
        Direction::HigherIsBetter => -1.0,
        _ => 1.0,
    };
    Ok(pairs
        .base
        .iter()
        .zip(&pairs.head)
        .filter(|(b, h)| **b > 0.0 && **h > 0.0)
        .map(|(b, h)| sign * (h / b).ln())
        .collect())
}

/// The anytime-valid interval of the mean log-ratio at level `alpha`.
pub fn interval_at(ratios: &[f64], alpha: f64, n_star: f64) -> Result<Interval, TaskError> {
    let stats = |e: benchgate_stats::StatsError| TaskError::Permanent(e.to_string());
    let boundary = MixtureBoundary::tuned(alpha, n_star).map_err(stats)?;
    let mut cs = ConfidenceSequence::new(boundary, 0.0);
    for &r in ratios {
        cs.push(r).map_err(stats)?;
    }
    Ok(cs.running_interval())
}

/// A comparison of the probe's pair with more rounds, its workload the series' newest step's;
/// `None` when the series has no step to take it from.
async fn add_rounds(
    cx: &Context,
    search: &Bisection,
    row: &BisectionProbe,
    have: i64,
    max_rounds: i64,
    known: usize,
) -> Result<Added, TaskError> {
    let series = &search.series;
    let Some(newest) = workload(cx, search).await? else {
        return Ok(Added::NoWorkload);
    };
    // A merge group's probes keep the queue's priority while the group's check waits for
    // them; once it concluded at its deadline the search goes on for the history only.
    let priority = if newest.kind() == ComparisonKind::MergeGroup && !newest.check_run_completed {
        Priority::MERGE_QUEUE
    } else {
        Priority::HISTORY
    };
    let stored = newest.config.clone();
    let each = i64::from(stored.config.benchmark.rounds).max(1);
    let rounds = have.max(each).min((max_rounds - have).max(1));
    let config = stored.without_context();
    let created = cx
        .store
        .create_comparison(&NewComparison {
            repository_id: series.repository_id,
            pr_number: None,
            base_sha: row.older_sha.clone(),
            head_sha: row.newer_sha.clone(),
            runner_label: series.runner_label.clone(),
            config,
            planned_rounds: newest.planned_rounds,
            jobs: vec![NewJob {
                rounds,
                priority,
                max_attempts: cx.config.max_attempts,
                // One comparison per probe and turn: a retried row adds none.
                origin: Some(format!("bisect:{}:{}:{known}", search.id, row.seq)),
            }],
            main: None,
            notify: Vec::new(),
        })
        .await;
    match created {
        Ok(created) => {
            tracing::info!(comparison = %created.id, probe = row.seq, rounds, older = short_sha(&row.older_sha), newer = short_sha(&row.newer_sha), "culprit search: probe comparison scheduled");
            Ok(Added::Comparison(created.id))
        }
        Err(StoreError::Conflict(_)) => Ok(Added::AskedAlready),
        Err(e) => Err(e.into()),
    }
}

/// The comparison whose workload a search's probes run: the merge group's it was started for,
/// else the series' newest step (or anchor comparison).
async fn workload(cx: &Context, search: &Bisection) -> Result<Option<Comparison>, TaskError> {
    if let Some(id) = search.source_comparison {
        return Ok(cx.store.comparison(id).await?);
    }
    let series = &search.series;
    let all = cx
        .store
        .main_comparisons(series.repository_id, &series.branch)
        .await?;
    let newest = ordered_steps(&all, series)
        .into_iter()
        .flatten()
        .max_by_key(|c| c.id)
        .or_else(|| {
            all.iter()
                .filter(|c| series_of(c).as_ref() == Some(series))
                .filter(|c| c.kind() == ComparisonKind::MainAnchor)
                .max_by_key(|c| c.id)
        })
        .cloned();
    Ok(newest)
}

/// Writes how the search ended and tells the episode's issue and the culprit's PR.
async fn finish(
    cx: &Context,
    search: &Bisection,
    commits: &[RangeCommit],
    outcome: Outcome,
) -> Result<(), TaskError> {
    let probes = cx.store.bisection_probes(search.id).await?;
    let view = outcome_view(commits, &outcome, &probes);
    if !cx
        .store
        .finish_bisection(search.id, BisectionState::Done, &view)
        .await?
    {
        return Ok(());
    }
    tracing::info!(outcome = ?view.kind, commit = view.commit.as_ref().map(|c| short_sha(&c.sha)), probes = view.probes, rounds = view.rounds, "culprit search ended");
    tell(cx, search, &view).await
}

async fn fail(cx: &Context, search: &Bisection, reason: String) -> Result<(), TaskError> {
    tracing::warn!(reason = %reason, "culprit search failed");
    let view = failed(search, reason);
    if cx
        .store
        .finish_bisection(search.id, BisectionState::Failed, &view)
        .await?
    {
        tell(cx, search, &view).await?;
    }
    Ok(())
}

/// Ends running search `id` as failed with `reason` (its merge group left the queue, say) and
/// cancels the probe comparisons it still waits on.
pub async fn abandon(cx: &Context, id: i64, reason: &str) -> Result<(), TaskError> {
    let Some(search) = cx.store.bisection(id).await? else {
        return Ok(());
    };
    if search.state != BisectionState::Running {
        return Ok(());
    }
    for probe in cx.store.bisection_probes(id).await? {
        if probe.state != ProbeState::Running {
            continue;
        }
        let pair = cx
            .store
            .comparisons_of_pair(
                search.series.repository_id,
                &search.series.runner_label,
                &probe.older_sha,
                &probe.newer_sha,
            )
            .await?;
        // Only the search's own probe comparisons: a branch's step or a group's stays.
        for c in pair.iter().filter(|c| {
            !c.state.is_finished()
                && !matches!(
                    c.kind(),
                    ComparisonKind::MainStep
                        | ComparisonKind::MainAnchor
                        | ComparisonKind::MergeGroup
                )
        }) {
            cx.store.cancel_comparison(c.id).await?;
        }
    }
    cx.store
        .finish_bisection(
            id,
            BisectionState::Failed,
            &failed(&search, reason.to_owned()),
        )
        .await?;
    tracing::info!(search = id, reason, "culprit search abandoned");
    Ok(())
}

/// The episode's issue is rewritten; a named culprit's PR gets a comment. A merge group's search
/// rewrites the group's check instead, which names the PR.
async fn tell(cx: &Context, search: &Bisection, view: &SearchOutcome) -> Result<(), TaskError> {
    if let Some(group) = search.source_comparison {
        return cx
            .enqueue(super::ReportCheck {
                comparison_id: group.0,
            })
            .await;
    }
    if let Some(regression_id) = search.regression_id {
        let issues = match cx.store.regression(regression_id).await? {
            Some(e) => match cx.store.comparison(e.opened_by).await? {
                Some(c) => c.config.main.is_some_and(|m| m.issues),
                None => false,
            },
            None => false,
        };
        if issues {
            cx.enqueue(super::MainIssue { regression_id }).await?;
        }
    }
    if let (OutcomeKind::Culprit, Some(pr)) = (view.kind, view.commit.as_ref().and_then(|c| c.pr)) {
        let repository = cx
            .store
            .repository(search.series.repository_id)
            .await?
            .ok_or_else(|| TaskError::Permanent("repository of a culprit search".into()))?;
        cx.enqueue(MarkedComment {
            repo: RepoName::of(&repository),
            pr,
            label: CULPRIT_LABEL.to_owned(),
            body: culprit_comment(&cx.github_config, &repository.full_name, search, view),
        })
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::outcome::SkippedCommit;
    use super::range::first_parent_range;
    use super::wording::summary;
    use super::*;
    use benchgate_github::client::ComparedCommit;
    use benchgate_store::model::{MainSeries, RepositoryId};

    fn sha(n: u8) -> String {
        format!("{n:x}").repeat(40)[..40].to_owned()
    }

    fn listed(n: u8, message: &str, parents: &[String]) -> ComparedCommit {
        ComparedCommit {
            sha: sha(n),
            message: message.into(),
            parents: parents.to_vec(),
        }
    }

    #[test]
    fn the_range_follows_first_parents_and_names_each_pr() {
        // 1 ← 2 ← 4 (a merge of 3, whose parent is 1) ← 5; the compare lists 3 too.
        let commits = [
            listed(2, "Faster lexer (#7)\n\nbody", &[sha(1)]),
            listed(3, "wip on a branch", &[sha(1)]),
            listed(4, "Merge pull request #9 from o/b", &[sha(2), sha(3)]),
            listed(5, "notes", &[sha(4)]),
        ];
        let range = first_parent_range(&commits, &sha(1), &sha(5)).unwrap();
        let shas: Vec<&str> = range.iter().map(|c| c.sha.as_str()).collect();
        assert_eq!(shas, [sha(1), sha(2), sha(4), sha(5)]);
        let prs: Vec<Option<u64>> = range.iter().map(|c| c.pr).collect();
        assert_eq!(prs, [None, Some(7), Some(9), None]);
        assert_eq!(range[1].title, "Faster lexer (#7)");

        let behind = first_parent_range(&[], &sha(5), &sha(1)).unwrap_err();
        assert!(behind.contains("is not after"), "{behind}");
        // The good commit is off the first-parent chain (only on the merged branch).
        let off = first_parent_range(&commits, &sha(3), &sha(5)).unwrap_err();
        assert!(off.contains("not a first-parent ancestor"), "{off}");
        let same = first_parent_range(&commits, &sha(5), &sha(5)).unwrap_err();
        assert!(same.contains("the same"), "{same}");
    }

    fn search(outcome: Option<SearchOutcome>) -> Bisection {
        let at = crate::report::fixtures::now();
        let commits = (0..6)
            .map(|n| RangeCommit {
                sha: sha(n + 10),
                pr: (n > 0).then_some(480 + u64::from(n)),
                title: if n == 4 {
                    "Inline the tokenizer (#484)".into()
                } else {
                    String::new()
                },
            })
            .collect();
        Bisection {
            id: 3,
            series: MainSeries {
                repository_id: RepositoryId(1),
                branch: "main".into(),
                runner_label: "linux-x86-quiet".into(),
                suite: String::new(),
            },
            benchmark: "parse/large".into(),
            metric: "wall_time".into(),
            regression_id: Some(2),
            source_comparison: None,
            good_sha: sha(10),
            bad_sha: sha(15),
            commits: Some(commits),
            state: if outcome.is_some() {
                BisectionState::Done
            } else {
                BisectionState::Running
            },
            outcome,
            requested_by: None,
            created_at: at,
            updated_at: at,
        }
    }

    fn probe(
        seq: i64,
        older: u8,
        newer: u8,
        state: ProbeState,
        i: Option<(f64, f64)>,
    ) -> BisectionProbe {
        let at = crate::report::fixtures::now();
        BisectionProbe {
            bisection_id: 3,
            seq,
            older_sha: sha(older + 10),
            newer_sha: sha(newer + 10),
            state,
            lower: i.map(|i| i.0.ln_1p()),
            upper: i.map(|i| i.1.ln_1p()),
            rounds: if state == ProbeState::Skipped { 0 } else { 20 },
            comparisons: Vec::new(),
            note: (state == ProbeState::Skipped)
                .then(|| "could not be built or run: comparison #61 failed".into()),
            created_at: at,
            updated_at: at,
        }
    }

    /// The section of the episode's issue: a culprit named with a commit skipped, and a search
    /// still running (CONVENTIONS 21).
    #[test]
    fn the_search_reads_as_pinned_in_the_issue_and_on_the_pr() {
        let probes = vec![
            probe(0, 0, 5, ProbeState::Decided, Some((0.039, 0.046))),
            probe(1, 0, 2, ProbeState::Skipped, None),
            probe(2, 0, 1, ProbeState::Decided, Some((-0.004, 0.006))),
            probe(3, 0, 3, ProbeState::Decided, Some((-0.005, 0.004))),
            probe(4, 0, 4, ProbeState::Decided, Some((0.035, 0.049))),
            probe(5, 3, 4, ProbeState::Decided, Some((0.023, 0.060))),
        ];
        let mut state = bisect::Bisection::new(5, ALPHA);
        for p in &probes {
            let Next::Run(_) = state.next_step() else {
                panic!("ended early")
            };
            match (p.lower, p.upper) {
                (Some(lower), Some(upper)) => state.record(Interval { lower, upper }, 20),
                _ => state.skip(),
            }
        }
        let Next::Done(outcome) = state.next_step() else {
            panic!("not done")
        };
        let b = search(None);
        let view = outcome_view(b.commits.as_deref().unwrap(), &outcome, &probes);
        assert_eq!(view.kind, OutcomeKind::Culprit);
        assert_eq!(view.commit.as_ref().unwrap().sha, sha(14));
        let done = search(Some(view.clone()));
        insta::assert_snapshot!("search_culprit", describe(&done, &probes));
        insta::assert_snapshot!(
            "culprit_pr_comment",
            culprit_comment(&crate::tasks::test_args(), "acme/widgets", &done, &view)
        );
        let mut running = probes[..3].to_vec();
        running[2].state = ProbeState::Running;
        (running[2].lower, running[2].upper, running[2].rounds) = (None, None, 8);
        insta::assert_snapshot!("search_running", describe(&search(None), &running));
        assert_eq!(
            summary(Some(&view), &probes),
            "culprit eeeeeee (#484) +4.1% [+2.3%, +6.0%] (6 probes, 100 rounds)"
        );
    }

    /// A range's own commits: no single one explains the slowdown, or one could not be built.
    #[test]
    fn a_spread_and_a_skipped_range_say_what_is_left() {
        let probes = vec![probe(0, 0, 5, ProbeState::Decided, Some((0.03, 0.05)))];
        let spread = SearchOutcome {
            kind: OutcomeKind::Spread,
            commit: Some(RangeCommit {
                sha: sha(13),
                pr: Some(483),
                title: String::new(),
            }),
            change: Some(0.006),
            lower: Some(0.002),
            upper: Some(0.011),
            after: None,
            upto: None,
            skipped: Vec::new(),
            commits: 5,
            probes: 5,
            rounds: 140,
            alpha: ALPHA,
            reason: None,
        };
        let text = describe(&search(Some(spread.clone())), &probes);
        assert!(text.contains("**No single commit**"), "{text}");
        assert!(!text.contains("Culprit"), "{text}");
        let skipped = SearchOutcome {
            kind: OutcomeKind::Skipped,
            commit: None,
            after: Some(sha(11)),
            upto: Some(sha(13)),
            skipped: vec![SkippedCommit {
                sha: sha(12),
                note: "could not be built or run: comparison #61 failed".into(),
            }],
            ..spread
        };
        let text = describe(&search(Some(skipped)), &probes);
        assert!(
            text.contains(
                "**Narrowed to 2 commits**: after `bbbbbbb` (#481) up to `ddddddd` (#483)"
            ),
            "{text}"
        );
        assert!(
            text.contains("Skipped `ccccccc` (#482): could not be built"),
            "{text}"
        );
    }
}
