//! Judging a finished comparison of the default branch: a row the gate calls a practical
//! regression ([`opens_episode`]) opens (or confirms) a regression episode per benchmark; a comparison against a commit from before
//! an open episode that shows it gone closes it; a step that wins back what an episode lost
//! asks for that comparison. Issues and the comment on the merged PR follow as their own rows.

use benchgate_api::VerdictKind;
use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    Comparison, ComparisonId, ComparisonState, MAIN_REPORT, MainKind, NewBisection, NewRegression,
    Priority, Regression, RegressionKind, comparison_key,
};
use serde::{Deserialize, Serialize};

use benchgate_stats::words::short_sha;

use super::{Context, MainIssue, MarkedComment, OutboxTask, RepoName, TaskError};
use crate::main_history::{commit_sequence, ordered_steps, schedule_anchor, series_of};

/// Judge a finished comparison of the default branch (the store writes this row when it ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainReport {
    pub comparison_id: i64,
}

impl OutboxTask for MainReport {
    const KIND: &'static str = MAIN_REPORT;
    const PRIORITY: Priority = Priority::HISTORY;
    fn dedupe_key(&self) -> Option<String> {
        Some(comparison_key(Self::KIND, ComparisonId(self.comparison_id)))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        run(cx, self.comparison_id).await
    }
}

/// The label of the comment on a merged PR whose step made the branch slower.
pub const MERGED_PR_LABEL: &str = "main-regression";

/// Judges comparison `id` once it is done.
#[tracing::instrument(skip(cx))]
pub async fn run(cx: &Context, id: i64) -> Result<(), TaskError> {
    let Some(c) = cx.store.comparison(ComparisonId(id)).await? else {
        return Ok(());
    };
    let (Some(series), Some(main)) = (series_of(&c), c.main.clone()) else {
        return Ok(());
    };
    if c.state != ComparisonState::Done {
        return Ok(());
    }
    // Every upload was analysed already; once more so the judgement reads all of them.
    crate::comparison_analysis::analyze_comparison(&cx.store, c.id).await?;
    let stored = &c.config;
    let settings = stored.main.clone().unwrap_or_default();
    let results = cx.store.comparison_results(c.id).await?;
    let open: Vec<Regression> = cx
        .store
        .regressions(c.repository_id)
        .await?
        .into_iter()
        .filter(|r| r.open && r.series == series)
        .collect();
    let all = cx
        .store
        .main_comparisons(c.repository_id, &series.branch)
        .await?;
    let seq = commit_sequence(&ordered_steps(&all, &series));
    let kind = match main.kind {
        MainKind::Step => RegressionKind::Step,
        MainKind::Anchor => RegressionKind::Creep,
    };
    let mut raised = Vec::new();
    let mut slower_rows = Vec::new();
    for row in results.iter().map(|r| &r.result).filter(|r| r.gated) {
        let same = |e: &&Regression| e.benchmark == row.name && e.metric == row.metric;
        if opens_episode(row) {
            let episode = cx
                .store
                .open_regression(&NewRegression {
                    series: series.clone(),
                    benchmark: row.name.clone(),
                    metric: row.metric.clone(),
                    kind,
                    comparison: c.id,
                    base_sha: c.base_sha.clone(),
                    head_sha: c.head_sha.clone(),
                    change: row.change_pct.unwrap_or(0.0) / 100.0,
                    lower: row.interval_pct[0].unwrap_or(f64::NEG_INFINITY) / 100.0,
                    upper: row.interval_pct[1].unwrap_or(f64::INFINITY) / 100.0,
                })
                .await?;
            tracing::info!(benchmark = %row.name, metric = %row.metric, episode = episode.id, new = episode.opened_by == c.id, kind = kind.as_str(), "regression on the default branch");
            if episode.opened_by == c.id && kind == RegressionKind::Step {
                slower_rows.push((row.clone(), episode.id));
            }
            // A step of several commits (a folded burst) or a creep: which commit did it?
            if episode.opened_by == c.id
                && main.commits.len() > 1
                && settings.bisect
                && cx.config.bisect_max_rounds > 0
            {
                let (search, new) = cx
                    .store
                    .create_bisection(&NewBisection {
                        series: series.clone(),
                        benchmark: row.name.clone(),
                        metric: row.metric.clone(),
                        regression_id: Some(episode.id),
                        source_comparison: None,
                        good_sha: c.base_sha.clone(),
                        bad_sha: c.head_sha.clone(),
                        requested_by: None,
                    })
                    .await?;
                if new {
                    tracing::info!(
                        search = search.id,
                        episode = episode.id,
                        commits = main.commits.len(),
                        "culprit search started"
                    );
                }
            }
            raised.push(episode.id);
            continue;
        }
        let won_back = row.verdict == VerdictKind::Faster && row.practical;
        let practical_slower = row.verdict == VerdictKind::Slower && row.practical;
        // Gone: no change beyond the margin, faster, or (no practical slowdown and) an upper
        // bound below the episode's own lower bound, which rules out the slowdown it found.
        let gone = |e: &Regression| {
            matches!(row.verdict, VerdictKind::Equivalent | VerdictKind::Faster)
                || (!practical_slower && row.interval_pct[1].is_some_and(|u| u / 100.0 < e.lower))
        };
        for episode in open.iter().filter(same) {
            let gone = gone(episode);
            if main.kind == MainKind::Anchor && gone && covers(&seq, &c, episode) {
                if cx.store.close_regression(episode.id, c.id).await? {
                    tracing::info!(benchmark = %row.name, episode = episode.id, "regression gone; episode closed");
                    raised.push(episode.id);
                }
            } else if (main.kind == MainKind::Anchor && gone) || won_back {
                // Gone or won back relative to something else: only a comparison against a
                // commit from before the episode can say it is gone.
                schedule_anchor(
                    &cx.store,
                    cx.config.max_attempts,
                    &series,
                    Some(&episode.base_sha),
                    chrono::Utc::now(),
                )
                .await?;
            }
        }
    }
    if settings.issues {
        for regression_id in raised {
            cx.enqueue(MainIssue { regression_id }).await?;
        }
    }
    if let (Some(pr), false) = (stored.merged_pr, slower_rows.is_empty()) {
        let repository = cx
            .store
            .repository(c.repository_id)
            .await?
            .ok_or_else(|| TaskError::Permanent(format!("repository {}", c.repository_id)))?;
        cx.enqueue(MarkedComment {
            repo: RepoName::of(&repository),
            pr,
            label: MERGED_PR_LABEL.to_owned(),
            body: merged_pr_comment(&cx.github_config, &c, &series.branch, &slower_rows),
        })
        .await?;
    }
    Ok(())
}

