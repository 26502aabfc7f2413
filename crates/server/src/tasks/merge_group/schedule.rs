//! A merge group announced (`merge_group.checks_requested`): read `.benchgate.toml` from the
//! branch it merges into, then per suite and label restate the PR's verdict, compare the
//! group's head with its base, or say it is not measured, as `[merge_queue] mode` asks.

use benchgate_api::agent::{
    ComparisonConfig, GroupPullRequest, MeasuredTrees, MergeGroupContext, MergeQueueMode,
    MergeQueueSettings, StoredComparisonConfig,
};
use benchgate_github::client::{CheckConclusion, CheckStatus};

use crate::forge::ForgeRepo;
use benchgate_github::parse_repo_config;
use benchgate_github::repo_config::{FILE_NAME, check_run_name};
use benchgate_stats::words;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    ComparisonState, NewComparison, NewJob, NewOutboxMessage, Priority, RepositoryId,
};
use serde::{Deserialize, Serialize};

use super::super::{Context, NeutralCheck, OutboxTask, RepoName, ReportCheck, TaskError};
use crate::commit_check::{self, CheckWrite};
use crate::report;

/// Decide the check of a merge group GitHub asked checks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleMergeGroup {
    pub repo: RepoName,
    /// The group's temporary commit: its check is what the queue waits for.
    pub head_sha: String,
    pub head_ref: String,
    pub base_sha: String,
    pub base_ref: String,
    /// The PR the group's ref names (the last one it merges).
    pub queued_pr: Option<u64>,
}

impl OutboxTask for ScheduleMergeGroup {
    const KIND: &'static str = "merge_group.schedule";
    // The queue holds people's merges until the check concludes.
    const PRIORITY: Priority = Priority::INTERACTIVE;
    fn dedupe_key(&self) -> Option<String> {
        // Shared with the group's cancel: a `destroyed` replaces a schedule still pending.
        Some(super::group_key(&self.repo, &self.head_sha))
    }

    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, group = %self.head_ref))]
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let forge = cx.forge(&self.repo)?;
        let repository = cx.recorded_repository(&self.repo).await?;
        let Some(text) = forge.read_file(FILE_NAME, &self.base_ref).await? else {
            tracing::info!("no {FILE_NAME} on the base branch; nothing to run");
            return cx
                .enqueue(self.neutral(
                    format!("no {FILE_NAME}"),
                    format!(
                        "benchgate found no `{FILE_NAME}` on `{}`, so nothing was benchmarked.",
                        self.base_ref
                    ),
                ))
                .await;
        };
        let config = match parse_repo_config(&text) {
            Ok(config) => config,
            Err(error) => {
                tracing::info!(error = %error, "invalid {FILE_NAME}");
                let check =
                    self.neutral(format!("invalid {FILE_NAME}"), format!("```\n{error}\n```"));
                return cx.enqueue(check).await;
            }
        };
        let settings = config.merge_queue.to_wire();
        if settings.mode == MergeQueueMode::Skip {
            for (suite, label) in config.comparisons() {
                let name = check_run_name(config.comparison_config(suite).suite.as_deref(), label);
                let summary = "`[merge_queue] mode = \"skip\"`: benchgate does not measure merge \
                               groups; each PR was compared on its own, and main's history \
                               compares every merged commit."
                    .to_owned();
                let title = "not measured in the merge queue".to_owned();
                self.write_check(&forge, name, CheckConclusion::Success, title, summary, None)
                    .await?;
            }
            tracing::info!("merge queue: skipped");
            return Ok(());
        }
        let commits = forge
            .compare_commits(&self.base_sha, &self.head_sha)
            .await?;
        let listed: Vec<(String, String, Vec<String>)> = commits
            .into_iter()
            .map(|c| (c.sha, c.message, c.parents))
            .collect();
        let prs = super::decide::group_pull_requests(
            &listed,
            &self.base_sha,
            &self.head_sha,
            self.queued_pr,
        );
        for (suite, label) in config.comparisons() {
            let compared = config.comparison_config(suite);
            let name = check_run_name(compared.suite.as_deref(), label);
            if settings.mode == MergeQueueMode::Reuse
                && let [pr] = prs.as_slice()
                && let Some(number) = pr.number
                && self
                    .reuse(cx, &forge, repository.id, number, &compared, label, &name)
                    .await?
            {
                continue;
            }
            self.measure(cx, repository.id, compared, label, settings, &prs)
                .await?;
        }
        Ok(())
    }
}

