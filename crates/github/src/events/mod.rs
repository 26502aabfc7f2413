//! Typed webhook events: the raw body plus `X-GitHub-Event` in, one [`WebhookEvent`] out.
//! Only what benchgate acts on is typed; every other event or action is [`WebhookEvent::Ignored`].

mod wire;

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The header naming the event type of a delivery.
pub const EVENT_HEADER: &str = "X-GitHub-Event";

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
    /// An event or action benchgate does not act on; answered 202 and logged at debug.
    Ignored(IgnoredEvent),
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

/// `issue_comment` `created` on a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrCommentEvent {
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

/// A payload that is not valid JSON or lacks a field benchgate needs; answered with 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {event} payload at `{path}` (line {line}, column {column}): {message}")]
pub struct EventParseError {
    /// The `X-GitHub-Event` value.
    pub event: String,
    /// Where in the JSON it went wrong, e.g. `pull_request.head.sha`; `.` for the top level.
    pub path: String,
    /// 1-based line in the body.
    pub line: usize,
    /// 1-based column in the body.
    pub column: usize,
    /// serde_json's description of the problem.
    pub message: String,
}

/// Parses a delivery. `event` is the `X-GitHub-Event` header, `body` the raw (already verified) bytes.
pub fn parse_event(event: &str, body: &[u8]) -> Result<WebhookEvent, EventParseError> {
    let ignored = |action: Option<String>| {
        Ok(WebhookEvent::Ignored(IgnoredEvent {
            event: event.to_owned(),
            action,
        }))
    };
    match event {
        "ping" => {
            let p: wire::Ping = decode(event, body)?;
            Ok(WebhookEvent::Ping(PingEvent {
                zen: p.zen,
                hook_id: p.hook_id,
                app_id: p.hook.and_then(|h| h.app_id),
            }))
        }
        "installation" => {
            let p: wire::Installation = decode(event, body)?;
            Ok(WebhookEvent::Installation(InstallationEvent {
                action: p.action,
                installation_id: p.installation.id,
                account: p.installation.account.map(|a| a.login),
                repositories: names(p.repositories.unwrap_or_default()),
                sender: p.sender.map(|s| s.login),
            }))
        }
        "installation_repositories" => {
            let p: wire::InstallationRepositories = decode(event, body)?;
            Ok(WebhookEvent::InstallationRepositories(
                InstallationRepositoriesEvent {
                    action: p.action,
                    installation_id: p.installation.id,
                    added: names(p.repositories_added),
                    removed: names(p.repositories_removed),
                },
            ))
        }
        "pull_request" => {
            // Read the action first so that actions we ignore never fail on shape.
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            let Some(action) = action.as_deref().and_then(pull_request_action) else {
                return ignored(action);
            };
            let p: wire::PullRequest = decode(event, body)?;
            Ok(WebhookEvent::PullRequest(pull_request_event(action, p)))
        }
        "issue_comment" => {
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            if action.as_deref() != Some("created") {
                return ignored(action);
            }
            let p: wire::IssueComment = decode(event, body)?;
            if p.issue.pull_request.is_none() {
                // A comment on a plain issue: commands only make sense on PRs.
                return ignored(Some(p.action));
            }
            Ok(WebhookEvent::PrComment(PrCommentEvent {
                repo: repo_ref(p.repository),
                installation_id: p.installation.map(|i| i.id),
                pr_number: p.issue.number,
                comment_id: p.comment.id,
                body: p.comment.body.unwrap_or_default(),
                commenter_is_bot: p.comment.user.kind.as_deref() == Some("Bot"),
                commenter: p.comment.user.login,
                author_association: p.comment.author_association,
            }))
        }
        "check_run" => {
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            if action.as_deref() != Some("rerequested") {
                return ignored(action);
            }
            let p: wire::CheckRun = decode(event, body)?;
            Ok(WebhookEvent::CheckRunRerequested(
                CheckRunRerequestedEvent {
                    repo: repo_ref(p.repository),
                    installation_id: p.installation.map(|i| i.id),
                    check_run_id: p.check_run.id,
                    name: p.check_run.name,
                    app_id: p.check_run.app.map(|a| a.id),
                    head_sha: p.check_run.head_sha,
                    pr_numbers: p
                        .check_run
                        .pull_requests
                        .iter()
                        .map(|pr| pr.number)
                        .collect(),
                },
            ))
        }
        _ => {
            // Not parsed at all: an event we do not handle must not fail on its shape.
            ignored(None)
        }
    }
}

fn pull_request_action(action: &str) -> Option<PullRequestAction> {
    Some(match action {
        "opened" => PullRequestAction::Opened,
        "synchronize" => PullRequestAction::Synchronize,
        "reopened" => PullRequestAction::Reopened,
        "ready_for_review" => PullRequestAction::ReadyForReview,
        "closed" => PullRequestAction::Closed,
        _ => return None,
    })
}

fn pull_request_event(action: PullRequestAction, p: wire::PullRequest) -> PullRequestEvent {
    let pr = p.pull_request;
    PullRequestEvent {
        action,
        // The base repo is the repository the event is about (GitHub's `repository` is the
        // same object), so fork detection compares like with like.
        repo: repo_ref(pr.base.repo),
        installation_id: p.installation.map(|i| i.id),
        number: pr.number,
        base: GitRef {
            ref_name: pr.base.ref_name,
            sha: pr.base.sha,
        },
        head: GitRef {
            ref_name: pr.head.ref_name,
            sha: pr.head.sha,
        },
        head_repo: pr.head.repo.map(repo_ref),
        author: pr.user.login,
        author_association: pr.author_association,
        draft: pr.draft,
        merged: pr.merged.unwrap_or(false),
    }
}

fn repo_ref(r: wire::Repository) -> RepoRef {
    RepoRef {
        full_name: r.full_name,
        clone_url: r.clone_url,
    }
}

fn names(repos: Vec<wire::RepoName>) -> Vec<String> {
    repos.into_iter().map(|r| r.full_name).collect()
}

fn decode<T: DeserializeOwned>(event: &str, body: &[u8]) -> Result<T, EventParseError> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        EventParseError {
            event: event.to_owned(),
            path,
            line: inner.line(),
            column: inner.column(),
            message: strip_position(&inner.to_string()),
        }
    })?;
    // Trailing garbage after the JSON value is as malformed as a syntax error inside it.
    de.end().map_err(|e| EventParseError {
        event: event.to_owned(),
        path: ".".to_owned(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    Ok(value)
}

/// serde_json appends " at line L column C"; we report those as fields instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests;
