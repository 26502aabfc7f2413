//! A GitLab delivery in, one [`GitlabEvent`] out: `X-Gitlab-Event` names the hook, the body's
//! `object_kind` must agree, and only what benchgate acts on is typed; every other hook, action
//! or note is [`GitlabEvent::Ignored`] with the reason.

mod wire;

use crate::token::{HookTokens, TokenError};

/// The header naming the hook of a delivery ("Merge Request Hook").
pub const EVENT_HEADER: &str = "X-Gitlab-Event";
/// The header GitLab sets to one UUID per delivery; a redelivery keeps it.
pub const UUID_HEADER: &str = "X-Gitlab-Event-UUID";
/// The header naming the GitLab instance that sent it ("https://gitlab.com").
pub const INSTANCE_HEADER: &str = "X-Gitlab-Instance";

/// The headers of a delivery benchgate reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headers<'a> {
    pub event: Option<&'a str>,
    pub token: Option<&'a str>,
    pub uuid: Option<&'a str>,
    pub instance: Option<&'a str>,
}

/// A verified, parsed delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `X-Gitlab-Event-UUID`: the key that makes a redelivery a no-op. `None` from GitLab
    /// before 14.x, which sent none (such deliveries are keyed by their body upstream).
    pub uuid: Option<String>,
    /// `X-Gitlab-Instance`, when sent: which host the project lives on.
    pub instance: Option<String>,
    pub event: GitlabEvent,
}

/// Why a delivery was refused: a wrong token (401) or a body that is not the hook it claims
/// (400). Nothing of it is acted on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("no X-Gitlab-Event header: not a GitLab webhook delivery")]
    NoEvent,
    #[error("X-Gitlab-Event-UUID `{0}` is not a UUID")]
    BadUuid(String),
    #[error(transparent)]
    Body(#[from] EventParseError),
}

pub use benchgate_api::payload::EventParseError;
use benchgate_api::payload::decode;

/// The project a delivery is about (the merge request's target project).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRef {
    /// GitLab's numeric id: what the REST API takes as `:id`.
    pub id: u64,
    /// `group/subgroup/name`.
    pub path: String,
    pub web_url: String,
    pub default_branch: Option<String>,
    /// Where the agent clones it from (`git_http_url`; the web URL with `.git` when absent).
    pub clone_url: String,
}

impl ProjectRef {
    /// The host (and port) of its web URL: `gitlab.com`, `gitlab.example:8443`.
    pub fn host(&self) -> Option<&str> {
        let rest = self.web_url.split_once("://")?.1;
        let host = rest.split('/').next()?;
        (!host.is_empty()).then_some(host)
    }

    /// How benchgate names it: `host/group/name`, which no GitHub `owner/name` can be (a
    /// GitHub owner holds no dot or colon), so both forges' repositories share one namespace.
    pub fn full_name(&self) -> Option<String> {
        Some(format!("{}/{}", self.host()?, self.path))
    }
}

/// Who did it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRef {
    pub id: u64,
    pub username: String,
}

/// Every delivery benchgate reads, reduced to what it acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitlabEvent {
    MergeRequest(MergeRequestEvent),
    /// A new note on a merge request (where commands live).
    MrNote(MrNoteEvent),
    /// Commits pushed to a branch.
    Push(PushEvent),
    Pipeline(PipelineEvent),
    /// A hook, action or note benchgate does not act on; answered 202.
    Ignored(Ignored),
}

/// What was not acted on, and why (logged at debug).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The `X-Gitlab-Event` value.
    pub event: String,
    pub why: String,
}

/// The merge request actions benchgate acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeRequestAction {
    Open,
    Reopen,
    /// New commits (`oldrev` is set) or another edit: see [`MergeRequestEvent::new_commits`].
    Update,
    Merge,
    Close,
}

/// A merge request opened, updated, merged, closed or reopened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeRequestEvent {
    pub project: ProjectRef,
    /// The merge request's number inside its project (`!42`).
    pub iid: u64,
    pub action: MergeRequestAction,
    /// The source branch's newest commit: where the status goes.
    pub head_sha: String,
    /// The head before a push of new commits; `None` for an edit of the title, labels, ….
    pub oldrev: Option<String>,
    pub source_branch: String,
    pub target_branch: String,
    pub source_project_id: u64,
    pub target_project_id: u64,
    pub author_id: u64,
    /// Who acted (opened, pushed, merged).
    pub user: UserRef,
    pub title: String,
    pub description: String,
    pub draft: bool,
}

