//! Scheduling a push to the default branch (in the outbox, where GitHub may be called): read
//! `.benchgate.toml` at the pushed commit and create one step of the branch's history per
//! suite and label, the pushed commit against the commit before the push. Steps still queued
//! are folded into the new one by the store, so a burst of pushes costs one comparison.

use benchgate_api::agent::StoredComparisonConfig;
use benchgate_github::parse_repo_config;
use benchgate_github::repo_config::FILE_NAME;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{MainInfo, MainKind, NewComparison, NewJob, Priority, RepositoryId};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, RepoName, TaskError};

/// Compare a push to the default branch with the commit before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleMain {
    pub repo: RepoName,
    pub branch: String,
    pub before: String,
    pub after: String,
    /// The pushed commits, oldest first.
    pub commits: Vec<String>,
    /// A force push: `before` may not be an ancestor of `after`; compared all the same.
    #[serde(default)]
    pub forced: bool,
    #[serde(default)]
    pub head_message: String,
}

impl OutboxTask for ScheduleMain {
    const KIND: &'static str = "main.schedule";
    const PRIORITY: Priority = Priority::HISTORY;
    fn dedupe_key(&self) -> Option<String> {
        // Every push is its own row: the store folds steps, a shared key would drop one.
        None
    }

    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, branch = %self.branch, head = %self.after))]
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        let forge = cx.forge(&self.repo)?;
        let repository = cx.recorded_repository(&self.repo).await?;
        let Some(text) = forge.read_file(FILE_NAME, &self.after).await? else {
            tracing::info!("no {FILE_NAME} at the pushed commit; the branch's history is not kept");
            return Ok(());
        };
        let config = match parse_repo_config(&text) {
            Ok(config) => config,
            Err(error) => {
                // No PR to comment on: the next PR that touches the file gets the error.
                tracing::warn!(error = %error, "invalid {FILE_NAME} at the pushed commit; push not compared");
                return Ok(());
            }
        };
        if !config.main.enabled {
            tracing::info!("[main] enabled = false; push not compared");
            return Ok(());
        }
        if self.forced {
            tracing::warn!(before = %self.before, "force push: compared with the branch's previous commit all the same");
        }
        for (suite, label) in config.comparisons() {
            let stored = config.comparison_config(suite);
            let info = MainInfo {
                branch: self.branch.clone(),
                kind: MainKind::Step,
                suite: stored.suite.clone().unwrap_or_default(),
                commits: commits_of(&self),
            };
            schedule_step(
                cx,
                &self,
                repository.id,
                stored,
                &config.main.to_wire(),
                label,
                info,
            )
            .await?;
        }
        Ok(())
    }
}

/// The push's commits, or just its head when GitHub listed none (more than 2048, or a merge
/// that brought no new commits).
fn commits_of(t: &ScheduleMain) -> Vec<String> {
    if t.commits.is_empty() {
        vec![t.after.clone()]
    } else {
        t.commits.clone()
    }
}

#[allow(clippy::too_many_arguments)]
async fn schedule_step(
    cx: &Context,
    t: &ScheduleMain,
    repository_id: RepositoryId,
    config: benchgate_api::agent::ComparisonConfig,
    main: &benchgate_api::agent::MainSettings,
    label: &str,
    info: MainInfo,
) -> Result<(), TaskError> {
    // A retry of this row after the step was created must not create a second one.
    let existing = cx.store.main_comparisons(repository_id, &t.branch).await?;
    if existing.iter().any(|c| {
        c.head_sha == t.after
            && c.runner_label == label
            && c.main
                .as_ref()
                .is_some_and(|m| m.kind == MainKind::Step && m.suite == info.suite)
    }) {
        tracing::info!(label, "this commit's step exists already");
        return Ok(());
    }
    let rules = benchgate_api::RuleSet::of(&config);
    let plan = crate::comparison_analysis::plan_rounds(
        &cx.store,
        repository_id,
        label,
        config.gate.min_effect,
        &rules,
    )
    .await?;
    let rounds = i64::from(config.benchmark.rounds);
    let stored = StoredComparisonConfig {
        n_star: plan.per_benchmark,
        main: Some(main.clone()),
        merged_pr: super::main_report::merged_pr(&t.head_message),
        ..config.into()
    };
    let created = cx
        .store
        .create_comparison(&NewComparison {
            repository_id,
            pr_number: None,
            base_sha: t.before.clone(),
            head_sha: t.after.clone(),
            runner_label: label.to_owned(),
            config: stored,
            planned_rounds: plan.planned_rounds,
            // Behind PRs, whose authors wait for an answer; ahead of calibration.
            jobs: vec![NewJob {
                rounds,
                priority: Priority::HISTORY,
                max_attempts: cx.config.max_attempts,
                origin: None,
            }],
            main: Some(info),
            notify: Vec::new(),
        })
        .await?;
    tracing::info!(
        comparison = %created.id,
        label,
        folded = created.folded.len(),
        "step of the default branch scheduled"
    );
    Ok(())
}
