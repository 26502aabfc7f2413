//! The GitHub issue of a regression episode on the default branch: opened once (found again by
//! its marker if an earlier attempt's answer was lost), rewritten as later comparisons confirm
//! it, closed when one shows it gone.

use benchgate_store::model::OutboxId;
use benchgate_store::model::{
    Bisection, BisectionProbe, ComparisonId, Priority, Regression, RegressionKind,
};
use serde::{Deserialize, Serialize};

use super::{Context, OutboxTask, TaskError};
use crate::GitHubConfig;
use benchgate_stats::words::{self, short_sha};

/// Write the GitHub issue of a regression episode of the default branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainIssue {
    pub regression_id: i64,
}

impl OutboxTask for MainIssue {
    const KIND: &'static str = "main.issue";
    const PRIORITY: Priority = Priority::HISTORY;
    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:{}", Self::KIND, self.regression_id))
    }

    async fn run(self, cx: &Context, _row: OutboxId) -> Result<(), TaskError> {
        run(cx, self.regression_id).await
    }
}

/// Opens, updates or closes the issue of episode `id`.
#[tracing::instrument(skip(cx))]
pub async fn run(cx: &Context, id: i64) -> Result<(), TaskError> {
    let Some(episode) = cx.store.regression(id).await? else {
        return Ok(());
    };
    let repository = cx
        .store
        .repository(episode.series.repository_id)
        .await?
        .ok_or_else(|| TaskError::Permanent(format!("repository of regression {id}")))?;
    let forge = cx.forge(&super::RepoName::of(&repository))?;
    let labels = match cx.store.comparison(episode.opened_by).await? {
        Some(c) => c.config.main.map(|m| m.issue_labels).unwrap_or_default(),
        None => Vec::new(),
    };
    let marker = marker(&episode);
    let search = match cx
        .store
        .bisections(episode.series.repository_id)
        .await?
        .into_iter()
        .find(|b| b.regression_id == Some(episode.id))
    {
        Some(b) => {
            let probes = cx.store.bisection_probes(b.id).await?;
            Some((b, probes))
        }
        None => None,
    };
    let search = search.as_ref().map(|(b, p)| (b, p.as_slice()));
    let (title, body) = issue(&cx.github_config, &episode, &repository.full_name, search);
    // An issue for this episode can only have been opened after the episode was.
    let since = episode
        .created_at
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let number = match episode.issue_number {
        Some(n) => Some(n as u64),
        None => forge.find_issue(&marker, &since).await?,
    };
    let number = match number {
        Some(n) => {
            forge.update_issue(n, &title, &body, episode.open).await?;
            n
        }
        None => {
            let n = forge.create_issue(&title, &body, &labels).await?;
            if !episode.open {
                forge.update_issue(n, &title, &body, false).await?;
            }
            n
        }
    };
    if episode.issue_number != Some(number as i64) {
        cx.store
            .set_regression_issue(episode.id, number as i64)
            .await?;
    }
    tracing::info!(
        episode = episode.id,
        issue = number,
        open = episode.open,
        "regression issue written"
    );
    Ok(())
}

/// The hidden marker that finds episode `e`'s issue again.
fn marker(e: &Regression) -> String {
    format!("<!-- benchgate:main-regression:{} -->", e.id)
}

/// A culprit search of the episode and its probes.
type Search<'a> = Option<(&'a Bisection, &'a [BisectionProbe])>;

/// The issue's title and body as GitHub receives them.
fn issue(
    args: &GitHubConfig,
    e: &Regression,
    repository: &str,
    search: Search,
) -> (String, String) {
    // GitHub refuses a title over 256 characters and a body over 65,536.
    let title = crate::report::fit_bytes(title(e, search.map(|s| s.0)), 256);
    let mut text = format!("{}\n{}", marker(e), body(args, e, repository));
    if let Some((b, probes)) = search {
        text.push_str("\n\n");
        text.push_str(&super::describe_search(b, probes));
    }
    let body = crate::report::fit_bytes(text, crate::report::COMMENT_LIMIT);
    (title, body)
}

fn title(e: &Regression, search: Option<&Bisection>) -> String {
    let culprit = search
        .and_then(|b| b.outcome.clone())
        .filter(|o| o.kind == super::main_bisect::OutcomeKind::Culprit)
        .and_then(|o| o.commit)
        .map(|c| match c.pr {
            Some(pr) => format!(": culprit {} (#{pr})", short_sha(&c.sha)),
            None => format!(": culprit {}", short_sha(&c.sha)),
        })
        .unwrap_or_default();
    let change = words::percent(e.change * 100.0);
    let what = match e.kind {
        RegressionKind::Step => format!("{change} slower at {}", short_sha(&e.head_sha)),
        RegressionKind::Creep => format!(
            "crept {change} slower from {} to {}",
            short_sha(&e.base_sha),
            short_sha(&e.head_sha)
        ),
    };
    let fixed = if e.open { "" } else { " (gone)" };
    format!(
        "benchgate: `{}` ({}) {what} on `{}`{culprit}{fixed}",
        e.benchmark, e.metric, e.series.branch
    )
}

