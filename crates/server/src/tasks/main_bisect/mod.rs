//! The culprit search of a regression on the default branch (docs/statistics.md, "Culprit
//! search"): `stats::bisect` says which pair of commits to compare next; this task runs that
//! probe as an interleaved comparison on the series' label, reusing every comparison of the same
//! pair that exists, adds rounds while the probe's interval leaves its question open, and writes
//! the outcome. A probe that ended is stored and replayed, never measured again, so the search
//! resumes after a restart or on another replica exactly where it stood.

use benchgate_api::Direction;
use benchgate_api::agent::StoredComparisonConfig;
use benchgate_github::client::{ComparedCommit, RepoTarget};
use benchgate_stats::Interval;
use benchgate_stats::bisect::{self, Next, Outcome, Probe};
use benchgate_stats::words::{self, short_sha};
use benchgate_stats::{ConfidenceSequence, MixtureBoundary};
use benchgate_store::StoreError;
use benchgate_store::model::{
    Bisection, BisectionProbe, BisectionState, Comparison, ComparisonId, ComparisonState,
    MAIN_BISECT, MainKind, NewComparison, NewJob, Priority, ProbeEnd, ProbeState, RangeCommit,
};
use serde::{Deserialize, Serialize};

use super::{Context, MarkedComment, OutboxTask, RepoName, Task, TaskError};
use crate::comparison_analysis::{ALPHA, NStarPlan, pair_samples};
use crate::main_history::{ordered_steps, series_of};

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
}

/// The label of the comment on the PR a search names.
pub const CULPRIT_LABEL: &str = "main-culprit";

/// How a search ended, as stored and as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    pub kind: OutcomeKind,
    /// The named commit (culprit), or the one that takes the regression past τ (spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<RangeCommit>,
    /// That commit's own change (ratio − 1) and interval; for `no_regression`, the range's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// The commits still suspected: after `after`, up to and including `upto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upto: Option<String>,
    #[serde(default)]
    pub skipped: Vec<SkippedCommit>,
    /// Commits in the range (the good one not counted).
    pub commits: usize,
    pub probes: usize,
    pub rounds: u64,
    /// The search's error budget: a named culprit is wrong with probability at most this.
    pub alpha: f64,
    /// Why a search could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Culprit,
    Spread,
    NoRegression,
    Undecided,
    Skipped,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedCommit {
    pub sha: String,
    pub note: String,
}

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

/// The range's commits from GitHub, good first: the first-parent chain from the bad commit back
/// to the good one. `Err` says why the range cannot be searched.
async fn read_range(
    cx: &Context,
    search: &Bisection,
) -> Result<Result<Vec<RangeCommit>, String>, TaskError> {
    let repository = cx
        .store
        .repository(search.series.repository_id)
        .await?
        .ok_or_else(|| TaskError::Permanent("repository of a culprit search".into()))?;
    let target = RepoTarget::new(
        repository.installation_id.map(|i| i as u64),
        &repository.full_name,
    )?;
    match cx
        .github
        .compare_commits(&target, &search.good_sha, &search.bad_sha)
        .await
    {
        Ok(listed) => Ok(first_parent_range(
            &listed,
            &search.good_sha,
            &search.bad_sha,
        )),
        Err(e) if e.is_not_found() => Ok(Err(format!(
            "GitHub does not know {} or {} in {}",
            short_sha(&search.good_sha),
            short_sha(&search.bad_sha),
            repository.full_name
        ))),
        Err(e) => Err(e.into()),
    }
}

