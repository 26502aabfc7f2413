//! The exact tier through the whole loop: `counts = "instructions"` on this runner, which has
//! no PMU, so Valgrind counts inside the sandbox. With `gate_on = "instructions"` a head doing
//! 25% more work fails its check on the counts after the first timed round, and the comment
//! names the count, its change and the counter. The real server, agent and git, the strict fake.

use super::branch_point::{commit, opened};
use super::{LABEL, checks_of, eventually, nothing_refused, setup};

/// Iterations of the base's spin: a counted run takes about a second under Valgrind.
const WORK: u64 = 1_600_000;

fn counted_config(gate_on: &str) -> String {
    super::repo_config(10)
        .replace(
            "format = \"command\"\n",
            "format = \"command\"\ncounts = \"instructions\"\n",
        )
        .replace("[gate]\n", &format!("[gate]\ngate_on = \"{gate_on}\"\n"))
}

#[tokio::test]
async fn a_counted_slowdown_fails_the_check_after_the_first_round() {
    let mut s = setup(Some(&counted_config("instructions")), None).await;
    let path = s.project.path.clone();
    let c0 = commit(&path, &s.project.base, Ok(WORK), "c0: the benchmark");
    let more = commit(&path, &c0, Ok(WORK * 5 / 4), "a quarter more work");
    let (status, body) = s
        .deliver("pull_request", "d-exact-1", &opened(&s, 5, &c0, &more))
        .await;
    assert_eq!(status, 202, "{body}");
    s.start_agent().await;
    eventually(&s.github, "a completed check", 300, || {
        checks_of(&s.github, &more)
            .iter()
            .any(|c| c.status == "completed")
    })
    .await;
    let check = checks_of(&s.github, &more)
        .into_iter()
        .find(|c| c.status == "completed")
        .unwrap();
    assert_eq!(check.conclusion.as_deref(), Some("failure"), "{check:#?}");
    // The comparison's own samples (the runner's A/A calibration has samples too).
    let of_pr = |metric: &str, what: &str| {
        format!(
            "SELECT {what} FROM samples s JOIN jobs j ON j.id = s.job_id \
             JOIN comparisons c ON c.id = j.comparison_id \
             WHERE c.head_sha = '{more}' AND s.metric = '{metric}'"
        )
    };
    let timed = s
        .count(&of_pr("wall_time", "COUNT(DISTINCT s.round)"))
        .await;
    assert_eq!(
        timed, 1,
        "the counts decided: no timed round after the first"
    );
    let counted = s.count(&of_pr("instructions", "COUNT(*)")).await;
    assert_eq!(counted, 4, "two counted runs per side");
    eventually(&s.github, "the final comment", 60, || {
        s.github
            .bot_report_comments(LABEL)
            .iter()
            .any(|c| c.body.contains("**done"))
    })
    .await;
    let body = s.github.bot_report_comments(LABEL)[0].body.clone();
    eprintln!("{}\n{body}", check.title);
    let row = body
        .lines()
        .find(|l| l.contains("instructions") && l.contains("exact"))
        .unwrap_or_else(|| panic!("no exact instructions row:\n{body}"));
    // 25% more iterations; the process's start-up and the shell are the same on both sides.
    let change: f64 = row
        .split('+')
        .nth(1)
        .and_then(|t| t.split('%').next())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no +N% in {row}"));
    assert!((24.0..=26.0).contains(&change), "{change}% in {row}");
    assert!(
        body.contains(
            "instructions counted by valgrind cachegrind, 2 runs per side (6 where they differ)"
        ),
        "{body}"
    );

    // A maintainer's `/rebench 2`: the decided comparison runs the two rounds asked for, and
    // only times them: its runs are counted already on this runner.
    s.github
        .set_permission("maintainer", "collaborator-permission.maintain.200.json");
    let c = s.comment_on(5, "/rebench 2", "maintainer", "MEMBER", 9501);
    assert_eq!(
        s.deliver("issue_comment", "d-exact-rebench", &c).await.0,
        202
    );
    eventually(&s.github, "the rebench's completed check", 240, || {
        let runs = checks_of(&s.github, &more);
        runs.len() >= 2 && runs.iter().all(|c| c.status == "completed")
    })
    .await;
    assert_eq!(
        s.count(&of_pr("wall_time", "COUNT(*)")).await,
        2 + 4,
        "the first job's round and the two asked for"
    );
    assert_eq!(
        s.count(&of_pr("instructions", "COUNT(*)")).await,
        4,
        "not counted again"
    );
    nothing_refused(&s.github);
}
