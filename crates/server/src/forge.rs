//! The forge seam: what the PR loop asks of a forge (the config file at a commit, the files a
//! change touches, where it branched, the one comment benchgate owns, the gate on the head),
//! answered by GitHub's client or GitLab's. A task names the repository; [`ForgeRepo`] is that
//! repository on its forge, and the only thing the loop's tasks call.

use std::sync::Arc;

use benchgate_github::client::{
    BranchPoint, ChangedFile, CheckConclusion, CheckStatus, ComparedCommit, GitHubClient,
    ListedCheckRun, RepoTarget, comment_marker,
};
use benchgate_gitlab::client::{
    CheckAnswer, DEVELOPER, GitlabClient, GitlabError, StatusState, StatusUpdate,
};
use benchgate_store::model::Forge;
use tokio::sync::OnceCell;

use crate::commit_check::{self, CheckWrite};

/// Why a forge call did not happen or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error(transparent)]
    GitHub(#[from] benchgate_github::client::GitHubError),
    #[error(transparent)]
    GitLab(#[from] GitlabError),
    /// The repository's forge has no credentials on this server (yet).
    #[error("no {forge} credentials are configured; the write waits until they are")]
    NoCredentials { forge: &'static str },
    /// The repository is not on the instance this server is configured for.
    #[error("{0}")]
    Elsewhere(String),
}

impl ForgeError {
    /// Whether the same call may succeed later (rate limits, 5xx, credentials to come).
    pub fn is_retryable(&self) -> bool {
        match self {
            ForgeError::GitHub(e) => e.is_retryable(),
            ForgeError::GitLab(e) => e.is_transient(),
            ForgeError::NoCredentials { .. } => true,
            ForgeError::Elsewhere(_) => false,
        }
    }
}

/// The label benchgate's regression issues carry on GitLab, where issues are searched by label.
pub const ISSUE_LABEL: &str = "benchgate";

/// A GitLab instance benchgate acts on: its client, its host (the first part of every GitLab
/// repository's name) and the token's user, read once, who owns benchgate's notes.
pub struct GitlabForge {
    pub client: GitlabClient,
    pub host: String,
    bot: OnceCell<u64>,
}

impl std::fmt::Debug for GitlabForge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitlabForge")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl GitlabForge {
    pub fn new(client: GitlabClient, host: String) -> Self {
        GitlabForge {
            client,
            host,
            bot: OnceCell::new(),
        }
    }

    /// The token's user id: the only author whose notes benchgate edits.
    async fn bot(&self) -> Result<u64, GitlabError> {
        self.bot
            .get_or_try_init(|| async { self.client.current_user().await.map(|u| u.id) })
            .await
            .copied()
    }

    /// The project path of a repository named `host/group/name` on this instance.
    fn project_of<'a>(&self, full_name: &'a str) -> Option<&'a str> {
        full_name
            .strip_prefix(self.host.as_str())?
            .strip_prefix('/')
            .filter(|p| !p.is_empty())
    }
}

/// A repository on its forge, ready to be called.
pub enum ForgeRepo<'a> {
    GitHub {
        client: &'a GitHubClient,
        target: RepoTarget,
    },
    GitLab {
        forge: &'a GitlabForge,
        /// `group/name`, which GitLab takes URL-encoded as the project's `:id`.
        project: String,
    },
}

/// The forges a server is configured for.
#[derive(Clone, Default)]
pub struct Forges {
    /// `None` until GitHub credentials exist (flags, or an App stored by `/github/setup`).
    pub github: Option<GitHubClient>,
    pub gitlab: Option<Arc<GitlabForge>>,
}