/// Whether a gated row of a default-branch comparison opens a regression episode: the PR's gate
/// (`stats::gate`) with `practical-regression` as the branch's default, so a step below the
/// margin is left to the anchor comparison (creep). An exact count that grew beyond M opens one
/// as a slowdown does, and a rule's own `fail_on` applies as on a pull request.
pub fn opens_episode(row: &benchgate_api::BenchmarkResult) -> bool {
    benchgate_stats::is_regression(row, benchgate_api::FailOn::PracticalRegression)
}

/// Whether comparison `c` spans episode `e`: its base at or before the episode's base, its head
/// at or after the episode's head, along the branch's compared commits.
fn covers(seq: &[String], c: &Comparison, e: &Regression) -> bool {
    let at = |sha: &str| seq.iter().position(|s| s == sha);
    match (
        at(&c.base_sha),
        at(&e.base_sha),
        at(&c.head_sha),
        at(&e.head_sha),
    ) {
        (Some(cb), Some(eb), Some(ch), Some(eh)) => cb <= eb && ch >= eh,
        _ => c.base_sha == e.base_sha,
    }
}

/// The comment on a merged PR whose step made the branch slower: each row that opened an
/// episode, in the report's words.
fn merged_pr_comment(
    args: &crate::GitHubConfig,
    c: &Comparison,
    branch: &str,
    rows: &[(benchgate_api::BenchmarkResult, i64)],
) -> String {
    let mut out = format!(
        "**benchgate: `{branch}` got slower with this merge** ({}, on `{}`):\n\n",
        short_sha(&c.head_sha),
        c.runner_label
    );
    for (row, _) in rows {
        out.push_str(&format!(
            "- `{}` ({}): **{}**, {}, {} pairs\n",
            row.name,
            row.metric,
            benchgate_stats::words::change(row),
            benchgate_stats::words::verdict(row),
            row.n
        ));
    }
    out.push_str(&format!(
        "\nMeasured by comparing {} with {} interleaved on one runner: [comparison #{}]({}).",
        short_sha(&c.head_sha),
        short_sha(&c.base_sha),
        c.id,
        args.comparison_url(c.id)
    ));
    out
}

