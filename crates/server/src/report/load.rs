//! Gathers a comparison's report from the store: its jobs, the headline runner's stored
//! results, that runner's fingerprint and noise floors, and the PR context the scheduler kept.

use benchgate_api::MachineFingerprint;
use std::collections::HashMap;

use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, FloorKey, JobState, Repository, RunnerId,
};
use benchgate_store::{Store, StoreError};
use chrono::Utc;

use super::{CommentInput, FloorInfo, RunnerInfo};

/// A comparison with the report about it.
#[derive(Debug, Clone)]
pub struct LoadedReport {
    pub comparison: Comparison,
    pub repository: Repository,
    pub input: CommentInput,
}

/// The report of comparison `id`; `None` when it or its config is unknown.
pub async fn load(
    store: &dyn Store,
    id: ComparisonId,
    comparison_url: String,
) -> Result<Option<LoadedReport>, StoreError> {
    let Some(comparison) = store.comparison(id).await? else {
        return Ok(None);
    };
    let Some(repository) = store.repository(comparison.repository_id).await? else {
        return Ok(None);
    };
    let config = comparison.config.config.clone();
    let context = comparison.config.github.clone().unwrap_or_default();
    let jobs = store.comparison_jobs(id).await?;
    let rounds_planned = jobs
        .iter()
        .filter(|j| j.state != JobState::Cancelled)
        .map(|j| j.rounds.max(0) as u64)
        .sum();
    let identical_build = jobs
        .iter()
        .filter(|j| j.state == JobState::Done)
        .find_map(|j| j.identical_build.clone());
    let failure = jobs
        .iter()
        .rev()
        .find(|j| j.state == JobState::Failed && j.profile.is_none())
        .and_then(|j| j.last_error.clone());

    // Samples of two runners are never pooled: the runner with the most pairs is the headline.
    let stored = store.comparison_results(id).await?;
    let mut per_runner: HashMap<RunnerId, usize> = HashMap::new();
    for s in &stored {
        let n = per_runner.entry(s.runner_id).or_default();
        *n = (*n).max(s.result.n);
    }
    let headline = per_runner
        .iter()
        .max_by_key(|(id, n)| (**n, std::cmp::Reverse(**id)))
        .map(|(id, _)| *id);
    let results: Vec<_> = stored
        .iter()
        .filter(|s| Some(s.runner_id) == headline)
        .map(|s| s.result.clone())
        .collect();
    let runner_id = headline.or_else(|| jobs.iter().rev().find_map(|j| j.claimed_by));
    let mut runner = match runner_id {
        Some(rid) => match store.runner(rid).await? {
            Some(r) => {
                let audit = crate::audit::runner_audit(store, &r).await?;
                Some(RunnerInfo {
                    name: crate::comparison_analysis::combined_name(&results).unwrap_or(r.name),
                    fingerprint: r.fingerprint.as_ref().map(fingerprint_line),
                    note: None,
                    audit_flag: crate::audit::flag_words(&audit),
                    counter: r.fingerprint.as_ref().and_then(|f| f.counter.clone()),
                })
            }
            None => None,
        },
        None => None,
    };
    if let Some(info) = runner.as_mut() {
        info.note = runner_note(store, &results, &per_runner, headline).await?;
    }

    let mut floors = Vec::new();
    for r in &results {
        let floor = match headline {
            Some(runner_id) => {
                let key = FloorKey {
                    runner_id,
                    repository_id: comparison.repository_id,
                    benchmark: r.name.clone(),
                    metric: r.metric.clone(),
                };
                store.noise_floor(&key).await?
            }
            None => None,
        };
        if let Some(f) = floor {
            floors.push(FloorInfo {
                benchmark: f.key.benchmark,
                metric: f.key.metric,
                spread_pct: 100.0 * f.within_spread.exp_m1(),
                bias_pct: 100.0 * f.between_bias.exp_m1(),
                sessions: f.sessions,
                computed_at: f.computed_at,
            });
        }
    }
    let mut seconds_per_round = None;
    let outliers = match headline {
        Some(runner_id) if !results.is_empty() => {
            let series = store.comparison_samples(id).await?;
            let samples = series
                .iter()
                .find(|s| s.runner_id == runner_id)
                .map(|s| s.samples.as_slice())
                .unwrap_or_default();
            seconds_per_round = crate::run_length::round_pace(samples);
            // Paired once for all rows: pairing per row was rows × samples, minutes for a
            // suite of thousands of series. Summed over every benchmark and metric shown.
            let pairs = crate::comparison_analysis::pair_samples(samples);
            Some(results.iter().fold((0, 0), |(k, n), r| {
                let (k2, n2) = pairs
                    .get(&(r.name.clone(), r.metric.clone()))
                    .map_or((0, 0), count_outliers);
                (k + k2, n + n2)
            }))
        }
        _ => None,
    };
    // Counted runs are not rounds: a suite's count rows hold its two counted runs.
    let counted = |r: &&benchgate_api::BenchmarkResult| {
        config
            .benchmark
            .counts
            .is_some_and(|c| r.metric == c.metric())
    };
    let rounds_done = results
        .iter()
        .filter(|r| !counted(r))
        .map(|r| r.n as u64)
        .max()
        .unwrap_or(0);
    let acceptance = store
        .active_acceptance(comparison.repository_id, &comparison.head_sha)
        .await?
        .map(|a| super::AcceptanceInfo {
            by: a.accepted_by,
            reason: a.reason,
            at: a.created_at,
            rows: a.rows,
        });
    let profile = profile_view(store, &comparison, &jobs, &comparison_url).await?;
    let claims = claims_answered(&context, &results, repository.forge);
    let now = Utc::now();
    let queue = match comparison.state {
        ComparisonState::Queued => crate::queue_wait::queue_wait(store, &comparison, now).await?,
        _ => None,
    };
    let input = CommentInput {
        comparison_id: comparison.id.0,
        forge: repository.forge,
        comparison_url,
        runner_label: comparison.runner_label.clone(),
        state: comparison.state,
        base_sha: comparison.base_sha.clone(),
        head_sha: comparison.head_sha.clone(),
        rounds_done,
        rounds_planned,
        seconds_per_round,
        config,
        runner,
        results,
        outliers,
        floors,
        benchmark_files_changed: context.benchmark_files_changed,
        branch: context.branch,
        awaiting_approval: context.fork,
        failure,
        queue,
        identical_build,
        acceptance,
        profile,
        claims,
        claims_not_read: benchgate_claims::read_all(&context.body).not_read,
        now,
    };
    Ok(Some(LoadedReport {
        comparison,
        repository,
        input,
    }))
}

