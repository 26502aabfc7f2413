//! What a webhook asks for. [`plan`] runs inside the webhook request and only reads the store:
//! it turns an event into effects recorded with the delivery (repository rows, the PR's newest
//! head, cancellations, outbox tasks). The tasks that need GitHub (reading `.benchgate.toml`,
//! checking permissions, writing comments and checks) run later in the outbox
//! ([`crate::tasks`]), so no GitHub call ever happens inside a request.

use benchgate_github::commands::USAGE;
use benchgate_github::events::{
    CheckRunRerequestedEvent, CheckSuiteRerequestedEvent, InstallationEvent,
    InstallationRepositoriesEvent, MergeGroupAction, MergeGroupEvent, PrCommentEvent,
    PullRequestAction, PullRequestEvent, PushEvent, RepoRef,
};
use benchgate_github::{Command, WebhookEvent, parse_command};
use benchgate_store::model::{DeliveryEffect, Installation, NewRepository};
use benchgate_store::{Store, StoreError};

/// The longest PR description kept for its claims: GitHub's own cap on a body.
const MAX_PR_BODY_CHARS: usize = 65_536;

use crate::tasks::{
    CancelMergeGroup, CancelPullRequest, EditDescription, GuardedCommand, HandleCommand,
    MarkedComment, OutboxTask, RepoName, RerunCheck, ScheduleMain, ScheduleMergeGroup,
    SchedulePullRequest, is_check_name, reply_label,
};

/// What a delivery asks for: a word for the metrics and the effects recorded with it.
#[derive(Debug, Default)]
pub struct Plan {
    pub outcome: &'static str,
    pub effects: Vec<DeliveryEffect>,
}

impl Plan {
    fn new(outcome: &'static str) -> Self {
        Plan {
            outcome,
            effects: Vec::new(),
        }
    }

    fn with(mut self, effect: DeliveryEffect) -> Self {
        self.effects.push(effect);
        self
    }

    fn with_task(self, task: impl OutboxTask) -> Self {
        self.with(DeliveryEffect::Outbox(task.message()))
    }
}

/// Decides what an event asks for. Reads the store (to find a repository to cancel) but never
/// calls GitHub.
pub async fn plan(store: &dyn Store, event: &WebhookEvent) -> Result<Plan, StoreError> {
    Ok(match event {
        WebhookEvent::Ping(_) => Plan::new("ping"),
        WebhookEvent::Installation(e) => installation(e),
        WebhookEvent::InstallationRepositories(e) => installation_repositories(e),
        WebhookEvent::PullRequest(e) => pull_request_event(store, e).await?,
        WebhookEvent::PrComment(e) => pr_comment(e),
        WebhookEvent::CheckRunRerequested(e) => check_run_rerequested(e),
        WebhookEvent::CheckSuiteRerequested(e) => check_suite_rerequested(e),
        WebhookEvent::Push(e) => push(e),
        WebhookEvent::MergeGroup(e) => merge_group(e),
        WebhookEvent::Ignored(e) => {
            tracing::debug!(event = %e.event, action = ?e.action, "event ignored");
            Plan::new("ignored")
        }
    })
}

fn installation(e: &InstallationEvent) -> Plan {
    let id = e.installation_id as i64;
    match e.action.as_str() {
        "deleted" => Plan::new("uninstalled").with(DeliveryEffect::RemoveInstallation {
            installation_id: id,
        }),
        // No token can be minted while suspended: stop the runners' work, whose results could
        // not be posted. The next push after `unsuspend` schedules again.
        "suspend" => Plan::new("suspended").with(DeliveryEffect::SuspendInstallation {
            installation_id: id,
        }),
        "created" | "new_permissions_accepted" | "unsuspend" => {
            let account = e.account.clone().unwrap_or_default();
            let plan =
                Plan::new("installed").with(DeliveryEffect::UpsertInstallation(Installation {
                    id,
                    account_login: account,
                }));
            e.repositories.iter().fold(plan, |plan, name| {
                plan.with(DeliveryEffect::UpsertRepository(github_repository(
                    Some(id),
                    name,
                    &default_clone_url(name),
                )))
            })
        }
        _ => Plan::new("ignored"),
    }
}