impl Forges {
    /// Repository `full_name` (`installation` for GitHub App tokens) on `forge`. A forge this
    /// server has no credentials for is an error the outbox tries again: credentials may come
    /// (`/github/setup`), and the row must not be lost meanwhile.
    pub fn repo(
        &self,
        forge: Forge,
        full_name: &str,
        installation: Option<u64>,
    ) -> Result<ForgeRepo<'_>, ForgeError> {
        match forge {
            Forge::GitHub => {
                let client = self
                    .github
                    .as_ref()
                    .ok_or(ForgeError::NoCredentials { forge: "GitHub" })?;
                Ok(ForgeRepo::GitHub {
                    client,
                    target: RepoTarget::new(installation, full_name)?,
                })
            }
            Forge::GitLab => {
                let forge = self
                    .gitlab
                    .as_deref()
                    .ok_or(ForgeError::NoCredentials { forge: "GitLab" })?;
                let project = forge.project_of(full_name).ok_or_else(|| {
                    ForgeError::Elsewhere(format!(
                        "{full_name} is not a project on the configured GitLab ({})",
                        forge.host
                    ))
                })?;
                Ok(ForgeRepo::GitLab {
                    forge,
                    project: project.to_owned(),
                })
            }
        }
    }
}

impl ForgeRepo<'_> {
    /// `path` at `git_ref`; `None` where it has no such file.
    pub async fn read_file(&self, path: &str, git_ref: &str) -> Result<Option<String>, ForgeError> {
        Ok(match self {
            ForgeRepo::GitHub { client, target } => client.read_file(target, path, git_ref).await?,
            ForgeRepo::GitLab { forge, project } => {
                forge
                    .client
                    .read_file(project.as_str(), path, git_ref)
                    .await?
            }
        })
    }

    /// The files change `number` touches (a rename under both names).
    pub async fn changed_files(&self, number: u64) -> Result<Vec<ChangedFile>, ForgeError> {
        Ok(match self {
            ForgeRepo::GitHub { client, target } => client.list_pr_files(target, number).await?,
            ForgeRepo::GitLab { forge, project } => forge
                .client
                .merge_request_files(project.as_str(), number)
                .await?
                .into_iter()
                .map(|filename| ChangedFile {
                    filename,
                    status: "modified".to_owned(),
                    previous_filename: None,
                })
                .collect(),
        })
    }

    /// Where change `number` (head `head`) branched from its base, whose tip is `base_tip`;
    /// `None` when the two histories share no commit.
    pub async fn branch_point(
        &self,
        number: u64,
        base_tip: &str,
        head: &str,
    ) -> Result<Option<BranchPoint>, ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                Ok(client.branch_point(target, base_tip, head).await?)
            }
            // GitLab diffs a merge request against `diff_refs.base_sha`, its merge base; it
            // says neither how far the target moved on nor the trees.
            ForgeRepo::GitLab { forge, project } => {
                let mr = forge.client.merge_request(project.as_str(), number).await?;
                Ok(mr.base_sha.map(|merge_base| BranchPoint {
                    merge_base,
                    merge_base_tree: String::new(),
                    head_tree: String::new(),
                    base_ahead_by: 0,
                    head_ahead_by: 0,
                }))
            }
        }
    }

    /// Writes the comment carrying `label`'s marker on change `number`, editing the one
    /// benchgate wrote before; returns its id.
    pub async fn upsert_comment(
        &self,
        number: u64,
        label: &str,
        body: &str,
    ) -> Result<i64, ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                let upsert = client
                    .upsert_marked_comment(target, number, label, body)
                    .await?;
                tracing::debug!(
                    comment = upsert.comment.id,
                    created = upsert.created,
                    "comment written"
                );
                Ok(upsert.comment.id as i64)
            }
            ForgeRepo::GitLab { forge, project } => {
                let marker = comment_marker(label);
                let body = if body.contains(&marker) {
                    body.to_owned()
                } else {
                    format!("{marker}\n{body}")
                };
                let bot = forge.bot().await?;
                let id = forge
                    .client
                    .upsert_note(project.as_str(), number, bot, &marker, &body)
                    .await?;
                Ok(id as i64)
            }
        }
    }

    /// Writes the gate on change `number`'s head: a check run (or a commit status with a
    /// single token) on GitHub, onto check run `existing` when given; a commit status in the
    /// merge request's pipeline on GitLab. Returns the check run's id, if one was written.
    pub async fn write_gate(
        &self,
        number: Option<u64>,
        w: &CheckWrite,
        existing: Option<i64>,
    ) -> Result<Option<i64>, ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                Ok(commit_check::write(client, target, w, existing).await?)
            }
            ForgeRepo::GitLab { forge, project } => {
                let status = StatusUpdate {
                    state: gitlab_state(w.status, w.conclusion),
                    name: w.name.clone(),
                    description: w.title.clone(),
                    target_url: w.details_url.clone(),
                };
                // The merge request's head pipeline, when the head is still the one measured;
                // a status on a commit an MR has moved past goes on the commit alone.
                let mut current = None;
                let pipeline = match number {
                    Some(iid) => {
                        let mr = forge.client.merge_request(project.as_str(), iid).await?;
                        let is_head = mr.head_sha == w.head_sha;
                        current = is_head.then_some(iid);
                        is_head.then_some(mr.pipeline_id).flatten()
                    }
                    None => None,
                };
                forge
                    .client
                    .set_status(project.as_str(), &w.head_sha, pipeline, &status)
                    .await?;
                if let (Some(iid), Some(answer)) = (current, check_answer(status.state)) {
                    answer_status_checks(forge, project, iid, w, answer).await?;
                }
                Ok(None)
            }
        }
    }

    /// What `commenter` may do here: run benchmark commands (they run code, a fork's too, or
    /// change a verdict) with write access on GitHub, or Developer and above on GitLab, which
    /// knows members by id.
    pub async fn permission(&self, commenter: &str, commenter_id: Option<u64>) -> Permission {
        match self {
            ForgeRepo::GitHub { client, target } => {
                match client.collaborator_permission(target, commenter).await {
                    Ok(p) if p.can_write() => Permission::Allowed,
                    Ok(p) => Permission::Denied(p.name().to_owned()),
                    Err(e) => Permission::Unknown(e.to_string()),
                }
            }
            ForgeRepo::GitLab { forge, project } => {
                let Some(user) = commenter_id else {
                    return Permission::Unknown("the note names no user id".to_owned());
                };
                match forge.client.access_level(project.as_str(), user).await {
                    Ok(Some(level)) if level >= DEVELOPER => Permission::Allowed,
                    Ok(level) => Permission::Denied(gitlab_role(level)),
                    Err(e) => Permission::Unknown(e.to_string()),
                }
            }
        }
    }

    /// 👀 on comment `comment_id` of change `number`: the command was read.
    pub async fn add_eyes(&self, number: Option<u64>, comment_id: u64) -> Result<(), ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                client.add_eyes_reaction(target, comment_id).await?;
                Ok(())
            }
            ForgeRepo::GitLab { forge, project } => {
                let iid = number.ok_or_else(|| {
                    ForgeError::Elsewhere("a GitLab note's reaction needs its merge request".into())
                })?;
                Ok(forge
                    .client
                    .award_eyes(project.as_str(), iid, comment_id)
                    .await?)
            }
        }
    }

    /// The issue holding `marker`, opened at `since` (RFC 3339) or later; on GitLab, among
    /// the issues labelled [`ISSUE_LABEL`].
    pub async fn find_issue(&self, marker: &str, since: &str) -> Result<Option<u64>, ForgeError> {
        Ok(match self {
            ForgeRepo::GitHub { client, target } => client
                .find_marked_issue(target, marker, since)
                .await?
                .map(|i| i.number),
            ForgeRepo::GitLab { forge, project } => forge
                .client
                .find_marked_issue(project.as_str(), ISSUE_LABEL, marker)
                .await?
                .map(|i| i.iid),
        })
    }

    /// A new issue with `labels` (and [`ISSUE_LABEL`] on GitLab, where it is found again by
    /// it); returns its number.
    pub async fn create_issue(
        &self,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> Result<u64, ForgeError> {
        Ok(match self {
            ForgeRepo::GitHub { client, target } => {
                client
                    .create_issue(target, title, body, labels)
                    .await?
                    .number
            }
            ForgeRepo::GitLab { forge, project } => {
                let mut labels = labels.to_vec();
                if !labels.iter().any(|l| l == ISSUE_LABEL) {
                    labels.push(ISSUE_LABEL.to_owned());
                }
                forge
                    .client
                    .create_issue(project.as_str(), title, body, &labels)
                    .await?
                    .iid
            }
        })
    }

    /// Rewrites issue `number`, open or closed as `open` says.
    pub async fn update_issue(
        &self,
        number: u64,
        title: &str,
        body: &str,
        open: bool,
    ) -> Result<(), ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                client
                    .update_issue(target, number, title, body, open)
                    .await?;
            }
            ForgeRepo::GitLab { forge, project } => {
                forge
                    .client
                    .update_issue(project.as_str(), number, title, body, open)
                    .await?;
            }
        }
        Ok(())
    }

    /// The commits of `head` since `base`, as the forge's compare lists them: what merge
    /// queues and culprit searches read.
    pub async fn compare_commits(
        &self,
        base: &str,
        head: &str,
    ) -> Result<Vec<ComparedCommit>, ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } => {
                Ok(client.compare_commits(target, base, head).await?)
            }
            ForgeRepo::GitLab { forge, project } => Ok(forge
                .client
                .compare(project.as_str(), base, head)
                .await?
                .into_iter()
                .map(|c| ComparedCommit {
                    sha: c.id,
                    message: c.message,
                    parents: c.parent_ids,
                })
                .collect()),
        }
    }

    /// Whether the forge answered that it does not know a commit or the repository.
    pub fn is_not_found(e: &ForgeError) -> bool {
        match e {
            ForgeError::GitHub(e) => e.is_not_found(),
            ForgeError::GitLab(GitlabError::Refused { status, .. }) => *status == 404,
            _ => false,
        }
    }

    /// The check run `name` with `external_id` on `head`, where there are check runs (GitHub
    /// with an App): a create whose answer was lost is found again.
    pub async fn find_check_run(
        &self,
        head: &str,
        name: &str,
        external_id: &str,
    ) -> Result<Option<ListedCheckRun>, ForgeError> {
        match self {
            ForgeRepo::GitHub { client, target } if client.is_app() => Ok(client
                .find_check_run(target, head, name, external_id)
                .await?),
            _ => Ok(None),
        }
    }

    /// Whether the gate lives in check runs this server can look up (GitHub with an App).
    pub fn has_check_runs(&self) -> bool {
        matches!(self, ForgeRepo::GitHub { client, .. } if client.is_app())
    }
}

