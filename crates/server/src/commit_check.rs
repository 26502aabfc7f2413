//! What benchgate shows on a head commit, written the way GitHub allows: a check run with a
//! GitHub App (created once per generation, found again by `external_id` when a create's answer
//! was lost), or a commit status with a single token, since GitHub lets only Apps write check runs.

use benchgate_github::client::{
    CheckConclusion, CheckRunOutput, CheckRunRequest, CheckRunUpdate, CheckStatus, CommitState,
    CommitStatusRequest, RepoTarget,
};

use crate::report::fit_bytes;
use benchgate_github::client::{GitHubClient, GitHubError};

/// GitHub keeps at most this many characters of a commit status's description.
const STATUS_DESCRIPTION_LIMIT: usize = 140;

/// One write of the check on `head_sha`.
#[derive(Debug, Clone)]
pub struct CheckWrite {
    /// The check run's (or commit status's context) name.
    pub name: String,
    pub head_sha: String,
    pub status: CheckStatus,
    pub conclusion: Option<CheckConclusion>,
    pub title: String,
    /// Markdown within the summary's byte limit.
    pub summary: String,
    pub details_url: Option<String>,
    /// Ours, unique per comparison and generation (or per neutral check of a head).
    pub external_id: String,
}

/// Writes `w`, onto check run `existing` when given; returns the check run's id (`None` for a
/// commit status).
pub async fn write(
    github: &GitHubClient,
    target: &RepoTarget,
    w: &CheckWrite,
    existing: Option<i64>,
) -> Result<Option<i64>, GitHubError> {
    if !github.is_app() {
        let status = commit_status(w);
        github
            .create_commit_status(target, &w.head_sha, &status)
            .await?;
        return Ok(None);
    }
    let output = Some(CheckRunOutput {
        title: w.title.clone(),
        summary: w.summary.clone(),
    });
    let existing = match existing {
        Some(id) => Some(id),
        None => github
            .find_check_run(target, &w.head_sha, &w.name, &w.external_id)
            .await?
            // A completed run found again cannot take a state other than completed.
            .filter(|run| run.status != "completed" || w.status == CheckStatus::Completed)
            .map(|run| {
                tracing::info!(check_run = run.id, external_id = %w.external_id, "check run found again; not created twice");
                run.id as i64
            }),
    };
    let id = match existing {
        Some(id) => {
            let update = CheckRunUpdate {
                status: Some(w.status),
                conclusion: w.conclusion,
                details_url: w.details_url.clone(),
                output,
            };
            github.update_check_run(target, id as u64, &update).await?;
            id
        }
        None => {
            let request = CheckRunRequest {
                name: w.name.clone(),
                head_sha: w.head_sha.clone(),
                status: w.status,
                conclusion: w.conclusion,
                details_url: w.details_url.clone(),
                external_id: Some(w.external_id.clone()),
                output,
            };
            github.create_check_run(target, &request).await?.id as i64
        }
    };
    Ok(Some(id))
}

/// The commit status standing for a check run: pending until decided, then what a required
/// check would need (an undecided or neutral result does not block, as with a check run).
fn commit_status(w: &CheckWrite) -> CommitStatusRequest {
    let state = match (w.status, w.conclusion) {
        (CheckStatus::Completed, Some(CheckConclusion::Failure)) => CommitState::Failure,
        (CheckStatus::Completed, Some(CheckConclusion::ActionRequired)) => CommitState::Pending,
        (CheckStatus::Completed, Some(CheckConclusion::Cancelled | CheckConclusion::TimedOut)) => {
            CommitState::Error
        }
        (CheckStatus::Completed, _) => CommitState::Success,
        _ => CommitState::Pending,
    };
    let description = if w.title.chars().count() > STATUS_DESCRIPTION_LIMIT {
        let cut: String = w.title.chars().take(STATUS_DESCRIPTION_LIMIT - 1).collect();
        format!("{cut}…")
    } else {
        w.title.clone()
    };
    CommitStatusRequest {
        state,
        target_url: w.details_url.clone(),
        description,
        context: w.name.clone(),
    }
}

/// What GitHub would show of `w`, for snapshots: the check run as an App writes it and the
/// commit status a single token writes instead (the summary is left to the caller).
#[cfg(test)]
pub(super) fn shown(w: &CheckWrite) -> String {
    let wire = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let status = commit_status(w);
    let conclusion = w
        .conclusion
        .map(|c| format!(", {}", wire(serde_json::json!(c))))
        .unwrap_or_default();
    format!(
        "check run `{}` on {}: {}{conclusion}\n\
         title: {}\n\
         details: {}\n\
         commit status `{}`: {}\n\
         description ({} of {STATUS_DESCRIPTION_LIMIT} characters): {}\n",
        w.name,
        w.head_sha,
        wire(serde_json::json!(w.status)),
        w.title,
        w.details_url.as_deref().unwrap_or("none"),
        status.context,
        wire(serde_json::json!(status.state)),
        status.description.chars().count(),
        status.description,
    )
}

/// A neutral or explanatory summary within GitHub's byte limit.
pub fn summary(text: String) -> String {
    fit_bytes(text, crate::report::SUMMARY_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(status: CheckStatus, conclusion: Option<CheckConclusion>, title: &str) -> CheckWrite {
        CheckWrite {
            name: crate::tasks::CHECK_NAME.to_owned(),
            head_sha: "a".repeat(40),
            status,
            conclusion,
            title: title.into(),
            summary: String::new(),
            details_url: None,
            external_id: "x".into(),
        }
    }

    #[test]
    fn a_commit_status_blocks_only_what_a_check_run_would() {
        use CheckConclusion::*;
        use CheckStatus::*;
        let state = |s, c| commit_status(&write(s, c, "t")).state;
        assert_eq!(state(Queued, None), CommitState::Pending);
        assert_eq!(state(InProgress, None), CommitState::Pending);
        assert_eq!(state(Completed, Some(Failure)), CommitState::Failure);
        assert_eq!(state(Completed, Some(Success)), CommitState::Success);
        assert_eq!(state(Completed, Some(Neutral)), CommitState::Success);
        assert_eq!(state(Completed, Some(ActionRequired)), CommitState::Pending);
        assert_eq!(state(Completed, Some(Cancelled)), CommitState::Error);
    }

    #[test]
    fn a_long_title_fits_the_status_description() {
        let long = "→".repeat(300);
        let s = commit_status(&write(CheckStatus::InProgress, None, &long));
        assert_eq!(s.description.chars().count(), STATUS_DESCRIPTION_LIMIT);
        assert!(s.description.ends_with('…'));
    }
}
