//! What the outbox runs: every GitHub call the server makes, and the scheduling that needs
//! GitHub, starts as one of these tasks. The webhook records them in the delivery's
//! transaction (`delivery_plan.rs`); the outbox runner carries them out through
//! [`Context`]. One file per task, each with its payload and what it does.

mod add_reaction;
mod cancel_pull_request;
mod edit_description;
mod handle_command;
pub(crate) mod main_bisect;
mod main_issue;
mod main_report;
mod merge_group;
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
use benchgate_store::StoreError;
use benchgate_store::model::{
    Comparison, ComparisonId, NewJob, NewOutboxMessage, OutboxId, Priority,
};
use serde::{Deserialize, Serialize};

use crate::github_args::GitHubArgs;
use crate::report::{self, LoadedReport};

pub use add_reaction::Reaction;
pub use cancel_pull_request::CancelPullRequest;
pub use edit_description::EditDescription;
pub use handle_command::{GuardedCommand, HandleCommand, reply_label};
pub use main_bisect::{
    CULPRIT_LABEL, MainBisect, SearchOutcome, SearchView, describe as describe_search,
};
pub use main_issue::MainIssue;
pub use main_report::{MERGED_PR_LABEL, MainReport, merged_pr};
pub use merge_group::{
    CancelMergeGroup, ScheduleMergeGroup, deadline as merge_group_deadline,
    pr_name as group_pr_name,
};
pub use neutral_check::NeutralCheck;
pub use report_check::ReportCheck;
pub use report_comment::ReportComment;
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

/// What a task needs to run: the [`Domain`](crate::Domain) (which it dereferences to, so
/// `cx.store` and `cx.config` read it) and GitHub.
#[derive(Clone)]
pub struct Context {
    pub domain: crate::Domain,
    pub github: GitHubClient,
    pub args: Arc<GitHubArgs>,
}

impl std::ops::Deref for Context {
    type Target = crate::Domain;

    fn deref(&self) -> &crate::Domain {
        &self.domain
    }
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

impl crate::workers::outbox::RowError for TaskError {
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

impl crate::workers::outbox::Perform for Context {
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
            self.metrics.github_api_error();
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
            Task::EditDescription(t) => t.run(self).await,
            Task::HandleCommand(t) => t.run(self, row).await,
            Task::RerunCheck(t) => t.run(self, row).await,
            Task::ReportComment(c) => report_comment::run(self, c.comparison_id).await,
            Task::ReportCheck(c) => self.report_check(c.comparison_id).await,
            Task::UpsertComment(t) => t.run(self).await,
            Task::NeutralCheck(t) => t.run(self).await,
            Task::AddReaction(t) => t.run(self).await,
            Task::ScheduleMain(t) => t.run(self).await,
            Task::MainReport(c) => main_report::run(self, c.comparison_id).await,
            Task::MainIssue(r) => main_issue::run(self, r.regression_id).await,
            Task::MainBisect(b) => main_bisect::run(self, b.bisection_id).await,
            Task::ScheduleMergeGroup(t) => t.run(self).await,
            Task::CancelMergeGroup(t) => t.run(self).await,
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