/// Answers the merge request's external status checks named as the gate (Ultimate; none
/// elsewhere) with its decided state. GitLab fails a check pending for two minutes, so a
/// benchmark that runs longer shows it failed until this answer, which comes when the gate is
/// decided; "Retry" on the check asks benchgate again (`/webhooks/gitlab/status-check`).
async fn answer_status_checks(
    forge: &GitlabForge,
    project: &str,
    iid: u64,
    w: &CheckWrite,
    answer: CheckAnswer,
) -> Result<(), ForgeError> {
    // Asked on every decided gate, never remembered: a project may move to Ultimate at any
    // time, and servers sharing one database must answer alike. One GET per decision.
    let Some(checks) = forge.client.status_checks(project, iid).await? else {
        return Ok(());
    };
    for check in checks.iter().filter(|c| c.name == w.name) {
        match forge
            .client
            .answer_status_check(project, iid, &w.head_sha, check.id, answer)
            .await
        {
            Ok(()) => {
                tracing::info!(
                    project,
                    mr = iid,
                    check = check.id,
                    answer = answer.as_str(),
                    "status check answered"
                );
            }
            Err(e) if e.is_transient() => return Err(e.into()),
            // The merge request moved on (409) or the check went away: nothing to answer.
            Err(e) => {
                tracing::warn!(project, mr = iid, check = check.id, error = %e, "status check not answered");
            }
        }
    }
    Ok(())
}

