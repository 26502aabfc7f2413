//! The typed events benchgate acts on.

use serde::Deserialize;

/// One delivery, reduced to what benchgate needs to decide what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookEvent {
    /// GitHub checking the hook is reachable, sent once when it is created.
    Ping(PingEvent),
    /// The app was installed, uninstalled, suspended, ...
    Installation(InstallationEvent),
    /// Repositories were added to or removed from an installation.
    InstallationRepositories(InstallationRepositoriesEvent),
    /// A pull request action benchgate acts on (enqueue or cancel).
    PullRequest(PullRequestEvent),
    /// A new comment on a pull request (where commands live).
    PrComment(PrCommentEvent),
    /// Someone pressed "Re-run" on a check run.
    CheckRunRerequested(CheckRunRerequestedEvent),
    /// Someone pressed "Re-run all checks" on a commit's check suite of this App.
    CheckSuiteRerequested(CheckSuiteRerequestedEvent),
    /// New commits on a branch; benchgate compares pushes to the default branch.
    Push(PushEvent),
    /// GitHub's merge queue made a group that needs its checks, or dropped one.
    MergeGroup(MergeGroupEvent),
    /// An event or action benchgate does not act on; answered 202 and logged at debug.
    Ignored(IgnoredEvent),
}

/// A push of commits to a branch (tags and deleted branches are [`WebhookEvent::Ignored`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEvent {
    pub repo: RepoRef,
    pub installation_id: Option<u64>,
    /// Branch name without `refs/heads/`.
    pub branch: String,
    /// The repository's default branch, as the payload says.
    pub default_branch: Option<String>,
    /// The branch's commit before the push; `None` when the push created the branch.
    pub before: Option<String>,
    /// The branch's commit after the push.
    pub after: String,
    /// A force push: `before` may not be an ancestor of `after`.
    pub forced: bool,
    /// The pushed commits, oldest first (GitHub lists at most 2048).
    pub commits: Vec<String>,
    /// The first line of the head commit's message.
    pub head_message: String,
}

impl PushEvent {
    /// The push moved the default branch forward (not a new branch, not another branch).
    pub fn is_default_branch(&self) -> bool {
        self.default_branch.as_deref() == Some(self.branch.as_str())
    }
}

impl WebhookEvent {
    /// The payload's `action` as GitHub sent it, when parsing read it; `None` when it did not
    /// (`ping`, events benchgate ignores unread): then only the body can tell.
    pub fn action(&self) -> Option<&str> {
        match self {
            WebhookEvent::Installation(e) => Some(&e.action),
            WebhookEvent::InstallationRepositories(e) => Some(&e.action),
            WebhookEvent::PullRequest(e) => Some(e.action.as_str()),
            // The only actions of these events that are not ignored.
            WebhookEvent::PrComment(_) => Some("created"),
            WebhookEvent::CheckRunRerequested(_) | WebhookEvent::CheckSuiteRerequested(_) => {
                Some("rerequested")
            }
            WebhookEvent::MergeGroup(e) => Some(e.action.as_str()),
            WebhookEvent::Ignored(e) => e.action.as_deref(),
            _ => None,
        }
    }
}

/// `merge_group`: a commit GitHub's merge queue made (the base plus the queued PRs) and the
/// branch it would merge into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeGroupEvent {
    /// What happened to the group.
    pub action: MergeGroupAction,
    /// The repository.
    pub repo: RepoRef,
    /// Absent for plain repository webhooks.
    pub installation_id: Option<u64>,
    /// The group's temporary commit: the check goes here.
    pub head_sha: String,
    /// The group's branch without `refs/heads/`, e.g. `gh-readonly-queue/main/pr-104-929f…`.
    pub head_ref: String,
    /// The commit the group was built on.
    pub base_sha: String,
    /// The branch the group merges into, without `refs/heads/`.
    pub base_ref: String,
    /// The whole message of the group's head commit; empty when the payload has none.
    pub head_message: String,
}

