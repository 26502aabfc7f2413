//! Issues benchgate raises for regressions on the default branch: found again by the label it
//! gives them and the marker in their description, opened, edited and closed.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{GitlabClient, GitlabError, PER_PAGE, Project, encode};

/// Pages of labelled issues read while looking for a marker (10,000 issues).
const MAX_ISSUE_PAGES: u32 = 100;

/// An issue as benchgate reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Issue {
    /// The issue's number inside its project (`#12`).
    pub iid: u64,
    /// `opened` or `closed`.
    pub state: String,
    pub web_url: String,
    #[serde(default)]
    pub description: Option<String>,
}

impl GitlabClient {
    /// The issue labelled `label` whose description holds `marker`, open or closed.
    pub async fn find_marked_issue(
        &self,
        project: impl Into<Project>,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>, GitlabError> {
        let project = project.into();
        for page in 1..=MAX_ISSUE_PAGES {
            let url = format!(
                "/projects/{project}/issues?labels={}&state=all&per_page={PER_PAGE}&page={page}",
                encode(label, b"-_.")
            );
            let (headers, issues): (_, Vec<Issue>) = self
                .call(Method::GET, &url, None, "the project's issues")
                .await?;
            if let Some(found) = issues
                .iter()
                .find(|i| i.description.as_deref().is_some_and(|d| d.contains(marker)))
            {
                return Ok(Some(found.clone()));
            }
            let next = headers
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if next.trim().is_empty() || issues.is_empty() {
                break;
            }
        }
        Ok(None)
    }

    /// A new issue with `labels`.
    pub async fn create_issue(
        &self,
        project: impl Into<Project>,
        title: &str,
        description: &str,
        labels: &[String],
    ) -> Result<Issue, GitlabError> {
        let project = project.into();
        let body = json!({"title": title, "description": description, "labels": labels.join(",")});
        let url = format!("/projects/{project}/issues");
        let (_, issue): (_, Issue) = self
            .call(Method::POST, &url, Some(body), "a new issue")
            .await?;
        Ok(issue)
    }

    /// Rewrites the issue, and opens or closes it (`state_event`) when its state differs.
    pub async fn update_issue(
        &self,
        project: impl Into<Project>,
        iid: u64,
        title: &str,
        description: &str,
        open: bool,
    ) -> Result<Issue, GitlabError> {
        let project = project.into();
        let body = json!({
            "title": title,
            "description": description,
            "state_event": if open { "reopen" } else { "close" },
        });
        let url = format!("/projects/{project}/issues/{iid}");
        let (_, issue): (_, Issue) = self
            .call(Method::PUT, &url, Some(body), &format!("issue #{iid}"))
            .await?;
        Ok(issue)
    }
}