fn body(args: &GitHubConfig, e: &Regression, repository: &str) -> String {
    let link = |id: ComparisonId| format!("[#{id}]({})", args.comparison_url(id));
    let change = words::percent(e.change * 100.0);
    // Stored as fractions; an unbounded side is stored as an infinity.
    let bound = |b: f64| b.is_finite().then_some(b * 100.0);
    let interval = words::interval([bound(e.lower), bound(e.upper)]);
    let found = match e.kind {
        RegressionKind::Step => format!(
            "Comparing {} with {}, the branch before it, interleaved on one `{}` runner, \
             `{}` ({}) is **{change}** slower (interval {interval}): comparison {}.",
            short_sha(&e.head_sha),
            short_sha(&e.base_sha),
            e.series.runner_label,
            e.benchmark,
            e.metric,
            link(e.opened_by)
        ),
        RegressionKind::Creep => format!(
            "Comparing `{}` at {} with its anchor {}, interleaved on one `{}` runner, `{}` \
             ({}) is **{change}** slower (interval {interval}), although no single step \
             between them claims it: comparison {}.",
            e.series.branch,
            short_sha(&e.head_sha),
            short_sha(&e.base_sha),
            e.series.runner_label,
            e.benchmark,
            e.metric,
            link(e.opened_by)
        ),
    };
    let mut out = format!("{found}\n\n");
    if e.last_seen_by != e.opened_by {
        out.push_str(&format!(
            "Still there in comparison {}.\n\n",
            link(e.last_seen_by)
        ));
    }
    match e.closed_by {
        Some(by) if !e.open => out.push_str(&format!(
            "**Gone**: comparison {} against a commit from before it rules this slowdown \
             out.\n\n",
            link(by)
        )),
        _ => out.push_str(
            "benchgate closes this issue when a comparison against a commit from before the \
             regression shows it gone.\n\n",
        ),
    }
    out.push_str(&format!(
        "History: {}/history?repository={repository}&branch={}",
        args.public_url.trim_end_matches('/'),
        e.series.branch
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::model::{MainSeries, RepositoryId};

    fn episode(kind: RegressionKind) -> Regression {
        let at = crate::report::fixtures::now();
        Regression {
            id: 3,
            series: MainSeries {
                repository_id: RepositoryId(1),
                branch: "main".into(),
                runner_label: "linux-x86-quiet".into(),
                suite: String::new(),
            },
            benchmark: "parse/large".into(),
            metric: "wall_time".into(),
            kind,
            open: true,
            opened_by: ComparisonId(42),
            base_sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e".into(),
            head_sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".into(),
            change: 0.065,
            lower: 0.041,
            upper: 0.09,
            last_seen_by: ComparisonId(42),
            closed_by: None,
            issue_number: None,
            created_at: at,
            updated_at: at,
        }
    }

    fn shown(e: &Regression) -> String {
        let args = super::super::test_args();
        let (title, body) = issue(&args, e, "acme/widgets", None);
        format!("title: {title}\n\n{body}\n")
    }

    /// The issue of a slowdown found on one step, still open and seen again by a later
    /// comparison (its interval not bounded above yet), and of a creep over several commits
    /// that a later anchor comparison showed gone (CONVENTIONS 21).
    #[test]
    fn the_regression_issue_reads_as_pinned() {
        insta::assert_snapshot!("issue_step", shown(&episode(RegressionKind::Step)));
        let mut again = episode(RegressionKind::Step);
        (again.last_seen_by, again.upper) = (ComparisonId(45), f64::INFINITY);
        insta::assert_snapshot!("issue_step_seen_again", shown(&again));
        let mut creep = episode(RegressionKind::Creep);
        (creep.change, creep.lower, creep.upper) = (0.023, 0.011, 0.036);
        creep.base_sha = "a3f9e2c41b7d5e8f9012c3d4e5f6a7b8c9d0e1f2".into();
        (creep.last_seen_by, creep.closed_by, creep.open) =
            (ComparisonId(48), Some(ComparisonId(51)), false);
        insta::assert_snapshot!("issue_creep_gone", shown(&creep));
    }
}