impl MergeGroupEvent {
    /// The PR number the group's ref names (`pr-104-…` → 104): the last PR the group merges.
    /// `None` if the ref has another shape.
    pub fn queued_pr(&self) -> Option<u64> {
        // GitHub names the ref `gh-readonly-queue/<base branch>/pr-<number>-<parent sha>`; the
        // base branch may contain `/`, so only the last segment is read.
        let rest = self.head_ref.strip_prefix("gh-readonly-queue/")?;
        let (_, entry) = rest.rsplit_once('/')?;
        let (number, sha) = entry.strip_prefix("pr-")?.split_once('-')?;
        let made_of = |s: &str, ok: fn(&u8) -> bool| !s.is_empty() && s.bytes().all(|b| ok(&b));
        if !made_of(number, u8::is_ascii_digit) || !made_of(sha, u8::is_ascii_hexdigit) {
            return None;
        }
        number.parse().ok()
    }
}

/// The `merge_group` actions benchgate acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeGroupAction {
    /// A new group waits for its required checks.
    ChecksRequested,
    /// The group is gone: its work can stop.
    Destroyed(DestroyReason),
}

impl MergeGroupAction {
    /// The payload's `action` this was read from.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ChecksRequested => "checks_requested",
            Self::Destroyed(_) => "destroyed",
        }
    }
}

/// Why GitHub destroyed a merge group (the payload's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DestroyReason {
    /// Its commits reached the base branch.
    Merged,
    /// An entry ahead of it left the queue, so it no longer holds what would merge.
    Invalidated,
    /// Its PR was removed from the queue (by hand, or a required check failed).
    Dequeued,
    /// No reason given, or one GitHub added after this was written.
    #[serde(other)]
    Other,
}

impl DestroyReason {
    /// GitHub's spelling; `other` for [`DestroyReason::Other`].
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merged => "merged",
            Self::Invalidated => "invalidated",
            Self::Dequeued => "dequeued",
            Self::Other => "other",
        }
    }
}

/// What was ignored, for the debug log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredEvent {
    /// The `X-GitHub-Event` value.
    pub event: String,
    /// The payload's `action`, when it has one.
    pub action: Option<String>,
}

/// `ping`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PingEvent {
    /// GitHub's zen line.
    pub zen: Option<String>,
    /// The hook's id.
    pub hook_id: Option<u64>,
    /// Set when the hook belongs to a GitHub App.
    pub app_id: Option<u64>,
}

/// `installation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallationEvent {
    /// `created`, `deleted`, `suspend`, `unsuspend`, `new_permissions_accepted`.
    pub action: String,
    /// The installation id used to mint tokens.
    pub installation_id: u64,
    /// The user or organisation the app was installed on.
    pub account: Option<String>,
    /// Repositories granted at install time (`owner/name`); empty when not listed.
    pub repositories: Vec<String>,
    /// Who did it.
    pub sender: Option<String>,
}

/// `installation_repositories`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallationRepositoriesEvent {
    /// `added` or `removed`.
    pub action: String,
    /// The installation id.
    pub installation_id: u64,
    /// Repositories added (`owner/name`).
    pub added: Vec<String>,
    /// Repositories removed (`owner/name`).
    pub removed: Vec<String>,
}

/// The `pull_request` actions benchgate acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullRequestAction {
    /// A new PR: enqueue.
    Opened,
    /// New commits pushed: enqueue, superseding the old head.
    Synchronize,
    /// Reopened: enqueue.
    Reopened,
    /// Draft became ready: enqueue.
    ReadyForReview,
    /// Closed or merged: cancel.
    Closed,
    /// Back to draft: cancel until ready again.
    ConvertedToDraft,
    /// Edited with a new base branch: compare against the new base.
    BaseChanged,
    /// The description was edited (base unchanged): its claims are read again, nothing runs.
    DescriptionEdited,
}

impl PullRequestAction {
    /// The payload's `action` this was read from (`edited` for a new base).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Synchronize => "synchronize",
            Self::Reopened => "reopened",
            Self::ReadyForReview => "ready_for_review",
            Self::Closed => "closed",
            Self::ConvertedToDraft => "converted_to_draft",
            Self::BaseChanged | Self::DescriptionEdited => "edited",
        }
    }
}

/// A repository as benchgate refers to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    /// `owner/name`.
    pub full_name: String,
    /// HTTPS clone URL.
    pub clone_url: String,
}

/// A branch name and the commit it pointed at when the event fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRef {
    /// Branch name without `refs/heads/`.
    pub ref_name: String,
    /// Full commit sha.
    pub sha: String,
}

