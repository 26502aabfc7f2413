//! What the outbox runs: every GitHub call the server makes, and the scheduling that needs
//! GitHub, starts as one of these tasks. The webhook records them in the delivery's
//! transaction ([`crate::scheduler::plan`]); the outbox runner carries them out through
//! [`Context`]. One file per task, each with its payload and what it does.

mod accept;
mod add_reaction;
mod cancel_pull_request;
mod check_run;
mod handle_command;
mod main_issue;
mod main_report;
mod neutral_check;
mod report_check;
mod report_comment;
mod rerun_check;
mod schedule_main;
mod schedule_pull_request;
mod upsert_comment;

use std::sync::Arc;
use std::time::Duration;

use benchgate_github::client::{GitHubClient, GitHubError, RepoTarget};
use benchgate_store::model::{
    Comparison, ComparisonId, NewJob, NewOutboxMessage, OutboxId, Priority,
};
use benchgate_store::{Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::github_app::GitHubArgs;
use crate::report::{self, LoadedReport};

pub use add_reaction::Reaction;
pub use cancel_pull_request::CancelPullRequest;
pub use handle_command::{GuardedCommand, HandleCommand, reply_label};
pub use main_report::{MERGED_PR_LABEL, merged_pr};
pub use neutral_check::NeutralCheck;
pub use rerun_check::RerunCheck;
pub use schedule_main::ScheduleMain;
pub use schedule_pull_request::SchedulePullRequest;
pub use upsert_comment::MarkedComment;

/// The check run's (and commit status's) name on GitHub for a lone `[benchmark]` on one label;
/// other comparisons add their suite and label (`benchgate / SUITE (LABEL)`).
pub const CHECK_NAME: &str = "benchgate";

/// Whether a check run GitHub names is one of benchgate's comparison check runs.
pub fn is_check_name(name: &str) -> bool {
    name == CHECK_NAME || name.starts_with("benchgate / ")
}

/// What a task needs to run.
#[derive(Clone)]
pub struct Context {
    pub app: crate::AppState,
    pub store: Arc<dyn Store>,
    pub github: GitHubClient,
    pub args: Arc<GitHubArgs>,
}

/// Why a task did not finish.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The row cannot succeed however often it is tried.
    #[error("{0}")]
    Permanent(String),
}

impl crate::outbox::RowError for TaskError {
    fn is_retryable(&self) -> bool {
        match self {
            TaskError::GitHub(e) => e.is_retryable(),
            TaskError::Store(_) => true,
            TaskError::Permanent(_) => false,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            TaskError::GitHub(e) => e.retry_after(),
            _ => None,
        }
    }
}

impl crate::outbox::Perform for Context {
    type Error = TaskError;

    async fn perform(
        &self,
        kind: &str,
        payload: &serde_json::Value,
        row: OutboxId,
    ) -> Result<(), TaskError> {
        let task = Task::from_row(kind, payload)
            .map_err(|e| TaskError::Permanent(format!("unreadable payload: {e}")))?;
        let done = self.run(task, row).await;
        if let Err(TaskError::GitHub(_)) = &done {
            self.app.metrics.github_api_error();
        }
        done
    }
}

impl Context {
    /// Carries out one task of outbox row `row`.
    async fn run(&self, task: Task, row: OutboxId) -> Result<(), TaskError> {
        match task {
            Task::SchedulePullRequest(t) => t.run(self).await,
            Task::CancelPullRequest(t) => t.run(self).await,
            Task::HandleCommand(t) => t.run(self, row).await,
            Task::RerunCheck(t) => t.run(self, row).await,
            Task::ReportComment(c) => report_comment::run(self, c.comparison_id).await,
            Task::ReportCheck(c) => report_check::run(self, c.comparison_id).await,
            Task::UpsertComment(t) => t.run(self).await,
            Task::NeutralCheck(t) => t.run(self).await,
            Task::AddReaction(t) => t.run(self).await,
            Task::ScheduleMain(t) => t.run(self).await,
            Task::MainReport(c) => main_report::run(self, c.comparison_id).await,
            Task::MainIssue(r) => main_issue::run(self, r.regression_id).await,
        }
    }

    /// The stored row of a repository a webhook recorded; a row for one never recorded cannot
    /// succeed however often it is tried.
    async fn recorded_repository(
        &self,
        repo: &RepoName,
    ) -> Result<benchgate_store::model::Repository, TaskError> {
        self.store
            .repository_by_name(&repo.full_name)
            .await?
            .ok_or_else(|| {
                TaskError::Permanent(format!("repository {} is not recorded", repo.full_name))
            })
    }