/// The PR's claims answered from `results`: its description's, then those of `/benchgate claim`
/// comments (each saying who stated it; no `@`, so a report rewrite pings nobody).
pub(crate) fn pr_claims_answered(
    context: &benchgate_api::agent::PullRequestContext,
    results: &[benchgate_api::BenchmarkResult],
) -> Vec<benchgate_api::ClaimAnswer> {
    let mut answered =
        benchgate_claims::answer_all(&benchgate_claims::read(&context.body), results);
    for c in &context.claimed {
        // Stored only after the command parsed; one that no longer reads is left out.
        let claims = benchgate_claims::explicit(&c.line).unwrap_or_default();
        for mut a in benchgate_claims::answer_all(&claims, results) {
            a.notes
                .insert(0, format!("stated in a comment by {}", c.by));
            answered.push(a);
        }
    }
    answered
}

/// The description's claims answered from the headline rows; when the PR also changed
/// benchmark files, each answered claim says so: the benchmark it names may now measure
/// something else.
fn claims_answered(
    context: &benchgate_api::agent::PullRequestContext,
    results: &[benchgate_api::BenchmarkResult],
    forge: benchgate_store::model::Forge,
) -> Vec<benchgate_api::ClaimAnswer> {
    let mut answered = pr_claims_answered(context, results);
    if !context.benchmark_files_changed.is_empty() {
        let files = context.benchmark_files_changed.join(", ");
        for claim in answered.iter_mut().filter(|c| c.answer.is_some()) {
            claim.notes.push(format!(
                "benchmark code changed in this {} ({files})",
                super::change_word(forge)
            ));
        }
    }
    answered
}

/// What the reader should know about the other runners: the headline combines several of one
/// hardware class, or others measured this comparison on different hardware and are reported
/// on their own (on the comparison page).
async fn runner_note(
    store: &dyn Store,
    results: &[benchgate_api::BenchmarkResult],
    per_runner: &HashMap<RunnerId, usize>,
    headline: Option<RunnerId>,
) -> Result<Option<String>, StoreError> {
    if let Some(combined) = results.iter().find(|r| !r.runners.is_empty()) {
        return Ok(Some(format!(
            "{} runners of one hardware class, combined stratified by runner (each pair on one machine, each runner's own spread and floor)",
            combined.runners.len()
        )));
    }
    let mut others = Vec::new();
    for (&id, &n) in per_runner {
        if Some(id) != headline
            && n > 0
            && let Some(r) = store.runner(id).await?
        {
            others.push(r.name);
        }
    }
    others.sort();
    Ok((!others.is_empty()).then(|| {
        format!(
            "also measured on {}, reported separately on the comparison page: different hardware is never combined",
            others.join(", ")
        )
    }))
}

/// Outliers among the paired log-ratios of one benchmark and metric (flagged, never dropped),
/// and how many log-ratios there are.
fn count_outliers(p: &crate::series_cache::Pairs) -> (usize, usize) {
    let d: Vec<f64> = p
        .base
        .iter()
        .zip(&p.head)
        .filter(|(b, h)| **b > 0.0 && **h > 0.0)
        .map(|(b, h)| (h / b).ln())
        .collect();
    (benchgate_stats::modified_z_outliers(&d).len(), d.len())
}

