//! The check of a comparison: its state, conclusion and summary, written to the check run of
//! the comparison's current generation. A completed run is final on GitHub, so rounds added
//! after it (a re-run, `/rebench`, a fork approval) are reported on a new run.

use benchgate_github::client::CheckStatus;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    CheckRunRecord, Comparison, ComparisonId, Priority, REPORT_CHECK, comparison_key,
};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, TaskError};
use crate::commit_check::CheckWrite;
use crate::forge::ForgeRepo;
use crate::report;

/// Render a comparison now and write its check run; every pending one of a comparison is one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportCheck {
    pub comparison_id: i64,
}

impl OutboxTask for ReportCheck {
    const KIND: &'static str = REPORT_CHECK;
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        Some(comparison_key(Self::KIND, ComparisonId(self.comparison_id)))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        cx.report_check(self.comparison_id).await
    }
}

/// Writes the check of a comparison that is not a merge group's, as its report reads.
pub(super) async fn run(
    cx: &Context,
    loaded: report::LoadedReport,
    repo: &super::RepoName,
) -> Result<(), TaskError> {
    let c = &loaded.comparison;
    let id = c.id.0;
    let write = check_write(c, &loaded.input, cx.github_config.comparison_url(id));
    let new_run = write_recorded(cx, &cx.forge(repo)?, c, &write).await?;
    tracing::info!(comparison = id, generation = c.rounds_generation, new_run, status = ?write.status, conclusion = ?write.conclusion, "check written");
    Ok(())
}

/// Writes comparison `c`'s check on the run of its generation and records that run; `true`
/// when a new run was made. A forge without check runs (GitLab, GitHub with a single token)
/// gets a status, which has no run to record.
pub(super) async fn write_recorded(
    cx: &Context,
    forge: &ForgeRepo<'_>,
    c: &Comparison,
    write: &CheckWrite,
) -> Result<bool, TaskError> {
    let completed = write.status == CheckStatus::Completed;
    let mut existing = run_to_write(c, completed);
    // An older generation's run the store thinks open may have been completed by a server
    // that died before recording it; GitHub refuses to move a completed run back (the soak
    // met this), so look before editing it with a state other than completed.
    if let Some(id) = existing
        && !completed
        && c.check_run_generation < c.rounds_generation
    {
        let older = external_id_of(c.id.0, c.check_run_generation);
        let found = forge
            .find_check_run(&c.head_sha, &write.name, &older)
            .await?;
        if found.is_some_and(|run| run.status == "completed") {
            tracing::info!(check_run = id, comparison = %c.id, "the older generation's run was completed unrecorded; a new run is made");
            existing = None;
        }
    }
    let pr = c.pr_number.map(|n| n as u64);
    if let Some(check_run_id) = forge.write_gate(pr, write, existing).await? {
        let record = CheckRunRecord {
            check_run_id,
            generation: c.rounds_generation,
            completed,
        };
        cx.store.record_check_run(c.id, record).await?;
    }
    Ok(existing.is_none())
}

/// The check of comparison `c` as its report reads: state, conclusion, title and summary.
fn check_write(c: &Comparison, input: &report::CommentInput, details_url: String) -> CheckWrite {
    let outcome = report::pull_request_check_outcome(input);
    CheckWrite {
        name: super::check_name_of(c),
        head_sha: c.head_sha.clone(),
        status: outcome.status,
        conclusion: outcome.conclusion,
        title: outcome.title,
        summary: report::render_check_summary(input),
        details_url: Some(details_url),
        external_id: external_id(c),
    }
}

/// The stored check run to edit, or `None` for a new one: a run not yet completed is edited
/// (rounds added meanwhile join it); a completed one only to restate a completed outcome of
/// its own generation, never to move it back.
fn run_to_write(c: &Comparison, completed: bool) -> Option<i64> {
    let id = c.check_run_id?;
    let same_generation = c.check_run_generation >= c.rounds_generation;
    (!c.check_run_completed || (completed && same_generation)).then_some(id)
}

/// Unique per comparison and generation: a create retried after a lost answer finds its run.
pub(super) fn external_id(c: &Comparison) -> String {
    external_id_of(c.id.0, c.rounds_generation)
}

fn external_id_of(comparison: i64, generation: i64) -> String {
    format!("benchgate-comparison-{comparison}-{generation}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commit_check;
    use benchgate_store::model::{ComparisonId, ComparisonState, RepositoryId};

    fn comparison(
        run: Option<i64>,
        run_generation: i64,
        completed: bool,
        generation: i64,
    ) -> Comparison {
        Comparison {
            id: ComparisonId(1),
            repository_id: RepositoryId(1),
            repository: "acme/widgets".into(),
            pr_number: Some(7),
            base_sha: "b".repeat(40),
            head_sha: "h".repeat(40),
            runner_label: "x".into(),
            kind: benchgate_store::ComparisonKind::Plain,
            config: serde_json::from_value(
                serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            planned_rounds: None,
            main: None,
            state: ComparisonState::Running,
            check_run_id: run,
            rounds_generation: generation,
            check_run_generation: run_generation,
            check_run_completed: completed,
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_completed_run_is_never_moved_back() {
        // First write: a new run.
        assert_eq!(run_to_write(&comparison(None, 0, false, 0), false), None);
        // In progress: the same run, also once rounds were added meanwhile.
        assert_eq!(
            run_to_write(&comparison(Some(5), 0, false, 0), false),
            Some(5)
        );
        assert_eq!(
            run_to_write(&comparison(Some(5), 0, false, 1), true),
            Some(5)
        );
        // Completed, then restated completed in the same generation: the same run.
        assert_eq!(
            run_to_write(&comparison(Some(5), 0, true, 0), true),
            Some(5)
        );
        // Completed, then more rounds: a new run, whether they are running or already done.
        assert_eq!(run_to_write(&comparison(Some(5), 0, true, 1), false), None);
        assert_eq!(run_to_write(&comparison(Some(5), 0, true, 1), true), None);
        // Completed, and the comparison went back to running without new rounds (a job
        // requeued): GitHub would refuse the move back, so a new run.
        assert_eq!(run_to_write(&comparison(Some(5), 0, true, 0), false), None);
    }

    /// The check of each report fixture as GitHub shows it, as a check run and as a commit
    /// status; its summary is the comment's text, pinned in `report/snapshots`.
    #[test]
    fn the_check_reads_as_pinned() {
        for (name, input) in crate::report::fixtures::cases() {
            let mut c = comparison(None, 0, false, 0);
            (c.base_sha, c.head_sha) = (input.base_sha.clone(), input.head_sha.clone());
            c.runner_label = input.runner_label.clone();
            let w = check_write(&c, &input, input.comparison_url.clone());
            assert_eq!(w.summary, crate::report::render_comment(&input), "{name}");
            insta::assert_snapshot!(format!("check_{name}"), commit_check::shown(&w));
        }
    }

    #[test]
    fn external_ids_differ_per_generation() {
        let a = external_id(&comparison(None, 0, false, 0));
        let b = external_id(&comparison(None, 0, false, 1));
        assert_ne!(a, b);
    }
}
