//! GitHub's merge queue: the check a merge group needs before it merges, named as the PR's
//! check so branch protection matches it, decided without runner time when the PR's own
//! verdict still holds, and never left waiting past `[merge_queue] deadline`.

mod decide;
mod schedule;

use benchgate_github::client::{CheckConclusion, CheckStatus};
use benchgate_github::repo_config::ROUNDS;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{Comparison, ComparisonState, NewJob, Priority, RepositoryId};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};
use crate::commit_check::{self, CheckWrite};
use crate::report::{self, CheckOutcome, LoadedReport};

pub use decide::{GroupSearch, GroupView, StepView, decide, pr_name};

/// A group of this many PRs or more is not measured PR by PR: when it is slower, a culprit
/// search names the PR in about `log2(n) + 2` probes, the first of them the group's own
/// comparison, instead of `n` comparisons.
pub const SEARCH_FROM: usize = 4;
pub use schedule::ScheduleMergeGroup;

/// One key per group: its schedule and its cancel replace each other while pending.
fn group_key(repo: &RepoName, head_sha: &str) -> String {
    format!("merge_group:{}@{head_sha}", repo.full_name)
}

/// The group left the queue (`merge_group.destroyed`): its comparisons stop; a check still
/// undecided concludes neutral.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelMergeGroup {
    pub repo: RepoName,
    pub head_sha: String,
    /// `merged`, `invalidated` or `dequeued`, as GitHub said.
    pub reason: String,
}

impl OutboxTask for CancelMergeGroup {
    const KIND: &'static str = "merge_group.cancel";
    const PRIORITY: Priority = Priority::INTERACTIVE;
    fn dedupe_key(&self) -> Option<String> {
        Some(group_key(&self.repo, &self.head_sha))
    }

    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, head = %self.head_sha, reason = %self.reason))]
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let Some(repository) = cx.store.repository_by_name(&self.repo.full_name).await? else {
            return Ok(());
        };
        let mut jobs = 0;
        let searches = cx.store.bisections(repository.id).await?;
        for group in groups_of(cx, repository.id, &self.head_sha).await? {
            // Each cancel records the check's report row in its transaction.
            for step in steps_of(cx, &group).await? {
                jobs += cx.store.cancel_comparison(step.id).await?;
            }
            for search in searches
                .iter()
                .filter(|b| b.source_comparison == Some(group.id))
            {
                let reason = format!("the merge group left the queue ({})", self.reason);
                super::main_bisect::abandon(cx, search.id, &reason).await?;
            }
            jobs += cx.store.cancel_comparison(group.id).await?;
        }
        tracing::info!(jobs, "merge group left the queue; its jobs were cancelled");
        Ok(())
    }
}

/// The group comparisons (not steps) of a group's head.
async fn groups_of(
    cx: &Context,
    repository_id: RepositoryId,
    head_sha: &str,
) -> Result<Vec<Comparison>, TaskError> {
    Ok(cx
        .store
        .head_comparisons(repository_id, head_sha)
        .await?
        .into_iter()
        .filter(|c| {
            c.config
                .merge_group
                .as_ref()
                .is_some_and(|g| g.step_of.is_none())
        })
        .collect())
}

/// Compares each PR's commit of slower group `c` with its parent, judged at the group's α split
/// over its PRs (docs/statistics.md §7d); a step made already is not made again.
async fn create_steps(
    cx: &Context,
    c: &Comparison,
    context: &benchgate_api::agent::MergeGroupContext,
) -> Result<(), TaskError> {
    let k = u32::try_from(context.prs.len()).unwrap_or(u32::MAX);
    let mut created = 0;
    for pr in &context.prs {
        let step = benchgate_api::agent::MergeGroupContext {
            step_of: Some(c.head_sha.clone()),
            alpha_split: Some(k),
            ..context.clone()
        };
        let made = schedule::create(
            cx,
            c.repository_id,
            &c.config.config,
            &c.runner_label,
            &pr.parent,
            &pr.sha,
            step,
            false,
        )
        .await?;
        created += usize::from(made.is_some());
    }
    if created > 0 {
        tracing::info!(group = %c.id, prs = k, created, "merge group slower; comparing each PR's commit with its parent");
    }
    Ok(())
}

