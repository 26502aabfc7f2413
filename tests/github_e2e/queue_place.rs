//! A PR that waits behind another says where it stands: the check title of the second PR names
//! its place in line while no runner is online, before it runs. The real server, agent and git,
//! the strict fake.

use super::branch_point::{commit, opened};
use super::{checks_of, eventually, nothing_refused, setup};

/// The title of the check on `head`, if written.
fn title_of(s: &super::Setup, head: &str) -> Option<String> {
    checks_of(&s.github, head).last().map(|c| c.title.clone())
}

#[tokio::test]
async fn a_second_pr_check_title_names_its_place_in_line() {
    let mut s = setup(Some(&super::repo_config(8)), None).await;
    let path = s.project.path.clone();
    let base = s.project.base.clone();
    let first = s.project.head.clone();
    let second = commit(&path, &base, Ok(3_000_000), "second PR: 1.5× the work");
    for (number, head) in [(2, &first), (3, &second)] {
        let delivery = format!("d-queue-{number}");
        let (status, body) = s
            .deliver("pull_request", &delivery, &opened(&s, number, &base, head))
            .await;
        assert_eq!(status, 202, "{body}");
    }
    // No runner serves the label yet: the place is known, the minutes are not.
    let waiting = "queued: 2nd in line for e2e; no runner of e2e is online";
    eventually(
        &s.github,
        "the second PR's check names its place",
        60,
        || title_of(&s, &second).as_deref() == Some(waiting),
    )
    .await;
    assert_eq!(
        title_of(&s, &first).as_deref(),
        Some("queued: 1st in line for e2e; no runner of e2e is online")
    );
    let said = "**queued: 2nd in line for `e2e`; no runner of `e2e` is online**";
    eventually(
        &s.github,
        "the waiting PR's comment says its place",
        60,
        || {
            s.github
                .bot_report_comments(super::LABEL)
                .iter()
                .any(|c| c.pr == 3 && c.body.contains(said))
        },
    )
    .await;

    // A runner takes the first PR's job: the second moves up, its title written again.
    // What runs is the test's own `benchgate spin`, and only the claim matters here: no
    // sandbox is needed, so the test runs where bubblewrap is missing too.
    let none = std::ffi::OsStr::new("none");
    s.start_agent_with(super::LABEL, &[("BENCHGATE_SANDBOX", none)])
        .await;
    eventually(&s.github, "the second PR's check completes", 300, || {
        checks_of(&s.github, &second)
            .last()
            .is_some_and(|c| c.status == "completed")
    })
    .await;
    // Its place was written before it ran, and the check ended on the measurement. That the
    // place moves up when the job ahead is claimed is `report_watch`'s unit test
    // (`a_queued_comparison_is_reported_again_when_its_place_moves`): here the window between
    // the two claims can be shorter than a report tick, and the title then goes straight from
    // "2nd in line" to "running".
    let titles = checks_of(&s.github, &second)[0].titles.clone();
    let waited = titles.iter().position(|t| t == waiting);
    let ran = titles.iter().position(|t| t.starts_with("running"));
    assert!(waited.is_some() && waited < ran, "{titles:#?}");
    nothing_refused(&s.github);
}
