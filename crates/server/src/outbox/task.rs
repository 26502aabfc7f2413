//! What an outbox row asks for. Every GitHub call the server makes starts as one of these rows:
//! the webhook records them in the delivery's transaction, and the worker carries them out.

use benchgate_github::client::{GitHubError, RepoTarget};
use benchgate_store::model::NewOutboxMessage;
use serde::{Deserialize, Serialize};

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

/// Read `.benchgate.toml` from the base branch and create the PR's comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulePullRequest {
    pub repo: RepoName,
    pub clone_url: String,
    pub pr: u64,
    pub base_ref: String,
    pub base_sha: String,
    pub head_sha: String,
    /// Head commits come from another repository: wait for a maintainer's `/rebench`.
    pub fork: bool,
}

/// The PR was closed: cancel its comparisons again, after a schedule that was being carried out
/// when it closed (the row shares the schedule's dedupe key, so it runs after it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelPullRequest {
    pub repo: RepoName,
    pub pr: u64,
}

/// A command a maintainer may give; `/benchgate help` and parse errors never need a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "command")]
pub enum GuardedCommand {
    /// `/rebench` or `/rebench N`.
    Rebench { rounds: Option<u32> },
    /// `/rebench aa`.
    RebenchAa,
}

/// Check the commenter may run `command`, then react 👀 and enqueue the jobs, or reply why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleCommand {
    pub repo: RepoName,
    pub pr: u64,
    pub comment_id: u64,
    pub commenter: String,
    /// GitHub's `author_association` of the commenter (`OWNER`, `MEMBER`, ...).
    pub association: String,
    pub command: GuardedCommand,
}

/// Someone pressed "Re-run" on benchgate's check run: run the comparison of that head again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RerunCheck {
    pub repo: RepoName,
    pub head_sha: String,
    pub prs: Vec<u64>,
}

/// Render a comparison now and write it to the PR's comment (or its check run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparisonRef {
    pub comparison_id: i64,
}

/// Create or edit the comment carrying `label`'s hidden marker; exactly one exists per label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkedComment {
    pub repo: RepoName,
    pub pr: u64,
    pub label: String,
    pub body: String,
}

/// A completed check run that needs no comparison (no config, invalid config).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeutralCheck {
    pub repo: RepoName,
    pub head_sha: String,
    pub title: String,
    pub summary: String,
}

/// A 👀 reaction on a comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    pub repo: RepoName,
    pub comment_id: u64,
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
            Task::HandleCommand(_) | Task::RerunCheck(_) | Task::AddReaction(_) => return None,
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