/// The step comparisons of `group` (one per PR of a group of several), in merge order.
async fn steps_of(cx: &Context, group: &Comparison) -> Result<Vec<Comparison>, TaskError> {
    let Some(context) = &group.config.merge_group else {
        return Ok(Vec::new());
    };
    if context.prs.len() < 2 || context.prs.len() >= SEARCH_FROM {
        return Ok(Vec::new());
    }
    let mut steps = Vec::new();
    for pr in &context.prs {
        let found = cx
            .store
            .head_comparisons(group.repository_id, &pr.sha)
            .await?
            .into_iter()
            .find(|c| {
                c.runner_label == group.runner_label
                    && c.config.suite == group.config.suite
                    && c.config
                        .merge_group
                        .as_ref()
                        .is_some_and(|g| g.step_of.as_deref() == Some(group.head_sha.as_str()))
            });
        steps.extend(found);
    }
    Ok(steps)
}

/// Writes the check of a merge-group comparison; a step's progress rewrites its group's check.
pub(super) async fn report(
    cx: &Context,
    loaded: LoadedReport,
    repo: RepoName,
) -> Result<(), TaskError> {
    let c = &loaded.comparison;
    let Some(context) = c.config.merge_group.clone() else {
        return Ok(());
    };
    if let Some(group_head) = &context.step_of {
        let group = groups_of(cx, c.repository_id, group_head)
            .await?
            .into_iter()
            .find(|g| g.runner_label == c.runner_label && g.config.suite == c.config.suite);
        if let Some(group) = group
            && let Some((loaded, repo)) = cx.loaded(group.id.0).await?
        {
            return Box::pin(report(cx, loaded, repo)).await;
        }
        return Ok(());
    }
    let group_outcome = report::check_outcome(&loaded.input);
    let now = chrono::Utc::now();
    // A small group is measured first; its PRs' own commits only once it is slower.
    if group_outcome.conclusion == Some(CheckConclusion::Failure)
        && (2..SEARCH_FROM).contains(&context.prs.len())
        && now < deadline(c)
        && !c.check_run_completed
    {
        create_steps(cx, c, &context).await?;
    }
    let step_rows = steps_of(cx, c).await?;
    let mut measured = Vec::new();
    for pr in context.prs.iter().filter(|_| context.prs.len() > 1) {
        let row = step_rows.iter().find(|s| s.head_sha == pr.sha);
        let loaded = match row {
            Some(step) => cx.loaded(step.id.0).await?.map(|(l, _)| l),
            None => None,
        };
        measured.push((pr, row, loaded));
    }
    // Once a PR's commit is slower the check can name it; until then an undecided step of a
    // slower group gets more rounds.
    let named = measured.iter().any(|(_, _, l)| {
        l.as_ref().is_some_and(|l| {
            report::check_outcome(&l.input).conclusion == Some(CheckConclusion::Failure)
        })
    });
    let mut steps = Vec::new();
    for (pr, row, loaded) in measured {
        let mut outcome = None;
        if let (Some(step), Some(l)) = (row, loaded) {
            let mut o = report::check_outcome(&l.input);
            if group_outcome.conclusion == Some(CheckConclusion::Failure)
                && !named
                && now < deadline(c)
                && more_rounds(cx, step, &o, l.input.rounds_planned).await?
            {
                o.status = CheckStatus::InProgress;
            }
            outcome = Some(o);
        }
        steps.push(StepView {
            pr: pr.clone(),
            outcome,
            comparison_url: row.map(|s| cx.github_config.comparison_url(s.id)),
        });
    }
    let search = if context.prs.len() >= SEARCH_FROM
        && group_outcome.conclusion == Some(CheckConclusion::Failure)
    {
        group_search(cx, c, &context, &loaded).await?
    } else {
        None
    };
    let view = GroupView {
        group: &context,
        state: c.state,
        created_at: c.created_at,
        outcome: group_outcome,
        steps,
        search,
        now,
    };
    let decided = decide(&view);
    let summary = format!(
        "{}\n\n{}",
        decided.preface,
        report::render_check_summary(&loaded.input)
    );
    let write = CheckWrite {
        name: super::check_name_of(c),
        head_sha: c.head_sha.clone(),
        status: decided.status,
        conclusion: decided.conclusion,
        title: decided.title.clone(),
        summary: commit_check::summary(summary),
        details_url: Some(cx.github_config.comparison_url(c.id)),
        external_id: super::report_check::external_id(c),
    };
    super::report_check::write_recorded(cx, &cx.forge(&repo)?, c, &write).await?;
    tracing::info!(comparison = %c.id, status = ?decided.status, conclusion = ?decided.conclusion, title = %decided.title, "merge group check written");
    if decided.concluded {
        // Concluded: nothing still measuring can change it.
        for step in step_rows.iter().filter(|s| !s.state.is_finished()) {
            cx.store.cancel_comparison(step.id).await?;
        }
        if view.search.as_ref().is_some_and(|s| s.running) {
            // The queue has its answer; the search goes on at the history's priority, and its
            // culprit restates this check (the same conclusion) and shows in the history.
            tracing::info!(comparison = %c.id, "merge group concluded at its deadline; its culprit search continues");
        }
        if !c.state.is_finished() && view.now >= deadline(c) {
            cx.store.cancel_comparison(c.id).await?;
        }
    }
    Ok(())
}