    /// Writes comparison `id`'s check: a merge group's by its own rules (which use the plain
    /// check's writer, so the choice is made here and neither module imports the other).
    async fn report_check(&self, id: i64) -> Result<(), TaskError> {
        let Some((loaded, target)) = self.loaded(id).await? else {
            return Ok(());
        };
        if loaded.comparison.config.merge_group.is_some() {
            merge_group::report(self, loaded, target).await
        } else {
            report_check::run(self, loaded, target).await
        }
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
            max_attempts: self.config.max_attempts,
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

/// A kind of outbox row, declared on the task's own type: its `kind` column, how rows of it
/// coalesce while pending, and where due rows of it stand in the claim order. [`Task`] lists
/// every kind once; [`Task::KINDS`] is that list.
pub trait OutboxTask: Serialize + serde::de::DeserializeOwned {
    /// The row's `kind`, unique among tasks.
    const KIND: &'static str;
    /// Due rows are claimed higher first (then in order); a person waiting comes first, the
    /// default branch's history last.
    const PRIORITY: Priority;
    /// While a row with this key is pending, a new one replaces its payload, so a burst of
    /// updates becomes one write; `None`: every row counts.
    fn dedupe_key(&self) -> Option<String>;

    /// The outbox row for this task.
    fn message(&self) -> NewOutboxMessage {
        NewOutboxMessage {
            kind: Self::KIND.to_owned(),
            dedupe_key: self.dedupe_key(),
            payload: serde_json::to_value(self).expect("tasks serialize"),
            priority: Self::PRIORITY,
        }
    }
}

/// One outbox row's work, one variant per [`OutboxTask`].
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    SchedulePullRequest(SchedulePullRequest),
    CancelPullRequest(CancelPullRequest),
    EditDescription(EditDescription),
    HandleCommand(HandleCommand),
    RerunCheck(RerunCheck),
    ReportComment(ReportComment),
    ReportCheck(ReportCheck),
    UpsertComment(MarkedComment),
    NeutralCheck(NeutralCheck),
    AddReaction(Reaction),
    ScheduleMain(ScheduleMain),
    /// Written by the store when a comparison of the default branch finishes.
    MainReport(MainReport),
    MainIssue(MainIssue),
    /// Written by the store with a culprit search, and when a comparison it waits on ends.
    MainBisect(MainBisect),
    ScheduleMergeGroup(ScheduleMergeGroup),
    CancelMergeGroup(CancelMergeGroup),
}

impl Task {
    /// Every kind of row with its priority: what [`Task::from_row`] reads back.
    pub const KINDS: [(&'static str, Priority); 16] = [
        (SchedulePullRequest::KIND, SchedulePullRequest::PRIORITY),
        (CancelPullRequest::KIND, CancelPullRequest::PRIORITY),
        (EditDescription::KIND, EditDescription::PRIORITY),
        (HandleCommand::KIND, HandleCommand::PRIORITY),
        (RerunCheck::KIND, RerunCheck::PRIORITY),
        (ReportComment::KIND, ReportComment::PRIORITY),
        (ReportCheck::KIND, ReportCheck::PRIORITY),
        (MarkedComment::KIND, MarkedComment::PRIORITY),
        (NeutralCheck::KIND, NeutralCheck::PRIORITY),
        (Reaction::KIND, Reaction::PRIORITY),
        (ScheduleMain::KIND, ScheduleMain::PRIORITY),
        (MainReport::KIND, MainReport::PRIORITY),
        (MainIssue::KIND, MainIssue::PRIORITY),
        (MainBisect::KIND, MainBisect::PRIORITY),
        (ScheduleMergeGroup::KIND, ScheduleMergeGroup::PRIORITY),
        (CancelMergeGroup::KIND, CancelMergeGroup::PRIORITY),
    ];

    /// The outbox row for this task.
    pub fn message(&self) -> NewOutboxMessage {
        match self {
            Task::SchedulePullRequest(t) => t.message(),
            Task::CancelPullRequest(t) => t.message(),
            Task::EditDescription(t) => t.message(),
            Task::HandleCommand(t) => t.message(),
            Task::RerunCheck(t) => t.message(),
            Task::ReportComment(t) => t.message(),
            Task::ReportCheck(t) => t.message(),
            Task::UpsertComment(t) => t.message(),
            Task::NeutralCheck(t) => t.message(),
            Task::AddReaction(t) => t.message(),
            Task::ScheduleMain(t) => t.message(),
            Task::MainReport(t) => t.message(),
            Task::MainIssue(t) => t.message(),
            Task::MainBisect(t) => t.message(),
            Task::ScheduleMergeGroup(t) => t.message(),
            Task::CancelMergeGroup(t) => t.message(),
        }
    }

    /// Reads a claimed row back; a kind no task declares is an error.
    pub fn from_row(kind: &str, payload: &serde_json::Value) -> Result<Self, serde_json::Error> {
        fn read<T: OutboxTask>(payload: &serde_json::Value) -> Result<T, serde_json::Error> {
            T::deserialize(payload)
        }
        Ok(match kind {
            SchedulePullRequest::KIND => Task::SchedulePullRequest(read(payload)?),
            CancelPullRequest::KIND => Task::CancelPullRequest(read(payload)?),
            EditDescription::KIND => Task::EditDescription(read(payload)?),
            HandleCommand::KIND => Task::HandleCommand(read(payload)?),
            RerunCheck::KIND => Task::RerunCheck(read(payload)?),
            ReportComment::KIND => Task::ReportComment(read(payload)?),
            ReportCheck::KIND => Task::ReportCheck(read(payload)?),
            MarkedComment::KIND => Task::UpsertComment(read(payload)?),
            NeutralCheck::KIND => Task::NeutralCheck(read(payload)?),
            Reaction::KIND => Task::AddReaction(read(payload)?),
            ScheduleMain::KIND => Task::ScheduleMain(read(payload)?),
            MainReport::KIND => Task::MainReport(read(payload)?),
            MainIssue::KIND => Task::MainIssue(read(payload)?),
            MainBisect::KIND => Task::MainBisect(read(payload)?),
            ScheduleMergeGroup::KIND => Task::ScheduleMergeGroup(read(payload)?),
            CancelMergeGroup::KIND => Task::CancelMergeGroup(read(payload)?),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "no task has the kind {other:?}"
                )));
            }
        })
    }
}