impl ScheduleMergeGroup {
    /// Restates PR `number`'s verdict when its newest comparison of this suite and label
    /// measured the group's base and head trees and is decided; `false` when it cannot be
    /// reused.
    #[allow(clippy::too_many_arguments)]
    async fn reuse(
        &self,
        cx: &Context,
        target: &ForgeRepo<'_>,
        repository_id: RepositoryId,
        number: u64,
        compared: &ComparisonConfig,
        label: &str,
        name: &str,
    ) -> Result<bool, TaskError> {
        let newest = cx
            .store
            .pull_request_comparisons(repository_id, number as i64)
            .await?
            .into_iter()
            .find(|c| c.runner_label == label && c.config.suite == compared.suite);
        let Some(pr) = newest else {
            tracing::info!(pr = number, "no comparison of the PR to reuse; measuring");
            return Ok(false);
        };
        if matches!(
            pr.state,
            ComparisonState::Superseded | ComparisonState::Cancelled
        ) {
            tracing::info!(
                pr = number,
                "the PR's newest comparison was dropped; measuring"
            );
            return Ok(false);
        }
        // The same change only when the group holds exactly the trees that were measured: a
        // PR measured from its merge base says nothing about a group that also holds the base
        // branch's newer commits.
        let measured = pr
            .config
            .github
            .as_ref()
            .and_then(|g| g.branch.as_ref())
            .and_then(|b| b.trees.clone());
        // A group has no number; GitHub's branch point asks for none.
        let group = target
            .branch_point(0, &self.base_sha, &self.head_sha)
            .await?
            .filter(|p| p.merge_base == self.base_sha)
            .map(|p| MeasuredTrees {
                base: p.merge_base_tree,
                head: p.head_tree,
            });
        let (Some(measured), Some(group)) = (measured, group) else {
            tracing::info!(
                pr = number,
                "the trees measured or the group's are unknown; measuring"
            );
            return Ok(false);
        };
        if measured != group {
            tracing::info!(pr = number, pr_base = %pr.base_sha, group_base = %self.base_sha, "the group's trees are not the ones the PR's comparison measured; measuring");
            return Ok(false);
        }
        let Some((loaded, _)) = cx.loaded(pr.id.0).await? else {
            return Ok(false);
        };
        let outcome = report::check_outcome(&loaded.input);
        let (CheckStatus::Completed, Some(conclusion)) = (outcome.status, outcome.conclusion)
        else {
            tracing::info!(pr = number, "the PR's comparison is not decided; measuring");
            return Ok(false);
        };
        let url = cx.github_config.comparison_url(pr.id);
        let summary = format!(
            "Merge queue: restated from #{number}'s [comparison]({url}) of `{}` → `{}`, whose \
             trees are this group's base `{}` and head `{}`: the same code, so no rounds ran \
             for this group.\n\n{}",
            words::short_sha(&pr.base_sha),
            words::short_sha(&pr.head_sha),
            words::short_sha(&self.base_sha),
            words::short_sha(&self.head_sha),
            report::render_check_summary(&loaded.input)
        );
        let title = format!("#{number}: {}", outcome.title);
        self.write_check(
            target,
            name.to_owned(),
            conclusion,
            title,
            summary,
            Some(url),
        )
        .await?;
        tracing::info!(pr = number, comparison = %pr.id, "merge queue: the PR's verdict restated");
        Ok(true)
    }

