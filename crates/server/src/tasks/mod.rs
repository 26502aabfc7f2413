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

use benchgate_store::model::ComparisonKind;
use std::sync::Arc;
use std::time::Duration;

use benchgate_github::client::{GitHubError, RepoTarget};
use benchgate_gitlab::client::GitlabError;
use benchgate_store::StoreError;
use benchgate_store::model::Forge;
use benchgate_store::model::{
    Comparison, ComparisonId, NewJob, NewOutboxMessage, OutboxId, Priority,
};
use serde::{Deserialize, Serialize};

use crate::GitHubConfig;
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
/// `cx.store` and `cx.config` read it) and the forges.
#[derive(Clone)]
pub struct Context {
    pub domain: crate::Domain,
    pub forges: crate::forge::Forges,
    pub github_config: Arc<GitHubConfig>,
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
    #[error(transparent)]
    GitLab(#[from] GitlabError),
    /// The repository's forge has no credentials on this server (yet): kept for when it has.
    #[error("no {forge} credentials are configured; the write waits until they are")]
    NoCredentials { forge: &'static str },
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The row cannot succeed however often it is tried.
    #[error("{0}")]
    Permanent(String),
}

impl From<crate::forge::ForgeError> for TaskError {
    fn from(e: crate::forge::ForgeError) -> Self {
        use crate::forge::ForgeError;
        match e {
            ForgeError::GitHub(e) => TaskError::GitHub(e),
            ForgeError::GitLab(e) => TaskError::GitLab(e),
            ForgeError::NoCredentials { forge } => TaskError::NoCredentials { forge },
            ForgeError::Elsewhere(why) => TaskError::Permanent(why),
        }
    }
}

impl crate::workers::outbox::RowError for TaskError {
    fn is_retryable(&self) -> bool {
        match self {
            TaskError::GitHub(e) => e.is_retryable(),
            TaskError::GitLab(e) => e.is_transient(),
            TaskError::NoCredentials { .. } => true,
            TaskError::Store(_) => true,
            TaskError::Permanent(_) => false,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            TaskError::GitHub(e) => e.retry_after(),
            TaskError::GitLab(e) => e.retry_after(),
            // Credentials come by hand (flags, `/github/setup`): try seldom, so the row lasts
            // the hours that can take (12 attempts) instead of minutes.
            TaskError::NoCredentials { .. } => Some(Duration::from_secs(15 * 60)),
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
        let task = registered(kind)
            .ok_or_else(|| TaskError::Permanent(format!("no task has the kind {kind:?}")))?;
        let done = (task.run)(self, payload, row).await;
        if let Err(TaskError::GitHub(_) | TaskError::GitLab(_)) = &done {
            self.metrics.github_api_error();
        }
        done
    }
}

impl Context {
    /// `repo` on its forge.
    pub fn forge(&self, repo: &RepoName) -> Result<crate::forge::ForgeRepo<'_>, TaskError> {
        Ok(self
            .forges
            .repo(repo.forge, &repo.full_name, repo.installation_id)?)
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
    pub async fn enqueue(&self, task: impl OutboxTask) -> Result<(), TaskError> {
        self.store.enqueue_outbox(&task.message()).await?;
        Ok(())
    }

    /// Writes comparison `id`'s check: a merge group's by its own rules (which use the plain
    /// check's writer, so the choice is made here and neither module imports the other).
    async fn report_check(&self, id: i64) -> Result<(), TaskError> {
        let Some((loaded, repo)) = self.loaded(id).await? else {
            return Ok(());
        };
        if loaded.comparison.kind() == ComparisonKind::MergeGroup {
            merge_group::report(self, loaded, repo).await
        } else {
            report_check::run(self, loaded, &repo).await
        }
    }

    /// The report of comparison `id` and the repository it is posted to.
    async fn loaded(&self, id: i64) -> Result<Option<(LoadedReport, RepoName)>, TaskError> {
        let url = self.github_config.comparison_url(id);
        let Some(loaded) = report::load(self.store.as_ref(), ComparisonId(id), url).await? else {
            return Ok(None);
        };
        let repo = RepoName::of(&loaded.repository);
        Ok(Some((loaded, repo)))
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
    c.config.suite.clone()
}

/// The name of a comparison's check run (see [`benchgate_github::repo_config::check_run_name`]).
fn check_name_of(c: &Comparison) -> String {
    benchgate_github::repo_config::check_run_name(suite_of(c).as_deref(), &c.runner_label)
}

/// The key of a comparison's PR comment: one comment per suite and label.
fn comment_key_of(c: &Comparison) -> String {
    benchgate_github::repo_config::comment_key(suite_of(c).as_deref(), &c.runner_label)
}

/// The repository a task acts on, as its forge names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoName {
    /// `owner/name` on GitHub; `host/group/name` on GitLab.
    pub full_name: String,
    /// The App installation whose token may touch it (`None` with a single token).
    pub installation_id: Option<u64>,
    /// Rows written before GitLab was wired have none: they are GitHub's.
    #[serde(default, skip_serializing_if = "is_github")]
    pub forge: Forge,
}

fn is_github(forge: &Forge) -> bool {
    *forge == Forge::GitHub
}

impl RepoName {
    /// A GitHub repository's name.
    pub fn github(full_name: &str, installation_id: Option<u64>) -> Self {
        RepoName {
            full_name: full_name.to_owned(),
            installation_id,
            forge: Forge::GitHub,
        }
    }

    /// The name of a stored repository.
    pub fn of(r: &benchgate_store::model::Repository) -> Self {
        RepoName {
            full_name: r.full_name.clone(),
            installation_id: r.installation_id.map(|i| i as u64),
            forge: r.forge,
        }
    }

    /// The client's target for this repository.
    pub fn target(&self) -> Result<RepoTarget, GitHubError> {
        RepoTarget::new(self.installation_id, &self.full_name)
    }
}

/// A kind of outbox row, declared on the task's own type: its `kind` column, how rows of it
/// coalesce while pending, where due rows of it stand in the claim order, and what carrying
/// one out does. [`TASKS`] registers each task with one line.
pub trait OutboxTask: Serialize + serde::de::DeserializeOwned {
    /// The row's `kind`, unique among tasks.
    const KIND: &'static str;
    /// Due rows are claimed higher first (then in order); a person waiting comes first, the
    /// default branch's history last.
    const PRIORITY: Priority;
    /// While a row with this key is pending, a new one replaces its payload, so a burst of
    /// updates becomes one write; `None`: every row counts.
    fn dedupe_key(&self) -> Option<String>;

    /// Carries the task out for outbox row `row`. A row may be carried out again (its answer
    /// lost, or on a second replica), so doing it twice must do no harm.
    fn run(
        self,
        cx: &Context,
        row: OutboxId,
    ) -> impl std::future::Future<Output = Result<(), TaskError>> + Send;

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

/// A task as the outbox runner finds it by its row's `kind`.
pub struct Registered {
    pub kind: &'static str,
    pub priority: Priority,
    /// Reads the row's payload as the task and carries it out.
    run: for<'a> fn(&'a Context, &'a serde_json::Value, OutboxId) -> TaskFuture<'a>,
}

type TaskFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), TaskError>> + Send + 'a>>;

/// The registration of task `T`.
const fn register<T: OutboxTask + Send + 'static>() -> Registered {
    fn run<'a, T: OutboxTask + Send + 'static>(
        cx: &'a Context,
        payload: &'a serde_json::Value,
        row: OutboxId,
    ) -> TaskFuture<'a> {
        Box::pin(async move {
            let task = T::deserialize(payload)
                .map_err(|e| TaskError::Permanent(format!("unreadable payload: {e}")))?;
            task.run(cx, row).await
        })
    }
    Registered {
        kind: T::KIND,
        priority: T::PRIORITY,
        run: run::<T>,
    }
}

/// Every task, one line each: a new task is its file, its `mod` line and a line here.
pub const TASKS: [Registered; 16] = [
    register::<SchedulePullRequest>(),
    register::<CancelPullRequest>(),
    register::<EditDescription>(),
    register::<HandleCommand>(),
    register::<RerunCheck>(),
    register::<ReportComment>(),
    register::<ReportCheck>(),
    register::<MarkedComment>(),
    register::<NeutralCheck>(),
    register::<Reaction>(),
    register::<ScheduleMain>(),
    // Written by the store when a comparison of the default branch finishes.
    register::<MainReport>(),
    register::<MainIssue>(),
    // Written by the store with a culprit search, and when a comparison it waits on ends.
    register::<MainBisect>(),
    register::<ScheduleMergeGroup>(),
    register::<CancelMergeGroup>(),
];

/// The task rows of `kind` are; `None` for a kind no task declares.
pub fn registered(kind: &str) -> Option<&'static Registered> {
    TASKS.iter().find(|t| t.kind == kind)
}

