//! The check of a merge group (GitHub's merge queue): the group's head compared with its base
//! decides, a group of several PRs names the PR whose commit made it slower (each commit
//! compared with its parent, or a culprit search for four PRs or more), a group that leaves the
//! queue ends neutral, and a deadline concludes what is still undecided so a slow runner never
//! stalls the queue.

use benchgate_api::agent::{GroupPullRequest, MergeGroupContext, NoAnswerConclusion};
use benchgate_github::client::{CheckConclusion, CheckStatus};
use benchgate_stats::words;
use benchgate_store::model::ComparisonState;
use chrono::{DateTime, Utc};

use crate::report::CheckOutcome;

/// The first-parent chain of a group's commits, oldest first: one commit per PR it merges.
/// `commits` are (sha, message, parents) as GitHub's compare lists them; the group's ref names
/// the last PR when its commit message does not.
pub fn group_pull_requests(
    commits: &[(String, String, Vec<String>)],
    base_sha: &str,
    head_sha: &str,
    queued_pr: Option<u64>,
) -> Vec<GroupPullRequest> {
    let mut chain = Vec::new();
    let mut at = head_sha.to_owned();
    while at != base_sha {
        let Some((sha, message, parents)) = commits.iter().find(|(sha, ..)| *sha == at) else {
            break;
        };
        let Some(parent) = parents.first() else {
            break;
        };
        chain.push(GroupPullRequest {
            number: crate::tasks::merged_pr(message),
            sha: sha.clone(),
            parent: parent.clone(),
        });
        at = parent.clone();
    }
    chain.reverse();
    if let Some(last) = chain.last_mut() {
        last.number = last.number.or(queued_pr);
    }
    chain
}

/// What the check of a group measured so far.
#[derive(Debug, Clone)]
pub struct GroupView<'a> {
    pub group: &'a MergeGroupContext,
    pub state: ComparisonState,
    pub created_at: DateTime<Utc>,
    /// The group head against its base, as a PR's check would read.
    pub outcome: CheckOutcome,
    /// One per PR of a group of several (fewer than [`super::SEARCH_FROM`]), in merge order:
    /// its commit against its parent.
    pub steps: Vec<StepView>,
    /// A larger group's culprit search, once the group is slower.
    pub search: Option<GroupSearch>,
    pub now: DateTime<Utc>,
}

/// The culprit search of a slower group of many PRs (docs/statistics.md §7d).
#[derive(Debug, Clone)]
pub struct GroupSearch {
    pub running: bool,
    /// The PR whose commit it named.
    pub culprit: Option<GroupPullRequest>,
    /// One line: what it found, or where it stands.
    pub summary: String,
    /// Its section with every probe, under the group's report.
    pub text: String,
}

/// One PR's commit of a group against its parent.
#[derive(Debug, Clone)]
pub struct StepView {
    pub pr: GroupPullRequest,
    /// `None` until its comparison exists.
    pub outcome: Option<CheckOutcome>,
    pub comparison_url: Option<String>,
}

/// What the group's check says.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupCheck {
    pub status: CheckStatus,
    pub conclusion: Option<CheckConclusion>,
    pub title: String,
    /// Lines above the group's report.
    pub preface: String,
    /// The steps still measuring once the check concluded: their jobs are cancelled.
    pub concluded: bool,
}

impl GroupView<'_> {
    fn deadline(&self) -> DateTime<Utc> {
        self.created_at
            + chrono::TimeDelta::minutes(i64::from(self.group.settings.deadline_minutes))
    }

    fn past_deadline(&self) -> bool {
        self.now >= self.deadline()
    }

    /// "12 min to the deadline", for a check still in progress.
    fn time_left(&self) -> String {
        let minutes = (self.deadline() - self.now)
            .num_seconds()
            .max(0)
            .unsigned_abs()
            .div_ceil(60);
        format!("{minutes} min to the deadline")
    }

    /// The PRs whose own commit is slower (their step failed the gate).
    fn culprits(&self) -> Vec<&StepView> {
        self.steps
            .iter()
            .filter(|s| {
                s.outcome
                    .as_ref()
                    .is_some_and(|o| o.conclusion == Some(CheckConclusion::Failure))
            })
            .collect()
    }

    fn steps_decided(&self) -> bool {
        self.steps.iter().all(|s| {
            s.outcome
                .as_ref()
                .is_some_and(|o| o.status == CheckStatus::Completed)
        })
    }
}