    /// Records a follow-up task.
    pub async fn enqueue(&self, task: Task) -> Result<(), TaskError> {
        self.store.enqueue_outbox(&task.message()).await?;
        Ok(())
    }

    /// The report of comparison `id` and the repository it is posted to.
    async fn loaded(&self, id: i64) -> Result<Option<(LoadedReport, RepoTarget)>, TaskError> {
        let url = self.args.comparison_url(id);
        let Some(loaded) = report::load(self.store.as_ref(), ComparisonId(id), url).await? else {
            return Ok(None);
        };
        let installation = loaded.repository.installation_id.map(|i| i as u64);
        let target = RepoTarget::new(installation, &loaded.repository.full_name)?;
        Ok(Some((loaded, target)))
    }

    /// A job of `rounds`, keyed by the outbox row that asked for it: the row carried out again
    /// (its answer lost, or on a second replica) adds nothing.
    fn job(
        &self,
        rounds: u32,
        priority: Priority,
        row: OutboxId,
        comparison: ComparisonId,
    ) -> NewJob {
        NewJob {
            rounds: i64::from(rounds),
            priority,
            max_attempts: self.app.config.max_attempts,
            origin: Some(format!("outbox:{}:comparison:{}", row.0, comparison.0)),
        }
    }
}

/// The `[[suite]]` a comparison runs; `None` for a lone `[benchmark]` on one label.
fn suite_of(c: &Comparison) -> Option<String> {
    c.config.config.suite.clone()
}

/// The name of a comparison's check run (see [`benchgate_github::repo_config::check_run_name`]).
fn check_name_of(c: &Comparison) -> String {
    benchgate_github::repo_config::check_run_name(suite_of(c).as_deref(), &c.runner_label)
}

/// The key of a comparison's PR comment: one comment per suite and label.
fn comment_key_of(c: &Comparison) -> String {
    benchgate_github::repo_config::comment_key(suite_of(c).as_deref(), &c.runner_label)
}

/// The repository a task acts on, as GitHub names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoName {
    /// `owner/name`.
    pub full_name: String,
    /// The App installation whose token may touch it (`None` with a single token).
    pub installation_id: Option<u64>,
}

impl RepoName {
    /// The client's target for this repository.
    pub fn target(&self) -> Result<RepoTarget, GitHubError> {
        RepoTarget::new(self.installation_id, &self.full_name)
    }
}

/// Render a comparison now and write it to the PR's comment (or its check run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparisonRef {
    pub comparison_id: i64,
}

/// A regression episode of the default branch, whose issue a row writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegressionRef {
    pub regression_id: i64,
}

/// One outbox row's work; `kind` is the row's kind, the rest its payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "payload")]
pub enum Task {
    #[serde(rename = "pr.schedule")]
    SchedulePullRequest(SchedulePullRequest),
    #[serde(rename = "pr.cancel")]
    CancelPullRequest(CancelPullRequest),
    #[serde(rename = "command.handle")]
    HandleCommand(HandleCommand),
    #[serde(rename = "check.rerun")]
    RerunCheck(RerunCheck),
    #[serde(rename = "report.comment")]
    ReportComment(ComparisonRef),
    #[serde(rename = "report.check")]
    ReportCheck(ComparisonRef),
    #[serde(rename = "comment.upsert")]
    UpsertComment(MarkedComment),
    #[serde(rename = "check_run.neutral")]
    NeutralCheck(NeutralCheck),
    #[serde(rename = "reaction.add")]
    AddReaction(Reaction),
    #[serde(rename = "main.schedule")]
    ScheduleMain(ScheduleMain),
    /// Written by the store when a comparison of the default branch finishes.
    #[serde(rename = "main.report")]
    MainReport(ComparisonRef),
    #[serde(rename = "main.issue")]
    MainIssue(RegressionRef),
}

impl Task {
    /// The outbox row for this task. While a row with the same dedupe key is pending, a new
    /// one replaces its payload, so a burst of updates becomes one write.
    pub fn message(&self) -> NewOutboxMessage {
        let value = serde_json::to_value(self).expect("tasks serialize");
        NewOutboxMessage {
            kind: value["kind"].as_str().unwrap_or_default().to_owned(),
            dedupe_key: self.dedupe_key(),
            payload: value["payload"].clone(),
        }
    }