/// The PR a merge commit's message names: "Merge pull request #12 from …" (a merge) or
/// "Title (#12)" (a squash), on its first line.
pub fn merged_pr(message: &str) -> Option<u64> {
    let first = message.lines().next()?.trim();
    if let Some(rest) = first.strip_prefix("Merge pull request #") {
        return rest.split_whitespace().next()?.parse().ok();
    }
    let inner = first.strip_suffix(')')?;
    let at = inner.rfind("(#")?;
    inner[at + 2..].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{merged_pr, merged_pr_comment, opens_episode};
    use benchgate_api::{BenchmarkResult, Direction, FailOn, RuleSet, VerdictKind};
    use benchgate_store::model::{ComparisonId, ComparisonState, RepositoryId};

    /// The comment on a merged PR whose step made the branch slower: a time beyond the margin
    /// and an allocation count that grew (CONVENTIONS 21).
    #[test]
    fn the_merged_pr_comment_reads_as_pinned() {
        let at = crate::report::fixtures::now();
        let c = benchgate_store::model::Comparison {
            id: ComparisonId(57),
            repository_id: RepositoryId(1),
            repository: "acme/widgets".into(),
            pr_number: None,
            base_sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e".into(),
            head_sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".into(),
            runner_label: "linux-x86-quiet".into(),
            kind: benchgate_store::ComparisonKind::Plain,
            config: serde_json::from_value(
                serde_json::json!({"benchmark": {"run": "./bench", "format": "criterion"}}),
            )
            .unwrap(),
            planned_rounds: None,
            main: None,
            state: ComparisonState::Done,
            check_run_id: None,
            rounds_generation: 0,
            check_run_generation: 0,
            check_run_completed: false,
            created_at: at,
            updated_at: at,
        };
        let mut time =
            crate::report::fixtures::result("parse/large", VerdictKind::Slower, 6.5, [4.1, 9.0]);
        time.n = 20;
        let mut allocations = row(VerdictKind::Exact, "allocations", 1843.0, 2011.0);
        (allocations.practical, allocations.gated, allocations.n) = (true, true, 20);
        let rows = [(time, 3), (allocations, 4)];
        let body = merged_pr_comment(&crate::tasks::test_args(), &c, "main", &rows);
        insta::assert_snapshot!("merged_pr_comment", body);
    }

    fn row(verdict: VerdictKind, metric: &str, base: f64, head: f64) -> BenchmarkResult {
        let mut r = BenchmarkResult::unanalysed(
            "parse",
            metric,
            "count",
            Direction::LowerIsBetter,
            verdict,
            String::new(),
        );
        r.verdict = verdict;
        (r.base_center, r.head_center) = (Some(base), Some(head));
        r.change_pct = Some(100.0 * (head / base - 1.0));
        r.margin_pct = 1.0;
        r
    }

    /// The branch's judgement is the gate's: an allocation count that grew opens an episode
    /// as a slowdown does, a rule's `fail_on = "never"` opens none, and a slowdown inside the
    /// margin is left to the anchor comparison.
    #[test]
    fn an_allocation_count_that_grew_opens_an_episode_as_the_gate_decides() {
        let gate = |rows: &mut [BenchmarkResult], rules: &[benchgate_api::BenchmarkRule]| {
            benchgate_stats::mark_gate(rows, 0.05, &RuleSet::new(rules));
        };
        let mut allocations = [row(VerdictKind::Exact, "allocations", 100.0, 120.0)];
        allocations[0].practical = true;
        gate(&mut allocations, &[]);
        assert!(allocations[0].gated, "{:?}", allocations[0]);
        assert!(opens_episode(&allocations[0]));
        assert!(benchgate_stats::is_regression(
            &allocations[0],
            FailOn::Regression
        ));

        let mut slower = [row(VerdictKind::Slower, "time", 100.0, 103.0)];
        slower[0].practical = true;
        slower[0].e_value = 1e6;
        gate(&mut slower, &[]);
        assert!(opens_episode(&slower[0]), "{:?}", slower[0]);
        slower[0].practical = false;
        assert!(
            !opens_episode(&slower[0]),
            "inside the margin: the anchor's to find"
        );

        let mut never = [row(VerdictKind::Exact, "allocations", 100.0, 120.0)];
        never[0].practical = true;
        let mut rule = benchgate_api::BenchmarkRule::matching("parse");
        rule.fail_on = Some(FailOn::Never);
        gate(&mut never, &[rule]);
        assert!(!opens_episode(&never[0]), "{:?}", never[0]);
    }

    #[test]
    fn merge_and_squash_messages_name_their_pr() {
        assert_eq!(
            merged_pr("Merge pull request #1347 from octo/fast-path"),
            Some(1347)
        );
        assert_eq!(merged_pr("Faster parser (#88)\n\nbody (#3)"), Some(88));
        assert_eq!(merged_pr("Fix (#12) in the title only"), None);
        assert_eq!(merged_pr("Initial commit"), None);
        assert_eq!(merged_pr(""), None);
    }
}