impl MergeRequestEvent {
    /// From a fork: its code waits for a maintainer's approval, as a fork's PR does on GitHub.
    pub fn from_fork(&self) -> bool {
        self.source_project_id != self.target_project_id
    }

    /// The update pushed commits (GitLab sets `oldrev` only then).
    pub fn new_commits(&self) -> bool {
        self.action == MergeRequestAction::Update && self.oldrev.is_some()
    }
}

/// A new note on a merge request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MrNoteEvent {
    pub project: ProjectRef,
    pub mr_iid: u64,
    pub note_id: u64,
    pub body: String,
    pub author: UserRef,
    /// The merge request's head when the note was written.
    pub head_sha: String,
    pub from_fork: bool,
    /// As GitLab writes it (`2023-05-25 19:04:19 UTC`, or RFC 3339 on newer hosts).
    pub created_at: Option<String>,
}

/// Commits pushed to a branch (tag pushes and deleted branches are [`GitlabEvent::Ignored`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEvent {
    pub project: ProjectRef,
    /// Without `refs/heads/`.
    pub branch: String,
    /// `None` when the push created the branch.
    pub before: Option<String>,
    pub after: String,
    /// The commits the payload lists (GitLab lists at most 20 of `total_commits`).
    pub commits: Vec<String>,
    pub total_commits: u64,
    pub username: Option<String>,
}

impl PushEvent {
    /// The push moved the project's default branch.
    pub fn is_default_branch(&self) -> bool {
        self.project.default_branch.as_deref() == Some(self.branch.as_str())
    }
}

/// A pipeline changed state; one of a merge request carries its iid (the status benchgate
/// posts names this pipeline, so GitLab does not start an external one beside it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineEvent {
    pub project: ProjectRef,
    pub pipeline_id: u64,
    pub sha: String,
    /// `push`, `merge_request_event`, `web`, ….
    pub source: Option<String>,
    pub status: String,
    pub mr_iid: Option<u64>,
}

/// Verifies the token, reads the UUID and parses the body. The token is checked before a
/// byte of the body is read.
pub fn parse_delivery(
    tokens: &HookTokens,
    headers: Headers<'_>,
    body: &[u8],
) -> Result<Delivery, DeliveryError> {
    tokens.verify(headers.token)?;
    let event = headers.event.ok_or(DeliveryError::NoEvent)?;
    let uuid = match headers.uuid {
        None => None,
        Some(u) if is_uuid(u) => Some(u.to_ascii_lowercase()),
        Some(u) => return Err(DeliveryError::BadUuid(u.chars().take(64).collect())),
    };
    Ok(Delivery {
        uuid,
        instance: headers.instance.map(str::to_owned),
        event: parse_event(event, body)?,
    })
}

/// The `object_kind` each hook carries.
const HOOKS: &[(&str, &str)] = &[
    ("Merge Request Hook", "merge_request"),
    ("Note Hook", "note"),
    ("Push Hook", "push"),
    ("Pipeline Hook", "pipeline"),
];

