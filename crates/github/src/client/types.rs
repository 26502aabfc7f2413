//! The request and answer types of the GitHub calls: only the fields benchgate sends or reads.

use serde::{Deserialize, Serialize};

/// The hidden marker that identifies benchgate's comment for one runner label.
pub fn comment_marker(label: &str) -> String {
    format!("<!-- benchgate:{label} -->")
}

/// An issue or PR comment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IssueComment {
    /// Comment id.
    pub id: u64,
    /// Markdown body.
    #[serde(default)]
    pub body: Option<String>,
    /// Link for people.
    #[serde(default)]
    pub html_url: Option<String>,
    /// Who wrote it.
    #[serde(default)]
    pub user: Option<Account>,
    /// The App whose token wrote it (`None` for people and plain tokens).
    #[serde(default)]
    pub performed_via_github_app: Option<AppRef>,
}

/// A user or bot account, as far as benchgate reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Account {
    /// Login, e.g. `octocat` or `benchgate[bot]`.
    pub login: String,
}

/// A GitHub App named in an answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AppRef {
    /// App id.
    pub id: u64,
}

/// Who benchgate writes as: comments are benchgate's only when this identity wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// A GitHub App: its comments carry `performed_via_github_app.id`.
    App(u64),
    /// A token's user, by login.
    User(String),
}

impl Identity {
    /// Whether `comment` was written by this identity.
    pub fn wrote(&self, comment: &IssueComment) -> bool {
        self.is(
            comment.performed_via_github_app.as_ref(),
            comment.user.as_ref(),
        )
    }

    /// Whether the App or user behind a comment or issue is this identity.
    fn is(&self, app: Option<&AppRef>, user: Option<&Account>) -> bool {
        match self {
            Identity::App(id) => app.is_some_and(|app| app.id == *id),
            Identity::User(login) => user.is_some_and(|u| &u.login == login),
        }
    }
}

impl Identity {
    /// Whether `issue` was opened by this identity.
    pub fn opened(&self, issue: &Issue) -> bool {
        self.is(issue.performed_via_github_app.as_ref(), issue.user.as_ref())
    }
}

/// An issue, with the fields benchgate reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Issue {
    pub number: u64,
    /// `open` or `closed`.
    pub state: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub user: Option<Account>,
    #[serde(default)]
    pub performed_via_github_app: Option<AppRef>,
    /// Set on the pull requests the issues list also returns.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

/// What [`crate::client::GitHubClient::upsert_marked_comment`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentUpsert {
    /// The comment as GitHub now has it.
    pub comment: IssueComment,
    /// True when no marked comment existed and one was created.
    pub created: bool,
}

/// A check run's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Enqueued.
    Queued,
    /// Running.
    InProgress,
    /// Done; a conclusion is required.
    Completed,
}

/// How a completed check run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckConclusion {
    /// Gate passed.
    Success,
    /// Gate failed (per `[gate] fail_on`).
    Failure,
    /// No result yet, or no config.
    Neutral,
    /// Superseded or closed.
    Cancelled,
    /// Skipped (e.g. a draft).
    Skipped,
    /// The run could not finish.
    TimedOut,
    /// Needs a person (e.g. a fork PR waiting for `/rebench`).
    ActionRequired,
}

/// The title and Markdown summary shown on the check run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRunOutput {
    /// One line.
    pub title: String,
    /// Markdown, up to 65,535 bytes.
    pub summary: String,
}

/// `POST /repos/{o}/{r}/check-runs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRunRequest {
    /// The check's name (`benchgate`).
    pub name: String,
    /// The commit it is on.
    pub head_sha: String,
    /// State.
    pub status: CheckStatus,
    /// Required when `status` is completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<CheckConclusion>,
    /// Link to the comparison on the dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    /// Our id for it (the comparison id), to find it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Title and summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckRunOutput>,
}

/// `PATCH /repos/{o}/{r}/check-runs/{id}`: only the fields given change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckRunUpdate {
    /// New state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CheckStatus>,
    /// Conclusion (completes the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<CheckConclusion>,
    /// Link to the dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    /// Title and summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<CheckRunOutput>,
}