fn installation_repositories(e: &InstallationRepositoriesEvent) -> Plan {
    let id = e.installation_id as i64;
    if !e.removed.is_empty() {
        // Nothing to undo: a removed repository simply sends no more events.
        tracing::info!(
            installation = id,
            removed = e.removed.len(),
            "repositories removed"
        );
    }
    let owner = e
        .added
        .first()
        .and_then(|n| n.split_once('/'))
        .map(|(o, _)| o);
    let Some(owner) = owner else {
        return Plan::new("ignored");
    };
    let plan = Plan::new("repositories_added").with(installation_row(id, owner));
    e.added.iter().fold(plan, |plan, name| {
        plan.with(DeliveryEffect::UpsertRepository(github_repository(
            Some(id),
            name,
            &default_clone_url(name),
        )))
    })
}

async fn pull_request_event(store: &dyn Store, e: &PullRequestEvent) -> Result<Plan, StoreError> {
    if matches!(
        e.action,
        PullRequestAction::Closed | PullRequestAction::ConvertedToDraft
    ) {
        let Some(repo) = store.repository_by_name(&e.repo.full_name).await? else {
            return Ok(Plan::new("ignored"));
        };
        let outcome = if e.action == PullRequestAction::Closed {
            "cancelled"
        } else {
            "draft_cancelled"
        };
        // Cancel now, and once more after a schedule of this PR still pending or in flight:
        // the row takes the schedule's key, so it replaces a pending one or runs after it.
        return Ok(Plan::new(outcome)
            .with(DeliveryEffect::CancelPullRequest {
                repository_id: repo.id,
                pr_number: e.number as i64,
            })
            .with_task(CancelPullRequest {
                repo: repo_name(&e.repo.full_name, e.installation_id),
                pr: e.number,
            }));
    }
    if e.action == PullRequestAction::DescriptionEdited {
        // Nothing runs: the claims are read again from the new text.
        return Ok(
            with_repository(Plan::new("description_edited"), &e.repo, e.installation_id).with_task(
                EditDescription {
                    repo: repo_name(&e.repo.full_name, e.installation_id),
                    pr: e.number,
                    body: e.body.chars().take(MAX_PR_BODY_CHARS).collect(),
                },
            ),
        );
    }
    let mut plan = Plan::new(if e.draft {
        "draft_skipped"
    } else {
        "scheduled"
    });
    plan = with_repository(plan, &e.repo, e.installation_id);
    // Recorded with the delivery: a schedule of an older head that outlives its lease cannot
    // supersede this one, and a fork approval given before this push does not cover it.
    plan = plan.with(DeliveryEffect::RecordPullRequestHead {
        full_name: e.repo.full_name.clone(),
        pr_number: e.number as i64,
        head_sha: e.head.sha.clone(),
    });
    if e.draft {
        return Ok(plan);
    }
    Ok(plan.with_task(SchedulePullRequest {
        repo: repo_name(&e.repo.full_name, e.installation_id),
        clone_url: e.repo.clone_url.clone(),
        pr: e.number,
        base_ref: e.base.ref_name.clone(),
        base_sha: e.base.sha.clone(),
        head_sha: e.head.sha.clone(),
        fork: e.is_fork(),
        body: e.body.chars().take(MAX_PR_BODY_CHARS).collect(),
    }))
}

/// A push to the default branch is compared with the commit before it (`before`); pushes to
/// other branches are PRs' business, and a new branch has nothing before it to compare with.
fn push(e: &PushEvent) -> Plan {
    if !e.is_default_branch() {
        tracing::debug!(branch = %e.branch, "push to a branch other than the default one");
        return Plan::new("ignored");
    }
    let Some(before) = &e.before else {
        tracing::info!(branch = %e.branch, "the push created the branch; nothing to compare with");
        return Plan::new("ignored");
    };
    with_repository(Plan::new("main_scheduled"), &e.repo, e.installation_id).with_task(
        ScheduleMain {
            repo: repo_name(&e.repo.full_name, e.installation_id),
            branch: e.branch.clone(),
            before: before.clone(),
            after: e.after.clone(),
            commits: e.commits.clone(),
            forced: e.forced,
            head_message: e.head_message.clone(),
        },
    )
}

/// The repository's row (and its installation's, which must exist first) with the plan.
fn with_repository(mut plan: Plan, repo: &RepoRef, installation_id: Option<u64>) -> Plan {
    let installation_id = installation_id.map(|i| i as i64);
    if let (Some(id), Some((owner, _))) = (installation_id, repo.full_name.split_once('/')) {
        plan = plan.with(installation_row(id, owner));
    }
    plan.with(DeliveryEffect::UpsertRepository(github_repository(
        installation_id,
        &repo.full_name,
        &repo.clone_url,
    )))
}

