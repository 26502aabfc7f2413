//! `/rebench` and `/rebench aa`: check the commenter may write to the repository, then react 👀
//! and add the rounds, or reply why not. On a fork PR the command is also the approval to run
//! its code, and covers only the heads pushed before the comment.

mod accept;
mod claim;

use benchgate_store::model::{ComparisonState, Forge, OutboxId, Priority};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Context, MarkedComment, OutboxTask, Reaction, RepoName, TaskError};

/// A command a maintainer may give; `/benchgate help` and parse errors never need a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "command")]
pub enum GuardedCommand {
    /// `/rebench` or `/rebench N`.
    Rebench { rounds: Option<u32> },
    /// `/rebench aa`.
    RebenchAa,
    /// `/benchgate accept REASON`.
    Accept { reason: String },
    /// `/benchgate unaccept`.
    Unaccept,
    /// `/benchgate profile [BENCHMARK]`.
    Profile { benchmark: Option<String> },
    /// `/benchgate bisect`, in a regression issue (`pr` is the issue's number).
    Bisect,
    /// `/benchgate claim BENCHMARK CHANGE` (the line as parsed).
    Claim { line: String },
    /// A command benchgate could not read (or one that does not work here): `reply` says why.
    /// Only someone allowed to run commands gets it; a stranger gets no answer, so nobody can
    /// make the App post a reply about their text.
    Malformed { reply: String },
}

/// Check the commenter may run `command`, then react 👀 and enqueue the jobs, or reply why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleCommand {
    pub repo: RepoName,
    pub pr: u64,
    pub comment_id: u64,
    pub commenter: String,
    /// The commenter's numeric id, where the forge asks by id (GitLab's members API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commenter_id: Option<u64>,
    /// GitHub's `author_association` of the commenter (`OWNER`, `MEMBER`, ...).
    pub association: String,
    pub command: GuardedCommand,
    /// When GitHub created the comment; a fork head pushed after it is not approved by it.
    #[serde(default)]
    pub commented_at: Option<DateTime<Utc>>,
}

impl OutboxTask for HandleCommand {
    const KIND: &'static str = "command.handle";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        None
    }

    /// Carries out an allowed command; a denied one gets a reply that says why, and a mistaken
    /// one is answered only to someone allowed to run commands.
    #[tracing::instrument(skip_all, fields(repo = %self.repo.full_name, pr = self.pr, commenter = %self.commenter))]
    async fn run(self, cx: &Context, row: OutboxId) -> Result<(), TaskError> {
        let t = self;
        let reply = |body: String| t.reply(body);
        let allowed = permitted(cx, &t).await?;
        if let GuardedCommand::Malformed { reply: why } = &t.command {
            if allowed.is_err() {
                tracing::info!(
                    "a mistaken command from someone who may not run commands; no reply"
                );
                return Ok(());
            }
            return cx.enqueue(reply(why.clone())).await;
        }
        if let Err(why) = allowed {
            tracing::info!(why = %why, "command denied");
            return cx.enqueue(reply(why)).await;
        }
        let Some(repository) = cx.store.repository_by_name(&t.repo.full_name).await? else {
            return cx
                .enqueue(reply(
                    "benchgate has not seen this repository's pull requests yet.".into(),
                ))
                .await;
        };
        if t.command == GuardedCommand::Bisect {
            return bisect_from_issue(cx, &t, &repository).await;
        }
        let comparisons = cx
            .store
            .pull_request_comparisons(repository.id, t.pr as i64)
            .await?;
        if let GuardedCommand::Accept { .. } | GuardedCommand::Unaccept = &t.command {
            return accept::run(cx, &t, &repository, comparisons).await;
        }
        if let GuardedCommand::Claim { line } = &t.command {
            return claim::run(cx, &t, line, comparisons).await;
        }
        let Some(comparison) = comparisons.into_iter().next() else {
            return cx
                .enqueue(reply(format!(
                    "there is nothing to rebench: this {} has no comparison \
                     (is there a `.benchgate.toml` on the base branch?).",
                    crate::report::change_word(t.repo.forge)
                )))
                .await;
        };
        if comparison.state == ComparisonState::Cancelled {
            return cx
                .enqueue(reply(format!(
                    "this {} is closed or a draft; reopen it or mark it ready for review to \
                     benchmark again.",
                    crate::report::change_word(t.repo.forge)
                )))
                .await;
        }
        let stored = &comparison.config;
        if stored.github.as_ref().is_some_and(|g| g.fork) {
            let newest = cx
                .store
                .pull_request_head(repository.id, t.pr as i64)
                .await?;
            if let Some(why) =
                unapproved_head(&comparison.head_sha, newest.as_ref(), t.commented_at)
            {
                tracing::info!(why = %why, "fork approval refused");
                return cx.enqueue(reply(why)).await;
            }
        }
        cx.enqueue(t.eyes()).await?;
        if let GuardedCommand::Profile { benchmark } = &t.command {
            let rows = benchmark.iter().cloned().collect();
            let asked = crate::profile::request(cx, &comparison, rows, &t.commenter, row).await?;
            tracing::info!(comparison = %comparison.id, asked, "profile asked");
            return Ok(());
        }
        let config = &stored.config;
        let rounds = match &t.command {
            GuardedCommand::Rebench { rounds } => rounds.unwrap_or(config.benchmark.rounds),
            GuardedCommand::RebenchAa => {
                let jobs =
                    crate::calibration::calibrate_comparison(&cx.domain, comparison.id).await?;
                tracing::info!(comparison = %comparison.id, jobs = jobs.len(), "A/A sessions enqueued");
                config.benchmark.rounds
            }
            GuardedCommand::Accept { .. }
            | GuardedCommand::Unaccept
            | GuardedCommand::Profile { .. }
            | GuardedCommand::Claim { .. }
            | GuardedCommand::Malformed { .. }
            | GuardedCommand::Bisect => {
                unreachable!("handled above")
            }
        };
        let job = cx.job(rounds, Priority::INTERACTIVE, row, comparison.id);
        let jobs = cx.store.add_rounds(comparison.id, &[job]).await?;
        tracing::info!(comparison = %comparison.id, rounds, jobs = jobs.len(), "rounds added");
        Ok(())
    }
}