/// The first-parent chain from `bad` back to `good` among the commits GitHub listed, good
/// first, each with the PR its message names.
pub fn first_parent_range(
    listed: &[ComparedCommit],
    good: &str,
    bad: &str,
) -> Result<Vec<RangeCommit>, String> {
    let by_sha = |sha: &str| listed.iter().find(|c| c.sha == sha);
    let mut chain = Vec::new();
    let mut at = bad;
    while at != good {
        let Some(commit) = by_sha(at) else {
            return Err(if chain.is_empty() {
                format!(
                    "{} is not after {} on the branch",
                    short_sha(bad),
                    short_sha(good)
                )
            } else {
                format!(
                    "{} is not a first-parent ancestor of {} within {} commits",
                    short_sha(good),
                    short_sha(bad),
                    listed.len()
                )
            });
        };
        chain.push(RangeCommit {
            sha: commit.sha.clone(),
            pr: super::merged_pr(&commit.message),
            title: commit.message.lines().next().unwrap_or_default().to_owned(),
        });
        let Some(parent) = commit.parents.first() else {
            return Err(format!(
                "{} has no parent before {}",
                short_sha(at),
                short_sha(good)
            ));
        };
        at = parent;
    }
    if chain.is_empty() {
        return Err("the good and the bad commit are the same".into());
    }
    chain.push(RangeCommit {
        sha: good.to_owned(),
        pr: None,
        title: String::new(),
    });
    chain.reverse();
    Ok(chain)
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
        .filter(|c| c.config.config.suite.clone().unwrap_or_default() == series.suite)
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
    let max_rounds = i64::from(cx.app.config.bisect_max_rounds);
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
    let priority = if newest.config.merge_group.is_some() && !newest.check_run_completed {
        Priority::MERGE_QUEUE
    } else {
        Priority::HISTORY
    };
    let stored = newest.config.clone();
    let each = i64::from(stored.config.benchmark.rounds).max(1);
    let rounds = have.max(each).min((max_rounds - have).max(1));
    let config = StoredComparisonConfig {
        github: None,
        main: None,
        merged_pr: None,
        merge_group: None,
        canary: None,
        layout: None,
        ..stored
    };
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
                max_attempts: cx.app.config.max_attempts,
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
                .filter(|c| c.main.as_ref().is_some_and(|m| m.kind == MainKind::Anchor))
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
    let json = serde_json::to_value(&view).expect("outcomes serialize");
    if !cx
        .store
        .finish_bisection(search.id, BisectionState::Done, &json)
        .await?
    {
        return Ok(());
    }
    tracing::info!(outcome = ?view.kind, commit = view.commit.as_ref().map(|c| short_sha(&c.sha)), probes = view.probes, rounds = view.rounds, "culprit search ended");
    tell(cx, search, &view).await
}

/// The outcome of a search that could not run, and why.
fn failed(search: &Bisection, reason: String) -> SearchOutcome {
    SearchOutcome {
        kind: OutcomeKind::Failed,
        commit: None,
        change: None,
        lower: None,
        upper: None,
        after: None,
        upto: None,
        skipped: Vec::new(),
        commits: search
            .commits
            .as_ref()
            .map_or(0, |c| c.len().saturating_sub(1)),
        probes: 0,
        rounds: 0,
        alpha: ALPHA,
        reason: Some(reason),
    }
}

async fn fail(cx: &Context, search: &Bisection, reason: String) -> Result<(), TaskError> {
    tracing::warn!(reason = %reason, "culprit search failed");
    let view = failed(search, reason);
    let json = serde_json::to_value(&view).expect("outcomes serialize");
    if cx
        .store
        .finish_bisection(search.id, BisectionState::Failed, &json)
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
            !c.state.is_finished() && c.main.is_none() && c.config.merge_group.is_none()
        }) {
            cx.store.cancel_comparison(c.id).await?;
        }
    }
    let json =
        serde_json::to_value(failed(&search, reason.to_owned())).expect("outcomes serialize");
    cx.store
        .finish_bisection(id, BisectionState::Failed, &json)
        .await?;
    tracing::info!(search = id, reason, "culprit search abandoned");
    Ok(())
}

/// The episode's issue is rewritten; a named culprit's PR gets a comment. A merge group's search
/// rewrites the group's check instead, which names the PR.
async fn tell(cx: &Context, search: &Bisection, view: &SearchOutcome) -> Result<(), TaskError> {
    if let Some(group) = search.source_comparison {
        return cx
            .enqueue(Task::ReportCheck(super::ReportCheck {
                comparison_id: group.0,
            }))
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
            cx.enqueue(Task::MainIssue(super::MainIssue { regression_id }))
                .await?;
        }
    }
    if let (OutcomeKind::Culprit, Some(pr)) = (view.kind, view.commit.as_ref().and_then(|c| c.pr)) {
        let repository = cx
            .store
            .repository(search.series.repository_id)
            .await?
            .ok_or_else(|| TaskError::Permanent("repository of a culprit search".into()))?;
        cx.enqueue(Task::UpsertComment(MarkedComment {
            repo: RepoName {
                full_name: repository.full_name.clone(),
                installation_id: repository.installation_id.map(|i| i as u64),
            },
            pr,
            label: CULPRIT_LABEL.to_owned(),
            body: culprit_comment(&cx.args, &repository.full_name, search, view),
        }))
        .await?;
    }
    Ok(())
}

