//! A PR is measured on its own change: GitHub's `pull_request.base.sha` is the base branch's
//! tip, which may hold commits the PR never saw. Three PRs on one repository, each branched
//! from `c0` before `master` moved on, with the real server, agent and git and the strict fake.

use serde_json::{Value, json};

use super::{Setup, checks_of, eventually, nothing_refused, setup};
use crate::support::git;

/// Work of the old main (`c0`), of a main or PR 1.5× slower, and of a main 1.5× faster.
const C0: u64 = 20_000_000;
const SLOWER: u64 = 30_000_000;
const FASTER: u64 = 13_333_333;

/// `.benchgate.toml`: 12 rounds of the spin benchmark, failing on any regression.
fn config() -> String {
    format!("{}\n", super::repo_config(12))
}

/// A commit on `from` that sets the work to `iterations`, or adds the file `note` alone.
pub(super) fn commit(
    path: &std::path::Path,
    from: &str,
    work: Result<u64, &str>,
    message: &str,
) -> String {
    git(path, &["checkout", "-q", "--detach", from]);
    match work {
        Ok(n) => std::fs::write(path.join("iterations"), n.to_string()).unwrap(),
        Err(note) => std::fs::write(path.join(note), message).unwrap(),
    }
    git(path, &["add", "."]);
    git(path, &["commit", "-qm", message]);
    git(path, &["rev-parse", "HEAD"])
}

/// `pull_request.opened` for PR `number` from `head`, with `tip` as GitHub's `base.sha`.
pub(super) fn opened(s: &Setup, number: u64, tip: &str, head: &str) -> Value {
    let mut p = s.pull_request_opened();
    p["number"] = json!(number);
    p["pull_request"]["number"] = json!(number);
    p["pull_request"]["base"]["sha"] = json!(tip);
    p["pull_request"]["head"]["sha"] = json!(head);
    p["pull_request"]["head"]["ref"] = json!(format!("pr-{number}"));
    p
}

/// The bot's report comment on PR `number`, once it says the rounds are done.
fn done_comment(s: &Setup, number: u64) -> Option<String> {
    s.github
        .bot_report_comments(super::LABEL)
        .into_iter()
        .find(|c| c.pr == number && c.body.contains("**done, "))
        .map(|c| c.body)
}

/// The verdict words of the comment's benchmark rows (wall time gates).
fn wall_time_row(body: &str) -> &str {
    body.lines()
        .find(|l| l.starts_with("| `") && l.contains("wall"))
        .unwrap_or_else(|| panic!("a wall time row in:\n{body}"))
}

/// `master` got 1.5× slower after a notes-only PR branched: the PR is measured from `c0`, its
/// merge base, and not called faster; the mirror (master got faster) does not fail its gate;
/// a PR that is itself 1.5× slower, on a master that also got slower meanwhile, is slower. The
/// comment, the check and the dashboard name the commits measured and say master moved on.
#[tokio::test]
async fn a_pr_is_measured_from_its_merge_base_not_the_tip_main_moved_on_to() {
    let mut s = setup(Some(&config()), None).await;
    let path = s.project.path.clone();
    let c0 = commit(&path, &s.project.base, Ok(C0), "c0: the benchmark");
    let notes = commit(&path, &c0, Err("NOTES.md"), "notes only");
    let more_notes = commit(&path, &c0, Err("MORE-NOTES.md"), "more notes");
    let slower_pr = commit(&path, &c0, Ok(SLOWER), "PR: 1.5 times the work");
    let slower_main = commit(&path, &c0, Ok(SLOWER), "master: 1.5 times the work");
    let faster_main = commit(&path, &c0, Ok(FASTER), "master: two thirds of the work");
    git(&path, &["update-ref", "refs/heads/master", &slower_main]);

    let prs = [
        (3, slower_main.clone(), notes.clone()),
        (4, faster_main.clone(), more_notes.clone()),
        (5, slower_main.clone(), slower_pr.clone()),
    ];
    for (number, tip, head) in &prs {
        let (status, body) = s
            .deliver(
                "pull_request",
                &format!("d-bp-{number}"),
                &opened(&s, *number, tip, head),
            )
            .await;
        assert_eq!(status, 202, "{body}");
    }
    // Every comparison measures from c0, whatever tip the event named.
    super::wait_for_count(
        &s,
        &format!(
            "SELECT COUNT(*) FROM comparisons WHERE base_sha = '{c0}' AND pr_number IS NOT NULL"
        ),
        3,
        60,
    )
    .await;
    assert_eq!(
        s.count("SELECT COUNT(*) FROM comparisons WHERE pr_number IS NOT NULL")
            .await,
        3,
        "one comparison per PR, none from a tip"
    );
    s.start_agent().await;
    eventually(&s.github, "three finished comments", 480, || {
        prs.iter().all(|(n, _, _)| done_comment(&s, *n).is_some())
    })
    .await;
    eventually(&s.github, "three completed checks", 60, || {
        prs.iter().all(|(_, _, head)| {
            checks_of(&s.github, head)
                .iter()
                .any(|c| c.status == "completed")
        })
    })
    .await;
    let short = |sha: &str| sha[..7].to_owned();

    // (1) Notes only, master slower since: not "faster" (against the tip it was).
    let body = done_comment(&s, 3).unwrap();
    eprintln!("PR #3:\n{body}");
    let row = wall_time_row(&body);
    // No decided change (bold "faster"/"slower"); "not slower than +5%" may come first.
    assert!(
        !row.contains("**faster") && !row.contains("**slower"),
        "{row}"
    );
    assert!(
        body.contains(&format!(
            "base `{}` (merge base with `master`) → head `{}`",
            short(&c0),
            short(&notes)
        )),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "`master` has 1 commit since this PR branched from it at `{}` (tip `{}` when scheduled)",
            short(&c0),
            short(&slower_main)
        )),
        "{body}"
    );
    let check = &checks_of(&s.github, &notes)[0];
    assert_ne!(check.conclusion.as_deref(), Some("failure"), "{check:?}");
    assert!(check.summary.contains("(merge base with `master`)"));

    // (2) The mirror: master faster since; the notes-only PR does not fail its gate.
    let body = done_comment(&s, 4).unwrap();
    eprintln!("PR #4:\n{body}");
    let row = wall_time_row(&body);
    assert!(
        !row.contains("**slower") && !row.contains("**faster"),
        "{row}"
    );
    let check = &checks_of(&s.github, &more_notes)[0];
    assert_ne!(check.conclusion.as_deref(), Some("failure"), "{check:?}");

    // (3) The PR's own slowdown, although master got as slow meanwhile.
    let body = done_comment(&s, 5).unwrap();
    eprintln!("PR #5:\n{body}");
    assert!(wall_time_row(&body).contains("**slower ("), "{body}");
    let check = &checks_of(&s.github, &slower_pr)[0];
    assert_eq!(check.conclusion.as_deref(), Some("failure"), "{check:?}");

    // The dashboard names the merge base and says master moved on.
    let id = s
        .count(&format!(
            "SELECT id FROM comparisons WHERE head_sha = '{notes}'"
        ))
        .await;
    let page = s.page(&format!("/comparisons/{id}")).await;
    assert!(
        page.contains("(base: the merge base with <code>master</code>)"),
        "{page}"
    );
    assert!(
        page.contains("has 1 commit since this PR branched"),
        "{page}"
    );
    s.outbox_drained().await;
    nothing_refused(&s.github);
}