/// The dedupe key of the rows that schedule or cancel a PR's benchmarks.
fn pull_request_key(repo: &RepoName, pr: u64) -> String {
    format!("pr:{}#{pr}", repo.full_name)
}

/// The GitHub configuration a task's text reads (the dashboard's public URL), for tests.
#[cfg(test)]
pub(crate) fn test_args() -> GitHubConfig {
    GitHubConfig {
        webhook_secret: None,
        app: None,
        token: None,
        api_url: benchgate_github::client::DEFAULT_API_URL.to_owned(),
        web_url: "https://github.com".to_owned(),
        public_url: "https://bench.example/".to_owned(),
        comment_interval: std::time::Duration::from_secs(5),
        outbox_backoff: std::time::Duration::from_secs(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::ComparisonId;
    use std::collections::HashSet;

    /// A row as the store writes it is the task's own row, and its payload reads back as it.
    fn reads_back<T: OutboxTask + PartialEq + std::fmt::Debug>(stored: NewOutboxMessage, task: T) {
        assert_eq!(stored, task.message());
        assert!(
            registered(&stored.kind).is_some(),
            "{} is registered",
            stored.kind
        );
        assert_eq!(T::deserialize(&stored.payload).unwrap(), task);
    }

    #[test]
    fn the_store_writes_report_rows_the_worker_reads_and_coalesces_with() {
        // The store writes these rows itself, with the priority it knows; a task that declared
        // another kind, key or priority would not coalesce with them.
        let id = ComparisonId(7);
        reads_back(
            NewOutboxMessage::comparison_report(ReportCheck::KIND, Priority::NORMAL, id),
            ReportCheck { comparison_id: 7 },
        );
        reads_back(
            NewOutboxMessage::comparison_report(ReportComment::KIND, Priority::NORMAL, id),
            ReportComment { comparison_id: 7 },
        );
        reads_back(
            NewOutboxMessage::comparison_report(MainReport::KIND, Priority::HISTORY, id),
            MainReport { comparison_id: 7 },
        );
        reads_back(
            NewOutboxMessage::bisection_step(7),
            MainBisect { bisection_id: 7 },
        );
    }

    #[test]
    fn every_kind_is_declared_once_and_documented() {
        let kinds: HashSet<&str> = TASKS.iter().map(|t| t.kind).collect();
        assert_eq!(kinds.len(), TASKS.len(), "two tasks share a kind");
        let docs = include_str!("../../../../docs/architecture.md");
        for task in &TASKS {
            assert!(
                docs.contains(&format!("`{}`", task.kind)),
                "docs/architecture.md does not name `{}`",
                task.kind
            );
        }
        assert!(registered("comment.delete").is_none());
    }

    #[test]
    fn the_default_branch_never_goes_ahead_of_a_pull_request() {
        let of = |kind: &str| registered(kind).unwrap().priority;
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
        let repo = RepoName::github("acme/widgets", Some(1));
        let schedule = |head: &str, pr| {
            SchedulePullRequest {
                repo: repo.clone(),
                clone_url: String::new(),
                pr,
                base_ref: "main".into(),
                base_sha: "b".repeat(40),
                head_sha: head.into(),
                fork: false,
                body: String::new(),
            }
            .message()
            .dedupe_key
        };
        let cancel = CancelPullRequest {
            repo: repo.clone(),
            pr: 7,
        }
        .message();
        assert_eq!(cancel.kind, "pr.cancel");
        assert_eq!(schedule("a", 7), schedule("b", 7));
        assert_eq!(schedule("a", 7), cancel.dedupe_key);
        assert_ne!(schedule("a", 7), schedule("a", 8));
    }

    #[test]
    fn a_task_round_trips_through_its_row() {
        let task = ReportCheck { comparison_id: 7 };
        let m = task.message();
        assert_eq!(m.kind, "report.check");
        assert_eq!(m.dedupe_key.as_deref(), Some("report.check:7"));
        reads_back(m, task);
    }

    #[test]
    fn the_store_filled_comparison_id_is_enough_to_read_a_report_row() {
        let payload = serde_json::json!({ "comparison_id": 3 });
        assert!(registered("report.comment").is_some());
        assert_eq!(
            ReportComment::deserialize(&payload).unwrap(),
            ReportComment { comparison_id: 3 }
        );
    }
}