/// `AMD EPYC 7B13, 8 cores (4 physical), Linux 6.1, governor performance, sandbox bwrap, limits
/// cgroup v1`, from whatever the
/// agent reported.
fn fingerprint_line(f: &MachineFingerprint) -> String {
    let mut parts = Vec::new();
    if let Some(cpu) = &f.cpu_model {
        parts.push(cpu.clone());
    }
    match f.physical_cores {
        Some(p) => parts.push(format!("{} cores ({p} physical)", f.logical_cores)),
        None => parts.push(format!("{} cores", f.logical_cores)),
    }
    if !f.kernel.is_empty() {
        parts.push(f.kernel.clone());
    }
    parts.push(format!(
        "governor {}",
        f.governor.as_deref().unwrap_or("n/a")
    ));
    // Agents before the sandbox did not report it; saying nothing beats guessing.
    if let Some(isolation) = &f.isolation {
        parts.push(format!("sandbox {isolation}"));
    }
    // `cgroup v1: memory 18.0 GiB, …`: the mechanism is what a reader needs here.
    if let Some(limits) = &f.limits {
        let mechanism = limits.split(':').next().unwrap_or(limits);
        parts.push(format!("limits {mechanism}"));
    }
    parts.join(", ")
}

/// The newest profile job's state, or what its stored stacks say.
async fn profile_view(
    store: &dyn Store,
    comparison: &Comparison,
    jobs: &[benchgate_store::model::Job],
    comparison_url: &str,
) -> Result<Option<super::ProfileView>, StoreError> {
    use super::ProfileView;
    let Some(job) = jobs.iter().rev().find(|j| j.profile.is_some()) else {
        return Ok(None);
    };
    let stored = store.comparison_profiles(comparison.id).await?;
    let Some(profile) = stored.into_iter().find(|p| p.job_id == job.id) else {
        return Ok(match job.state {
            JobState::Failed => Some(ProfileView::Failed {
                reason: job
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "no reason given".into()),
            }),
            JobState::Cancelled => None,
            _ => Some(ProfileView::Pending {
                requested_by: job
                    .profile
                    .as_ref()
                    .map(|p| p.requested_by.clone())
                    .unwrap_or_default(),
            }),
        });
    };
    let runner = store
        .runner(profile.runner_id)
        .await?
        .map_or_else(|| format!("runner {}", profile.runner_id), |r| r.name);
    Ok(Some(super::profile::view(profile, runner, comparison_url)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::Forge;

    /// The runner line names the sandbox and how the limits were enforced, and leaves out
    /// what an older agent did not report.
    #[test]
    fn the_runner_line_names_the_sandbox_and_the_limits_mechanism() {
        let mut f = MachineFingerprint {
            cpu_model: Some("AMD EPYC 7B13".into()),
            logical_cores: 8,
            physical_cores: Some(4),
            kernel: "Linux 6.1".into(),
            governor: Some("performance".into()),
            ..Default::default()
        };
        assert_eq!(
            fingerprint_line(&f),
            "AMD EPYC 7B13, 8 cores (4 physical), Linux 6.1, governor performance"
        );
        f.isolation = Some("bwrap".into());
        f.limits = Some("cgroup v1: memory 18.0 GiB, 4096 processes; 3600 s CPU".into());
        assert_eq!(
            fingerprint_line(&f),
            "AMD EPYC 7B13, 8 cores (4 physical), Linux 6.1, governor performance, sandbox bwrap, \
             limits cgroup v1"
        );
    }

    /// A PR that also edits its benchmark: every answered claim says so, since the benchmark
    /// may now measure something else. A comment claim says who stated it; "30% faster" on a
    /// change of −10% reads smaller than claimed.
    #[test]
    fn claims_carry_the_benchmark_changed_note_and_who_stated_them() {
        use crate::report::fixtures::result;
        use benchgate_api::VerdictKind;
        let rows = [result("parse", VerdictKind::Faster, -10.0, [-12.0, -8.0])];
        let mut context = benchgate_api::agent::PullRequestContext {
            body: "`parse` is 30% faster.".into(),
            ..Default::default()
        };
        let plain = claims_answered(&context, &rows, Forge::GitHub);
        assert_eq!(plain[0].answer.as_deref(), Some("smaller than claimed"));
        assert!(
            plain[0]
                .notes
                .iter()
                .all(|n| !n.contains("changed in this PR"))
        );

        context.benchmark_files_changed = vec!["benches/parse.rs".into()];
        context.claimed.push(benchgate_api::agent::CommentClaim {
            line: "/benchgate claim parse -10%".into(),
            benchmark: "parse".into(),
            by: "octocat".into(),
            comment_id: 7,
        });
        let answered = claims_answered(&context, &rows, Forge::GitHub);
        assert_eq!(answered.len(), 2);
        for claim in &answered {
            assert!(
                claim
                    .notes
                    .contains(&"benchmark code changed in this PR (benches/parse.rs)".to_owned()),
                "{claim:?}"
            );
        }
        assert_eq!(answered[1].answer.as_deref(), Some("confirmed"));
        assert_eq!(answered[1].notes[0], "stated in a comment by octocat");
    }
}