    /// Compares the group's head with its base, ahead of PR work; its check follows the
    /// comparison.
    async fn measure(
        &self,
        cx: &Context,
        repository_id: RepositoryId,
        compared: ComparisonConfig,
        label: &str,
        settings: MergeQueueSettings,
        prs: &[GroupPullRequest],
    ) -> Result<(), TaskError> {
        let context = MergeGroupContext {
            head_ref: self.head_ref.clone(),
            base_ref: self.base_ref.clone(),
            settings,
            prs: prs.to_vec(),
            step_of: None,
            alpha_split: None,
        };
        let group = create(
            cx,
            repository_id,
            &compared,
            label,
            &self.base_sha,
            &self.head_sha,
            context,
            true,
        )
        .await?;
        // Its PRs' own commits are compared only once it is slower (`super::report`); a larger
        // group is then searched instead (`super::SEARCH_FROM`).
        tracing::info!(comparison = ?group, prs = prs.len(), "merge queue: group measured");
        Ok(())
    }

    fn neutral(&self, title: String, summary: String) -> NeutralCheck {
        NeutralCheck {
            repo: self.repo.clone(),
            head_sha: self.head_sha.clone(),
            title,
            summary,
            name: None,
            conclusion: None,
            pr: None,
        }
    }

    /// A completed check on the group's head that no comparison backs (reuse, skip).
    #[allow(clippy::too_many_arguments)]
    async fn write_check(
        &self,
        target: &ForgeRepo<'_>,
        name: String,
        conclusion: CheckConclusion,
        title: String,
        summary: String,
        details_url: Option<String>,
    ) -> Result<(), TaskError> {
        let write = CheckWrite {
            external_id: format!("benchgate-merge-group-{}-{name}", self.head_sha),
            name,
            head_sha: self.head_sha.clone(),
            status: CheckStatus::Completed,
            conclusion: Some(conclusion),
            title,
            summary: commit_check::summary(summary),
            details_url,
        };
        target.write_gate(None, &write, None).await?;
        Ok(())
    }
}

/// Creates one comparison of a merge group (the group, or a step of it) unless a retry made it
/// already; `None` then.
#[allow(clippy::too_many_arguments)]
pub(super) async fn create(
    cx: &Context,
    repository_id: RepositoryId,
    compared: &ComparisonConfig,
    label: &str,
    base_sha: &str,
    head_sha: &str,
    context: MergeGroupContext,
    with_check: bool,
) -> Result<Option<benchgate_store::model::ComparisonId>, TaskError> {
    let exists = cx
        .store
        .head_comparisons(repository_id, head_sha)
        .await?
        .into_iter()
        .any(|c| {
            c.base_sha == base_sha
                && c.runner_label == label
                && c.config.suite == compared.suite
                && c.config
                    .merge_group
                    .as_ref()
                    .is_some_and(|g| g.step_of == context.step_of)
                && c.state != ComparisonState::Cancelled
        });
    if exists {
        tracing::info!(head = %head_sha, "merge-group comparison exists already");
        return Ok(None);
    }
    let rules = benchgate_api::RuleSet::of(compared);
    let plan = crate::comparison_analysis::plan_rounds(
        &cx.store,
        repository_id,
        label,
        compared.gate.min_effect,
        &rules,
    )
    .await?;
    let notify = if with_check {
        vec![NewOutboxMessage::for_new_comparison(
            ReportCheck::KIND,
            Priority::INTERACTIVE,
        )]
    } else {
        Vec::new()
    };
    let created = cx
        .store
        .create_comparison(&NewComparison {
            repository_id,
            pr_number: None,
            base_sha: base_sha.to_owned(),
            head_sha: head_sha.to_owned(),
            runner_label: label.to_owned(),
            config: StoredComparisonConfig {
                n_star: plan.per_benchmark,
                merge_group: Some(context),
                ..compared.clone().into()
            },
            planned_rounds: plan.planned_rounds,
            jobs: vec![NewJob {
                rounds: i64::from(compared.benchmark.rounds),
                priority: Priority::MERGE_QUEUE,
                max_attempts: cx.config.max_attempts,
                origin: None,
            }],
            main: None,
            notify,
        })
        .await?;
    Ok(Some(created.id))
}
