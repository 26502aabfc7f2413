//! The PR's own claim, answered: a description pasting a benchstat table that claims −20% on a
//! benchmark the change makes 1.5× slower reads "opposite", and with `[gate] claims =
//! "require"` the check fails on it alone; a true claim reads "confirmed". The real server,
//! agent and git; the strict fake GitHub.

use serde_json::json;

use super::branch_point::{commit, opened};
use super::{LABEL, checks_of, eventually, nothing_refused, setup};

const WORK: u64 = 20_000_000;

/// A libtest-format benchmark named `spin` whose time is modelled from its work (so the
/// machine's load cannot blur it), and a gate that never fails on its own: whatever the check
/// concludes, the claims decided it.
fn config() -> String {
    format!(
        "[benchmark]\nrun = \"{} spin --iterations $(cat iterations) --modelled-spread 0.02\"\n\
         format = \"libtest\"\nrounds = 8\nwarmup = 1\nrunner = \"{LABEL}\"\n\n[gate]\nrare_slow_runs = \"off\"\n\
         fail_on = \"never\"\nclaims = \"require\"\n",
        super::BIN
    )
}

/// What the author pasted: benchstat's table from a laptop, ten runs a side.
const SLOWER_BODY: &str = "Avoids a copy in the hot loop.\n\n```\ngoos: linux\ncpu: Intel(R) \
    Core(TM) i7-8650U CPU @ 1.90GHz\nname    old time/op  new time/op  delta\n\
    spin-8  30.1ms ± 2%  24.1ms ± 1%  -20.00%  (p=0.000 n=10+10)\n```\n";

const FASTER_BODY: &str = "Halves the work: `spin` is 40-55% faster here.\n";

/// The check's title and the comment's claim lines, numbers redacted (they vary by run).
fn redacted(text: &str) -> String {
    let numbers = regex::Regex::new(r"[+\-−]?\d+(\.\d+)?%").unwrap();
    numbers.replace_all(text, "[pct]").into_owned()
}

/// The claims section of a comment: its heading and its list.
fn claim_lines(body: &str) -> Vec<String> {
    let mut lines = body
        .lines()
        .skip_while(|l| !l.starts_with("**The PR's claims**"));
    let heading = lines.next().map(str::to_owned);
    heading
        .into_iter()
        .chain(
            lines
                .skip_while(|l| l.is_empty())
                .take_while(|l| l.starts_with("- "))
                .map(str::to_owned),
        )
        .collect()
}

/// PR `number` opened with `description`, measured to its end: its completed check and the
/// claims section of its final comment.
async fn answered(
    s: &super::Setup,
    number: u64,
    base: &str,
    head: &str,
    description: &str,
) -> (crate::github::CheckRun, Vec<String>) {
    let mut event = opened(s, number, base, head);
    event["pull_request"]["body"] = json!(description);
    let (status, body) = s
        .deliver("pull_request", &format!("d-claim-{number}"), &event)
        .await;
    assert_eq!(status, 202, "{body}");
    eventually(&s.github, "a completed check", 480, || {
        checks_of(&s.github, head)
            .iter()
            .any(|c| c.status == "completed")
    })
    .await;
    eventually(&s.github, "the final comment", 60, || {
        s.github
            .bot_report_comments(LABEL)
            .iter()
            .any(|c| c.pr == number && c.body.contains("**done"))
    })
    .await;
    let check = checks_of(&s.github, head)
        .into_iter()
        .find(|c| c.status == "completed")
        .unwrap();
    let comment = s
        .github
        .bot_report_comments(LABEL)
        .into_iter()
        .find(|c| c.pr == number)
        .unwrap()
        .body;
    (check, claim_lines(&comment))
}

#[tokio::test]
async fn a_pr_s_claim_is_answered_and_one_that_does_not_hold_fails_the_check() {
    let mut s = setup(Some(&config()), None).await;
    let path = s.project.path.clone();
    let c0 = commit(&path, &s.project.base, Ok(WORK), "c0: the benchmark");
    let slower = commit(&path, &c0, Ok(WORK * 3 / 2), "avoid a copy (1.5x the work)");
    let faster = commit(&path, &c0, Ok(WORK / 2), "half the work");
    s.github.open_pull(3, &c0, &slower);
    s.github.open_pull(4, &c0, &faster);

    s.start_agent().await;
    let (check, lines) = answered(&s, 3, &c0, &slower, SLOWER_BODY).await;
    assert_eq!(check.conclusion.as_deref(), Some("failure"), "{check:#?}");
    assert!(
        lines.iter().any(|l| l.contains("**opposite**")),
        "{lines:#?}"
    );
    insta::assert_snapshot!(
        "claims_opposite",
        redacted(&format!("check: {}\n{}", check.title, lines.join("\n")))
    );

    let (check, lines) = answered(&s, 4, &c0, &faster, FASTER_BODY).await;
    assert_eq!(check.conclusion.as_deref(), Some("success"), "{check:#?}");
    insta::assert_snapshot!("claims_confirmed", redacted(&lines.join("\n")));

    // The author edits the description: its claim is read again and answered from the rounds
    // already measured; nothing runs.
    let jobs = s.count("SELECT COUNT(*) FROM jobs").await;
    let mut edited = opened(&s, 4, &c0, &faster);
    edited["action"] = json!("edited");
    edited["changes"] = json!({"body": {"from": FASTER_BODY}});
    edited["pull_request"]["body"] = json!("Halves the work: `spin` is 10% faster.\n");
    let (status, body) = s.deliver("pull_request", "d-claim-edit", &edited).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (202, Some("description_edited")),
        "{body}"
    );
    eventually(&s.github, "the edited claim answered", 60, || {
        comment_lines(&s, 4)
            .iter()
            .any(|l| l.contains("**larger than claimed**"))
    })
    .await;

    // A maintainer states a claim in a comment: it is answered beside the description's, and
    // under `require` an opposite one fails the finished check.
    let c = s.comment_on(
        4,
        "/benchgate claim spin +30%",
        "Codertocat",
        "OWNER",
        42_001,
    );
    let (status, body) = s.deliver("issue_comment", "d-claim-comment", &c).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (202, Some("command")),
        "{body}"
    );
    eventually(&s.github, "the claim fails the check", 60, || {
        checks_of(&s.github, &faster)
            .iter()
            .any(|c| c.conclusion.as_deref() == Some("failure"))
    })
    .await;
    // The comment is its own write, queued beside the check's: it may land a moment later.
    eventually(
        &s.github,
        "the comment to answer the comment's claim",
        60,
        || {
            comment_lines(&s, 4)
                .iter()
                .any(|l| l.contains("stated in a comment by Codertocat"))
        },
    )
    .await;
    let lines = comment_lines(&s, 4);
    let claimed = lines
        .iter()
        .find(|l| l.contains("stated in a comment by Codertocat"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(claimed.contains("**opposite**"), "{claimed}");
    assert_eq!(
        s.count("SELECT COUNT(*) FROM jobs").await,
        jobs,
        "claims are answered from what was measured"
    );
    nothing_refused(&s.github);
}

/// The claims section of the bot's newest comment on PR `number`.
fn comment_lines(s: &super::Setup, number: u64) -> Vec<String> {
    s.github
        .bot_report_comments(LABEL)
        .into_iter()
        .find(|c| c.pr == number)
        .map(|c| claim_lines(&c.body))
        .unwrap_or_default()
}