/// The outcome with commits named and the probes' skips listed.
fn outcome_view(
    commits: &[RangeCommit],
    outcome: &Outcome,
    probes: &[BisectionProbe],
) -> SearchOutcome {
    let pct = |i: &Interval| (i.lower.exp_m1(), i.upper.exp_m1());
    let mid = |i: &Interval| (0.5 * (i.lower + i.upper)).exp_m1();
    let skipped = probes
        .iter()
        .filter(|p| p.state == ProbeState::Skipped)
        .map(|p| SkippedCommit {
            sha: p.newer_sha.clone(),
            note: p.note.clone().unwrap_or_default(),
        })
        .collect();
    let mut view = SearchOutcome {
        kind: OutcomeKind::Failed,
        commit: None,
        change: None,
        lower: None,
        upper: None,
        after: None,
        upto: None,
        skipped,
        commits: commits.len() - 1,
        // Every probe asked, a skipped one too; the rounds they spent.
        probes: probes.len(),
        rounds: probes.iter().map(|p| p.rounds.max(0) as u64).sum(),
        alpha: ALPHA,
        reason: None,
    };
    let named = |view: &mut SearchOutcome, index: usize, step: &Interval| {
        view.commit = Some(commits[index].clone());
        view.change = Some(mid(step));
        let (l, u) = pct(step);
        (view.lower, view.upper) = (Some(l), Some(u));
    };
    match outcome {
        Outcome::Culprit { index, step } => {
            view.kind = OutcomeKind::Culprit;
            named(&mut view, *index, step);
        }
        Outcome::Spread { index, step } => {
            view.kind = OutcomeKind::Spread;
            named(&mut view, *index, step);
        }
        Outcome::NoRegression { range } => {
            view.kind = OutcomeKind::NoRegression;
            view.change = Some(mid(range));
            let (l, u) = pct(range);
            (view.lower, view.upper) = (Some(l), Some(u));
        }
        Outcome::Undecided { after, upto } | Outcome::Skipped { after, upto, .. } => {
            view.kind = if matches!(outcome, Outcome::Undecided { .. }) {
                OutcomeKind::Undecided
            } else {
                OutcomeKind::Skipped
            };
            view.after = Some(commits[*after].sha.clone());
            view.upto = Some(commits[*upto].sha.clone());
        }
    }
    view
}

/// A squash commit's title without the ` (#N)` its PR number already says; nothing of a merge
/// commit's "Merge pull request #N from …".
fn title_without_pr(title: &str) -> &str {
    if title.starts_with("Merge pull request #") {
        return "";
    }
    match title.rfind(" (#") {
        Some(at) if title.ends_with(')') => &title[..at],
        _ => title,
    }
}

/// A commit as the reports name it: `c5f2a91 (#482)`.
fn commit_name(c: &RangeCommit) -> String {
    match c.pr {
        Some(pr) => format!("`{}` (#{pr})", short_sha(&c.sha)),
        None => format!("`{}`", short_sha(&c.sha)),
    }
}

fn interval_words(lower: Option<f64>, upper: Option<f64>) -> String {
    let bound = |b: Option<f64>| b.filter(|b| b.is_finite()).map(|b| b * 100.0);
    words::interval([bound(lower), bound(upper)])
}

