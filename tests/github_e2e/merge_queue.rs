//! GitHub's merge queue end to end: real merge groups built with git in the test's repository,
//! `merge_group` deliveries shaped as GitHub sends them, the real server and agent, and the
//! strict fake, which here also refuses a check run on any commit but the group's head.

use std::path::Path;

use serde_json::{Value, json};

use super::{
    Setup, checks_of, eventually, nothing_refused, opened_pr_is_benchmarked, repo_config, setup,
    wait_for_count,
};
use crate::support::git;

/// A commit on top of `from` that sets the benchmark's work to `iterations` (or only touches
/// another file when `None`).
fn commit_on(path: &Path, from: &str, iterations: Option<u64>, message: &str) -> String {
    git(path, &["checkout", "-q", "--detach", from]);
    match iterations {
        Some(n) => std::fs::write(path.join("iterations"), n.to_string()).unwrap(),
        // A file of its own per message: PRs of one group merge without conflicts.
        None => std::fs::write(path.join(message.replace(' ', "-")), message).unwrap(),
    }
    git(path, &["add", "."]);
    git(path, &["commit", "-qm", message]);
    git(path, &["rev-parse", "HEAD"])
}

/// The merge queue's commit: `pr_head` merged into `parent` with GitHub's merge message.
fn merge_commit(path: &Path, parent: &str, pr_head: &str, pr: u64) -> String {
    git(path, &["checkout", "-q", "--detach", parent]);
    let message = format!("Merge pull request #{pr} from Codertocat/pr-{pr}");
    git(path, &["merge", "-q", "--no-ff", "-m", &message, pr_head]);
    let sha = git(path, &["rev-parse", "HEAD"]);
    // GitHub keeps the group's ref while it is queued; a clone finds the commit under it.
    let group_ref = format!(
        "refs/heads/gh-readonly-queue/master/pr-{pr}-{}",
        &parent[..12]
    );
    git(path, &["update-ref", &group_ref, &sha]);
    sha
}

/// A `merge_group` delivery for the group `head` on `base`, as GitHub sends it.
fn merge_group(s: &Setup, action: &str, base: &str, head: &str, last_pr: u64) -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/github/tests/fixtures/webhooks/merge_group.checks_requested.json"
    );
    let mut p: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    p["action"] = json!(action);
    if action == "destroyed" {
        p["reason"] = json!("dequeued");
    }
    p["repository"]["full_name"] = json!(super::REPO);
    p["repository"]["clone_url"] = json!(s.project.path.to_string_lossy());
    p["installation"] = json!({"id": 1});
    let group = &mut p["merge_group"];
    group["head_sha"] = json!(head);
    group["base_sha"] = json!(base);
    group["base_ref"] = json!("refs/heads/master");
    group["head_ref"] = json!(format!(
        "refs/heads/gh-readonly-queue/master/pr-{last_pr}-{base}"
    ));
    group["head_commit"]["id"] = json!(head);
    p
}

/// Waits for a completed check run on `sha` and returns the first one.
async fn completed_check(s: &Setup, sha: &str, secs: u64) -> crate::github::CheckRun {
    eventually(&s.github, "the group's check to conclude", secs, || {
        checks_of(&s.github, sha)
            .iter()
            .any(|c| c.status == "completed")
    })
    .await;
    let check = checks_of(&s.github, sha).remove(0);
    eprintln!("group check: {}\n{}", check.title, check.summary);
    check
}

const JOBS: &str = "SELECT COUNT(*) FROM jobs WHERE comparison_id IS NOT NULL";
const ACTIVE_JOBS: &str = "SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')";

