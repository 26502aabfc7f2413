//! GitLab's payloads as serde reads them: only the fields benchgate acts on.

use serde::Deserialize;

#[derive(Deserialize)]
pub struct Kind {
    pub object_kind: String,
}

#[derive(Deserialize)]
pub struct Project {
    pub id: u64,
    pub path_with_namespace: String,
    pub web_url: String,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub git_http_url: Option<String>,
}

#[derive(Deserialize)]
pub struct User {
    pub id: u64,
    pub username: String,
}

#[derive(Deserialize)]
pub struct Commit {
    pub id: String,
}

#[derive(Deserialize)]
pub struct MergeRequest {
    pub user: User,
    pub project: Project,
    pub object_attributes: MrAttributes,
}

#[derive(Deserialize)]
pub struct MrAttributes {
    pub iid: u64,
    /// Absent in payloads GitLab's "Test" button sends for old merge requests.
    #[serde(default)]
    pub action: Option<String>,
    pub source_branch: String,
    pub target_branch: String,
    pub source_project_id: u64,
    pub target_project_id: u64,
    pub author_id: u64,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    pub last_commit: Commit,
    #[serde(default)]
    pub oldrev: Option<String>,
    /// `draft` since GitLab 13.x; `work_in_progress` before and still sent.
    #[serde(default)]
    pub draft: Option<bool>,
    #[serde(default)]
    pub work_in_progress: Option<bool>,
}

#[derive(Deserialize)]
pub struct Note {
    pub user: User,
    pub project: Project,
    pub object_attributes: NoteAttributes,
    #[serde(default)]
    pub merge_request: Option<NotedMergeRequest>,
}

#[derive(Deserialize)]
pub struct NoteAttributes {
    pub id: u64,
    pub note: String,
    pub noteable_type: String,
    /// `create` or `update` on GitLab 16.4 and later; absent before (always a new note).
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
}

#[derive(Deserialize)]
pub struct NotedMergeRequest {
    pub iid: u64,
    pub source_project_id: u64,
    pub target_project_id: u64,
    pub last_commit: Commit,
}

#[derive(Deserialize)]
pub struct Push {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub before: String,
    pub after: String,
    pub project: Project,
    #[serde(default)]
    pub commits: Vec<Commit>,
    #[serde(default)]
    pub total_commits_count: Option<u64>,
    #[serde(default)]
    pub user_username: Option<String>,
}

#[derive(Deserialize)]
pub struct Pipeline {
    pub project: Project,
    pub object_attributes: PipelineAttributes,
    #[serde(default)]
    pub merge_request: Option<PipelineMergeRequest>,
}

#[derive(Deserialize)]
pub struct PipelineAttributes {
    pub id: u64,
    pub sha: String,
    #[serde(default)]
    pub source: Option<String>,
    pub status: String,
}

#[derive(Deserialize)]
pub struct PipelineMergeRequest {
    pub iid: u64,
}

/// An external status check's request: the merge request hook's body (without `action`) and
/// the check it is for.
#[derive(Deserialize)]
pub struct StatusCheck {
    pub project: Project,
    pub object_attributes: StatusCheckAttributes,
    #[serde(default)]
    pub external_approval_rule: Option<ApprovalRule>,
}

#[derive(Deserialize)]
pub struct StatusCheckAttributes {
    pub iid: u64,
    pub last_commit: Commit,
}

#[derive(Deserialize)]
pub struct ApprovalRule {
    pub id: u64,
    pub name: String,
}