/// The search as the episode's issue and the dashboard word it: how it ended (or where it
/// stands), then each probe.
pub fn describe(search: &Bisection, probes: &[BisectionProbe]) -> String {
    let outcome: Option<SearchOutcome> = search
        .outcome
        .as_ref()
        .and_then(|o| serde_json::from_value(o.clone()).ok());
    let commits = search.commits.as_deref().unwrap_or_default();
    let name = |sha: &str| {
        commits
            .iter()
            .find(|c| c.sha == sha)
            .map(commit_name)
            .unwrap_or_else(|| format!("`{}`", short_sha(sha)))
    };
    let rounds: i64 = probes.iter().map(|p| p.rounds).sum();
    let mut out = String::from("### Which commit\n\n");
    match &outcome {
        None => {
            let running = probes.iter().find(|p| p.state == ProbeState::Running);
            out.push_str(&format!(
                "Searching for the commit that did it between {} and {}{}: {} probes so far, \
                 {rounds} rounds{}.\n",
                name(&search.good_sha),
                name(&search.bad_sha),
                match commits.len() {
                    0 => String::new(),
                    n => format!(" ({} commits)", n - 1),
                },
                probes.len(),
                match running {
                    Some(p) => format!(
                        "; now {} against {}",
                        name(&p.newer_sha),
                        name(&p.older_sha)
                    ),
                    None => String::new(),
                }
            ));
        }
        Some(o) => {
            let cost = format!(
                "{} probes and {} rounds over {} commits",
                o.probes, o.rounds, o.commits
            );
            let change = |o: &SearchOutcome| {
                format!(
                    "{} {}",
                    words::percent(o.change.unwrap_or(0.0) * 100.0),
                    interval_words(o.lower, o.upper)
                )
            };
            let line = match o.kind {
                OutcomeKind::Culprit => format!(
                    "**Culprit: {} {}** on its own{}. Found in {cost}; a named culprit is \
                     wrong at most {:.0}% of the time.",
                    o.commit.as_ref().map(commit_name).unwrap_or_default(),
                    change(o),
                    o.commit
                        .as_ref()
                        .map(|c| title_without_pr(&c.title))
                        .filter(|t| !t.is_empty())
                        .map(|t| format!(", \"{t}\""))
                        .unwrap_or_default(),
                    o.alpha * 100.0
                ),
                OutcomeKind::Spread => format!(
                    "**No single commit**: the slowdown builds up over the range. {} takes it \
                     past the search's threshold (3/8 to 3/4 of it) with {} of its own; the \
                     probes below give it commit by commit ({cost}).",
                    o.commit.as_ref().map(commit_name).unwrap_or_default(),
                    change(o)
                ),
                OutcomeKind::NoRegression => format!(
                    "**Not confirmed**: {} against {} again shows {} ({cost}).",
                    name(&search.bad_sha),
                    name(&search.good_sha),
                    change(o)
                ),
                OutcomeKind::Undecided | OutcomeKind::Skipped => {
                    let (after, upto) = (
                        o.after.clone().unwrap_or_default(),
                        o.upto.clone().unwrap_or_default(),
                    );
                    let between = commits
                        .iter()
                        .position(|c| c.sha == after)
                        .zip(commits.iter().position(|c| c.sha == upto))
                        .map_or(0, |(a, u)| u.saturating_sub(a));
                    let why = if o.kind == OutcomeKind::Undecided {
                        "a probe stayed undecided at its round limit"
                    } else {
                        "commits there could not be measured"
                    };
                    format!(
                        "**Narrowed to {between} commits**: after {} up to {}; {why} \
                         ({cost}).",
                        name(&after),
                        name(&upto)
                    )
                }
                OutcomeKind::Failed => format!(
                    "**Search failed**: {}.",
                    o.reason.as_deref().unwrap_or("no reason given")
                ),
            };
            out.push_str(&line);
            out.push('\n');
            for s in &o.skipped {
                out.push_str(&format!("\nSkipped {}: {}.", name(&s.sha), s.note));
            }
            if !o.skipped.is_empty() {
                out.push('\n');
            }
        }
    }
    if !probes.is_empty() {
        out.push_str("\n| probe | compared | change | rounds | |\n|---|---|---|---|---|\n");
        for p in probes {
            let change = match (p.lower, p.upper) {
                (Some(l), Some(u)) => format!(
                    "{} {}",
                    words::percent((0.5 * (l + u)).exp_m1() * 100.0),
                    interval_words(Some(l.exp_m1()), Some(u.exp_m1()))
                ),
                _ => "–".to_owned(),
            };
            out.push_str(&format!(
                "| {} | {} → {} | {change} | {} | {} |\n",
                p.seq + 1,
                name(&p.older_sha),
                name(&p.newer_sha),
                p.rounds,
                match p.state {
                    ProbeState::Running => "running".to_owned(),
                    ProbeState::Decided => "decided".to_owned(),
                    ProbeState::Limit | ProbeState::Skipped => p
                        .note
                        .clone()
                        .unwrap_or_else(|| p.state.as_str().to_owned()),
                }
            ));
        }
    }
    out
}