/// (1) A PR whose verdict is fresh enters the queue: the group's check restates it within
/// seconds, no job is queued, and every check run went on a commit GitHub would accept.
#[tokio::test]
async fn a_queued_pr_compared_on_the_same_base_restates_its_verdict_without_runner_time() {
    let mut s = setup(Some(&repo_config(8)), None).await;
    opened_pr_is_benchmarked(&mut s).await;
    let (base, head) = (s.project.base.clone(), s.project.head.clone());
    let group = merge_commit(&s.project.path, &base, &head, 2);
    s.github.refuse_checks_except(&[&group]);
    let jobs = s.count(JOBS).await;

    let body = merge_group(&s, "checks_requested", &base, &group, 2);
    let (status, answer) = s.deliver("merge_group", "d-mq-1", &body).await;
    assert_eq!(status, 202, "{answer}");
    let check = completed_check(&s, &group, 30).await;
    assert_eq!(
        check.name, "benchgate",
        "the name branch protection requires"
    );
    assert_eq!(
        check.conclusion.as_deref(),
        Some("failure"),
        "the PR's verdict"
    );
    assert!(check.title.starts_with("#2: "), "{}", check.title);
    assert!(
        check.summary.contains("restated from #2's"),
        "{}",
        check.summary
    );
    assert_eq!(s.count(JOBS).await, jobs, "no runner time");
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// (1b) A PR measured from its merge base while master moved on: the group holds master's
/// newer commit too, so its trees are not the ones measured and the group is measured, although
/// the PR's event named the group's base as its base.
#[tokio::test]
async fn a_group_whose_trees_were_not_measured_is_measured_not_restated() {
    let mut s = setup(Some(&repo_config(8)), None).await;
    let path = s.project.path.clone();
    let (base, head) = (s.project.base.clone(), s.project.head.clone());
    let moved = commit_on(&path, &base, None, "master moved on");
    let mut opened = s.pull_request_opened();
    opened["pull_request"]["base"]["sha"] = json!(moved);
    assert_eq!(
        s.deliver("pull_request", "d-mq-tree-1", &opened).await.0,
        202
    );
    s.start_agent().await;
    eventually(&s.github, "the PR's check", 240, || {
        checks_of(&s.github, &head)
            .iter()
            .any(|c| c.status == "completed")
    })
    .await;
    assert_eq!(
        s.count(&format!(
            "SELECT COUNT(*) FROM comparisons WHERE pr_number = 2 AND base_sha = '{base}'"
        ))
        .await,
        1,
        "the PR is measured from its merge base"
    );
    let group = merge_commit(&path, &moved, &head, 2);
    s.github.refuse_checks_except(&[&head, &group]);
    let jobs = s.count(JOBS).await;

    let body = merge_group(&s, "checks_requested", &moved, &group, 2);
    assert_eq!(s.deliver("merge_group", "d-mq-tree-2", &body).await.0, 202);
    let check = completed_check(&s, &group, 240).await;
    assert!(!check.summary.contains("restated"), "{}", check.summary);
    assert!(
        check.summary.contains("compared with the tip of `master`"),
        "the group's own comparison: {}",
        check.summary
    );
    assert!(s.count(JOBS).await > jobs, "the group was measured");
    assert_eq!(
        s.count(&format!(
            "SELECT COUNT(*) FROM comparisons WHERE head_sha = '{group}' AND base_sha = '{moved}'"
        ))
        .await,
        1
    );
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// (2) A group of three PRs whose second is 1.5× slower: only the group is measured at first;
/// once it is slower each PR's commit is compared with its parent, at α/3 each (one error budget
/// for the group), and the check names the second PR. No check goes on the PRs' commits.
#[tokio::test]
async fn a_slower_group_of_three_is_measured_first_then_names_the_pr_that_made_it_slower() {
    // 16 rounds: with 8, other tests' load beside it once left the group undecided (neutral).
    let mut s = setup(Some(&repo_config(16)), None).await;
    let path = s.project.path.clone();
    // Enough work that the process's start-up does not dilute 1.5 times the work.
    let base = commit_on(
        &path,
        &s.project.base,
        Some(20_000_000),
        "a heavier benchmark",
    );
    let docs = commit_on(&path, &base, None, "docs only");
    let slower = commit_on(&path, &base, Some(30_000_000), "1.5 times the work");
    let notes = commit_on(&path, &base, None, "notes");
    let first = merge_commit(&path, &base, &docs, 11);
    let second = merge_commit(&path, &first, &slower, 12);
    let group = merge_commit(&path, &second, &notes, 13);
    s.github.refuse_checks_except(&[&group]);

    let body = merge_group(&s, "checks_requested", &base, &group, 13);
    assert_eq!(s.deliver("merge_group", "d-mq-2", &body).await.0, 202);
    s.start_agent().await;
    let check = completed_check(&s, &group, 300).await;
    assert_eq!(check.name, "benchgate");
    assert_eq!(
        check.conclusion.as_deref(),
        Some("failure"),
        "{}",
        check.title
    );
    assert_eq!(check.title, "#12 made it slower", "{}", check.summary);
    assert!(check.summary.contains("| #11 |"), "{}", check.summary);
    assert_eq!(s.github.checks().len(), 1, "{:#?}", s.github.checks());

    // The steps were made after the group's last round: the group ran first.
    let group_id = s
        .count(&format!(
            "SELECT MIN(id) FROM comparisons WHERE head_sha = '{group}'"
        ))
        .await;
    let steps = format!("c.head_sha IN ('{first}', '{second}', '{group}') AND c.id <> {group_id}");
    assert_eq!(
        s.count(&format!("SELECT COUNT(*) FROM comparisons c WHERE {steps}"))
            .await,
        3
    );
    let group_rounds = format!(
        "SELECT MAX(s.recorded_at) FROM samples s JOIN jobs j ON j.id = s.job_id \
         WHERE j.comparison_id = {group_id}"
    );
    assert_eq!(
        s.count(&format!(
            "SELECT COUNT(*) FROM comparisons c WHERE {steps} AND c.created_at < ({group_rounds})"
        ))
        .await,
        0,
        "no PR comparison before the group's last round"
    );
    let rounds = |which: &str| {
        format!(
            "SELECT COUNT(*) FROM (SELECT DISTINCT s.job_id, s.round FROM samples s \
             JOIN jobs j ON j.id = s.job_id JOIN comparisons c ON c.id = j.comparison_id \
             WHERE s.side = 'head' AND {which}) AS r"
        )
    };
    let (at_group, at_steps) = (
        s.count(&rounds(&format!("c.id = {group_id}"))).await,
        s.count(&rounds(&steps)).await,
    );
    eprintln!("runner rounds: group {at_group}, its three PRs' commits {at_steps}");
    // Each step is judged at α/3: the group's error budget split over its PRs.
    let step_id = s
        .count(&format!(
            "SELECT id FROM comparisons WHERE head_sha = '{second}' AND id <> {group_id}"
        ))
        .await;
    let status: Value = crate::support::http()
        .get(s.server.url(&format!("/api/v1/comparisons/{step_id}")))
        .bearer_auth(super::ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let alpha = status["runners"][0]["report"]["alpha"].as_f64().unwrap();
    assert!((alpha - 0.05 / 3.0).abs() < 1e-12, "{status}");
    // The dashboard lists the group and its PRs' commits as merge-queue comparisons.
    let page = s.page("/comparisons").await;
    assert!(page.contains("merge queue: #11, #12, #13"), "{page}");
    assert!(page.contains("merge queue, #12&#39;s commit"), "{page}");
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// (3) The group leaves the queue while measuring: its jobs are cancelled, nothing stays
/// queued, and its check concludes neutral.
#[tokio::test]
async fn a_group_destroyed_while_measuring_cancels_its_jobs_and_ends_neutral() {
    let config = format!("{}\n[merge_queue]\nmode = \"measure\"\n", repo_config(200));
    let mut s = setup(Some(&config), None).await;
    let (base, head) = (s.project.base.clone(), s.project.head.clone());
    let group = merge_commit(&s.project.path, &base, &head, 2);
    s.github.refuse_checks_except(&[&group]);

    let body = merge_group(&s, "checks_requested", &base, &group, 2);
    assert_eq!(s.deliver("merge_group", "d-mq-3", &body).await.0, 202);
    s.start_agent().await;
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM jobs WHERE state = 'running'",
        1,
        60,
    )
    .await;
    let gone = merge_group(&s, "destroyed", &base, &group, 2);
    assert_eq!(s.deliver("merge_group", "d-mq-4", &gone).await.0, 202);
    wait_for_count(&s, ACTIVE_JOBS, 0, 60).await;
    eventually(&s.github, "a neutral check on the group", 30, || {
        checks_of(&s.github, &group)
            .iter()
            .any(|c| c.status == "completed" && c.conclusion.as_deref() == Some("neutral"))
    })
    .await;
    let check = &checks_of(&s.github, &group)[0];
    assert!(
        check.title.contains("left the merge queue"),
        "{}",
        check.title
    );
    assert_eq!(check.name, "benchgate");
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// A group of four PRs on a heavier base, the third 1.5× slower, delivered to the server:
/// the group's head and each PR's merge commit.
async fn slower_group_of_four(s: &Setup, delivery: &str) -> (String, Vec<String>) {
    let path = s.project.path.clone();
    let base = commit_on(
        &path,
        &s.project.base,
        Some(20_000_000),
        "a heavier benchmark",
    );
    let prs = [
        (21, commit_on(&path, &base, None, "docs only")),
        (22, commit_on(&path, &base, None, "more docs")),
        (
            23,
            commit_on(&path, &base, Some(30_000_000), "1.5 times the work"),
        ),
        (24, commit_on(&path, &base, None, "notes")),
    ];
    let mut tip = base.clone();
    let mut merges = Vec::new();
    for (pr, head) in &prs {
        tip = merge_commit(&path, &tip, head, *pr);
        merges.push(tip.clone());
    }
    let group = tip;
    s.github.refuse_checks_except(&[&group]);
    let body = merge_group(s, "checks_requested", &base, &group, 24);
    assert_eq!(s.deliver("merge_group", delivery, &body).await.0, 202);
    (group, merges)
}

/// (4) A group of four PRs, the third 1.5× slower: no PR is measured on its own up front; once
/// the group is slower a culprit search names #23, confirming the group on fresh rounds first.
#[tokio::test]
async fn a_slower_group_of_four_is_searched_for_the_pr_that_made_it_slower() {
    let mut s = setup(Some(&repo_config(16)), None).await;
    let (group, merges) = slower_group_of_four(&s, "d-mq-5").await;
    s.start_agent().await;
    let check = completed_check(&s, &group, 480).await;
    assert_eq!(
        (check.conclusion.as_deref(), check.title.as_str()),
        (Some("failure"), "#23 made it slower"),
        "{}",
        check.summary
    );
    assert!(
        check.summary.contains("### Which commit"),
        "{}",
        check.summary
    );
    assert!(
        check
            .summary
            .contains(&format!("**Culprit: `{}` (#23)", &merges[2][..7])),
        "{}",
        check.summary
    );
    // No per-PR comparison was made up front.
    let group_id = s
        .count(&format!(
            "SELECT MIN(id) FROM comparisons WHERE head_sha = '{group}'"
        ))
        .await;
    assert_eq!(
        s.count("SELECT COUNT(*) FROM bisections WHERE state = 'done'")
            .await,
        1
    );
    // The confirming probe runs fresh rounds: the group's comparison raised the alarm and may
    // not confirm it.
    assert_eq!(
        s.count(&format!(
            "SELECT COUNT(*) FROM bisection_probes WHERE seq = 0 AND comparisons <> '[]' \
             AND comparisons NOT LIKE '%[{group_id}]%' AND comparisons NOT LIKE '%[{group_id},%' \
             AND comparisons NOT LIKE '%,{group_id}]%' AND comparisons NOT LIKE '%,{group_id},%'"
        ))
        .await,
        1,
        "the confirmation measured on its own"
    );
    assert_eq!(s.github.checks().len(), 1, "{:#?}", s.github.checks());
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// (5) The deadline holds while a search runs: a slower group of four whose search has not
/// ended (its runner went away) gets its check concluded at `[merge_queue] deadline`; the
/// search goes on once a runner is back, restates the check with the PR it named (the same
/// conclusion), and shows on the history of the branch the group merges into.
#[tokio::test]
async fn a_group_still_searched_at_its_deadline_concludes_and_the_search_goes_on() {
    let mut s = setup(Some(&repo_config(16)), None).await;
    let (group, merges) = slower_group_of_four(&s, "d-mq-6").await;
    s.start_agent().await;
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM bisections WHERE state = 'running'",
        1,
        480,
    )
    .await;
    eventually(&s.github, "the check to say how long is left", 60, || {
        checks_of(&s.github, &group).iter().any(|c| {
            c.status == "in_progress"
                && c.title
                    .starts_with("slower than the base; searching for the PR that did it (")
                && c.title.contains(" min to the deadline)")
        })
    })
    .await;
    s.stop_agent();
    // The group was asked for long ago: its 45 minutes are over.
    let group_id = s
        .count(&format!(
            "SELECT MIN(id) FROM comparisons WHERE head_sha = '{group}'"
        ))
        .await;
    s.count(&format!(
        "UPDATE comparisons SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = {group_id} \
         RETURNING 1"
    ))
    .await;
    let check = completed_check(&s, &group, 60).await;
    assert_eq!(check.conclusion.as_deref(), Some("failure"));
    assert!(
        check
            .title
            .contains("did not end within the 45 min deadline"),
        "{}",
        check.title
    );
    assert!(
        check
            .summary
            .contains("The search goes on at the history's priority"),
        "{}",
        check.summary
    );
    assert_eq!(
        s.count("SELECT COUNT(*) FROM bisections WHERE state = 'running'")
            .await,
        1,
        "the search was not abandoned"
    );

    s.resume_agent();
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM bisections WHERE state = 'done'",
        1,
        600,
    )
    .await;
    eventually(&s.github, "the check restated with the PR", 60, || {
        checks_of(&s.github, &group)
            .iter()
            .any(|c| c.title == "#23 made it slower" && c.conclusion.as_deref() == Some("failure"))
    })
    .await;
    assert_eq!(
        s.github.checks().len(),
        1,
        "one check run, restated in place"
    );
    let history = s
        .page(&format!(
            "/history?repository={}&branch=master",
            crate::github::REPO
        ))
        .await;
    assert!(
        history.contains(&format!("culprit {} (#23)", &merges[2][..7])),
        "{history}"
    );
    s.outbox_drained().await;
    nothing_refused(&s.github);
}