/// Decides the group's check.
pub fn decide(v: &GroupView<'_>) -> GroupCheck {
    let minutes = v.group.settings.deadline_minutes;
    let done = |conclusion, title: String, preface: String| GroupCheck {
        status: CheckStatus::Completed,
        conclusion: Some(conclusion),
        title,
        preface,
        concluded: true,
    };
    let decided = v.outcome.status == CheckStatus::Completed
        && v.outcome.conclusion != Some(CheckConclusion::Cancelled);
    if !decided {
        if v.past_deadline() {
            let conclusion = match v.group.settings.on_deadline {
                NoAnswerConclusion::Neutral => CheckConclusion::Neutral,
                NoAnswerConclusion::Failure => CheckConclusion::Failure,
            };
            return done(
                conclusion,
                format!("undecided after the {minutes} min deadline"),
                format!(
                    "The merge queue's deadline (`[merge_queue] deadline`, {minutes} min) passed \
                     before the comparison decided; it concluded {} with what was measured so \
                     far, and its remaining jobs were cancelled.",
                    v.group.settings.on_deadline.as_str()
                ),
            );
        }
        if v.state == ComparisonState::Cancelled {
            return done(
                CheckConclusion::Neutral,
                "left the merge queue before benchgate decided".to_owned(),
                "The merge group left the queue before the comparison decided; its jobs were \
                 cancelled. What was measured so far is below."
                    .to_owned(),
            );
        }
        return GroupCheck {
            status: v.outcome.status,
            conclusion: None,
            title: v.outcome.title.clone(),
            preface: scope(v),
            concluded: false,
        };
    }
    if let (Some(search), Some(CheckConclusion::Failure)) = (&v.search, v.outcome.conclusion) {
        let preface = format!("{}\n\n{}", scope(v), search.text);
        if search.running && !v.past_deadline() {
            return GroupCheck {
                status: CheckStatus::InProgress,
                conclusion: None,
                title: format!(
                    "slower than the base; searching for the PR that did it ({}): {}",
                    v.time_left(),
                    v.outcome.title
                ),
                preface,
                concluded: false,
            };
        }
        let title = match (&search.culprit, search.running) {
            (Some(pr), _) => format!("{} made it slower", pr_name(pr)),
            (None, true) => format!(
                "slower as a group; the search for the PR did not end within the {minutes} min \
                 deadline"
            ),
            (None, false) => format!("slower as a group; {}", search.summary),
        };
        let preface = if search.running {
            format!(
                "The merge queue's deadline (`[merge_queue] deadline`, {minutes} min) passed while \
                 the search for the PR ran: the check concluded with the group's own result. The \
                 search goes on at the history's priority; the PR it names will be stated here \
                 and on the branch's history page.\n\n{preface}"
            )
        } else {
            preface
        };
        return done(CheckConclusion::Failure, title, preface);
    }
    if v.outcome.conclusion != Some(CheckConclusion::Failure) || v.steps.is_empty() {
        let title = match (v.group.prs.as_slice(), v.outcome.conclusion) {
            ([pr], Some(CheckConclusion::Failure)) => {
                format!("{} made it slower: {}", pr_name(pr), v.outcome.title)
            }
            _ => v.outcome.title.clone(),
        };
        return done(
            v.outcome.conclusion.unwrap_or(CheckConclusion::Neutral),
            title,
            scope(v),
        );
    }
    // Slower as a group: wait for each PR's own commit, to name the one.
    if !v.steps_decided() && !v.past_deadline() {
        return GroupCheck {
            status: CheckStatus::InProgress,
            conclusion: None,
            title: format!(
                "slower than the base; measuring each PR's commit to name the one ({}): {}",
                v.time_left(),
                v.outcome.title
            ),
            preface: format!("{}\n\n{}", scope(v), step_table(v)),
            concluded: false,
        };
    }
    let culprits = v.culprits();
    let title = if culprits.is_empty() {
        let prs: Vec<String> = v.steps.iter().map(|s| pr_name(&s.pr)).collect();
        format!(
            "slower as a group; no single PR's commit is slower on its own ({})",
            prs.join(", ")
        )
    } else {
        let names: Vec<String> = culprits.iter().map(|s| pr_name(&s.pr)).collect();
        format!("{} made it slower", names.join(" and "))
    };
    done(
        CheckConclusion::Failure,
        title,
        format!("{}\n\n{}", scope(v), step_table(v)),
    )
}

/// "#104", or the commit when no PR is named.
pub fn pr_name(pr: &GroupPullRequest) -> String {
    match pr.number {
        Some(n) => format!("#{n}"),
        None => format!("commit {}", words::short_sha(&pr.sha)),
    }
}

/// What was compared: the group of which PRs, against which base.
fn scope(v: &GroupView<'_>) -> String {
    let prs: Vec<String> = v.group.prs.iter().map(pr_name).collect();
    let what = match prs.len() {
        0 => "this merge group".to_owned(),
        1 => format!("the merge group of {}", prs[0]),
        _ => format!("the merge group of {}", prs.join(", ")),
    };
    format!(
        "Merge queue: {what} (`{}`) compared with the tip of `{}` it merges onto.",
        v.group.head_ref, v.group.base_ref
    )
}