/// The comment on the PR a search named.
fn culprit_comment(
    args: &crate::github_args::GitHubArgs,
    repository: &str,
    search: &Bisection,
    view: &SearchOutcome,
) -> String {
    let commit = view.commit.as_ref().map(commit_name).unwrap_or_default();
    format!(
        "**benchgate: this merge made `{}` ({}) slower on `{}`**: {commit} alone is **{}** \
         {} (on `{}`).\n\nA search of {} commits between `{}` and `{}` named it, in {} \
         interleaved probes and {} rounds; a named culprit is wrong at most {:.0}% of the \
         time. History: {}/history?repository={}&branch={}",
        search.benchmark,
        search.metric,
        search.series.branch,
        words::percent(view.change.unwrap_or(0.0) * 100.0),
        interval_words(view.lower, view.upper),
        search.series.runner_label,
        view.commits,
        short_sha(&search.good_sha),
        short_sha(&search.bad_sha),
        view.probes,
        view.rounds,
        view.alpha * 100.0,
        args.public_url.trim_end_matches('/'),
        repository,
        search.series.branch,
    )
}

/// A search as the API and the dashboard show it.
#[derive(Debug, Clone, Serialize)]
pub struct SearchView {
    pub id: i64,
    pub benchmark: String,
    pub metric: String,
    pub runner_label: String,
    pub suite: String,
    pub regression_id: Option<i64>,
    pub good: String,
    pub bad: String,
    pub state: BisectionState,
    /// The range, good first; empty until read.
    pub commits: Vec<RangeCommit>,
    pub outcome: Option<SearchOutcome>,
    pub probes: Vec<BisectionProbe>,
    pub requested_by: Option<String>,
    /// One line: how it ended, or where it stands.
    pub summary: String,
    /// Markdown, as the episode's issue shows it.
    #[serde(skip)]
    pub text: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl SearchView {
    pub fn new(b: &Bisection, probes: Vec<BisectionProbe>) -> SearchView {
        let outcome: Option<SearchOutcome> = b
            .outcome
            .as_ref()
            .and_then(|o| serde_json::from_value(o.clone()).ok());
        SearchView {
            id: b.id,
            benchmark: b.benchmark.clone(),
            metric: b.metric.clone(),
            runner_label: b.series.runner_label.clone(),
            suite: b.series.suite.clone(),
            regression_id: b.regression_id,
            good: b.good_sha.clone(),
            bad: b.bad_sha.clone(),
            state: b.state,
            commits: b.commits.clone().unwrap_or_default(),
            summary: summary(outcome.as_ref(), &probes),
            text: describe(b, &probes),
            outcome,
            probes,
            requested_by: b.requested_by.clone(),
            created_at: b.created_at,
        }
    }
}

/// One line for a table: `culprit c5f2a91 (#482) +4.1% [+2.3%, +6.0%]`, or where it stands.
pub fn summary(outcome: Option<&SearchOutcome>, probes: &[BisectionProbe]) -> String {
    let Some(o) = outcome else {
        let rounds: i64 = probes.iter().map(|p| p.rounds).sum();
        return format!("searching: {} probes, {rounds} rounds so far", probes.len());
    };
    let cost = format!("{} probes, {} rounds", o.probes, o.rounds);
    let change = || {
        format!(
            "{} {}",
            words::percent(o.change.unwrap_or(0.0) * 100.0),
            interval_words(o.lower, o.upper)
        )
    };
    let commit = || o.commit.as_ref().map(commit_name).unwrap_or_default();
    let text = match o.kind {
        OutcomeKind::Culprit => format!("culprit {} {} ({cost})", commit(), change()),
        OutcomeKind::Spread => format!("no single commit: builds up ({cost})"),
        OutcomeKind::NoRegression => format!("not confirmed: {} ({cost})", change()),
        OutcomeKind::Undecided => format!(
            "undecided between {} and {} ({cost})",
            short_sha(o.after.as_deref().unwrap_or_default()),
            short_sha(o.upto.as_deref().unwrap_or_default())
        ),
        OutcomeKind::Skipped => format!(
            "narrowed to {}..{}, with commits skipped ({cost})",
            short_sha(o.after.as_deref().unwrap_or_default()),
            short_sha(o.upto.as_deref().unwrap_or_default())
        ),
        OutcomeKind::Failed => format!("failed: {}", o.reason.as_deref().unwrap_or("")),
    };
    text.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;
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
            outcome: outcome.map(|o| serde_json::to_value(o).unwrap()),
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
