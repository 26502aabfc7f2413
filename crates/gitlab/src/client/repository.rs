//! What benchgate reads of a project's repository and merge requests beside the note and the
//! status: a file at a commit (`.benchgate.toml` from the base), the files a merge request
//! changes (the suite's `paths`), the merge base (the branch point), the commits between two
//! (a culprit search's range), and the 👀 on a command.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{GitlabClient, GitlabError, PER_PAGE, Project, encode};

/// Pages of a merge request's diffs read at most (10,000 files).
const MAX_DIFF_PAGES: u32 = 100;

#[derive(Deserialize)]
struct WireDiff {
    old_path: String,
    new_path: String,
}

#[derive(Deserialize)]
struct WireCommit {
    id: String,
}

/// A commit as GitLab's compare lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RangeCommit {
    pub id: String,
    /// The whole message (a merge commit's ends "See merge request group/name!N").
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub parent_ids: Vec<String>,
}

#[derive(Deserialize)]
struct WireCompare {
    commits: Vec<RangeCommit>,
    /// GitLab gave up computing the comparison: its list is not the whole range.
    #[serde(default)]
    compare_timeout: bool,
}

impl GitlabClient {
    /// The file at `path` in commit `sha`; `None` where the commit has no such file.
    pub async fn read_file(
        &self,
        project: impl Into<Project>,
        path: &str,
        sha: &str,
    ) -> Result<Option<String>, GitlabError> {
        let project = project.into();
        // GitLab wants the whole path as one segment, `.` included ("lib%2Fclass%2Erb").
        let file = encode(path, b"-_");
        let url = format!(
            "/projects/{project}/repository/files/{file}/raw?ref={}",
            encode(sha, b"-_.")
        );
        match self
            .send(Method::GET, &url, None, &format!("{path} at {sha}"))
            .await
        {
            Ok((_, text)) => Ok(Some(text)),
            Err(GitlabError::Refused { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every path the merge request changes (a renamed file under both names), across pages.
    pub async fn merge_request_files(
        &self,
        project: impl Into<Project>,
        iid: u64,
    ) -> Result<Vec<String>, GitlabError> {
        let project = project.into();
        let mut files = Vec::new();
        for page in 1..=MAX_DIFF_PAGES {
            let url = format!(
                "/projects/{project}/merge_requests/{iid}/diffs?per_page={PER_PAGE}&page={page}"
            );
            let (headers, diffs): (_, Vec<WireDiff>) = self
                .call(Method::GET, &url, None, &format!("the files of !{iid}"))
                .await?;
            for d in diffs.iter() {
                if d.old_path != d.new_path {
                    files.push(d.old_path.clone());
                }
                files.push(d.new_path.clone());
            }
            let next = headers
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if next.trim().is_empty() || diffs.is_empty() {
                return Ok(files);
            }
        }
        Err(GitlabError::Unreadable {
            what: format!("the files of !{iid}"),
            why: format!("more than {} files", MAX_DIFF_PAGES * PER_PAGE),
        })
    }

    /// The best common ancestor of `a` and `b`: where a merge request branched.
    pub async fn merge_base(
        &self,
        project: impl Into<Project>,
        a: &str,
        b: &str,
    ) -> Result<String, GitlabError> {
        let project = project.into();
        let url = format!(
            "/projects/{project}/repository/merge_base?refs[]={}&refs[]={}",
            encode(a, b"-_."),
            encode(b, b"-_.")
        );
        let (_, c): (_, WireCommit) = self
            .call(
                Method::GET,
                &url,
                None,
                &format!("the merge base of {a} and {b}"),
            )
            .await?;
        Ok(c.id)
    }

    /// The commits reachable from `to` and not from `from` (`git log from..to`), as GitLab's
    /// compare lists them.
    pub async fn compare(
        &self,
        project: impl Into<Project>,
        from: &str,
        to: &str,
    ) -> Result<Vec<RangeCommit>, GitlabError> {
        let project = project.into();
        let what = format!("the commits from {from} to {to}");
        let url = format!(
            "/projects/{project}/repository/compare?from={}&to={}",
            encode(from, b"-_."),
            encode(to, b"-_.")
        );
        let (_, c): (_, WireCompare) = self.call(Method::GET, &url, None, &what).await?;
        if c.compare_timeout {
            return Err(GitlabError::Unreadable {
                what,
                why: "GitLab timed out comparing them (compare_timeout)".to_owned(),
            });
        }
        Ok(c.commits)
    }

    /// 👀 on a merge request note: the command was read. Already there is not an error.
    pub async fn award_eyes(
        &self,
        project: impl Into<Project>,
        iid: u64,
        note: u64,
    ) -> Result<(), GitlabError> {
        let project = project.into();
        let url = format!("/projects/{project}/merge_requests/{iid}/notes/{note}/award_emoji");
        match self
            .send(
                Method::POST,
                &url,
                Some(json!({"name": "eyes"})),
                "👀 on the command",
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(GitlabError::Refused { message, .. }) if message.contains("already been taken") => {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
