//! benchgate's GitLab calls against the strict fake GitLab (`fake/`): what GitLab refuses is
//! never sent, the bot edits only its own note, and failures come back as retry-or-give-up.

#[path = "../../tests/fake/mod.rs"]
mod fake;

use super::{DEVELOPER, GitlabClient, GitlabError, StatusState, StatusUpdate};
use fake::{BOT, FakeGitlab, MergeRequest, TOKEN};

const PROJECT: u64 = 42;
const MARKER: &str = "<!-- benchgate:report -->";

async fn setup() -> (FakeGitlab, GitlabClient) {
    let fake = FakeGitlab::start().await;
    fake.merge_request(
        PROJECT,
        7,
        MergeRequest {
            sha: "a".repeat(40),
            base_sha: "b".repeat(40),
            pipeline: Some(555),
        },
    );
    let client = GitlabClient::new(&fake.url(), TOKEN).unwrap();
    (fake, client)
}

fn status(state: StatusState, description: &str) -> StatusUpdate {
    StatusUpdate {
        state,
        name: "benchgate".to_owned(),
        description: description.to_owned(),
        target_url: Some("https://bench.example/c/1".to_owned()),
    }
}

#[tokio::test]
async fn the_bot_edits_its_own_note_past_150_others_and_never_anyone_elses() {
    let (fake, client) = setup().await;
    let bot = client.current_user().await.unwrap();
    assert_eq!((bot.id, bot.username.as_str()), BOT);
    let alice = (11, "alice");
    fake.member(PROJECT, alice, DEVELOPER);
    // Someone quoting the bot's marker: a note the bot must not take for its own.
    fake.note_by(PROJECT, 7, alice.0, &format!("> {MARKER} old report"));
    for i in 0..150 {
        fake.note_by(PROJECT, 7, alice.0, &format!("review note {i}"));
    }
    let first = client
        .upsert_note(
            PROJECT,
            7,
            bot.id,
            MARKER,
            &format!("{MARKER}\nno result yet"),
        )
        .await
        .unwrap();
    for i in 0..3 {
        fake.note_by(PROJECT, 7, alice.0, &format!("later note {i}"));
    }
    let again = client
        .upsert_note(
            PROJECT,
            7,
            bot.id,
            MARKER,
            &format!("{MARKER}\n+50% slower"),
        )
        .await
        .unwrap();
    assert_eq!(first, again, "the same note, edited in place");
    let s = fake.state();
    let notes = &s.notes[&(PROJECT, 7)];
    let own: Vec<_> = notes.iter().filter(|n| n.author == BOT.0).collect();
    assert_eq!(own.len(), 1, "one note of the bot's");
    assert!(own[0].body.ends_with("+50% slower"));
    assert!(notes[0].body.starts_with("> "), "alice's quote untouched");
    assert!(s.refusals.is_empty(), "{:?}", s.refusals);
    assert_eq!(s.writes.iter().filter(|w| w.starts_with("PUT")).count(), 1);
}

#[tokio::test]
async fn the_status_goes_to_the_merge_requests_pipeline_cut_to_255_characters() {
    let (fake, client) = setup().await;
    let long = "req/req +52% [+41%, +64%] slower; ".repeat(12);
    client
        .set_mr_status(
            PROJECT,
            7,
            &status(StatusState::Running, "measuring: round 3 of 72"),
        )
        .await
        .unwrap();
    client
        .set_mr_status(PROJECT, 7, &status(StatusState::Failed, &long))
        .await
        .unwrap();
    // The same state again (a report tick with nothing new) is not an error.
    client
        .set_mr_status(PROJECT, 7, &status(StatusState::Failed, &long))
        .await
        .unwrap();
    let s = fake.state();
    let states: Vec<(&str, Option<u64>)> = s
        .statuses
        .iter()
        .map(|st| (st.state.as_str(), st.pipeline_id))
        .collect();
    assert_eq!(states, [("running", Some(555)), ("failed", Some(555))]);
    assert_eq!(s.statuses[1].description.chars().count(), 255);
    // The fake's own refusal of the repeat is the only one.
    assert_eq!(s.refusals.len(), 1, "{:?}", s.refusals);
    assert!(s.refusals[0].contains("Cannot transition status via :drop from :failed"));
}

