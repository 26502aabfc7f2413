//! Scheduling a pull request (in the outbox worker, where GitHub may be called): read
//! `.benchgate.toml` from the base branch, note which benchmark files the PR changes, and
//! create the comparison with its jobs and its first check-run row in one transaction.

use benchgate_api::agent::{
    BenchmarkSpec, ComparisonConfig, GateSpec, ScheduleKind, StoredComparisonConfig,
};
use benchgate_github::repo_config::FILE_NAME;
use benchgate_github::{RepoConfig, parse_repo_config};
use benchgate_store::model::{ComparisonState, NewComparison, NewJob, Priority};

use crate::outbox::task::{
    CancelPullRequest, MarkedComment, NeutralCheck, SchedulePullRequest, Task,
};
use crate::outbox::{TaskError, Worker};

/// The label of the comment that quotes an invalid `.benchgate.toml`.
const CONFIG_LABEL: &str = "config";

/// Reads the repository config and creates the PR's comparison (with no jobs for a fork PR,
/// which waits for a maintainer's `/rebench`).
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr, head = %t.head_sha))]
pub async fn schedule(worker: &Worker, t: SchedulePullRequest) -> Result<(), TaskError> {
    let target = t.repo.target()?;
    let Some(repository) = worker.store.repository_by_name(&t.repo.full_name).await? else {
        return Err(TaskError::Permanent(format!(
            "repository {} is not recorded",
            t.repo.full_name
        )));
    };
    let Some(text) = worker
        .github
        .read_file(&target, FILE_NAME, &t.base_ref)
        .await?
    else {
        tracing::info!("no {FILE_NAME} on the base branch; nothing to run");
        return worker
            .enqueue(Task::NeutralCheck(NeutralCheck {
                repo: t.repo,
                head_sha: t.head_sha,
                title: format!("no {FILE_NAME}"),
                summary: format!(
                    "benchgate found no `{FILE_NAME}` on `{}`, so nothing was benchmarked. \
                     Add one on the base branch to compare this PR's speed.",
                    t.base_ref
                ),
            }))
            .await;
    };
    let config = match parse_repo_config(&text) {
        Ok(config) => config,
        Err(error) => {
            tracing::info!(error = %error, "invalid {FILE_NAME}");
            let body = format!(
                "benchgate cannot read `{FILE_NAME}` on `{}`:\n\n```\n{error}\n```\n\n\
                 Nothing was benchmarked. Fix the file on the base branch and push again.",
                t.base_ref
            );
            worker
                .enqueue(Task::UpsertComment(MarkedComment {
                    repo: t.repo.clone(),
                    pr: t.pr,
                    label: CONFIG_LABEL.to_owned(),
                    body,
                }))
                .await?;
            return worker
                .enqueue(Task::NeutralCheck(NeutralCheck {
                    repo: t.repo,
                    head_sha: t.head_sha,
                    title: format!("invalid {FILE_NAME}"),
                    summary: format!("```\n{error}\n```"),
                }))
                .await;
        }
    };
    let label = config.benchmark.runner.as_str().to_owned();
    // A retry of this row after the comparison was created must not create a second one.
    let existing = worker
        .store
        .pull_request_comparisons(repository.id, t.pr as i64)
        .await?;
    if existing.iter().any(|c| {
        c.head_sha == t.head_sha
            && c.runner_label == label
            && !matches!(
                c.state,
                ComparisonState::Superseded | ComparisonState::Cancelled
            )
    }) {
        tracing::info!("comparison of this head exists already");
        return Ok(());
    }
    let changed = if config.benchmark.paths.patterns().is_empty() {
        Vec::new()
    } else {
        let files = worker.github.list_pr_files(&target, t.pr).await?;
        let names = files.iter().map(|f| f.filename.as_str());
        config
            .benchmark
            .paths
            .touched(names)
            .into_iter()
            .map(str::to_owned)
            .collect()
    };
    let min_effect = config.gate.min_effect.fraction();
    let plan =
        crate::analysis::plan_rounds(&worker.store, repository.id, &label, min_effect).await?;
    let planned_rounds = plan.planned_rounds;
    let mut stored = serde_json::to_value(StoredComparisonConfig {
        config: comparison_config(&config),
        n_star: plan.per_benchmark,
    })
    .map_err(|e| TaskError::Permanent(e.to_string()))?;
    stored["github"] = serde_json::json!({
        "fork": t.fork,
        "benchmark_files_changed": changed,
    });
    let jobs = if t.fork {
        Vec::new()
    } else {
        vec![NewJob {
            rounds: i64::from(config.benchmark.rounds.get()),
            priority: Priority::NORMAL,
            max_attempts: worker.app.config.max_attempts,
            origin: None,
        }]
    };
    let mut notify = vec![Task::for_new_comparison("report.check")];
    if t.fork {
        notify.push(Task::for_new_comparison("report.comment"));
    }
    let created = worker
        .store
        .create_comparison(&NewComparison {
            repository_id: repository.id,
            pr_number: Some(t.pr as i64),
            base_sha: t.base_sha,
            head_sha: t.head_sha,
            runner_label: label,
            config: stored,
            planned_rounds,
            jobs,
            notify,
        })
        .await?;
    tracing::info!(comparison = %created.id, jobs = created.jobs.len(), superseded = created.superseded.len(), fork = t.fork, "comparison scheduled");
    Ok(())
}

/// Cancels a closed PR's comparisons again. The webhook cancelled them already; this row runs
/// after any schedule of the PR that was being carried out meanwhile, and undoes it.
#[tracing::instrument(skip_all, fields(repo = %t.repo.full_name, pr = t.pr))]
pub async fn cancel(worker: &Worker, t: CancelPullRequest) -> Result<(), TaskError> {
    let Some(repository) = worker.store.repository_by_name(&t.repo.full_name).await? else {
        return Ok(());
    };
    let jobs = worker
        .store
        .cancel_pull_request(repository.id, t.pr as i64)
        .await?;
    if jobs > 0 {
        tracing::info!(jobs, "comparison scheduled while the PR closed; cancelled");
    }
    Ok(())
}

/// The stored config of a comparison: `.benchgate.toml` in the agent protocol's shape.
pub fn comparison_config(config: &RepoConfig) -> ComparisonConfig {
    let b = &config.benchmark;
    ComparisonConfig {
        benchmark: BenchmarkSpec {
            build: b.build.clone(),
            run: b.run.as_str().to_owned(),
            // The variant names are the file's spellings, lower-cased.
            format: b.format.as_str().to_owned(),
            rounds: b.rounds.get(),
            warmup: b.warmup,
            schedule: ScheduleKind::Abba,
            seed: None,
            timeout_secs: None,
            env: Vec::new(),
        },
        gate: GateSpec {
            fail_on: config.gate.fail_on,
            min_effect: config.gate.min_effect.fraction(),
        },
    }
}