/// GitHub's merge queue asks for the group's checks, or drops the group (merged, invalidated
/// by a change ahead of it, or dequeued): its check is decided, or its jobs cancelled.
fn merge_group(e: &MergeGroupEvent) -> Plan {
    let repo = repo_name(&e.repo.full_name, e.installation_id);
    if let MergeGroupAction::Destroyed(reason) = e.action {
        return Plan::new("merge_group_destroyed").with_task(CancelMergeGroup {
            repo,
            head_sha: e.head_sha.clone(),
            reason: reason.as_str().to_owned(),
        });
    }
    with_repository(
        Plan::new("merge_group_scheduled"),
        &e.repo,
        e.installation_id,
    )
    .with_task(ScheduleMergeGroup {
        repo,
        head_sha: e.head_sha.clone(),
        head_ref: e.head_ref.clone(),
        base_sha: e.base_sha.clone(),
        base_ref: e.base_ref.clone(),
        queued_pr: e.queued_pr(),
    })
}

fn pr_comment(e: &PrCommentEvent) -> Plan {
    if e.commenter_is_bot {
        return Plan::new("ignored");
    }
    let repo = repo_name(&e.repo.full_name, e.installation_id);
    if !e.on_pull_request {
        // On a plain issue only `/benchgate bisect` means anything (in a regression issue);
        // anything else is someone's text, not a command to answer.
        return match parse_command(&e.body) {
            Ok(Some(Command::Bisect)) => Plan::new("command").with_task(HandleCommand {
                repo,
                pr: e.pr_number,
                comment_id: e.comment_id,
                commenter: e.commenter.clone(),
                commenter_id: None,
                association: e.author_association.as_str().to_owned(),
                command: GuardedCommand::Bisect,
                commented_at: e.created_at,
            }),
            _ => Plan::new("ignored"),
        };
    }
    let (outcome, task) = command_on_change(CommandNote {
        repo,
        pr: e.pr_number,
        comment_id: e.comment_id,
        commenter: &e.commenter,
        commenter_id: None,
        association: e.author_association.as_str(),
        body: &e.body,
        commented_at: e.created_at,
    });
    match task {
        Some(task) => Plan::new(outcome).with(DeliveryEffect::Outbox(task)),
        None => Plan::new(outcome),
    }
}

/// A comment on a pull request or merge request, as a command reads it.
pub(crate) struct CommandNote<'a> {
    pub repo: RepoName,
    pub pr: u64,
    pub comment_id: u64,
    pub commenter: &'a str,
    pub commenter_id: Option<u64>,
    /// GitHub's `author_association`; `NONE` where the forge has none.
    pub association: &'a str,
    pub body: &'a str,
    pub commented_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a comment on a change asks for: a word for the metrics and the task, if any. A
/// mistaken command is answered only once the commenter is known to be allowed to run
/// commands: a stranger must not make benchgate post a reply about their text.
pub(crate) fn command_on_change(
    n: CommandNote<'_>,
) -> (
    &'static str,
    Option<benchgate_store::model::NewOutboxMessage>,
) {
    let guarded = match parse_command(n.body) {
        Ok(None) => return ("no_command", None),
        Ok(Some(Command::Bisect)) => GuardedCommand::Malformed {
            reply: "`/benchgate bisect` works in a regression issue benchgate opened for the \
                    default branch; on a pull request, `/benchgate profile` shows where the \
                    time went."
                .into(),
        },
        Err(error) => GuardedCommand::Malformed {
            reply: format!("{error}\n\nValid commands:\n\n{USAGE}"),
        },
        Ok(Some(Command::Help)) => {
            let reply = MarkedComment {
                repo: n.repo,
                pr: n.pr,
                label: reply_label(n.comment_id),
                body: format!("benchgate commands:\n\n{USAGE}"),
            };
            return ("help", Some(reply.message()));
        }
        Ok(Some(Command::Accept { reason })) => GuardedCommand::Accept { reason },
        Ok(Some(Command::Unaccept)) => GuardedCommand::Unaccept,
        Ok(Some(Command::Profile { benchmark })) => GuardedCommand::Profile { benchmark },
        Ok(Some(Command::Rebench { rounds })) => GuardedCommand::Rebench { rounds },
        Ok(Some(Command::RebenchAa)) => GuardedCommand::RebenchAa,
        Ok(Some(Command::Claim { line })) => GuardedCommand::Claim { line },
    };
    let outcome = match guarded {
        GuardedCommand::Malformed { .. } => "command_error",
        _ => "command",
    };
    let task = HandleCommand {
        repo: n.repo,
        pr: n.pr,
        comment_id: n.comment_id,
        commenter: n.commenter.to_owned(),
        commenter_id: n.commenter_id,
        association: n.association.to_owned(),
        command: guarded,
        commented_at: n.commented_at,
    };
    (outcome, Some(task.message()))
}

