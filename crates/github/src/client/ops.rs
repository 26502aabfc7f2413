//! The GitHub calls the server makes, with the few fields it reads from each answer.

use http::{Method, StatusCode};
use serde::Deserialize;

use super::types::{
    BranchPoint, ChangedFile, CheckRun, CheckRunRequest, CheckRunUpdate, CommentUpsert,
    CommitStatusRequest, ComparedCommit, Identity, Issue, IssueComment, ListedCheckRun, Permission,
    comment_marker,
};
use super::{GitHubClient, GitHubError, JSON, RepoTarget, decode};

/// GitHub's page size ceiling; fewer round trips on long threads.
const PER_PAGE: u32 = 100;

/// The most commits [`GitHubClient::compare_commits`] returns: as many as GitHub lists for a
/// comparison asked without pages. A merge group holds far fewer.
pub const MAX_COMPARED_COMMITS: usize = 250;

impl GitHubClient {
    /// Benchgate's comment for `label` on issue/PR `number`, found by its hidden marker across
    /// all pages of comments. Only comments this client's identity wrote count: anyone can
    /// paste the marker into a comment of their own.
    pub async fn find_marked_comment(
        &self,
        repo: &RepoTarget,
        number: u64,
        label: &str,
    ) -> Result<Option<IssueComment>, GitHubError> {
        let marker = comment_marker(label);
        let me = self.identity().await?;
        let first = format!(
            "{}/issues/{number}/comments?per_page={PER_PAGE}",
            repo.path()
        );
        let mut found = None;
        self.each_page(repo, first, |page: Vec<IssueComment>| {
            // The oldest marked comment wins, so a duplicate from a past race never takes over.
            found = page
                .into_iter()
                .find(|c| me.wrote(c) && c.body.as_deref().is_some_and(|b| b.contains(&marker)));
            found.is_none()
        })
        .await?;
        Ok(found)
    }

    /// Creates or edits benchgate's one comment for `label` on PR `number`; the marker is
    /// added to `body` if missing. Safe to retry: a retry finds and edits the same comment.
    pub async fn upsert_marked_comment(
        &self,
        repo: &RepoTarget,
        number: u64,
        label: &str,
        body: &str,
    ) -> Result<CommentUpsert, GitHubError> {
        let marker = comment_marker(label);
        let body = if body.contains(&marker) {
            body.to_owned()
        } else {
            format!("{marker}\n{body}")
        };
        let payload = serde_json::json!({ "body": body });
        match self.find_marked_comment(repo, number, label).await? {
            Some(existing) => {
                let path = format!("{}/issues/comments/{}", repo.path(), existing.id);
                let comment = self
                    .call_json(repo, Method::PATCH, &path, Some(&payload))
                    .await?;
                Ok(CommentUpsert {
                    comment,
                    created: false,
                })
            }
            None => {
                let comment = self.post_comment(repo, number, &body).await?;
                Ok(CommentUpsert {
                    comment,
                    created: true,
                })
            }
        }
    }

    /// Posts a new comment (replies to commands, explanations).
    pub async fn post_comment(
        &self,
        repo: &RepoTarget,
        number: u64,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        let path = format!("{}/issues/{number}/comments", repo.path());
        let payload = serde_json::json!({ "body": body });
        self.call_json(repo, Method::POST, &path, Some(&payload))
            .await
    }

    /// The issue this identity opened with `marker` in its body, open or closed, among the
    /// repository's issues updated since `since` (RFC 3339, e.g. when the thing it reports was
    /// found; pull requests skipped), across all pages. Only issues this identity opened count:
    /// anyone can paste the marker.
    pub async fn find_marked_issue(
        &self,
        repo: &RepoTarget,
        marker: &str,
        since: &str,
    ) -> Result<Option<Issue>, GitHubError> {
        let me = self.identity().await?;
        let first = format!(
            "{}/issues?state=all&since={}&per_page={PER_PAGE}",
            repo.path(),
            encode_query(since)
        );
        let mut found = None;
        self.each_page(repo, first, |page: Vec<Issue>| {
            found = page.into_iter().find(|i| {
                i.pull_request.is_none()
                    && me.opened(i)
                    && i.body.as_deref().is_some_and(|b| b.contains(marker))
            });
            found.is_none()
        })
        .await?;
        Ok(found)
    }

