//! The GitLab REST v4 calls benchgate makes, with the few fields it reads from each answer:
//! the bot's own note on a merge request (found again by marker and author, edited in place),
//! the commit status on the merge request's pipeline, a commenter's access level, the merge
//! request's head, branch point and pipeline. Authenticated with a project, group or personal
//! access token (`PRIVATE-TOKEN`); the base URL is the instance's, so self-managed hosts work.

mod error;
mod issues;
mod repository;
mod status_checks;

use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

pub use error::GitlabError;
pub use issues::Issue;
pub use repository::RangeCommit;
pub use status_checks::{CheckAnswer, ProjectStatusCheck, StatusCheck};

use crate::events::UserRef;

/// Access levels (members API): Guest 10, Reporter 20, Developer 30, Maintainer 40, Owner 50.
pub const DEVELOPER: u32 = 30;
/// The longest commit-status description GitLab keeps.
pub const MAX_STATUS_DESCRIPTION: usize = 255;
/// Notes asked for per page: GitLab's maximum.
const PER_PAGE: u32 = 100;
/// Pages of notes read before giving up the search (10,000 notes).
const MAX_NOTE_PAGES: u32 = 100;

/// A project as the API's `:id` takes it: its numeric id, or its path (`group/sub/name`), which
/// GitLab accepts URL-encoded; a path is what a repository row keeps, an id what a hook sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project(String);

impl From<u64> for Project {
    fn from(id: u64) -> Self {
        Project(id.to_string())
    }
}

impl From<&str> for Project {
    fn from(path: &str) -> Self {
        Project(project_segment(path))
    }
}

impl From<&Project> for Project {
    fn from(p: &Project) -> Self {
        p.clone()
    }
}

/// The encoded `:id`, ready for a path.
impl std::fmt::Display for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A GitLab instance and the token benchgate acts with there.
#[derive(Clone)]
pub struct GitlabClient {
    http: reqwest::Client,
    /// `https://gitlab.example/api/v4`.
    api: String,
    token: String,
}

impl std::fmt::Debug for GitlabClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitlabClient")
            .field("api", &self.api)
            .field("token", &"[redacted]")
            .finish()
    }
}

/// What benchgate reads of a merge request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeRequestInfo {
    pub head_sha: String,
    /// `diff_refs.base_sha`: the merge base GitLab diffs against.
    pub base_sha: Option<String>,
    /// The head pipeline's id: where the status must go (`pipeline_id`), or GitLab starts an
    /// external pipeline beside it that can hide a failed one.
    pub pipeline_id: Option<u64>,
}

/// The commit status states GitLab takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusState {
    Pending,
    Running,
    Success,
    Failed,
    Canceled,
}

impl StatusState {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusState::Pending => "pending",
            StatusState::Running => "running",
            StatusState::Success => "success",
            StatusState::Failed => "failed",
            StatusState::Canceled => "canceled",
        }
    }
}

/// One commit status: `name` is the gate's (what "Pipelines must succeed" waits for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusUpdate {
    pub state: StatusState,
    pub name: String,
    pub description: String,
    pub target_url: Option<String>,
}

/// `GET /personal_access_tokens/self` (also a project's or group's access token).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TokenInfo {
    pub name: String,
    pub scopes: Vec<String>,
    pub active: bool,
    #[serde(default)]
    pub revoked: bool,
    /// `YYYY-MM-DD`, or none for a token that never expires.
    #[serde(default)]
    pub expires_at: Option<String>,
}

/// `GET /projects/:id`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProjectInfo {
    pub id: u64,
    pub path_with_namespace: String,
    #[serde(default)]
    pub default_branch: Option<String>,
}

/// `GET /projects/:id/hooks`: where a hook delivers and which events it sends.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookInfo {
    pub id: u64,
    pub url: String,
    #[serde(default)]
    pub push_events: bool,
    #[serde(default)]
    pub merge_requests_events: bool,
    #[serde(default)]
    pub note_events: bool,
    #[serde(default)]
    pub pipeline_events: bool,
}

#[derive(Deserialize)]
struct WireUser {
    id: u64,
    username: String,
}

#[derive(Deserialize)]
struct WireNote {
    id: u64,
    body: String,
    author: WireUser,
}

#[derive(Deserialize)]
struct WireMergeRequest {
    sha: String,
    #[serde(default)]
    diff_refs: Option<WireDiffRefs>,
    #[serde(default)]
    head_pipeline: Option<WirePipeline>,
}

#[derive(Deserialize)]
struct WireDiffRefs {
    base_sha: Option<String>,
}

#[derive(Deserialize)]
struct WirePipeline {
    id: u64,
}