fn check_run_rerequested(e: &CheckRunRerequestedEvent) -> Plan {
    if !is_check_name(&e.name) {
        return Plan::new("ignored");
    }
    Plan::new("rerun").with_task(RerunCheck {
        repo: repo_name(&e.repo.full_name, e.installation_id),
        head_sha: e.head_sha.clone(),
        prs: e.pr_numbers.clone(),
        check_name: Some(e.name.clone()),
    })
}

/// "Re-run all checks": GitHub sends it only to the App that owns the suite.
fn check_suite_rerequested(e: &CheckSuiteRerequestedEvent) -> Plan {
    Plan::new("rerun").with_task(RerunCheck {
        repo: repo_name(&e.repo.full_name, e.installation_id),
        head_sha: e.head_sha.clone(),
        prs: e.pr_numbers.clone(),
        check_name: None,
    })
}

fn repo_name(full_name: &str, installation_id: Option<u64>) -> RepoName {
    RepoName::github(full_name, installation_id)
}

/// Repositories may arrive before their installation was ever seen (the app was installed
/// before benchgate ran); the installation row must exist first.
fn installation_row(id: i64, owner: &str) -> DeliveryEffect {
    DeliveryEffect::UpsertInstallation(Installation {
        id,
        account_login: owner.to_owned(),
    })
}

fn github_repository(
    installation_id: Option<i64>,
    full_name: &str,
    clone_url: &str,
) -> NewRepository {
    NewRepository {
        github_id: None,
        installation_id,
        full_name: full_name.to_owned(),
        clone_url: clone_url.to_owned(),
        forge: benchgate_store::model::Forge::GitHub,
    }
}