/// The culprit search of slower group `c`, started on its first failing row when there is none.
async fn group_search(
    cx: &Context,
    c: &Comparison,
    context: &benchgate_api::agent::MergeGroupContext,
    loaded: &LoadedReport,
) -> Result<Option<GroupSearch>, TaskError> {
    let found = cx
        .store
        .bisections(c.repository_id)
        .await?
        .into_iter()
        .find(|b| b.source_comparison == Some(c.id));
    let search = match found {
        Some(b) => b,
        None => {
            let input = &loaded.input;
            let Some(row) = input
                .results
                .iter()
                .find(|r| benchgate_stats::is_regression(r, input.config.gate.fail_on))
            else {
                return Ok(None);
            };
            let (search, _) = cx
                .store
                .create_bisection(&benchgate_store::model::NewBisection {
                    series: benchgate_store::model::MainSeries {
                        repository_id: c.repository_id,
                        branch: context.head_ref.clone(),
                        runner_label: c.runner_label.clone(),
                        suite: c.config.suite.clone().unwrap_or_default(),
                    },
                    benchmark: row.name.clone(),
                    metric: row.metric.clone(),
                    regression_id: None,
                    source_comparison: Some(c.id),
                    good_sha: c.base_sha.clone(),
                    bad_sha: c.head_sha.clone(),
                    requested_by: None,
                })
                .await?;
            tracing::info!(search = search.id, group = %c.id, prs = context.prs.len(), benchmark = %row.name, "merge group slower; culprit search started");
            search
        }
    };
    let probes = cx.store.bisection_probes(search.id).await?;
    let view = super::SearchView::new(&search, probes);
    let culprit = view
        .outcome
        .as_ref()
        .filter(|o| o.kind == super::main_bisect::OutcomeKind::Culprit)
        .and_then(|o| o.commit.as_ref())
        .and_then(|commit| context.prs.iter().find(|pr| pr.sha == commit.sha))
        .cloned();
    Ok(Some(GroupSearch {
        running: view.state == benchgate_store::model::BisectionState::Running,
        culprit,
        summary: view.summary,
        text: view.text,
    }))
}

/// A step that finished undecided while its group is slower gets its rounds again, up to
/// the most a comparison may plan: its interval is anytime-valid, so looking again is sound,
/// and the group's check must name a PR. `true` when rounds were added (or already were).
async fn more_rounds(
    cx: &Context,
    step: &Comparison,
    outcome: &CheckOutcome,
    planned: u64,
) -> Result<bool, TaskError> {
    let undecided = outcome.status == CheckStatus::Completed
        && outcome.conclusion == Some(CheckConclusion::Neutral)
        && step.state == ComparisonState::Done;
    let rounds = u64::from(step.config.benchmark.rounds);
    if !undecided || planned + rounds > u64::from(*ROUNDS.end()) {
        return Ok(false);
    }
    // Keyed by the step's generation: this row carried out twice adds the rounds once.
    let origin = format!("merge_group:step:{}:{}", step.id, step.rounds_generation);
    let added = cx
        .store
        .add_rounds(
            step.id,
            &[NewJob {
                rounds: rounds as i64,
                priority: Priority::MERGE_QUEUE,
                max_attempts: cx.config.max_attempts,
                origin: Some(origin),
            }],
        )
        .await?;
    tracing::info!(step = %step.id, planned, added = added.len(), "merge group slower; its undecided step gets more rounds");
    Ok(true)
}

/// When the check of a merge-group comparison concludes with what it has.
pub fn deadline(c: &Comparison) -> chrono::DateTime<chrono::Utc> {
    let minutes = c
        .config
        .merge_group
        .as_ref()
        .map_or(0, |g| g.settings.deadline_minutes);
    c.created_at + chrono::TimeDelta::minutes(i64::from(minutes))
}