    /// A report row for a comparison that does not exist yet: the store fills in its id.
    pub fn for_new_comparison(kind: &str) -> NewOutboxMessage {
        NewOutboxMessage {
            kind: kind.to_owned(),
            dedupe_key: None,
            payload: serde_json::json!({}),
        }
    }

    /// Reads a claimed row back.
    pub fn from_row(kind: &str, payload: &serde_json::Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(serde_json::json!({ "kind": kind, "payload": payload }))
    }

    fn dedupe_key(&self) -> Option<String> {
        Some(match self {
            // One key per PR, whatever the head: a newer push or a close replaces a schedule
            // still pending (e.g. retrying after a GitHub error), and one that is being carried
            // out keeps the row pending, so the newer payload runs after it, never before.
            Task::SchedulePullRequest(t) => pull_request_key(&t.repo, t.pr),
            Task::CancelPullRequest(t) => pull_request_key(&t.repo, t.pr),
            Task::ReportComment(c) => format!("report.comment:{}", c.comparison_id),
            Task::ReportCheck(c) => format!("report.check:{}", c.comparison_id),
            Task::UpsertComment(c) => format!("comment:{}#{}:{}", c.repo.full_name, c.pr, c.label),
            Task::NeutralCheck(c) => format!("check:{}@{}", c.repo.full_name, c.head_sha),
            Task::MainReport(c) => format!("main.report:{}", c.comparison_id),
            Task::MainIssue(r) => format!("main.issue:{}", r.regression_id),
            // Every push is its own row: the store folds steps, a shared key would drop one.
            Task::ScheduleMain(_)
            | Task::HandleCommand(_)
            | Task::RerunCheck(_)
            | Task::AddReaction(_) => return None,
        })
    }
}

/// The dedupe key of the rows that schedule or cancel a PR's benchmarks.
fn pull_request_key(repo: &RepoName, pr: u64) -> String {
    format!("pr:{}#{pr}", repo.full_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::{ComparisonId, REPORT_CHECK, REPORT_COMMENT};

    #[test]
    fn the_store_writes_report_rows_the_worker_reads_and_coalesces_with() {
        let id = ComparisonId(7);
        let check = Task::ReportCheck(ComparisonRef { comparison_id: 7 }).message();
        let comment = Task::ReportComment(ComparisonRef { comparison_id: 7 }).message();
        assert_eq!(NewOutboxMessage::comparison_report(REPORT_CHECK, id), check);
        assert_eq!(
            NewOutboxMessage::comparison_report(REPORT_COMMENT, id),
            comment
        );
    }

    #[test]
    fn every_schedule_and_cancel_of_a_pr_shares_one_key() {
        let repo = RepoName {
            full_name: "acme/widgets".into(),
            installation_id: Some(1),
        };
        let schedule = |head: &str, pr| {
            Task::SchedulePullRequest(SchedulePullRequest {
                repo: repo.clone(),
                clone_url: String::new(),
                pr,
                base_ref: "main".into(),
                base_sha: "b".repeat(40),
                head_sha: head.into(),
                fork: false,
            })
            .message()
            .dedupe_key
        };
        let cancel = Task::CancelPullRequest(CancelPullRequest {
            repo: repo.clone(),
            pr: 7,
        })
        .message();
        assert_eq!(cancel.kind, "pr.cancel");
        assert_eq!(schedule("a", 7), schedule("b", 7));
        assert_eq!(schedule("a", 7), cancel.dedupe_key);
        assert_ne!(schedule("a", 7), schedule("a", 8));
    }

    #[test]
    fn a_task_round_trips_through_its_row() {
        let task = Task::ReportCheck(ComparisonRef { comparison_id: 7 });
        let m = task.message();
        assert_eq!(m.kind, "report.check");
        assert_eq!(m.dedupe_key.as_deref(), Some("report.check:7"));
        assert_eq!(Task::from_row(&m.kind, &m.payload).unwrap(), task);
    }

    #[test]
    fn the_store_filled_comparison_id_is_enough_to_read_a_report_row() {
        let payload = serde_json::json!({ "comparison_id": 3 });
        let task = Task::from_row("report.comment", &payload).unwrap();
        assert_eq!(
            task,
            Task::ReportComment(ComparisonRef { comparison_id: 3 })
        );
    }
}