/// Parses a (verified) body; `event` is the `X-Gitlab-Event` header.
pub fn parse_event(event: &str, body: &[u8]) -> Result<GitlabEvent, EventParseError> {
    let ignored = |why: &str| {
        Ok(GitlabEvent::Ignored(Ignored {
            event: event.to_owned(),
            why: why.to_owned(),
        }))
    };
    let Some(&(_, kind)) = HOOKS.iter().find(|(h, _)| *h == event) else {
        return ignored("a hook benchgate does not act on");
    };
    let said: wire::Kind = decode(event, body)?;
    if said.object_kind != kind {
        return Err(EventParseError {
            event: event.to_owned(),
            path: "object_kind".to_owned(),
            line: 1,
            column: 1,
            message: format!(
                "`{}` where {event} carries `{kind}`",
                said.object_kind.chars().take(40).collect::<String>()
            ),
        });
    }
    match kind {
        "merge_request" => {
            let p: wire::MergeRequest = decode(event, body)?;
            let a = p.object_attributes;
            let action = match a.action.as_deref() {
                Some("open") => MergeRequestAction::Open,
                Some("reopen") => MergeRequestAction::Reopen,
                Some("update") => MergeRequestAction::Update,
                Some("merge") => MergeRequestAction::Merge,
                Some("close") => MergeRequestAction::Close,
                Some(_) => return ignored("a merge request action benchgate does not act on"),
                None => return ignored("a merge request event without an action"),
            };
            Ok(GitlabEvent::MergeRequest(MergeRequestEvent {
                project: project(p.project),
                iid: a.iid,
                action,
                head_sha: a.last_commit.id,
                oldrev: a.oldrev.filter(|r| !is_null_sha(r)),
                source_branch: a.source_branch,
                target_branch: a.target_branch,
                source_project_id: a.source_project_id,
                target_project_id: a.target_project_id,
                author_id: a.author_id,
                user: user(p.user),
                title: a.title,
                description: a.description.unwrap_or_default(),
                draft: a.draft.or(a.work_in_progress).unwrap_or(false),
            }))
        }
        "note" => {
            let p: wire::Note = decode(event, body)?;
            let a = p.object_attributes;
            if a.noteable_type != "MergeRequest" {
                return ignored("a note on something other than a merge request");
            }
            if a.action.as_deref().is_some_and(|act| act != "create") {
                return ignored("an edited note: commands run from new notes only");
            }
            let Some(mr) = p.merge_request else {
                return Err(EventParseError {
                    event: event.to_owned(),
                    path: "merge_request".to_owned(),
                    line: 1,
                    column: 1,
                    message: "missing for a note on a merge request".to_owned(),
                });
            };
            Ok(GitlabEvent::MrNote(MrNoteEvent {
                project: project(p.project),
                mr_iid: mr.iid,
                note_id: a.id,
                body: a.note,
                author: user(p.user),
                head_sha: mr.last_commit.id,
                from_fork: mr.source_project_id != mr.target_project_id,
                created_at: a.created_at,
            }))
        }
        "push" => {
            let p: wire::Push = decode(event, body)?;
            let Some(branch) = p.git_ref.strip_prefix("refs/heads/") else {
                return ignored("a push to a ref that is not a branch");
            };
            if is_null_sha(&p.after) {
                return ignored("a deleted branch");
            }
            let listed = p.commits.len() as u64;
            Ok(GitlabEvent::Push(PushEvent {
                branch: branch.to_owned(),
                before: Some(p.before).filter(|b| !is_null_sha(b)),
                after: p.after,
                commits: p.commits.into_iter().map(|c| c.id).collect(),
                total_commits: p.total_commits_count.unwrap_or(listed).max(listed),
                username: p.user_username,
                project: project(p.project),
            }))
        }
        _ => {
            let p: wire::Pipeline = decode(event, body)?;
            let a = p.object_attributes;
            Ok(GitlabEvent::Pipeline(PipelineEvent {
                project: project(p.project),
                pipeline_id: a.id,
                sha: a.sha,
                source: a.source,
                status: a.status,
                mr_iid: p.merge_request.map(|m| m.iid),
            }))
        }
    }
}

/// What an external status check asks: the merge request, its head, and which check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCheckRequest {
    pub project: ProjectRef,
    pub iid: u64,
    pub head_sha: String,
    /// `external_approval_rule`: the check's id and name, when GitLab names it.
    pub check: Option<(u64, String)>,
}

/// Parses an external status check's (verified) request body.
pub fn parse_status_check(body: &[u8]) -> Result<StatusCheckRequest, EventParseError> {
    const WHAT: &str = "status check request";
    let said: wire::Kind = decode(WHAT, body)?;
    if said.object_kind != "merge_request" {
        return Err(EventParseError {
            event: WHAT.to_owned(),
            path: "object_kind".to_owned(),
            line: 1,
            column: 1,
            message: format!(
                "`{}` where a status check carries `merge_request`",
                said.object_kind.chars().take(40).collect::<String>()
            ),
        });
    }
    let p: wire::StatusCheck = decode(WHAT, body)?;
    Ok(StatusCheckRequest {
        project: project(p.project),
        iid: p.object_attributes.iid,
        head_sha: p.object_attributes.last_commit.id,
        check: p.external_approval_rule.map(|r| (r.id, r.name)),
    })
}

fn project(p: wire::Project) -> ProjectRef {
    ProjectRef {
        id: p.id,
        path: p.path_with_namespace,
        clone_url: p
            .git_http_url
            .unwrap_or_else(|| format!("{}.git", p.web_url)),
        web_url: p.web_url,
        default_branch: p.default_branch,
    }
}

fn user(u: wire::User) -> UserRef {
    UserRef {
        id: u.id,
        username: u.username,
    }
}

/// GitLab's "no commit": forty zeros (a created or deleted branch).
fn is_null_sha(sha: &str) -> bool {
    !sha.is_empty() && sha.bytes().all(|b| b == b'0')
}

/// 8-4-4-4-12 hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests;