/// GitHub's compare API answers 404 for the branch point (the event names a base tip GitHub no
/// longer has: the branch was force-pushed). Trying again cannot help, so the PR's check
/// concludes at once, neutral, saying what GitHub answered; a repository that fails closed
/// gets a failure. No comparison, no job: nothing was measured.
#[tokio::test]
async fn a_branch_point_github_will_not_give_concludes_the_check_with_the_reason() {
    let closed = config() + "on_no_answer = \"failure\"\n";
    for (number, text, conclusion) in [(11, config(), "neutral"), (12, closed, "failure")] {
        let s = setup(Some(&text), None).await;
        let path = s.project.path.clone();
        let head = commit(&path, &s.project.base, Ok(C0), "c0: the benchmark");
        let gone = "0123456789abcdef0123456789abcdef01234567";
        s.github.open_pull(number, &s.project.base, &head);
        let (status, body) = s
            .deliver(
                "pull_request",
                &format!("d-bp-gone-{number}"),
                &opened(&s, number, gone, &head),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        let check = completed_check(&s, &head).await;
        assert_eq!(check.conclusion.as_deref(), Some(conclusion), "{check:#?}");
        assert_eq!(check.title, "could not read the branch point", "{check:#?}");
        assert!(
            check.summary.contains("GitHub answered 404 to GET")
                && check.summary.contains("/compare/")
                && check.summary.contains("Nothing was benchmarked"),
            "{}",
            check.summary
        );
        s.outbox_drained().await;
        assert_eq!(s.count("SELECT COUNT(*) FROM comparisons").await, 0);
        // The one 404 asked for, once: not retried, and nothing else refused.
        let refused = s.github.refusals();
        assert_eq!(refused.len(), 1, "{refused:#?}");
        assert!(
            refused[0].1.contains(&format!("/compare/{head}...{gone}")),
            "{refused:#?}"
        );
    }
}

/// The same for `.benchgate.toml`: a read GitHub refuses for good (a token that lost access)
/// concludes the head's check with GitHub's answer instead of giving the schedule up silently,
/// and is not retried.
#[tokio::test]
async fn a_config_github_refuses_to_give_concludes_the_check_with_the_reason() {
    let s = setup(Some(&config()), None).await;
    s.github.fail_config_reads(&[(403, None)]);
    let head = s.project.head.clone();
    let (status, body) = s
        .deliver(
            "pull_request",
            "d-config-403",
            &s.pull_request_event("opened", &head),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let check = completed_check(&s, &head).await;
    assert_eq!(check.conclusion.as_deref(), Some("neutral"), "{check:#?}");
    assert_eq!(check.title, "could not read .benchgate.toml", "{check:#?}");
    assert!(
        check.summary.contains("GitHub answered 403")
            && check.summary.contains("Nothing was benchmarked"),
        "{}",
        check.summary
    );
    s.outbox_drained().await;
    assert_eq!(
        s.github.config_failures_answered(),
        1,
        "asked once, not retried"
    );
    assert_eq!(s.count("SELECT COUNT(*) FROM comparisons").await, 0);
}

/// The first check on `head`, once one is completed.
async fn completed_check(s: &Setup, head: &str) -> crate::github::CheckRun {
    eventually(&s.github, "a completed check", 60, || {
        checks_of(&s.github, head)
            .iter()
            .any(|c| c.status == "completed")
    })
    .await;
    checks_of(&s.github, head).remove(0)
}
