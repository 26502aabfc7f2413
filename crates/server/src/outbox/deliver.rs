//! The GitHub writes: the report comment and check run of a comparison (rendered when sent, so
//! the newest numbers go out), marked comments, neutral check runs and reactions.

use benchgate_github::client::{
    CheckConclusion, CheckRunOutput, CheckRunRequest, CheckRunUpdate, CheckStatus, RepoTarget,
};
use benchgate_store::model::ComparisonId;

use super::task::{MarkedComment, NeutralCheck, Reaction};
use super::{TaskError, Worker};
use crate::report::{self, LoadedReport};
use crate::scheduler::CHECK_NAME;

/// GitHub's limit on a check run's summary.
const SUMMARY_LIMIT: usize = 65_535;

impl Worker {
    async fn loaded(&self, id: i64) -> Result<Option<(LoadedReport, RepoTarget)>, TaskError> {
        let url = self.args.comparison_url(id);
        let Some(loaded) = report::load(self.store.as_ref(), ComparisonId(id), url).await? else {
            return Ok(None);
        };
        let installation = loaded.repository.installation_id.map(|i| i as u64);
        let target = RepoTarget::new(installation, &loaded.repository.full_name)?;
        Ok(Some((loaded, target)))
    }

    pub(super) async fn report_comment(&self, id: i64) -> Result<(), TaskError> {
        let Some((loaded, target)) = self.loaded(id).await? else {
            return Ok(());
        };
        let c = &loaded.comparison;
        let Some(pr) = c.pr_number else { return Ok(()) };
        // Only the PR's newest comparison on this label speaks in its comment.
        let newest = self
            .store
            .pull_request_comparisons(c.repository_id, pr)
            .await?
            .into_iter()
            .find(|other| other.runner_label == c.runner_label);
        if newest.is_some_and(|n| n.id != c.id) {
            tracing::debug!(comparison = id, "superseded; its comment is not edited");
            return Ok(());
        }
        let body = report::render_comment(&loaded.input);
        let upsert = self
            .github
            .upsert_marked_comment(&target, pr as u64, &c.runner_label, &body)
            .await?;
        self.store
            .set_pull_request_comment_id(
                c.repository_id,
                pr,
                &c.runner_label,
                upsert.comment.id as i64,
            )
            .await?;
        tracing::info!(
            comparison = id,
            created = upsert.created,
            "PR comment written"
        );
        Ok(())
    }

    pub(super) async fn report_check(&self, id: i64) -> Result<(), TaskError> {
        let Some((loaded, target)) = self.loaded(id).await? else {
            return Ok(());
        };
        let outcome = report::check_outcome(&loaded.input);
        let output = CheckRunOutput {
            title: outcome.title.clone(),
            summary: truncate(report::render_comment(&loaded.input), SUMMARY_LIMIT),
        };
        let details_url = Some(self.args.comparison_url(id));
        match loaded.comparison.check_run_id {
            Some(check_id) => {
                let update = CheckRunUpdate {
                    status: Some(outcome.status),
                    conclusion: outcome.conclusion,
                    details_url,
                    output: Some(output),
                };
                self.github
                    .update_check_run(&target, check_id as u64, &update)
                    .await?;
            }
            None => {
                let request = CheckRunRequest {
                    name: CHECK_NAME.to_owned(),
                    head_sha: loaded.comparison.head_sha.clone(),
                    status: outcome.status,
                    conclusion: outcome.conclusion,
                    details_url,
                    external_id: Some(id.to_string()),
                    output: Some(output),
                };
                let run = self.github.create_check_run(&target, &request).await?;
                self.store
                    .set_check_run_id(loaded.comparison.id, run.id as i64)
                    .await?;
            }
        }
        tracing::info!(comparison = id, status = ?outcome.status, conclusion = ?outcome.conclusion, "check run written");
        Ok(())
    }

    pub(super) async fn upsert_comment(&self, c: MarkedComment) -> Result<(), TaskError> {
        let target = c.repo.target()?;
        self.github
            .upsert_marked_comment(&target, c.pr, &c.label, &c.body)
            .await?;
        Ok(())
    }

    pub(super) async fn neutral_check(&self, c: NeutralCheck) -> Result<(), TaskError> {
        let target = c.repo.target()?;
        let request = CheckRunRequest {
            name: CHECK_NAME.to_owned(),
            head_sha: c.head_sha,
            status: CheckStatus::Completed,
            conclusion: Some(CheckConclusion::Neutral),
            details_url: None,
            external_id: None,
            output: Some(CheckRunOutput {
                title: c.title,
                summary: truncate(c.summary, SUMMARY_LIMIT),
            }),
        };
        self.github.create_check_run(&target, &request).await?;
        Ok(())
    }

    pub(super) async fn add_reaction(&self, r: Reaction) -> Result<(), TaskError> {
        self.github
            .add_eyes_reaction(&r.repo.target()?, r.comment_id)
            .await?;
        Ok(())
    }
}

fn truncate(mut text: String, limit: usize) -> String {
    if text.chars().count() > limit {
        text = text.chars().take(limit - 1).collect();
        text.push('…');
    }
    text
}