/// The label of the reply to comment `comment_id`: one reply per command, however often the
/// write is retried.
pub fn reply_label(comment_id: u64) -> String {
    format!("reply-{comment_id}")
}

/// Associations trusted without asking GitHub for the commenter's permission. Only the owner:
/// an org member or a collaborator may have read access only, and a command can run a fork's code.
const TRUSTED: [&str; 1] = ["OWNER"];

impl HandleCommand {
    /// 👀 on the command's comment: it was read and is being carried out.
    pub(crate) fn eyes(&self) -> Reaction {
        Reaction {
            repo: self.repo.clone(),
            comment_id: self.comment_id,
            pr: Some(self.pr),
        }
    }

    /// The reply to this command: one per command, however often the write is retried.
    pub(crate) fn reply(&self, body: String) -> MarkedComment {
        MarkedComment {
            repo: self.repo.clone(),
            pr: self.pr,
            label: reply_label(self.comment_id),
            body: format!("@{} {body}", self.commenter),
        }
    }
}

/// `/benchgate bisect` in issue `t.pr`: the culprit search of the episode the issue was opened
/// for, over the episode's range.
async fn bisect_from_issue(
    cx: &Context,
    t: &HandleCommand,
    repository: &benchgate_store::model::Repository,
) -> Result<(), TaskError> {
    let episode = cx
        .store
        .regressions(repository.id)
        .await?
        .into_iter()
        .find(|e| e.issue_number == Some(t.pr as i64));
    let Some(episode) = episode else {
        return cx
            .enqueue(
                t.reply(
                    "`/benchgate bisect` works in a regression issue benchgate opened; this issue \
                 is not one."
                        .into(),
                ),
            )
            .await;
    };
    if cx.config.bisect_max_rounds == 0 {
        return cx
            .enqueue(
                t.reply(
                    "culprit searches are off on this benchgate server (`--bisect-max-rounds 0`)."
                        .into(),
                ),
            )
            .await;
    }
    let (search, new) = cx
        .store
        .create_bisection(&benchgate_store::model::NewBisection {
            series: episode.series.clone(),
            benchmark: episode.benchmark.clone(),
            metric: episode.metric.clone(),
            regression_id: Some(episode.id),
            source_comparison: None,
            good_sha: episode.base_sha.clone(),
            bad_sha: episode.head_sha.clone(),
            requested_by: Some(t.commenter.clone()),
        })
        .await?;
    tracing::info!(
        search = search.id,
        new,
        episode = episode.id,
        "culprit search asked for"
    );
    cx.enqueue(t.eyes()).await?;
    if !new {
        return cx
            .enqueue(t.reply(format!(
                "a search of this range is already running (search {}); this issue will name \
                 the commit when it ends.",
                search.id
            )))
            .await;
    }
    Ok(())
}