/// The dedupe key of the rows that schedule or cancel a PR's benchmarks.
fn pull_request_key(repo: &RepoName, pr: u64) -> String {
    format!("pr:{}#{pr}", repo.full_name)
}

/// The flags a task's text reads (the dashboard's public URL), for tests.
#[cfg(test)]
pub(crate) fn test_args() -> crate::github_args::GitHubArgs {
    crate::github_args::GitHubArgs {
        webhook_secret: None,
        github_app_id: None,
        github_private_key_file: None,
        github_token: None,
        github_api_url: benchgate_github::client::DEFAULT_API_URL.to_owned(),
        github_web_url: None,
        public_url: "https://bench.example/".to_owned(),
        comment_interval_secs: 5,
        outbox_backoff_ms: 2000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::ComparisonId;
    use std::collections::HashSet;

    #[test]
    fn the_store_writes_report_rows_the_worker_reads_and_coalesces_with() {
        // The store writes these rows itself, with the priority it knows; a task that declared
        // another kind, key or priority would not coalesce with them.
        let id = ComparisonId(7);
        for (stored, task) in [
            (
                NewOutboxMessage::comparison_report(ReportCheck::KIND, Priority::NORMAL, id),
                Task::ReportCheck(ReportCheck { comparison_id: 7 }),
            ),
            (
                NewOutboxMessage::comparison_report(ReportComment::KIND, Priority::NORMAL, id),
                Task::ReportComment(ReportComment { comparison_id: 7 }),
            ),
            (
                NewOutboxMessage::comparison_report(MainReport::KIND, Priority::HISTORY, id),
                Task::MainReport(MainReport { comparison_id: 7 }),
            ),
            (
                NewOutboxMessage::bisection_step(7),
                Task::MainBisect(MainBisect { bisection_id: 7 }),
            ),
        ] {
            assert_eq!(stored, task.message());
            assert_eq!(Task::from_row(&stored.kind, &stored.payload).unwrap(), task);
        }
    }

    #[test]
    fn every_kind_is_declared_once_and_documented() {
        let kinds: HashSet<&str> = Task::KINDS.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds.len(), Task::KINDS.len(), "two tasks share a kind");
        let docs = include_str!("../../../../docs/architecture.md");
        for (kind, _) in Task::KINDS {
            assert!(
                docs.contains(&format!("`{kind}`")),
                "docs/architecture.md does not name `{kind}`"
            );
        }
        let unknown = Task::from_row("comment.delete", &serde_json::json!({})).unwrap_err();
        assert!(unknown.to_string().contains("comment.delete"), "{unknown}");
    }

    #[test]
    fn the_default_branch_never_goes_ahead_of_a_pull_request() {
        let of = |kind: &str| Task::KINDS.iter().find(|(k, _)| *k == kind).unwrap().1;
        for history in [
            ScheduleMain::KIND,
            MainReport::KIND,
            MainIssue::KIND,
            MainBisect::KIND,
        ] {
            for pr in [
                SchedulePullRequest::KIND,
                ReportCheck::KIND,
                HandleCommand::KIND,
            ] {
                assert!(of(history) < of(pr), "{history} before {pr}");
            }
        }
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
                body: String::new(),
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
        let task = Task::ReportCheck(ReportCheck { comparison_id: 7 });
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
            Task::ReportComment(ReportComment { comparison_id: 3 })
        );
    }
}