    /// Opens an issue.
    pub async fn create_issue(
        &self,
        repo: &RepoTarget,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> Result<Issue, GitHubError> {
        let path = format!("{}/issues", repo.path());
        let payload = serde_json::json!({ "title": title, "body": body, "labels": labels });
        self.call_json(repo, Method::POST, &path, Some(&payload))
            .await
    }

    /// Rewrites an issue's title and body and sets its state (`open`, or `closed` as
    /// completed).
    pub async fn update_issue(
        &self,
        repo: &RepoTarget,
        number: u64,
        title: &str,
        body: &str,
        open: bool,
    ) -> Result<Issue, GitHubError> {
        let path = format!("{}/issues/{number}", repo.path());
        let payload = if open {
            serde_json::json!({ "title": title, "body": body, "state": "open" })
        } else {
            serde_json::json!({ "title": title, "body": body, "state": "closed",
                                "state_reason": "completed" })
        };
        self.call_json(repo, Method::PATCH, &path, Some(&payload))
            .await
    }

    /// Creates a check run.
    pub async fn create_check_run(
        &self,
        repo: &RepoTarget,
        request: &CheckRunRequest,
    ) -> Result<CheckRun, GitHubError> {
        let path = format!("{}/check-runs", repo.path());
        self.call_json(repo, Method::POST, &path, Some(request))
            .await
    }

    /// The check run named `name` on `sha` that this App created with `external_id`, if any:
    /// a create whose answer was lost is found again instead of made twice.
    pub async fn find_check_run(
        &self,
        repo: &RepoTarget,
        sha: &str,
        name: &str,
        external_id: &str,
    ) -> Result<Option<ListedCheckRun>, GitHubError> {
        #[derive(Deserialize)]
        struct Page {
            check_runs: Vec<ListedCheckRun>,
        }
        let app_id = match self.identity().await? {
            Identity::App(id) => id,
            Identity::User(_) => return Ok(None),
        };
        let first = format!(
            "{}/commits/{sha}/check-runs?check_name={}&filter=all&per_page={PER_PAGE}",
            repo.path(),
            encode_query(name)
        );
        let mut found = None;
        self.each_page(repo, first, |page: Page| {
            found = page.check_runs.into_iter().find(|run| {
                run.external_id.as_deref() == Some(external_id)
                    && run.app.as_ref().is_some_and(|a| a.id == app_id)
            });
            found.is_none()
        })
        .await?;
        Ok(found)
    }

    /// Sets the commit status `request.context` on `sha` (token mode's gate).
    pub async fn create_commit_status(
        &self,
        repo: &RepoTarget,
        sha: &str,
        request: &CommitStatusRequest,
    ) -> Result<(), GitHubError> {
        let path = format!("{}/statuses/{sha}", repo.path());
        self.call(repo, Method::POST, &path, Some(request), JSON)
            .await?;
        Ok(())
    }

    /// Updates a check run.
    pub async fn update_check_run(
        &self,
        repo: &RepoTarget,
        check_run_id: u64,
        update: &CheckRunUpdate,
    ) -> Result<CheckRun, GitHubError> {
        let path = format!("{}/check-runs/{check_run_id}", repo.path());
        self.call_json(repo, Method::PATCH, &path, Some(update))
            .await
    }

    /// Adds 👀 to a comment (the command was accepted). Returns false when it was already there.
    pub async fn add_eyes_reaction(
        &self,
        repo: &RepoTarget,
        comment_id: u64,
    ) -> Result<bool, GitHubError> {
        let path = format!("{}/issues/comments/{comment_id}/reactions", repo.path());
        let payload = serde_json::json!({ "content": "eyes" });
        let answer = self
            .call(repo, Method::POST, &path, Some(&payload), JSON)
            .await?;
        // 201: added; 200: this app had already reacted (a retried outbox row).
        Ok(answer.status == StatusCode::CREATED)
    }

    /// `login`'s permission on the repository. Callers treat an error as "denied".
    pub async fn collaborator_permission(
        &self,
        repo: &RepoTarget,
        login: &str,
    ) -> Result<Permission, GitHubError> {
        #[derive(Deserialize)]
        struct Answer {
            permission: String,
            #[serde(default)]
            role_name: Option<String>,
        }
        let path = format!("{}/collaborators/{login}/permission", repo.path());
        let a: Answer = self
            .call_json(repo, Method::GET, &path, None::<&()>)
            .await?;
        // `permission` folds maintain into write and triage into read; `role_name` keeps them.
        let from_role = a.role_name.as_deref().map(Permission::from_api);
        Ok(match from_role {
            Some(role) if role != Permission::None => role,
            _ => Permission::from_api(&a.permission),
        })
    }

    /// The text of `path` at `git_ref` (branch, tag or sha); `None` when the file does not exist.
    pub async fn read_file(
        &self,
        repo: &RepoTarget,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<String>, GitHubError> {
        let url = format!(
            "{}/contents/{}?ref={}",
            repo.path(),
            path.trim_start_matches('/'),
            encode_query(git_ref)
        );
        // The raw media type answers the file's bytes instead of base64 in JSON.
        match self
            .call(
                repo,
                Method::GET,
                &url,
                None::<&()>,
                "application/vnd.github.raw+json",
            )
            .await
        {
            Ok(answer) => Ok(Some(answer.body)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The files PR `number` changes (GitHub lists at most 3,000).
    pub async fn list_pr_files(
        &self,
        repo: &RepoTarget,
        number: u64,
    ) -> Result<Vec<ChangedFile>, GitHubError> {
        let first = format!("{}/pulls/{number}/files?per_page={PER_PAGE}", repo.path());
        let mut files = Vec::new();
        self.each_page(repo, first, |page: Vec<ChangedFile>| {
            files.extend(page);
            true
        })
        .await?;
        Ok(files)
    }

    /// The commits reachable from `head` and not from `base`, oldest first (GitHub's compare
    /// API, `GET /repos/{owner}/{repo}/compare/{base}...{head}`), at most
    /// [`MAX_COMPARED_COMMITS`]: the oldest ones when the comparison holds more.
    ///
    /// For a merge group the head is always ahead of its base and every commit is listed. Any
    /// other status is no error: the answer is what GitHub listed, none when the head is
    /// `behind` or `identical`, the head's own commits since the merge base when `diverged`.
    /// A sha the repository lacks is a 404 ([`GitHubError::is_not_found`]).
    pub async fn compare_commits(
        &self,
        repo: &RepoTarget,
        base: &str,
        head: &str,
    ) -> Result<Vec<ComparedCommit>, GitHubError> {
        #[derive(Deserialize)]
        struct Page {
            status: String,
            total_commits: usize,
            commits: Vec<ComparedCommit>,
        }
        // Asked without pages GitHub lists the newest 250; with pages, every commit, oldest
        // first (and the changed files on page 1 only).
        let first = format!(
            "{}/compare/{}...{}?per_page={PER_PAGE}",
            repo.path(),
            encode_query(base),
            encode_query(head)
        );
        let mut commits = Vec::new();
        let (mut status, mut total) = (String::new(), 0);
        self.each_page(repo, first, |page: Page| {
            (status, total) = (page.status, page.total_commits);
            let room = MAX_COMPARED_COMMITS - commits.len();
            commits.extend(page.commits.into_iter().take(room));
            commits.len() < MAX_COMPARED_COMMITS
        })
        .await?;
        if total > commits.len() {
            tracing::warn!(
                base,
                head,
                status,
                total,
                read = commits.len(),
                "the comparison holds more commits than benchgate reads; the newest are left out"
            );
        }
        Ok(commits)
    }

    /// Where `head` branched from `base`: their merge base, its tree and the head's, and how
    /// far each side moved since (one call to the compare API, one commit listed).
    ///
    /// Asked as `compare/{head}...{base}`: GitHub's `base_commit` is then the head, whose tree
    /// comes with it, and `merge_base_commit` the branch point with its tree; `ahead_by` counts
    /// the base's commits since, `behind_by` the head's. `None` when the two histories share
    /// no commit (GitHub's 404 "No common ancestor"); a sha the repository lacks is a 404
    /// error ([`GitHubError::is_not_found`]).
    pub async fn branch_point(
        &self,
        repo: &RepoTarget,
        base: &str,
        head: &str,
    ) -> Result<Option<BranchPoint>, GitHubError> {
        #[derive(Deserialize)]
        struct Answer {
            base_commit: TreeOf,
            merge_base_commit: TreeOf,
            ahead_by: u64,
            behind_by: u64,
        }
        #[derive(Deserialize)]
        struct TreeOf {
            sha: String,
            commit: CommitTree,
        }
        #[derive(Deserialize)]
        struct CommitTree {
            tree: Sha,
        }
        #[derive(Deserialize)]
        struct Sha {
            sha: String,
        }
        let path = format!(
            "{}/compare/{}...{}?per_page=1",
            repo.path(),
            encode_query(head),
            encode_query(base)
        );
        let answer = match self.call(repo, Method::GET, &path, None::<&()>, JSON).await {
            Ok(answer) => answer,
            Err(GitHubError::Status {
                status: 404,
                message,
                ..
            }) if message.starts_with("No common ancestor") => return Ok(None),
            Err(e) => return Err(e),
        };
        let a: Answer = decode(&Method::GET, &path, &answer.body)?;
        Ok(Some(BranchPoint {
            merge_base: a.merge_base_commit.sha,
            merge_base_tree: a.merge_base_commit.commit.tree.sha,
            head_tree: a.base_commit.commit.tree.sha,
            base_ahead_by: a.ahead_by,
            head_ahead_by: a.behind_by,
        }))
    }

    /// GETs `first` and each `rel="next"` page after it while `visit` returns true.
    async fn each_page<T, F>(
        &self,
        repo: &RepoTarget,
        first: String,
        mut visit: F,
    ) -> Result<(), GitHubError>
    where
        T: serde::de::DeserializeOwned,
        F: FnMut(T) -> bool,
    {
        let mut next = Some(first);
        while let Some(path) = next.take() {
            let answer = self
                .call(repo, Method::GET, &path, None::<&()>, JSON)
                .await?;
            let page: T = decode(&Method::GET, &path, &answer.body)?;
            if !visit(page) {
                break;
            }
            next = self.next_page(&answer.headers);
        }
        Ok(())
    }
}

/// Percent-encodes a ref for a query string (refs may contain `/`, `#`, `&`, `+`).
fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
