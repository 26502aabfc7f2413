//! The minimal serde shapes of the webhook payloads: only the fields benchgate reads, so a
//! field GitHub adds or drops elsewhere in a 30 KB payload never breaks parsing.

use serde::Deserialize;

use super::{AuthorAssociation, DestroyReason};

#[derive(Deserialize)]
pub(super) struct ActionOnly {
    pub action: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Ping {
    pub zen: Option<String>,
    pub hook_id: Option<u64>,
    pub hook: Option<Hook>,
}

#[derive(Deserialize)]
pub(super) struct Hook {
    pub app_id: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct Installation {
    #[allow(
        dead_code,
        reason = "GitHub sends it; the action was read before the body"
    )]
    pub action: String,
    pub installation: InstallationBody,
    #[serde(default)]
    pub repositories: Option<Vec<RepoName>>,
    pub sender: Option<User>,
}

#[derive(Deserialize)]
pub(super) struct InstallationRepositories {
    #[allow(
        dead_code,
        reason = "GitHub sends it; the action was read before the body"
    )]
    pub action: String,
    pub installation: InstallationBody,
    #[serde(default)]
    pub repositories_added: Vec<RepoName>,
    #[serde(default)]
    pub repositories_removed: Vec<RepoName>,
}

#[derive(Deserialize)]
pub(super) struct InstallationBody {
    pub id: u64,
    pub account: Option<User>,
}

#[derive(Deserialize)]
pub(super) struct InstallationId {
    pub id: u64,
}

#[derive(Deserialize)]
pub(super) struct RepoName {
    pub full_name: String,
}

#[derive(Deserialize)]
pub(super) struct Repository {
    pub full_name: String,
    pub clone_url: String,
}

#[derive(Deserialize)]
pub(super) struct User {
    pub login: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct PullRequest {
    pub installation: Option<InstallationId>,
    pub pull_request: PullRequestBody,
}

/// Everything a `pull_request` delivery is read for, in one pass: [`ActionOnly`], [`Edited`]
/// and [`PullRequest`] together.
#[derive(Deserialize)]
pub(super) struct PullRequestDelivery {
    pub action: Option<String>,
    #[serde(default)]
    pub changes: Option<EditedChanges>,
    pub installation: Option<InstallationId>,
    pub pull_request: PullRequestBody,
}

#[derive(Deserialize)]
pub(super) struct PullRequestBody {
    pub number: u64,
    /// The description; `null` when the author wrote none.
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub merged: Option<bool>,
    pub author_association: AuthorAssociation,
    pub user: User,
    pub base: Branch,
    pub head: HeadBranch,
}

#[derive(Deserialize)]
pub(super) struct Branch {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub sha: String,
    pub repo: Repository,
}

/// The head side's repository is `null` when the fork it came from was deleted.
#[derive(Deserialize)]
pub(super) struct HeadBranch {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub sha: String,
    pub repo: Option<Repository>,
}

#[derive(Deserialize)]
pub(super) struct IssueComment {
    #[allow(
        dead_code,
        reason = "GitHub sends it; the action was read before the body"
    )]
    pub action: String,
    pub repository: Repository,
    pub installation: Option<InstallationId>,
    pub issue: Issue,
    pub comment: Comment,
}

#[derive(Deserialize)]
pub(super) struct Issue {
    pub number: u64,
    /// Present (an object of links) only when the issue is a pull request.
    pub pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
pub(super) struct Comment {
    pub id: u64,
    /// GitHub sends `null` for an empty comment body.
    pub body: Option<String>,
    pub user: User,
    pub author_association: AuthorAssociation,
    #[serde(default)]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Deserialize)]
pub(super) struct CheckSuite {
    pub repository: Repository,
    pub installation: Option<InstallationId>,
    pub check_suite: CheckSuiteBody,
}

#[derive(Deserialize)]
pub(super) struct CheckSuiteBody {
    pub head_sha: String,
    pub app: Option<App>,
    #[serde(default)]
    pub pull_requests: Vec<PullRequestNumber>,
}

/// `pull_request` `edited`: whether the base or the description changed.
#[derive(Deserialize)]
pub(super) struct Edited {
    #[serde(default)]
    pub changes: Option<EditedChanges>,
}

#[derive(Deserialize)]
pub(super) struct EditedChanges {
    #[serde(default)]
    pub base: Option<serde::de::IgnoredAny>,
    /// Present when the description changed (GitHub sends its old text as `from`).
    #[serde(default)]
    pub body: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
pub(super) struct CheckRun {
    pub repository: Repository,
    pub installation: Option<InstallationId>,
    pub check_run: CheckRunBody,
}

#[derive(Deserialize)]
pub(super) struct CheckRunBody {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub app: Option<App>,
    #[serde(default)]
    pub pull_requests: Vec<PullRequestNumber>,
}

#[derive(Deserialize)]
pub(super) struct App {
    pub id: u64,
}

#[derive(Deserialize)]
pub(super) struct PullRequestNumber {
    pub number: u64,
}

#[derive(Deserialize)]
pub(super) struct Push {
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub before: String,
    pub after: String,
    #[serde(default)]
    pub created: bool,
    #[serde(default)]
    pub deleted: bool,
    #[serde(default)]
    pub forced: bool,
    #[serde(default)]
    pub commits: Vec<PushCommit>,
    pub head_commit: Option<PushCommit>,
    pub repository: PushRepository,
    pub installation: Option<InstallationId>,
}

#[derive(Deserialize)]
pub(super) struct PushCommit {
    pub id: String,
    #[serde(default)]
    pub message: String,
}

/// A push's repository: `default_branch` is what tells main from other branches.
#[derive(Deserialize)]
pub(super) struct PushRepository {
    pub full_name: String,
    pub clone_url: String,
    pub default_branch: Option<String>,
}

/// `merge_group` `checks_requested` or `destroyed`; `reason` is only in `destroyed`.
#[derive(Deserialize)]
pub(super) struct MergeGroup {
    pub repository: Repository,
    pub installation: Option<InstallationId>,
    pub merge_group: MergeGroupBody,
    #[serde(default)]
    pub reason: Option<DestroyReason>,
}

/// `base_sha` is required: a group without its base cannot be compared. `head_commit` is
/// optional, since payloads from before GitHub added it lack it.
#[derive(Deserialize)]
pub(super) struct MergeGroupBody {
    pub head_sha: String,
    pub head_ref: String,
    pub base_sha: String,
    pub base_ref: String,
    #[serde(default)]
    pub head_commit: Option<MergeGroupCommit>,
}

#[derive(Deserialize)]
pub(super) struct MergeGroupCommit {
    #[serde(default)]
    pub message: String,
}
