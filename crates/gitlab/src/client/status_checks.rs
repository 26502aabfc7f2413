//! External status checks (GitLab Ultimate): a check a project adds under Settings → Merge
//! requests, which GitLab shows on every merge request and, with "Status checks must succeed",
//! blocks the merge until its service answers `passed`. GitLab fails a check left `pending` for
//! two minutes, so benchgate answers only a decided gate (`passed` or `failed`), on the head it
//! measured; a benchmark that takes longer shows as failed until then.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{GitlabClient, GitlabError, PER_PAGE, Project};

/// Status checks listed per merge request before giving up (GitLab caps a project's at 50).
const MAX_PAGES: u32 = 5;

/// One external status check as a merge request lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StatusCheck {
    pub id: u64,
    pub name: String,
    pub external_url: String,
    /// `pending`, `passed` or `failed` for the merge request's head.
    pub status: String,
}

/// One of a project's external status checks, as its settings list them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProjectStatusCheck {
    pub id: u64,
    pub name: String,
    pub external_url: String,
    /// Whether GitLab signs its requests (a shared secret is set); absent before GitLab 16.
    #[serde(default)]
    pub hmac: bool,
}

/// What benchgate answers a status check with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckAnswer {
    Passed,
    Failed,
}

impl CheckAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckAnswer::Passed => "passed",
            CheckAnswer::Failed => "failed",
        }
    }
}

impl GitlabClient {
    /// The external status checks that apply to merge request `iid`; `None` where the project
    /// cannot have them (below Ultimate GitLab answers these calls 401) or the merge request
    /// is gone (404).
    pub async fn status_checks(
        &self,
        project: impl Into<Project>,
        iid: u64,
    ) -> Result<Option<Vec<StatusCheck>>, GitlabError> {
        let project = project.into();
        let mut all = Vec::new();
        for page in 1..=MAX_PAGES {
            let path = format!(
                "/projects/{project}/merge_requests/{iid}/status_checks?per_page={PER_PAGE}&page={page}"
            );
            let answer = self
                .call::<Vec<StatusCheck>>(Method::GET, &path, None, "the status checks")
                .await;
            let (headers, list) = match answer {
                Ok(found) => found,
                Err(GitlabError::Refused {
                    status: 401 | 404, ..
                }) => return Ok(None),
                Err(e) => return Err(e),
            };
            let done = list.is_empty()
                || headers
                    .get("x-next-page")
                    .and_then(|v| v.to_str().ok())
                    .is_none_or(|n| n.trim().is_empty());
            all.extend(list);
            if done {
                break;
            }
        }
        Ok(Some(all))
    }

    /// The project's external status checks; `None` below Ultimate (GitLab's 401).
    pub async fn project_status_checks(
        &self,
        project: impl Into<Project>,
    ) -> Result<Option<Vec<ProjectStatusCheck>>, GitlabError> {
        let project = project.into();
        let path = format!("/projects/{project}/external_status_checks?per_page={PER_PAGE}");
        match self
            .call::<Vec<ProjectStatusCheck>>(Method::GET, &path, None, "the status checks")
            .await
        {
            Ok((_, list)) => Ok(Some(list)),
            Err(GitlabError::Refused { status: 401, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Answers status check `check` of merge request `iid` for head `sha`. GitLab refuses
    /// (409) a head the merge request has moved past.
    pub async fn answer_status_check(
        &self,
        project: impl Into<Project>,
        iid: u64,
        sha: &str,
        check: u64,
        answer: CheckAnswer,
    ) -> Result<(), GitlabError> {
        let project = project.into();
        let path = format!("/projects/{project}/merge_requests/{iid}/status_check_responses");
        let body =
            json!({ "sha": sha, "external_status_check_id": check, "status": answer.as_str() });
        self.call::<serde_json::Value>(Method::POST, &path, Some(body), "a status check's answer")
            .await?;
        Ok(())
    }
}