#[derive(Deserialize)]
struct WireMember {
    access_level: u32,
}

impl GitlabClient {
    /// A client for the instance at `base_url` (`https://gitlab.com`, a self-managed host, with
    /// or without `/api/v4`), acting with `token`.
    pub fn new(base_url: &str, token: &str) -> Result<Self, GitlabError> {
        // reqwest is built without a default TLS provider; installing one twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| GitlabError::Unreadable {
                what: "the HTTP client".to_owned(),
                why: e.to_string(),
            })?;
        let base = base_url.trim_end_matches('/');
        let api = if base.ends_with("/api/v4") {
            base.to_owned()
        } else {
            format!("{base}/api/v4")
        };
        Ok(GitlabClient {
            http,
            api,
            token: token.to_owned(),
        })
    }

    /// The user the token acts as: the author of benchgate's notes.
    pub async fn current_user(&self) -> Result<UserRef, GitlabError> {
        let (_, u): (_, WireUser) = self
            .call(Method::GET, "/user", None, "the token's user")
            .await?;
        Ok(UserRef {
            id: u.id,
            username: u.username,
        })
    }

    /// The merge request's head, branch point and head pipeline.
    pub async fn merge_request(
        &self,
        project: impl Into<Project>,
        iid: u64,
    ) -> Result<MergeRequestInfo, GitlabError> {
        let project = project.into();
        let path = format!("/projects/{project}/merge_requests/{iid}");
        let (_, mr): (_, WireMergeRequest) = self
            .call(Method::GET, &path, None, &format!("merge request !{iid}"))
            .await?;
        Ok(MergeRequestInfo {
            head_sha: mr.sha,
            base_sha: mr.diff_refs.and_then(|d| d.base_sha),
            pipeline_id: mr.head_pipeline.map(|p| p.id),
        })
    }

    /// `user`'s access level in `project`, inherited ones included; `None` for a non-member.
    pub async fn access_level(
        &self,
        project: impl Into<Project>,
        user: u64,
    ) -> Result<Option<u32>, GitlabError> {
        let project = project.into();
        let path = format!("/projects/{project}/members/all/{user}");
        match self
            .call::<WireMember>(Method::GET, &path, None, "a member's access level")
            .await
        {
            Ok((_, m)) => Ok(Some(m.access_level)),
            Err(GitlabError::Refused { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The token's own record: its scopes, and whether and when it stops working.
    pub async fn token_info(&self) -> Result<TokenInfo, GitlabError> {
        let (_, t): (_, TokenInfo) = self
            .call(
                Method::GET,
                "/personal_access_tokens/self",
                None,
                "the token's scopes",
            )
            .await?;
        Ok(t)
    }

    /// The project at `project`: a numeric id or its path (`group/name`).
    pub async fn project(&self, project: &str) -> Result<ProjectInfo, GitlabError> {
        let path = format!("/projects/{}", project_segment(project));
        let (_, p): (_, ProjectInfo) = self
            .call(Method::GET, &path, None, &format!("project {project}"))
            .await?;
        Ok(p)
    }

    /// The project's webhooks (GitLab answers 403 below Maintainer).
    pub async fn hooks(&self, project: u64) -> Result<Vec<HookInfo>, GitlabError> {
        let path = format!("/projects/{project}/hooks?per_page={PER_PAGE}");
        let (_, hooks): (_, Vec<HookInfo>) = self
            .call(Method::GET, &path, None, "the project's webhooks")
            .await?;
        Ok(hooks)
    }

    /// Writes benchgate's note on the merge request: the note `bot` wrote that holds `marker`
    /// is edited in place, else a new one is made. Notes of anyone else are never touched,
    /// whatever they quote. Returns the note's id.
    pub async fn upsert_note(
        &self,
        project: impl Into<Project>,
        iid: u64,
        bot: u64,
        marker: &str,
        body: &str,
    ) -> Result<u64, GitlabError> {
        let project = project.into();
        let notes = format!("/projects/{project}/merge_requests/{iid}/notes");
        let what = format!("the notes of !{iid}");
        for page in 1..=MAX_NOTE_PAGES {
            let path =
                format!("{notes}?sort=asc&order_by=created_at&per_page={PER_PAGE}&page={page}");
            let (headers, list): (_, Vec<WireNote>) =
                self.call(Method::GET, &path, None, &what).await?;
            if let Some(own) = list
                .iter()
                .find(|n| n.author.id == bot && n.body.contains(marker))
            {
                let edit = format!("{notes}/{}", own.id);
                let (_, note): (_, WireNote) = self
                    .call(
                        Method::PUT,
                        &edit,
                        Some(json!({ "body": body })),
                        "benchgate's note",
                    )
                    .await?;
                return Ok(note.id);
            }
            let next = headers
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if next.trim().is_empty() || list.is_empty() {
                break;
            }
        }
        let (_, note): (_, WireNote) = self
            .call(
                Method::POST,
                &notes,
                Some(json!({ "body": body })),
                "a new note",
            )
            .await?;
        Ok(note.id)
    }

    /// Sets the gate's status on the merge request's head, in its pipeline. The description
    /// is cut to GitLab's 255 characters; the same state again is not an error.
    pub async fn set_mr_status(
        &self,
        project: impl Into<Project>,
        iid: u64,
        status: &StatusUpdate,
    ) -> Result<(), GitlabError> {
        let project = project.into();
        let mr = self.merge_request(&project, iid).await?;
        self.set_status(&project, &mr.head_sha, mr.pipeline_id, status)
            .await
    }

    /// Sets a commit status on `sha`, in `pipeline` when the commit has one.
    pub async fn set_status(
        &self,
        project: impl Into<Project>,
        sha: &str,
        pipeline: Option<u64>,
        status: &StatusUpdate,
    ) -> Result<(), GitlabError> {
        let project = project.into();
        let mut body = json!({
            "state": status.state.as_str(),
            "name": status.name,
            "description": cut(&status.description, MAX_STATUS_DESCRIPTION),
        });
        if let Some(url) = &status.target_url {
            body["target_url"] = url.clone().into();
        }
        if let Some(id) = pipeline {
            body["pipeline_id"] = id.into();
        }
        let path = format!("/projects/{project}/statuses/{sha}");
        match self
            .call::<Value>(Method::POST, &path, Some(body), "the commit status")
            .await
        {
            Ok(_) => Ok(()),
            // GitLab refuses a state the status already has ("Cannot transition status via
            // :run from :running"): it is set, which is what was asked.
            Err(GitlabError::Refused {
                status: 400,
                message,
                ..
            }) if already_in(&message, status.state) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<(HeaderMap, T), GitlabError> {
        let (headers, text) = self.send(method, path, body, what).await?;
        let value = serde_json::from_str(&text).map_err(|e| GitlabError::Unreadable {
            what: what.to_owned(),
            why: e.to_string(),
        })?;
        Ok((headers, value))
    }

    /// One request; a success's headers and body text, else the error GitLab's answer means.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<(HeaderMap, String), GitlabError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("PRIVATE-TOKEN", &self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.map_err(|e| GitlabError::RetryLater {
            after: None,
            why: format!("{what}: {}", e.without_url()),
        })?;
        let (status, headers) = (answer.status(), answer.headers().clone());
        let text = answer.text().await.map_err(|e| GitlabError::RetryLater {
            after: None,
            why: format!("{what}: {}", e.without_url()),
        })?;
        if !status.is_success() {
            return Err(GitlabError::from_answer(status, &headers, &text, what));
        }
        Ok((headers, text))
    }
}

/// A project as one path segment: an id as it is, a path with its `/` encoded.
fn project_segment(project: &str) -> String {
    encode(project, b"-_.")
}

/// `text` percent-encoded but for ASCII letters, digits and `keep`.
fn encode(text: &str, keep: &[u8]) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || keep.contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// GitLab's refusal to move a status to the state it has.
fn already_in(message: &str, state: StatusState) -> bool {
    message.starts_with("Cannot transition status via")
        && message.contains(&format!("from :{}", state.as_str()))
}

/// `text` in at most `max` characters, the cut marked with "…".
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod gitlab_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_description_is_cut_to_what_gitlab_keeps() {
        let long = "é".repeat(300);
        let c = cut(&long, MAX_STATUS_DESCRIPTION);
        assert_eq!(c.chars().count(), 255);
        assert!(c.ends_with('…'));
        assert_eq!(cut("short", 255), "short");
    }

    #[test]
    fn a_project_path_is_one_segment() {
        assert_eq!(project_segment("42"), "42");
        assert_eq!(project_segment("group/sub/name"), "group%2Fsub%2Fname");
        assert_eq!(project_segment("a/../b?x"), "a%2F..%2Fb%3Fx");
    }

    #[test]
    fn only_a_refusal_of_the_same_state_counts_as_set() {
        let msg = "Cannot transition status via :run from :running (Reason(s): Status cannot transition via \"run\")";
        assert!(already_in(msg, StatusState::Running));
        assert!(!already_in(msg, StatusState::Success));
        assert!(!already_in("description is too long", StatusState::Running));
    }
}
