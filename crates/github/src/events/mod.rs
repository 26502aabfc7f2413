//! Typed webhook events: the raw body plus `X-GitHub-Event` in, one [`WebhookEvent`] out.
//! Only what benchgate acts on is typed; every other event or action is [`WebhookEvent::Ignored`].

mod types;
mod wire;

pub use types::{
    AuthorAssociation, CheckRunRerequestedEvent, CheckSuiteRerequestedEvent, DestroyReason, GitRef,
    IgnoredEvent, InstallationEvent, InstallationRepositoriesEvent, MergeGroupAction,
    MergeGroupEvent, PingEvent, PrCommentEvent, PullRequestAction, PullRequestEvent, PushEvent,
    RepoRef, WebhookEvent,
};

/// The header naming the event type of a delivery.
pub const EVENT_HEADER: &str = "X-GitHub-Event";

pub use benchgate_api::payload::EventParseError;
use benchgate_api::payload::decode;

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
            // One pass over the body when it has the full shape (nearly always); otherwise the
            // passes below decide as they always did.
            if let Ok(p) = serde_json::from_slice::<wire::PullRequestDelivery>(body) {
                return Ok(pull_request_delivery(event, p));
            }
            // Read the action first so that actions we ignore never fail on shape.
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            let Some(mut found) = action.as_deref().and_then(pull_request_action) else {
                return ignored(action);
            };
            if action.as_deref() == Some("edited") {
                let changes = decode::<wire::Edited>(event, body)?.changes;
                let Some(edited) = edited_action(changes) else {
                    return ignored(action);
                };
                found = edited;
            }
            let action = found;
            let p: wire::PullRequest = decode(event, body)?;
            Ok(WebhookEvent::PullRequest(pull_request_event(action, p)))
        }
        "issue_comment" => {
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            if action.as_deref() != Some("created") {
                return ignored(action);
            }
            let p: wire::IssueComment = decode(event, body)?;
            Ok(WebhookEvent::PrComment(PrCommentEvent {
                on_pull_request: p.issue.pull_request.is_some(),
                repo: repo_ref(p.repository),
                installation_id: p.installation.map(|i| i.id),
                pr_number: p.issue.number,
                comment_id: p.comment.id,
                body: p.comment.body.unwrap_or_default(),
                commenter_is_bot: p.comment.user.kind.as_deref() == Some("Bot"),
                commenter: p.comment.user.login,
                author_association: p.comment.author_association,
                created_at: p.comment.created_at,
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
        "check_suite" => {
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            if action.as_deref() != Some("rerequested") {
                return ignored(action);
            }
            let p: wire::CheckSuite = decode(event, body)?;
            Ok(WebhookEvent::CheckSuiteRerequested(
                CheckSuiteRerequestedEvent {
                    repo: repo_ref(p.repository),
                    installation_id: p.installation.map(|i| i.id),
                    app_id: p.check_suite.app.map(|a| a.id),
                    head_sha: p.check_suite.head_sha,
                    pr_numbers: p
                        .check_suite
                        .pull_requests
                        .iter()
                        .map(|pr| pr.number)
                        .collect(),
                },
            ))
        }
        "push" => push_event(event, body),
        "merge_group" => {
            let action = decode::<wire::ActionOnly>(event, body)?.action;
            let destroyed = match action.as_deref() {
                Some("checks_requested") => false,
                Some("destroyed") => true,
                _ => return ignored(action),
            };
            let p: wire::MergeGroup = decode(event, body)?;
            let action = if destroyed {
                // A payload without `reason` still ends the group.
                MergeGroupAction::Destroyed(p.reason.unwrap_or(DestroyReason::Other))
            } else {
                MergeGroupAction::ChecksRequested
            };
            Ok(WebhookEvent::MergeGroup(merge_group_event(action, p)))
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
        "converted_to_draft" => PullRequestAction::ConvertedToDraft,
        "edited" => PullRequestAction::BaseChanged,
        _ => return None,
    })
}

/// A `pull_request` read in one pass: the same event the separate passes would give.
fn pull_request_delivery(event: &str, p: wire::PullRequestDelivery) -> WebhookEvent {
    let acted_on = match p.action.as_deref().and_then(pull_request_action) {
        Some(PullRequestAction::BaseChanged) => edited_action(p.changes),
        found => found,
    };
    let Some(action) = acted_on else {
        return WebhookEvent::Ignored(IgnoredEvent {
            event: event.to_owned(),
            action: p.action,
        });
    };
    let p = wire::PullRequest {
        installation: p.installation,
        pull_request: p.pull_request,
    };
    WebhookEvent::PullRequest(pull_request_event(action, p))
}

/// What an `edited` delivery asks for: a new base is measured again; a new description is
/// read again for its claims; a title edit changes nothing.
fn edited_action(changes: Option<wire::EditedChanges>) -> Option<PullRequestAction> {
    let changes = changes?;
    if changes.base.is_some() {
        Some(PullRequestAction::BaseChanged)
    } else if changes.body.is_some() {
        Some(PullRequestAction::DescriptionEdited)
    } else {
        None
    }
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
        body: pr.body.unwrap_or_default(),
    }
}

/// GitHub sends full refs; the event keeps branch names, as [`PushEvent`] and [`GitRef`] do.
fn merge_group_event(action: MergeGroupAction, p: wire::MergeGroup) -> MergeGroupEvent {
    let group = p.merge_group;
    let branch = |r: String| match r.strip_prefix("refs/heads/") {
        Some(name) => name.to_owned(),
        None => r,
    };
    MergeGroupEvent {
        action,
        repo: repo_ref(p.repository),
        installation_id: p.installation.map(|i| i.id),
        head_sha: group.head_sha,
        head_ref: branch(group.head_ref),
        base_sha: group.base_sha,
        base_ref: branch(group.base_ref),
        head_message: group.head_commit.map(|c| c.message).unwrap_or_default(),
    }
}

/// The all-zero sha GitHub sends as `before` of a new branch and `after` of a deleted one.
const NULL_SHA: &str = "0000000000000000000000000000000000000000";

fn push_event(event: &str, body: &[u8]) -> Result<WebhookEvent, EventParseError> {
    let p: wire::Push = decode(event, body)?;
    let Some(branch) = p.ref_name.strip_prefix("refs/heads/") else {
        // A tag: nothing on a branch changed. A push has no `action`.
        tracing::debug!(git_ref = %p.ref_name, "push of a tag ignored");
        return Ok(WebhookEvent::Ignored(IgnoredEvent {
            event: event.to_owned(),
            action: None,
        }));
    };
    if p.deleted || p.after == NULL_SHA {
        tracing::debug!(git_ref = %p.ref_name, "push deleting a branch ignored");
        return Ok(WebhookEvent::Ignored(IgnoredEvent {
            event: event.to_owned(),
            action: None,
        }));
    }
    let head_message = p
        .head_commit
        .as_ref()
        .map(|c| c.message.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    Ok(WebhookEvent::Push(PushEvent {
        repo: RepoRef {
            full_name: p.repository.full_name,
            clone_url: p.repository.clone_url,
        },
        installation_id: p.installation.map(|i| i.id),
        branch: branch.to_owned(),
        default_branch: p.repository.default_branch,
        before: (!p.created && p.before != NULL_SHA).then_some(p.before),
        after: p.after,
        forced: p.forced,
        commits: p.commits.into_iter().map(|c| c.id).collect(),
        head_message,
    }))
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

#[cfg(test)]
mod tests;