#[tokio::test]
async fn what_gitlab_refuses_comes_back_as_a_refusal_with_its_reason() {
    let (fake, client) = setup().await;
    // A status on the head without the pipeline: GitLab would start an external pipeline.
    let err = client
        .set_status(
            PROJECT,
            &"a".repeat(40),
            None,
            &status(StatusState::Success, "ok"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, GitlabError::Refused { status: 400, .. }),
        "{err}"
    );
    // A commit GitLab does not have.
    let err = client
        .set_status(
            PROJECT,
            &"c".repeat(40),
            None,
            &status(StatusState::Success, "ok"),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("404 References for commit Not Found"),
        "{err}"
    );
    // Someone else's note cannot be edited, as on GitLab.
    let alice = (11, "alice");
    fake.member(PROJECT, alice, 10);
    let theirs = fake.note_by(PROJECT, 7, alice.0, "LGTM");
    let put = reqwest::Client::new()
        .put(format!(
            "{}/api/v4/projects/{PROJECT}/merge_requests/7/notes/{theirs}",
            fake.url()
        ))
        .header("PRIVATE-TOKEN", TOKEN)
        .json(&serde_json::json!({"body": "edited"}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status().as_u16(), 403);
    // A wrong token: GitLab's 401, not a retry.
    let stranger = GitlabClient::new(&fake.url(), "glpat-wrong").unwrap();
    let err = stranger.current_user().await.unwrap_err();
    assert_eq!(
        err,
        GitlabError::Refused {
            status: 401,
            what: "the token's user".to_owned(),
            message: "401 Unauthorized".to_owned()
        }
    );
    assert!(!err.is_transient());
}

#[tokio::test]
async fn a_commenters_access_level_and_the_branch_point_are_read() {
    let (fake, client) = setup().await;
    fake.member(PROJECT, (11, "dev"), DEVELOPER);
    fake.member(PROJECT, (12, "guest"), 10);
    assert_eq!(client.access_level(PROJECT, 11).await.unwrap(), Some(30));
    assert_eq!(client.access_level(PROJECT, 12).await.unwrap(), Some(10));
    assert_eq!(
        client.access_level(PROJECT, 13).await.unwrap(),
        None,
        "not a member"
    );
    let mr = client.merge_request(PROJECT, 7).await.unwrap();
    assert_eq!(mr.base_sha.as_deref(), Some("b".repeat(40).as_str()));
    assert_eq!(mr.pipeline_id, Some(555));
    let err = client.merge_request(PROJECT, 8).await.unwrap_err();
    assert!(
        matches!(err, GitlabError::Refused { status: 404, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_rate_limit_is_a_retry_at_the_time_gitlab_names() {
    let (fake, client) = setup().await;
    fake.state().rate_limited = 1;
    let err = client.merge_request(PROJECT, 7).await.unwrap_err();
    match &err {
        GitlabError::RetryLater { after, .. } => {
            assert_eq!(*after, Some(std::time::Duration::from_secs(1)), "{err}")
        }
        other => panic!("{other}"),
    }
    assert!(
        client.merge_request(PROJECT, 7).await.is_ok(),
        "served again after"
    );
}

/// `benchgate gitlab check` on a project set up right, then on one set up as people often do
/// first: a `read_api` token, the bot a Reporter, a hook without comments and pipelines.
#[tokio::test]
async fn the_setup_check_names_each_thing_to_fix() {
    let (fake, client) = setup().await;
    fake.state()
        .projects
        .insert(PROJECT, "perf/parser".to_owned());
    fake.member(PROJECT, BOT, 40);
    let hook = |notes: bool| {
        serde_json::json!({"id": 3, "url": "https://bench.example/webhooks/gitlab",
            "push_events": true, "merge_requests_events": true, "note_events": notes,
            "pipeline_events": notes})
    };
    fake.state().hooks.insert(PROJECT, vec![hook(true)]);
    let url = Some("https://bench.example/webhooks/gitlab");
    let good = crate::check::check(&client, "perf/parser", url)
        .await
        .unwrap();
    assert!(good.iter().all(|f| f.ok), "{good:#?}");
    assert!(
        good.iter()
            .any(|f| f.text.contains("with every event benchgate acts on"))
    );

    fake.state().scopes = vec!["read_api".to_owned()];
    fake.member(PROJECT, BOT, 20);
    let bad = crate::check::check(&client, "42", url).await.unwrap();
    let problems: Vec<&str> = bad
        .iter()
        .filter(|f| !f.ok)
        .map(|f| f.text.as_str())
        .collect();
    assert_eq!(problems.len(), 2, "{bad:#?}");
    assert!(problems[0].contains("needs `api`"), "{problems:?}");
    assert!(
        problems[1].starts_with("role: Reporter (20)"),
        "{problems:?}"
    );
    // Below Maintainer GitLab will not list hooks: said, not a failure.
    assert!(
        bad.iter().any(|f| f.text.contains("Maintainers only")),
        "{bad:#?}"
    );

    fake.member(PROJECT, BOT, 40);
    fake.state().scopes = vec!["api".to_owned()];
    fake.state().hooks.insert(PROJECT, vec![hook(false)]);
    let hookless = crate::check::check(&client, "42", url).await.unwrap();
    let problem = hookless
        .iter()
        .find(|f| !f.ok)
        .expect("the hook's missing events");
    assert!(
        problem
            .text
            .contains("without comments (commands such as /rebench), pipeline events"),
        "{problem:?}"
    );
    // Below Ultimate: no status checks, said and fine.
    assert!(
        hookless
            .iter()
            .any(|f| f.ok && f.text.starts_with("status checks: none (Ultimate only)")),
        "{hookless:#?}"
    );
    // On Ultimate, a check pointing at benchgate without a shared secret is refused by
    // benchgate: a thing to fix. Another service's check is none of its business.
    fake.state().hooks.insert(PROJECT, vec![hook(true)]);
    let ours = fake.status_check(
        PROJECT,
        "benchgate",
        "https://bench.example/webhooks/gitlab/status-check",
    );
    fake.status_check(PROJECT, "compliance", "https://compliance.example/check");
    fake.state().status_checks.get_mut(&PROJECT).unwrap()[0].hmac = false;
    let unsigned = crate::check::check(&client, "42", url).await.unwrap();
    let problems: Vec<&str> = unsigned
        .iter()
        .filter(|f| !f.ok)
        .map(|f| f.text.as_str())
        .collect();
    assert_eq!(
        problems,
        [format!("status check `benchgate` (id {ours}): no HMAC shared secret, so benchgate refuses GitLab's requests (401); set it to the hook's secret token").as_str()]
    );
    fake.state().status_checks.get_mut(&PROJECT).unwrap()[0].hmac = true;
    let signed = crate::check::check(&client, "42", url).await.unwrap();
    assert!(signed.iter().all(|f| f.ok), "{signed:#?}");
    assert!(
        signed
            .iter()
            .any(|f| f.text.starts_with("status check `benchgate`") && f.text.contains("signed")),
        "{signed:#?}"
    );
    let err = crate::check::check(&client, "perf/other", url)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("404 Project Not Found"), "{err}");
}

#[tokio::test]
async fn the_base_config_the_changed_files_and_the_branch_point_are_read() {
    let (fake, client) = setup().await;
    let base = "b".repeat(40);
    fake.state().files.insert(
        (PROJECT, base.clone()),
        [(
            ".benchgate.toml".to_owned(),
            "[benchmark]\nrun = \"x\"\n".to_owned(),
        )]
        .into(),
    );
    let config = client
        .read_file(PROJECT, ".benchgate.toml", &base)
        .await
        .unwrap();
    assert_eq!(config.as_deref(), Some("[benchmark]\nrun = \"x\"\n"));
    assert_eq!(
        client
            .read_file(PROJECT, ".benchgate.toml", &"c".repeat(40))
            .await
            .unwrap(),
        None
    );
    // 130 changed files, one renamed: two pages, both names of the rename.
    let mut diffs: Vec<(String, String)> = (0..129)
        .map(|i| (format!("src/f{i}.rs"), format!("src/f{i}.rs")))
        .collect();
    diffs.push(("benches/old.rs".to_owned(), "benches/new.rs".to_owned()));
    fake.state().diffs.insert((PROJECT, 7), diffs);
    let files = client.merge_request_files(PROJECT, 7).await.unwrap();
    assert_eq!(files.len(), 131);
    assert!(
        files.contains(&"benches/old.rs".to_owned())
            && files.contains(&"benches/new.rs".to_owned())
    );
    fake.state()
        .merge_bases
        .insert(("main".to_owned(), "a".repeat(40)), base.clone());
    assert_eq!(
        client
            .merge_base(PROJECT, "main", &"a".repeat(40))
            .await
            .unwrap(),
        base
    );
}

#[tokio::test]
async fn a_command_gets_eyes_once_and_a_regression_issue_is_found_again_by_its_marker() {
    let (fake, client) = setup().await;
    let command = fake.note_by(PROJECT, 7, 11, "/rebench 4");
    client.award_eyes(PROJECT, 7, command).await.unwrap();
    client.award_eyes(PROJECT, 7, command).await.unwrap();
    assert_eq!(fake.state().awards, [(command, "eyes".to_owned())]);

    let label = ["benchgate".to_owned()];
    let marker = "<!-- benchgate:main:parse -->";
    assert_eq!(
        client
            .find_marked_issue(PROJECT, "benchgate", marker)
            .await
            .unwrap(),
        None
    );
    // Someone's issue quoting the marker without the label is not benchgate's.
    fake.state()
        .issues
        .entry(PROJECT)
        .or_default()
        .push(serde_json::json!({
        "iid": 90, "title": "x", "description": marker, "labels": ["bug"], "state": "opened",
        "web_url": "https://gitlab.example/issues/90"}));
    let made = client
        .create_issue(
            PROJECT,
            "parse +12% on main",
            &format!("{marker}\nsince abc123"),
            &label,
        )
        .await
        .unwrap();
    let found = client
        .find_marked_issue(PROJECT, "benchgate", marker)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.iid, made.iid);
    let closed = client
        .update_issue(PROJECT, made.iid, "parse back to normal", marker, false)
        .await
        .unwrap();
    assert_eq!(closed.state, "closed");
    assert!(
        fake.state()
            .refusals
            .iter()
            .all(|r| r.contains("already been taken")),
        "{:?}",
        fake.state().refusals
    );
}

#[tokio::test]
async fn status_checks_are_answered_only_on_ultimate_and_only_for_the_head() {
    use super::{CheckAnswer, StatusCheck};
    let (fake, client) = setup().await;
    // Below Ultimate GitLab answers 401 to these calls: no checks, not an error.
    assert_eq!(client.status_checks(PROJECT, 7).await.unwrap(), None);
    let check = fake.status_check(
        PROJECT,
        "benchgate",
        "https://bench.example/webhooks/gitlab/status-check",
    );
    let listed: Vec<StatusCheck> = client.status_checks(PROJECT, 7).await.unwrap().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].id,
            listed[0].name.as_str(),
            listed[0].status.as_str()
        ),
        (check, "benchgate", "pending")
    );

    let head = "a".repeat(40);
    client
        .answer_status_check(PROJECT, 7, &head, check, CheckAnswer::Failed)
        .await
        .unwrap();
    assert_eq!(fake.status_check_state(PROJECT, 7, check), "failed");
    // A head the merge request has moved past: GitLab's 409, not transient.
    let old = client
        .answer_status_check(PROJECT, 7, &"c".repeat(40), check, CheckAnswer::Passed)
        .await
        .unwrap_err();
    assert!(
        matches!(old, GitlabError::Refused { status: 409, .. }),
        "{old}"
    );
    assert!(!old.is_transient());
    let unknown = client
        .answer_status_check(PROJECT, 7, &head, check + 1, CheckAnswer::Passed)
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, GitlabError::Refused { status: 404, .. }),
        "{unknown}"
    );
    client
        .answer_status_check(PROJECT, 7, &head, check, CheckAnswer::Passed)
        .await
        .unwrap();
    assert_eq!(fake.status_check_state(PROJECT, 7, check), "passed");
    // "Retry" makes it pending until answered again.
    fake.retry_status_check(PROJECT, 7, check);
    assert_eq!(fake.status_check_state(PROJECT, 7, check), "pending");
    client
        .answer_status_check(PROJECT, 7, &head, check, CheckAnswer::Passed)
        .await
        .unwrap();
    assert_eq!(fake.status_check_state(PROJECT, 7, check), "passed");
}