fn default_clone_url(full_name: &str) -> String {
    format!("https://github.com/{full_name}.git")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push_to(branch: &str, before: Option<&str>) -> PushEvent {
        PushEvent {
            repo: RepoRef {
                full_name: "acme/widgets".into(),
                clone_url: "https://github.com/acme/widgets.git".into(),
            },
            installation_id: Some(7),
            branch: branch.into(),
            default_branch: Some("main".into()),
            before: before.map(str::to_owned),
            after: "b".repeat(40),
            forced: false,
            commits: vec!["b".repeat(40)],
            head_message: "Merge pull request #3 from o/x".into(),
        }
    }

    /// A member's comment `body` on PR (or plain issue) #42.
    fn comment_event(body: &str, on_pull_request: bool) -> PrCommentEvent {
        PrCommentEvent {
            on_pull_request,
            repo: RepoRef {
                full_name: "acme/widgets".into(),
                clone_url: "https://github.com/acme/widgets.git".into(),
            },
            installation_id: Some(7),
            pr_number: 42,
            comment_id: 9001,
            body: body.into(),
            commenter: "octocat".into(),
            commenter_is_bot: false,
            author_association: benchgate_github::events::AuthorAssociation::Member,
            created_at: None,
        }
    }

    /// The bot's answer to `/benchgate help` and to a command it cannot parse (CONVENTIONS 21).
    #[test]
    fn help_and_a_mistyped_command_read_as_pinned() {
        let comment = |body: &str| comment_event(body, true);
        let reply = |plan: Plan| match &plan.effects[..] {
            // A mistaken command's reply is posted once the commenter may run commands.
            [DeliveryEffect::Outbox(m)] if m.kind == "command.handle" => {
                let task: HandleCommand = serde_json::from_value(m.payload.clone()).unwrap();
                let GuardedCommand::Malformed { reply } = &task.command else {
                    panic!("{task:?}")
                };
                let comment = task.reply(reply.clone());
                format!(
                    "outcome: {}\nlabel: {}\n{}",
                    plan.outcome, comment.label, comment.body
                )
            }
            [DeliveryEffect::Outbox(m)] => format!(
                "outcome: {}\nlabel: {}\n{}",
                plan.outcome,
                m.payload["label"].as_str().unwrap(),
                m.payload["body"].as_str().unwrap()
            ),
            other => panic!("{other:?}"),
        };
        insta::assert_snapshot!("reply_help", reply(pr_comment(&comment("/benchgate help"))));
        insta::assert_snapshot!(
            "reply_unknown_command",
            reply(pr_comment(&comment("/rebench lots")))
        );
    }

    /// On a plain issue only `/benchgate bisect` is a command: a `/rebench` or a help there is
    /// someone's text and gets no answer; `/benchgate bisect` on a PR gets one saying where it
    /// works.
    #[test]
    fn a_plain_issue_takes_only_bisect() {
        let comment = comment_event;
        for text in ["/rebench", "/benchgate help", "/rebench lots", "thanks!"] {
            let plan = pr_comment(&comment(text, false));
            assert_eq!((plan.outcome, plan.effects.len()), ("ignored", 0), "{text}");
        }
        let plan = pr_comment(&comment("/benchgate bisect", false));
        assert_eq!(plan.outcome, "command");
        match &plan.effects[..] {
            [DeliveryEffect::Outbox(m)] => {
                assert_eq!(m.kind, "command.handle");
                assert_eq!(m.payload["command"]["command"], "bisect");
            }
            other => panic!("{other:?}"),
        }
        let plan = pr_comment(&comment("/benchgate bisect", true));
        assert_eq!(plan.outcome, "command_error");
    }

    fn outbox_kinds(plan: &Plan) -> Vec<(&str, Option<&str>)> {
        plan.effects
            .iter()
            .filter_map(|e| match e {
                DeliveryEffect::Outbox(m) => Some((m.kind.as_str(), m.dedupe_key.as_deref())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_merge_group_is_scheduled_and_its_destroy_replaces_a_pending_schedule() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../github/tests/fixtures/webhooks"
        );
        let read = |name: &str| {
            let body = std::fs::read(format!("{dir}/{name}")).unwrap();
            match benchgate_github::parse_event("merge_group", &body).unwrap() {
                WebhookEvent::MergeGroup(e) => e,
                other => panic!("{other:?}"),
            }
        };
        let requested = merge_group(&read("merge_group.checks_requested.json"));
        assert_eq!(requested.outcome, "merge_group_scheduled");
        let scheduled = outbox_kinds(&requested);
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].0, "merge_group.schedule");
        assert!(requested.effects.iter().any(
            |e| matches!(e, DeliveryEffect::UpsertRepository(r) if r.full_name == "octo-org/octo-repo")
        ));
        let destroyed = merge_group(&read("merge_group.destroyed.json"));
        assert_eq!(destroyed.outcome, "merge_group_destroyed");
        let cancel = outbox_kinds(&destroyed);
        assert_eq!(cancel[0].0, "merge_group.cancel");
        // The same key: a destroy arriving while the schedule waits replaces it.
        assert_eq!(cancel[0].1, scheduled[0].1);
        assert!(cancel[0].1.is_some());
    }

    #[test]
    fn only_a_push_moving_the_default_branch_is_compared() {
        assert_eq!(
            push(&push_to("feature", Some(&"a".repeat(40)))).outcome,
            "ignored"
        );
        assert_eq!(
            push(&push_to("main", None)).outcome,
            "ignored",
            "a new branch"
        );
        let plan = push(&push_to("main", Some(&"a".repeat(40))));
        assert_eq!(plan.outcome, "main_scheduled");
        let scheduled: Vec<_> = plan
            .effects
            .iter()
            .filter_map(|e| match e {
                DeliveryEffect::Outbox(m) => Some(m),
                _ => None,
            })
            .collect();
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].kind, "main.schedule");
        assert_eq!(scheduled[0].payload["before"], "a".repeat(40));
        assert!(
            scheduled[0].dedupe_key.is_none(),
            "every push is its own row"
        );
        assert!(plan.effects.iter().any(
            |e| matches!(e, DeliveryEffect::UpsertRepository(r) if r.full_name == "acme/widgets")
        ));
    }
}