/// Why a maintainer's command does not approve the fork head it would run, if it does not: a
/// head that arrived after the comment (or one not scheduled yet) is code nobody approved.
fn unapproved_head(
    scheduled: &str,
    newest: Option<&benchgate_store::model::PullRequestHead>,
    commented_at: Option<DateTime<Utc>>,
) -> Option<String> {
    let newest = newest?;
    let short = benchgate_stats::words::short_sha;
    if newest.head_sha != scheduled {
        return Some(format!(
            "commit {} was pushed and is not scheduled yet, so nothing ran. Review it and \
             comment `/rebench` again in a minute.",
            short(&newest.head_sha)
        ));
    }
    match commented_at {
        Some(at) if newest.received_at > at => Some(format!(
            "commit {} was pushed at {} UTC, after your comment, so nothing ran: an approval \
             covers only the commits you could see. Review it and comment `/rebench` again.",
            short(&newest.head_sha),
            newest.received_at.format("%H:%M:%S")
        )),
        _ => None,
    }
}

/// `Ok(Ok(()))` when allowed, `Ok(Err(reason))` when denied. A failed lookup is a denial.
async fn permitted(cx: &Context, t: &HandleCommand) -> Result<Result<(), String>, TaskError> {
    use crate::forge::Permission;
    if TRUSTED.contains(&t.association.as_str()) {
        return Ok(Ok(()));
    }
    let forge = cx.forge(&t.repo)?;
    Ok(match forge.permission(&t.commenter, t.commenter_id).await {
        Permission::Allowed => Ok(()),
        Permission::Denied(level) => Err(match t.repo.forge {
            Forge::GitHub => denied(&t.repo.full_name, &level),
            Forge::GitLab => gitlab_denied(&t.repo.full_name, &level),
        }),
        Permission::Unknown(e) => {
            tracing::warn!(error = %e, "permission lookup failed; denying");
            Err(format!(
                "benchgate could not check your permission on {} ({} answered: {e}), \
                     so the command was not run. Please try again later.",
                t.repo.full_name,
                match t.repo.forge {
                    Forge::GitHub => "GitHub",
                    Forge::GitLab => "GitLab",
                }
            ))
        }
    })
}

/// The reply to a GitLab commenter below Developer.
fn gitlab_denied(project: &str, role: &str) -> String {
    format!(
        "only Developers, Maintainers and Owners of {project} can run benchmark commands; your \
         role is {role}."
    )
}

/// The reply to a commenter without write permission.
fn denied(repo: &str, permission: &str) -> String {
    format!(
        "only people with write, maintain or admin permission on {repo} can run benchmark \
         commands; your permission is {permission}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::PullRequestHead;
    use chrono::TimeZone;

    fn command(commenter: &str) -> HandleCommand {
        HandleCommand {
            repo: crate::tasks::RepoName::github("acme/widgets", Some(7)),
            pr: 42,
            comment_id: 9001,
            commenter: commenter.into(),
            commenter_id: None,
            association: "CONTRIBUTOR".into(),
            command: GuardedCommand::Rebench { rounds: None },
            commented_at: None,
        }
    }

    /// The replies a commenter reads when a command does not run (CONVENTIONS 21).
    #[test]
    fn refusals_read_as_pinned() {
        let reply = |body: String| {
            let c = command("octocat").reply(body);
            format!("label: {}\n{}", c.label, c.body)
        };
        insta::assert_snapshot!("reply_denied", reply(denied("acme/widgets", "read")));
        insta::assert_snapshot!(
            "reply_denied_gitlab",
            reply(gitlab_denied("gitlab.example/acme/widgets", "Guest (10)"))
        );
        let at = Some(Utc.timestamp_opt(1_700_000_010, 0).unwrap());
        let a = "a".repeat(40);
        let late = unapproved_head(&a, Some(&head(&a, 20)), at).unwrap();
        insta::assert_snapshot!("reply_fork_head_after_the_comment", reply(late));
        let pending = unapproved_head(&a, Some(&head(&"b".repeat(40), 0)), at).unwrap();
        insta::assert_snapshot!("reply_fork_head_not_scheduled", reply(pending));
    }

    fn head(sha: &str, secs: i64) -> PullRequestHead {
        PullRequestHead {
            head_sha: sha.into(),
            received_at: Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap(),
        }
    }

    #[test]
    fn an_approval_covers_only_heads_pushed_before_the_comment() {
        let at = Some(Utc.timestamp_opt(1_700_000_010, 0).unwrap());
        let a = "a".repeat(40);
        assert_eq!(unapproved_head(&a, Some(&head(&a, 0)), at), None);
        let late = unapproved_head(&a, Some(&head(&a, 20)), at).unwrap();
        assert!(late.contains("after your comment"), "{late}");
        assert!(late.contains("aaaaaaa"), "{late}");
        let pending = unapproved_head(&a, Some(&head(&"b".repeat(40), 0)), at).unwrap();
        assert!(
            pending.contains("bbbbbbb") && pending.contains("not scheduled"),
            "{pending}"
        );
        // No recorded head (a comparison from before heads were recorded): nothing to compare.
        assert_eq!(unapproved_head(&a, None, at), None);
    }
}