/// A range read from a real repository's history: oldest first, each with its parents and
/// whole message; a commit the project does not have is GitLab's 404.
#[tokio::test]
async fn compare_lists_the_commits_between_two_with_parents_and_messages() {
    let (fake, client) = setup().await;
    let dir = std::env::temp_dir().join(format!("benchgate-gitlab-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    let mut shas = Vec::new();
    for message in [
        "start",
        "Split the lexer",
        "Merge branch 'fast' into 'main'\n\nFaster parser\n\nSee merge request acme/widgets!14",
    ] {
        git(&["commit", "-q", "--allow-empty", "-m", message]);
        shas.push(git(&["rev-parse", "HEAD"]));
    }
    fake.state().repo_dirs.insert(PROJECT, dir.clone());
    let range = client.compare(PROJECT, &shas[0], &shas[2]).await.unwrap();
    assert_eq!(range.len(), 2, "{range:?}");
    assert_eq!(range[0].id, shas[1]);
    assert_eq!(range[0].parent_ids, vec![shas[0].clone()]);
    assert_eq!(range[1].id, shas[2]);
    assert!(
        range[1]
            .message
            .trim_end()
            .ends_with("See merge request acme/widgets!14"),
        "{:?}",
        range[1].message
    );
    let unknown = client
        .compare(PROJECT, &"f".repeat(40), &shas[2])
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, GitlabError::Refused { status: 404, .. }),
        "{unknown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