/// `pull_request` with one of the [`PullRequestAction`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestEvent {
    /// What happened.
    pub action: PullRequestAction,
    /// The base repository (where the PR lives).
    pub repo: RepoRef,
    /// Absent for plain repository webhooks.
    pub installation_id: Option<u64>,
    /// PR number.
    pub number: u64,
    /// Base branch and sha.
    pub base: GitRef,
    /// Head branch and sha.
    pub head: GitRef,
    /// The repository the head commits come from; `None` when that fork was deleted.
    pub head_repo: Option<RepoRef>,
    /// Login of the PR's author.
    pub author: String,
    /// The author's relationship to the base repository.
    pub author_association: AuthorAssociation,
    /// Draft PRs are not benchmarked until ready.
    pub draft: bool,
    /// Only meaningful for `closed`.
    pub merged: bool,
    /// The PR's description as written (empty when none): where its performance claims are.
    pub body: String,
}

impl PullRequestEvent {
    /// True when the head commits come from another repository (or a deleted one): such PRs
    /// run only after a maintainer's `/rebench`.
    pub fn is_fork(&self) -> bool {
        self.head_repo
            .as_ref()
            .is_none_or(|head| head.full_name != self.repo.full_name)
    }
}

/// `issue_comment` `created`, on a pull request or a plain issue (where only `/benchgate bisect`
/// means anything).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrCommentEvent {
    /// False for a comment on a plain issue.
    pub on_pull_request: bool,
    /// The repository.
    pub repo: RepoRef,
    /// Absent for plain repository webhooks.
    pub installation_id: Option<u64>,
    /// The PR (issue) number.
    pub pr_number: u64,
    /// The comment's id (reactions go to it).
    pub comment_id: u64,
    /// The comment text; empty when GitHub sent `null`.
    pub body: String,
    /// Login of the commenter.
    pub commenter: String,
    /// True for bot accounts, including benchgate itself: never treat their text as commands.
    pub commenter_is_bot: bool,
    /// The commenter's relationship to the repository.
    pub author_association: AuthorAssociation,
    /// When GitHub created the comment: a fork approval covers only heads pushed before it.
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// `check_suite` `rerequested`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSuiteRerequestedEvent {
    /// The repository.
    pub repo: RepoRef,
    /// Absent for plain repository webhooks.
    pub installation_id: Option<u64>,
    /// The app that owns the suite.
    pub app_id: Option<u64>,
    /// The commit of the suite.
    pub head_sha: String,
    /// Open PRs in the same repository with that head (empty for fork PRs).
    pub pr_numbers: Vec<u64>,
}

/// `check_run` `rerequested`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRunRerequestedEvent {
    /// The repository.
    pub repo: RepoRef,
    /// Absent for plain repository webhooks.
    pub installation_id: Option<u64>,
    /// The check run's id.
    pub check_run_id: u64,
    /// The check run's name (benchgate's is `benchgate`).
    pub name: String,
    /// The app that owns the check run; GitHub only sends rerequests to the owning app.
    pub app_id: Option<u64>,
    /// The commit the check run is on.
    pub head_sha: String,
    /// Open PRs in the same repository with that head (empty for fork PRs).
    pub pr_numbers: Vec<u64>,
}

/// How a commenter or author relates to a repository, as GitHub reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuthorAssociation {
    /// Owns the repository.
    Owner,
    /// Member of the owning organisation.
    Member,
    /// Invited collaborator.
    Collaborator,
    /// Has had a commit merged before.
    Contributor,
    /// First contribution to this repository.
    FirstTimeContributor,
    /// First contribution to GitHub at all.
    FirstTimer,
    /// A placeholder for an imported user.
    Mannequin,
    /// No association.
    None,
    /// A value GitHub added after this was written; treated as untrusted.
    #[serde(other)]
    Unknown,
}

impl AuthorAssociation {
    /// The spelling GitHub uses (`OWNER`, `FIRST_TIME_CONTRIBUTOR`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "OWNER",
            Self::Member => "MEMBER",
            Self::Collaborator => "COLLABORATOR",
            Self::Contributor => "CONTRIBUTOR",
            Self::FirstTimeContributor => "FIRST_TIME_CONTRIBUTOR",
            Self::FirstTimer => "FIRST_TIMER",
            Self::Mannequin => "MANNEQUIN",
            Self::None => "NONE",
            Self::Unknown => "UNKNOWN",
        }
    }
}