/// A check run as GitHub answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRun {
    /// Check run id.
    pub id: u64,
    /// Commit.
    pub head_sha: String,
    /// State.
    pub status: CheckStatus,
    /// Conclusion once completed.
    pub conclusion: Option<CheckConclusion>,
    /// Link for people.
    #[serde(default)]
    pub html_url: Option<String>,
}

/// One entry of `GET /repos/{o}/{r}/commits/{ref}/check-runs`, as far as benchgate reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ListedCheckRun {
    /// Check run id.
    pub id: u64,
    /// The id its creator gave it.
    #[serde(default)]
    pub external_id: Option<String>,
    /// `queued`, `in_progress`, `completed` (or a state only Actions sets).
    pub status: String,
    /// The App that created it.
    #[serde(default)]
    pub app: Option<AppRef>,
}

/// `POST /repos/{o}/{r}/statuses/{sha}`: the gate in token mode, where GitHub refuses check runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitStatusRequest {
    /// `pending`, `success`, `failure` or `error`.
    pub state: CommitState,
    /// Link to the comparison on the dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_url: Option<String>,
    /// One line; GitHub keeps at most 140 characters.
    pub description: String,
    /// The status's name (`benchgate`).
    pub context: String,
}

/// A commit status's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommitState {
    /// Not decided yet (queued, running, waiting for approval).
    Pending,
    /// The gate passed.
    Success,
    /// The gate failed.
    Failure,
    /// The comparison could not finish.
    Error,
}

/// A user's permission on a repository, weakest to strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// No access (or an unknown value: treated as none).
    None,
    /// Read.
    Read,
    /// Triage.
    Triage,
    /// Write (push).
    Write,
    /// Maintain.
    Maintain,
    /// Admin.
    Admin,
}

impl Permission {
    /// Write, maintain or admin: may run `/rebench`.
    pub fn can_write(self) -> bool {
        self >= Self::Write
    }

    /// GitHub's word for it, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Read => "read",
            Self::Triage => "triage",
            Self::Write => "write",
            Self::Maintain => "maintain",
            Self::Admin => "admin",
        }
    }

    pub(super) fn from_api(name: &str) -> Self {
        match name {
            "admin" => Self::Admin,
            "maintain" => Self::Maintain,
            "write" | "push" => Self::Write,
            "triage" => Self::Triage,
            "read" | "pull" => Self::Read,
            _ => Self::None,
        }
    }
}

/// A file a PR changes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChangedFile {
    /// Path after the change.
    pub filename: String,
    /// `added`, `modified`, `removed`, `renamed`, ...
    pub status: String,
    /// Path before a rename.
    #[serde(default)]
    pub previous_filename: Option<String>,
}

/// A commit of a comparison (`GET /repos/{o}/{r}/compare/{base}...{head}`), as far as benchgate
/// reads it: enough to tell which PRs a merge group holds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "ListedCommit")]
pub struct ComparedCommit {
    /// Full sha.
    pub sha: String,
    /// The whole message: title, blank line, body (`Merge pull request #N …`, `title (#N)`).
    pub message: String,
    /// Parent shas in order; a merge commit has two or more.
    pub parents: Vec<String>,
}

/// Where a head branched from a base, as GitHub's compare API answers it: the merge base and
/// the tree ids of the commits that matter, so a PR is measured on its own change and a merge
/// group's contents can be matched with what was measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchPoint {
    /// The newest commit both histories share (`git merge-base base head`).
    pub merge_base: String,
    /// The merge base's tree id.
    pub merge_base_tree: String,
    /// The head's tree id.
    pub head_tree: String,
    /// Commits on the base since the merge base: 0 when the head contains the base.
    pub base_ahead_by: u64,
    /// The head's own commits since the merge base.
    pub head_ahead_by: u64,
}

/// A commit as GitHub lists it: the git message sits under `commit`, parents are objects.
#[derive(Deserialize)]
struct ListedCommit {
    sha: String,
    commit: GitCommitText,
    parents: Vec<ParentRef>,
}

#[derive(Deserialize)]
struct GitCommitText {
    message: String,
}

#[derive(Deserialize)]
struct ParentRef {
    sha: String,
}

impl From<ListedCommit> for ComparedCommit {
    fn from(c: ListedCommit) -> Self {
        Self {
            sha: c.sha,
            message: c.commit.message,
            parents: c.parents.into_iter().map(|p| p.sha).collect(),
        }
    }
}