/// A decided gate's answer to a status check; `None` while it is not decided (a pending
/// answer would fail in two minutes) or when a maintainer must act.
fn check_answer(state: StatusState) -> Option<CheckAnswer> {
    match state {
        StatusState::Success => Some(CheckAnswer::Passed),
        StatusState::Failed => Some(CheckAnswer::Failed),
        StatusState::Pending | StatusState::Running | StatusState::Canceled => None,
    }
}

/// What a commenter may do in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    Allowed,
    /// Not enough: the forge's own name for what they have (`read`, `Reporter (20)`).
    Denied(String),
    /// The forge could not say; a denial, with its answer.
    Unknown(String),
}

/// A GitLab access level as its members page names it.
fn gitlab_role(level: Option<u32>) -> String {
    match level {
        None => "none (not a member)".to_owned(),
        Some(10) => "Guest (10)".to_owned(),
        Some(15) => "Planner (15)".to_owned(),
        Some(20) => "Reporter (20)".to_owned(),
        Some(5) => "Minimal Access (5)".to_owned(),
        Some(n) => format!("access level {n}"),
    }
}

/// A check's state as a GitLab commit status. GitLab has no neutral state: a neutral check
/// (no result yet, no config) does not block, so it is `success` with its title saying why;
/// what a maintainer must act on (a fork waiting for approval) stays `pending`.
fn gitlab_state(status: CheckStatus, conclusion: Option<CheckConclusion>) -> StatusState {
    match (status, conclusion) {
        (CheckStatus::Queued, _) => StatusState::Pending,
        (CheckStatus::InProgress, _) => StatusState::Running,
        (CheckStatus::Completed, Some(CheckConclusion::Failure | CheckConclusion::TimedOut)) => {
            StatusState::Failed
        }
        (CheckStatus::Completed, Some(CheckConclusion::Cancelled)) => StatusState::Canceled,
        (CheckStatus::Completed, Some(CheckConclusion::ActionRequired)) => StatusState::Pending,
        (CheckStatus::Completed, _) => StatusState::Success,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_gate_fails_and_nothing_else_blocks_but_a_wait() {
        use CheckConclusion::*;
        let done = |c| gitlab_state(CheckStatus::Completed, Some(c));
        assert_eq!(done(Failure), StatusState::Failed);
        assert_eq!(done(TimedOut), StatusState::Failed);
        assert_eq!(done(Success), StatusState::Success);
        assert_eq!(done(Neutral), StatusState::Success);
        assert_eq!(done(Skipped), StatusState::Success);
        assert_eq!(done(Cancelled), StatusState::Canceled);
        assert_eq!(done(ActionRequired), StatusState::Pending);
        assert_eq!(
            gitlab_state(CheckStatus::Queued, None),
            StatusState::Pending
        );
        assert_eq!(
            gitlab_state(CheckStatus::InProgress, None),
            StatusState::Running
        );
    }

    #[test]
    fn a_repository_is_a_project_only_on_its_own_instance() {
        let client = GitlabClient::new("https://gitlab.example:8443", "t").unwrap();
        let forge = GitlabForge::new(client, "gitlab.example:8443".into());
        assert_eq!(
            forge.project_of("gitlab.example:8443/group/sub/name"),
            Some("group/sub/name")
        );
        assert_eq!(forge.project_of("gitlab.example/group/name"), None);
        assert_eq!(forge.project_of("gitlab.example:8443/"), None);
        assert_eq!(forge.project_of("acme/widgets"), None);
    }
}
