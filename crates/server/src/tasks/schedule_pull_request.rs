//! Scheduling a pull request (in the outbox, where GitHub may be called): read
//! `.benchgate.toml` from the base branch, find where the PR branched (its merge base with the
//! base branch: the PR's own change is head against that, not against a tip that moved on),
//! note which benchmark files the PR changes, and create the comparison with its jobs and its
//! first check-run row in one transaction.

use benchgate_api::agent::{
    ComparisonConfig, MeasuredTrees, PullRequestBranch, PullRequestContext, StoredComparisonConfig,
};
use benchgate_github::parse_repo_config;
use benchgate_github::repo_config::FILE_NAME;
use benchgate_store::StoreError;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    ComparisonState, NewComparison, NewJob, NewOutboxMessage, Priority, RepositoryId,
};

use serde::{Deserialize, Serialize};

use super::{
    Context, MarkedComment, NeutralCheck, OutboxTask, RepoName, ReportCheck, ReportComment,
    TaskError,
};

/// The label of the comment that quotes an invalid `.benchgate.toml`.
const CONFIG_LABEL: &str = "config";

/// Read `.benchgate.toml` from the base branch and create the PR's comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulePullRequest {
    pub repo: RepoName,
    pub clone_url: String,
    pub pr: u64,
    pub base_ref: String,
    /// The base branch's tip as the event names it; the comparison's base is the merge base.
    pub base_sha: String,
    pub head_sha: String,
    /// Head commits come from another repository: wait for a maintainer's `/rebench`.
    pub fork: bool,
    /// The PR's description, where its claims are read from (GitHub caps it at 65,536
    /// characters).
    #[serde(default)]
    pub body: String,
}

impl OutboxTask for SchedulePullRequest {
    const KIND: &'static str = "pr.schedule";
    const PRIORITY: Priority = Priority::NORMAL;
    fn dedupe_key(&self) -> Option<String> {
        // One key per PR, whatever the head: a newer push or a close replaces a schedule still
        // pending (e.g. retrying after a GitHub error), and one that is being carried out keeps
        // the row pending, so the newer payload runs after it, never before.
        Some(super::pull_request_key(&self.repo, self.pr))
    }

    /// Reads the repository config and creates the PR's comparison (with no jobs for a fork
    /// PR, which waits for a maintainer's `/rebench`).
    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        schedule(cx, self).await
    }
}