/// Each PR's commit against its parent.
fn step_table(v: &GroupView<'_>) -> String {
    let mut out = String::from("| PR | commit | its own change |\n|---|---|---|\n");
    for s in &v.steps {
        let verdict = match &s.outcome {
            None => "not started".to_owned(),
            Some(o) if o.status != CheckStatus::Completed => format!("measuring: {}", o.title),
            Some(o) if o.conclusion == Some(CheckConclusion::Failure) => {
                format!("**slower**: {}", o.title)
            }
            Some(o) => o.title.clone(),
        };
        let verdict = match &s.comparison_url {
            Some(url) => format!("[{verdict}]({url})"),
            None => verdict,
        };
        out.push_str(&format!(
            "| {} | `{}` | {verdict} |\n",
            pr_name(&s.pr),
            words::short_sha(&s.pr.sha)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::agent::MergeQueueSettings;

    fn commit(sha: &str, message: &str, parents: &[&str]) -> (String, String, Vec<String>) {
        (
            sha.to_owned(),
            message.to_owned(),
            parents.iter().map(|p| (*p).to_owned()).collect(),
        )
    }

    #[test]
    fn the_group_is_its_first_parent_chain_one_pr_per_commit() {
        // Merge commits of #11 and #12, with #12's own commits listed too (second parents).
        let commits = vec![
            commit("c1", "work", &["base"]),
            commit(
                "m1",
                "Merge pull request #11 from o/a\n\nA",
                &["base", "c1"],
            ),
            commit("c2", "more work", &["base"]),
            commit("m2", "Merge pull request #12 from o/b", &["m1", "c2"]),
        ];
        let prs = group_pull_requests(&commits, "base", "m2", Some(12));
        let named: Vec<_> = prs.iter().map(|p| (p.number, p.sha.as_str())).collect();
        assert_eq!(named, vec![(Some(11), "m1"), (Some(12), "m2")]);
        assert_eq!(prs[1].parent, "m1");
        // A squash whose message names no PR takes the number from the group's ref.
        let squash = vec![commit("s1", "Speed up parsing", &["base"])];
        let prs = group_pull_requests(&squash, "base", "s1", Some(104));
        assert_eq!(prs[0].number, Some(104));
    }

    fn outcome(
        status: CheckStatus,
        conclusion: Option<CheckConclusion>,
        title: &str,
    ) -> CheckOutcome {
        CheckOutcome {
            status,
            conclusion,
            title: title.to_owned(),
        }
    }

    fn group(n: usize) -> MergeGroupContext {
        MergeGroupContext {
            head_ref: "gh-readonly-queue/main/pr-12-abc".into(),
            base_ref: "main".into(),
            settings: MergeQueueSettings::default(),
            prs: (0..n)
                .map(|i| GroupPullRequest {
                    number: Some(11 + i as u64),
                    sha: format!("{i}").repeat(40),
                    parent: "b".repeat(40),
                })
                .collect(),
            step_of: None,
            alpha_split: None,
        }
    }

    fn view<'a>(g: &'a MergeGroupContext, o: CheckOutcome, steps: Vec<StepView>) -> GroupView<'a> {
        let now = Utc::now();
        GroupView {
            group: g,
            state: ComparisonState::Done,
            created_at: now,
            outcome: o,
            steps,
            search: None,
            now,
        }
    }

    fn step(g: &MergeGroupContext, i: usize, o: Option<CheckOutcome>) -> StepView {
        StepView {
            pr: g.prs[i].clone(),
            outcome: o,
            comparison_url: None,
        }
    }

    const SLOWER: Option<CheckConclusion> = Some(CheckConclusion::Failure);

    #[test]
    fn a_slower_group_names_the_pr_whose_commit_is_slower() {
        let g = group(2);
        let failed = outcome(CheckStatus::Completed, SLOWER, "work +50%");
        let passed = outcome(
            CheckStatus::Completed,
            Some(CheckConclusion::Success),
            "work ±0%",
        );
        let running = outcome(CheckStatus::InProgress, None, "running, 3 of 8 rounds");
        // Steps still measuring: the check waits to name the PR.
        let waiting = decide(&view(
            &g,
            failed.clone(),
            vec![
                step(&g, 0, Some(passed.clone())),
                step(&g, 1, Some(running)),
            ],
        ));
        assert_eq!(waiting.status, CheckStatus::InProgress);
        assert!(
            waiting.title.contains("measuring each PR's commit"),
            "{}",
            waiting.title
        );
        let named = decide(&view(
            &g,
            failed.clone(),
            vec![
                step(&g, 0, Some(passed.clone())),
                step(&g, 1, Some(failed.clone())),
            ],
        ));
        assert_eq!(named.conclusion, SLOWER);
        assert_eq!(named.title, "#12 made it slower");
        insta::assert_snapshot!("group_of_two_names_the_slower_pr", named.preface);
        let neither = decide(&view(
            &g,
            failed,
            vec![step(&g, 0, Some(passed.clone())), step(&g, 1, Some(passed))],
        ));
        assert_eq!(neither.conclusion, SLOWER);
        assert!(neither.title.contains("#11, #12"), "{}", neither.title);
    }

    #[test]
    fn a_group_that_left_the_queue_or_ran_out_of_time_concludes() {
        let mut g = group(1);
        let queued = outcome(CheckStatus::Queued, None, "queued, 0 of 8 rounds");
        let mut v = view(&g, queued.clone(), Vec::new());
        assert_eq!(decide(&v).status, CheckStatus::Queued);
        v.state = ComparisonState::Cancelled;
        v.outcome = outcome(
            CheckStatus::Completed,
            Some(CheckConclusion::Cancelled),
            "x",
        );
        let left = decide(&v);
        assert_eq!(left.conclusion, Some(CheckConclusion::Neutral));
        assert!(left.title.contains("left the merge queue"));
        g.settings.on_deadline = NoAnswerConclusion::Failure;
        let mut late = view(&g, queued, Vec::new());
        late.now = late.created_at + chrono::TimeDelta::minutes(45);
        let late = decide(&late);
        assert_eq!(late.conclusion, Some(CheckConclusion::Failure));
        assert_eq!(late.title, "undecided after the 45 min deadline");
    }

    #[test]
    fn a_group_of_one_pr_names_it_when_slower() {
        let g = group(1);
        let failed = outcome(CheckStatus::Completed, SLOWER, "work +50%");
        let c = decide(&view(&g, failed, Vec::new()));
        assert_eq!(c.title, "#11 made it slower: work +50%");
        let ok = outcome(
            CheckStatus::Completed,
            Some(CheckConclusion::Success),
            "work ±0%",
        );
        assert_eq!(decide(&view(&g, ok, Vec::new())).title, "work ±0%");
    }

    /// A group of many PRs: in progress while its search runs, then the PR it named, or the
    /// group alone when it named none or ran out of time.
    #[test]
    fn a_large_slower_group_waits_for_its_search_then_names_what_it_found() {
        let g = group(4);
        let failed = outcome(CheckStatus::Completed, SLOWER, "work +50%");
        let search = |running, culprit: Option<usize>| GroupSearch {
            running,
            culprit: culprit.map(|i| g.prs[i].clone()),
            summary: "undecided between 1111111 and 3333333 (3 probes, 48 rounds)".into(),
            text: "### Which commit".into(),
        };
        let mut v = view(&g, failed, Vec::new());
        v.search = Some(search(true, None));
        let running = decide(&v);
        assert_eq!(running.status, CheckStatus::InProgress);
        assert_eq!(
            running.title,
            "slower than the base; searching for the PR that did it (45 min to the deadline): \
             work +50%"
        );
        v.now = v.created_at + chrono::TimeDelta::seconds(44 * 60 + 1);
        assert!(
            decide(&v).title.contains("(1 min to the deadline)"),
            "a part of a minute left is a minute"
        );
        v.now = v.created_at;
        assert!(
            running.preface.contains("### Which commit"),
            "{}",
            running.preface
        );
        v.search = Some(search(false, Some(2)));
        let named = decide(&v);
        assert_eq!(
            (named.conclusion, named.title.as_str()),
            (SLOWER, "#13 made it slower")
        );
        v.search = Some(search(false, None));
        assert_eq!(
            decide(&v).title,
            "slower as a group; undecided between 1111111 and 3333333 (3 probes, 48 rounds)"
        );
        v.search = Some(search(true, None));
        v.now = v.created_at + chrono::TimeDelta::minutes(45);
        let late = decide(&v);
        assert_eq!(late.conclusion, SLOWER);
        assert!(
            late.title
                .contains("did not end within the 45 min deadline"),
            "{}",
            late.title
        );
        assert!(
            late.preface
                .contains("The search goes on at the history's priority"),
            "{}",
            late.preface
        );
        // Named after the deadline: the same conclusion, now with the PR.
        v.search = Some(search(false, Some(2)));
        let restated = decide(&v);
        assert_eq!(
            (restated.conclusion, restated.title.as_str()),
            (SLOWER, "#13 made it slower")
        );
    }
}