#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr, head = %t.head_sha))]
async fn schedule(cx: &Context, t: SchedulePullRequest) -> Result<(), TaskError> {
    let forge = cx.forge(&t.repo)?;
    let repository = cx.recorded_repository(&t.repo).await?;
    // A refusal trying again cannot change (a token without access, a ref the forge does not
    // know) concludes the check with the forge's answer: a required check must not wait on
    // nothing. What may pass (5xx, rate limits) the outbox retries.
    let text = match forge.read_file(FILE_NAME, &t.base_ref).await {
        Ok(text) => text,
        Err(e) if !e.is_retryable() => {
            tracing::warn!(error = %e, "cannot read {FILE_NAME}; the check concludes with the reason");
            return cx.enqueue(unreadable_config_check(&t, &e)).await;
        }
        Err(e) => return Err(e.into()),
    };
    let Some(text) = text else {
        tracing::info!("no {FILE_NAME} on the base branch; nothing to run");
        return cx.enqueue(no_config_check(&t)).await;
    };
    let config = match parse_repo_config(&text) {
        Ok(config) => config,
        Err(error) => {
            tracing::info!(error = %error, "invalid {FILE_NAME}");
            let (comment, check) = invalid_config_reports(&t, &error);
            cx.enqueue(comment).await?;
            return cx.enqueue(check).await;
        }
    };
    // Every suite's changed benchmark files come from one listing of the PR's files.
    let files = if config
        .suites
        .iter()
        .any(|s| !s.paths.patterns().is_empty() || !s.ignore.patterns().is_empty())
    {
        forge.changed_files(t.pr).await?
    } else {
        Vec::new()
    };
    // GitHub lists at most 3,000 files: a longer change may hold a file that counts.
    let listed_all = files.len() < MAX_LISTED_FILES;
    let branch = match branch_point(&forge, &t).await {
        Ok(branch) => branch,
        // What trying again cannot change (a sha GitHub does not know, a refused compare)
        // concludes each check with the reason, so a required check does not wait on nothing.
        // What it can (5xx, rate limits, a dropped connection) the outbox retries.
        Err(e @ (TaskError::GitHub(_) | TaskError::GitLab(_)))
            if !crate::workers::outbox::RowError::is_retryable(&e) =>
        {
            tracing::warn!(error = %e, "cannot read the branch point; the checks conclude with the reason");
            for (suite, label) in config.comparisons() {
                let stored = config.comparison_config(suite);
                cx.enqueue(unreadable_branch_point_check(&t, &stored, label, &e))
                    .await?;
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    for (suite, label) in config.comparisons() {
        let stored = config.comparison_config(suite);
        // A rename counts by both names: moving a source file into `docs/` changes the build.
        let touched = files
            .iter()
            .flat_map(|f| std::iter::once(&f.filename).chain(&f.previous_filename))
            .map(String::as_str);
        if listed_all && suite.all_ignored(touched) {
            tracing::info!(suite = suite.name(), %label, files = files.len(), "every changed file is ignored; passed without measuring");
            cx.enqueue(ignored_check(&t, &stored, label, suite, files.len()))
                .await?;
            continue;
        }
        let changed = suite.benchmark_files_changed(files.iter().map(|f| f.filename.as_str()));
        if !schedule_one(cx, &t, repository.id, stored, label, changed, &branch).await? {
            // A newer head was pushed meanwhile: it schedules every suite itself.
            return Ok(());
        }
    }
    Ok(())
}

/// The base the PR is measured from: the merge base of the event's base tip and head, as
/// GitHub's compare API finds it (docs/statistics.md §1c). Two histories with nothing in
/// common have none: the tip is measured then, and the comment says so.
async fn branch_point(
    forge: &crate::forge::ForgeRepo<'_>,
    t: &SchedulePullRequest,
) -> Result<(String, PullRequestBranch), TaskError> {
    let mut branch = PullRequestBranch {
        base_ref: t.base_ref.clone(),
        base_tip: t.base_sha.clone(),
        base_ahead_by: 0,
        no_merge_base: false,
        trees: None,
    };
    let Some(point) = forge.branch_point(t.pr, &t.base_sha, &t.head_sha).await? else {
        tracing::warn!(tip = %t.base_sha, "the PR shares no commit with its base branch; measuring against the tip");
        branch.no_merge_base = true;
        return Ok((t.base_sha.clone(), branch));
    };
    branch.base_ahead_by = point.base_ahead_by;
    // GitLab names no trees; they serve only merge groups, which GitLab has none of.
    branch.trees = (!point.merge_base_tree.is_empty()).then_some(MeasuredTrees {
        base: point.merge_base_tree,
        head: point.head_tree,
    });
    if branch.base_tip.is_empty() {
        branch.base_tip = point.merge_base.clone();
    }
    if point.base_ahead_by > 0 {
        tracing::info!(merge_base = %point.merge_base, tip = %t.base_sha, moved = point.base_ahead_by, "the base branch moved on since the PR branched; measuring from the merge base");
    }
    Ok((point.merge_base, branch))
}

/// Creates the comparison of one (suite, label) unless it exists already; `false` when a newer
/// head was pushed meanwhile (the newer one decides).
#[tracing::instrument(skip_all, fields(suite = ?config.suite, label = %label))]
async fn schedule_one(
    cx: &Context,
    t: &SchedulePullRequest,
    repository_id: RepositoryId,
    config: ComparisonConfig,
    label: &str,
    changed: Vec<String>,
    (base_sha, branch): &(String, PullRequestBranch),
) -> Result<bool, TaskError> {
    // A retry of this row after the comparison was created must not create a second one.
    let existing = cx
        .store
        .pull_request_comparisons(repository_id, t.pr as i64)
        .await?;
    if existing.iter().any(|c| {
        c.head_sha == t.head_sha
            && c.base_sha == *base_sha
            && c.runner_label == label
            && super::suite_of(c).as_deref() == config.suite.as_deref()
            && !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
    }) {
        tracing::info!("comparison of this head exists already");
        return Ok(true);
    }
    let rules = benchgate_api::RuleSet::of(&config);
    let plan = crate::comparison_analysis::plan_rounds(
        &cx.store,
        repository_id,
        label,
        config.gate.min_effect,
        &rules,
    )
    .await?;
    let planned_rounds = plan.planned_rounds;
    let jobs = if t.fork {
        Vec::new()
    } else {
        vec![NewJob {
            rounds: i64::from(config.gate_rounds()),
            priority: Priority::NORMAL,
            max_attempts: cx.config.max_attempts,
            origin: None,
        }]
    };
    // Claims stated in comments on an earlier head still stand: the author's words did not
    // change with the push.
    let claimed = existing
        .iter()
        .find(|c| {
            c.runner_label == label && super::suite_of(c).as_deref() == config.suite.as_deref()
        })
        .and_then(|c| c.config.github.as_ref())
        .map(|g| g.claimed.clone())
        .unwrap_or_default();
    let stored = StoredComparisonConfig {
        n_star: plan.per_benchmark,
        github: Some(PullRequestContext {
            fork: t.fork,
            benchmark_files_changed: changed,
            branch: Some(branch.clone()),
            body: t.body.clone(),
            claimed,
        }),
        ..config.into()
    };
    let mut notify = vec![NewOutboxMessage::for_new_comparison(
        ReportCheck::KIND,
        ReportCheck::PRIORITY,
    )];
    if t.fork {
        notify.push(NewOutboxMessage::for_new_comparison(
            ReportComment::KIND,
            ReportComment::PRIORITY,
        ));
    }
    let created = match cx
        .store
        .create_comparison(&NewComparison {
            repository_id,
            pr_number: Some(t.pr as i64),
            base_sha: base_sha.clone(),
            head_sha: t.head_sha.clone(),
            runner_label: label.to_owned(),
            config: stored,
            planned_rounds,
            main: None,
            jobs,
            notify,
        })
        .await
    {
        Ok(created) => created,
        // This row outlived its lease while a newer push was recorded: the newer one decides.
        Err(StoreError::StaleHead { newest, .. }) => {
            tracing::info!(newest = %newest, "a newer head was pushed; this schedule is dropped");
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(comparison = %created.id, jobs = created.jobs.len(), superseded = created.superseded.len(), fork = t.fork, "comparison scheduled");
    Ok(true)
}

/// Most files GitHub's list of a PR's files holds.
const MAX_LISTED_FILES: usize = 3000;

/// The passing check of a suite and label whose every changed file the suite ignores.
fn ignored_check(
    t: &SchedulePullRequest,
    stored: &ComparisonConfig,
    label: &str,
    suite: &benchgate_github::repo_config::SuiteConfig,
    files: usize,
) -> NeutralCheck {
    let change = crate::report::change_word(t.repo.forge);
    let globs: Vec<String> = suite
        .ignore
        .patterns()
        .iter()
        .map(|g| format!("`{g}`"))
        .collect();
    NeutralCheck {
        repo: t.repo.clone(),
        pr: Some(t.pr),
        head_sha: t.head_sha.clone(),
        title: "no benchmarked file changed".to_owned(),
        summary: format!(
            "{} the suite's `ignore` ({}), so no benchmark can differ: nothing was run. A \
             push that changes any other file is measured.",
            if files == 1 {
                format!("The one file this {change} changes matches")
            } else {
                format!("All {files} files this {change} changes match")
            },
            globs.join(", ")
        ),
        name: Some(benchgate_github::repo_config::check_run_name(
            stored.suite.as_deref(),
            label,
        )),
        conclusion: Some(benchgate_github::client::CheckConclusion::Success),
    }
}

/// The neutral check of a head whose base branch has no `.benchgate.toml`.
/// The check of one (suite, label) whose branch point the forge would not give: neutral, or a
/// failure where the repository fails closed (`on_no_answer`), saying what the forge answered.
fn unreadable_branch_point_check(
    t: &SchedulePullRequest,
    stored: &ComparisonConfig,
    label: &str,
    error: &TaskError,
) -> NeutralCheck {
    use benchgate_api::agent::NoAnswerConclusion;
    NeutralCheck {
        repo: t.repo.clone(),
        pr: Some(t.pr),
        head_sha: t.head_sha.clone(),
        title: "could not read the branch point".to_owned(),
        summary: format!(
            "benchgate could not find where this {} branched from `{}`{}: {error}. \
             Nothing was benchmarked. Push again once {} has both commits (`/rebench` needs a \
             comparison, and there is none).",
            crate::report::change_word(t.repo.forge),
            t.base_ref,
            // GitLab's hook does not say the target's tip.
            if t.base_sha.is_empty() {
                String::new()
            } else {
                format!(
                    " (its tip `{}`)",
                    benchgate_stats::words::short_sha(&t.base_sha)
                )
            },
            match t.repo.forge {
                benchgate_store::model::Forge::GitHub => "GitHub",
                benchgate_store::model::Forge::GitLab => "GitLab",
            }
        ),
        name: Some(benchgate_github::repo_config::check_run_name(
            stored.suite.as_deref(),
            label,
        )),
        conclusion: match stored.gate.on_no_answer {
            NoAnswerConclusion::Neutral => None,
            NoAnswerConclusion::Failure => Some(benchgate_github::client::CheckConclusion::Failure),
        },
    }
}

/// The neutral check of a head whose base branch's `.benchgate.toml` the forge would not give.
fn unreadable_config_check(
    t: &SchedulePullRequest,
    error: &crate::forge::ForgeError,
) -> NeutralCheck {
    NeutralCheck {
        repo: t.repo.clone(),
        pr: Some(t.pr),
        head_sha: t.head_sha.clone(),
        title: format!("could not read {FILE_NAME}"),
        summary: format!(
            "benchgate could not read `{FILE_NAME}` on `{}`: {error}. Nothing was benchmarked. \
             Push again once benchgate's token can read it (`/rebench` needs a comparison, and \
             there is none).",
            t.base_ref
        ),
        name: None,
        conclusion: None,
    }
}

fn no_config_check(t: &SchedulePullRequest) -> NeutralCheck {
    NeutralCheck {
        repo: t.repo.clone(),
        pr: Some(t.pr),
        head_sha: t.head_sha.clone(),
        title: format!("no {FILE_NAME}"),
        summary: format!(
            "benchgate found no `{FILE_NAME}` on `{}`, so nothing was benchmarked. \
             Add one on the base branch to compare this {}'s speed.",
            t.base_ref,
            crate::report::change_word(t.repo.forge)
        ),
        name: None,
        conclusion: None,
    }
}

/// The PR comment quoting why the base branch's `.benchgate.toml` does not parse, and the
/// neutral check of the head.
fn invalid_config_reports(
    t: &SchedulePullRequest,
    error: &impl std::fmt::Display,
) -> (MarkedComment, NeutralCheck) {
    let body = format!(
        "benchgate cannot read `{FILE_NAME}` on `{}`:\n\n```\n{error}\n```\n\n\
         Nothing was benchmarked. Fix the file on the base branch and push again.",
        t.base_ref
    );
    let comment = MarkedComment {
        repo: t.repo.clone(),
        pr: t.pr,
        label: CONFIG_LABEL.to_owned(),
        body,
    };
    let check = NeutralCheck {
        repo: t.repo.clone(),
        pr: Some(t.pr),
        head_sha: t.head_sha.clone(),
        title: format!("invalid {FILE_NAME}"),
        summary: format!("```\n{error}\n```"),
        name: None,
        conclusion: None,
    };
    (comment, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pull_request() -> SchedulePullRequest {
        SchedulePullRequest {
            repo: RepoName::github("acme/widgets", Some(7)),
            clone_url: "https://github.com/acme/widgets.git".into(),
            pr: 42,
            base_ref: "main".into(),
            base_sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e".into(),
            head_sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".into(),
            fork: false,
            body: String::new(),
        }
    }

    fn shown(check: NeutralCheck) -> String {
        let w = check.check_write();
        format!(
            "{}\nsummary:\n{}\n",
            crate::commit_check::shown(&w),
            w.summary
        )
    }

    /// What a PR shows when nothing can be compared (CONVENTIONS 21).
    #[test]
    fn a_missing_or_invalid_config_reads_as_pinned() {
        let t = pull_request();
        insta::assert_snapshot!("check_no_config", shown(no_config_check(&t)));
        let error = parse_repo_config("[benchmark]\nrun = 3\n").expect_err("run is a string");
        let (comment, check) = invalid_config_reports(&t, &error);
        assert_eq!(comment.label, CONFIG_LABEL);
        insta::assert_snapshot!("comment_invalid_config", comment.body);
        insta::assert_snapshot!("check_invalid_config", shown(check));
    }

    /// What a change shows when its forge refuses what the schedule needs, on GitLab.
    #[test]
    fn a_refused_read_concludes_with_the_forges_answer_as_pinned() {
        let mut t = pull_request();
        t.repo = RepoName {
            full_name: "gitlab.example/acme/widgets".into(),
            installation_id: None,
            forge: benchgate_store::model::Forge::GitLab,
        };
        t.base_sha = String::new();
        let refused = benchgate_gitlab::client::GitlabError::Refused {
            status: 403,
            what: ".benchgate.toml at main".into(),
            message: "403 Forbidden".into(),
        };
        let forge = crate::forge::ForgeError::GitLab(refused.clone());
        insta::assert_snapshot!(
            "check_unreadable_config_gitlab",
            shown(unreadable_config_check(&t, &forge))
        );
        let config =
            parse_repo_config("[benchmark]\nrun = \"true\"\nrunner = \"quiet\"\n").unwrap();
        let (suite, label) = config.comparisons().next().unwrap();
        let stored = config.comparison_config(suite);
        let error = TaskError::GitLab(refused);
        insta::assert_snapshot!(
            "check_unreadable_branch_point_gitlab",
            shown(unreadable_branch_point_check(&t, &stored, label, &error))
        );
    }
}
