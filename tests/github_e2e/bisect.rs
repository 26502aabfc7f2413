//! The culprit search end to end: five pushes to main arrive while no agent runs, so they are
//! folded into one step of five commits. One of them makes the work 1.3×, one before it breaks
//! the build (and the next fixes it). The step opens an episode; the search confirms it on
//! fresh rounds (never the step's own), skips the commit that does not build, and names the
//! slower commit and its PR in the issue, on the PR and on the history page.

use std::path::Path;

use serde_json::{Value, json};

use super::{LABEL, Project, history, nothing_refused, setup_project, wait_for_count};
use crate::github::{self, FakeGitHub, REPO, fixture};
use crate::support::{BIN, git, http};

/// The pushes, oldest first: (message, what the commit does to the work tree).
const PUSHES: [&str; 5] = [
    "Document the parser (#11)",
    "Split the lexer (#12)",
    "Fix the build (#13)",
    "Slower parser (#14)",
    "Release notes (#15)",
];

/// main: `start`, then the five pushed commits. #12 adds a file the build refuses, #13 removes
/// it, #14 makes the work 1.3×.
fn burst_project(dir: &Path) -> Project {
    let path = dir.join("project");
    std::fs::create_dir_all(&path).unwrap();
    let work = |n: u64| std::fs::write(path.join("iterations"), n.to_string()).unwrap();
    let commit = |message: &str| {
        git(&path, &["add", "-A"]);
        git(&path, &["commit", "-qm", message]);
        git(&path, &["rev-parse", "HEAD"])
    };
    git(&path, &["init", "-q", "-b", "main"]);
    work(1_000_000);
    let base = commit("start");
    std::fs::write(path.join("README"), "parser docs\n").unwrap();
    commit(PUSHES[0]);
    std::fs::write(path.join("broken"), "the build refuses this tree\n").unwrap();
    commit(PUSHES[1]);
    std::fs::remove_file(path.join("broken")).unwrap();
    commit(PUSHES[2]);
    work(1_300_000);
    commit(PUSHES[3]);
    std::fs::write(path.join("NOTES"), "notes\n").unwrap();
    let head = commit(PUSHES[4]);
    Project { path, base, head }
}

/// The modelled time is `iterations` ns with 1% spread per run: the clocks are the PR tests'
/// subject, the search's logic is this one's.
fn burst_config() -> String {
    format!(
        "[benchmark]\nbuild = \"test ! -e broken\"\n\
         run = \"{BIN} spin --iterations $(cat iterations) --modelled-spread 0.01\"\n\
         format = \"libtest\"\nrounds = 8\nwarmup = 1\nrunner = \"{LABEL}\"\n\n\
         [[benchmark.rule]]\nmatch = \"*\"\nmetric = \"time\"\n\n\
         [gate]\nrare_slow_runs = \"off\"\nmin_effect = \"5%\"\n\n\
         [main]\nschedule = \"off\"\nissues = true\n"
    )
}

#[tokio::test]
async fn a_folded_burst_names_the_slower_commit_and_skips_one_that_does_not_build() {
    let config = burst_config();
    let github = FakeGitHub::start(Some(&config)).await;
    let key = github::app_key_file();
    let app_id = github::APP_ID.to_string();
    let env = [
        ("BENCHGATE_GITHUB_APP_ID", app_id.as_str()),
        ("BENCHGATE_GITHUB_PRIVATE_KEY_FILE", key.to_str().unwrap()),
        ("BENCHGATE_PROFILE_RUNS", "0"),
    ];
    let mut s = setup_project(github, &env, None, burst_project).await;
    let shas: Vec<String> = git(
        &s.project.path,
        &["rev-list", "--reverse", "--first-parent", "HEAD"],
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert_eq!(shas.len(), 6);
    assert_eq!((&shas[0], &shas[5]), (&s.project.base, &s.project.head));
    let short = |sha: &str| sha[..7].to_owned();

    // Five pushes before any agent runs: each step folds the queued one before it.
    for (i, message) in PUSHES.iter().enumerate() {
        let mut p = fixture("webhooks/push.main.json");
        p["repository"]["full_name"] = json!(REPO);
        p["repository"]["clone_url"] = json!(s.project.path.to_string_lossy());
        p["repository"]["default_branch"] = json!("main");
        p["installation"] = json!({"id": 1});
        p["ref"] = json!("refs/heads/main");
        p["before"] = json!(shas[i]);
        p["after"] = json!(shas[i + 1]);
        p["commits"] = json!([{"id": shas[i + 1], "message": message}]);
        p["head_commit"] = json!({"id": shas[i + 1], "message": message});
        let (status, body) = s.deliver("push", &format!("d-burst-{i}"), &p).await;
        assert_eq!(
            (status, body["outcome"].as_str()),
            (202, Some("main_scheduled")),
            "{body}"
        );
        s.outbox_drained().await;
    }
    let queued = s
        .count("SELECT COUNT(*) FROM comparisons WHERE branch = 'main' AND state = 'queued'")
        .await;
    assert_eq!(queued, 1, "five pushes, one step");

    s.start_agent().await;
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM bisections WHERE state <> 'running'",
        1,
        480,
    )
    .await;
    s.outbox_drained().await;

    let history = history(&s).await;
    let episodes = history["regressions"].as_array().unwrap();
    assert_eq!(episodes.len(), 1, "{history:#}");
    assert_eq!(
        (
            episodes[0]["base_sha"].as_str(),
            episodes[0]["head_sha"].as_str()
        ),
        (Some(shas[0].as_str()), Some(shas[5].as_str())),
        "the folded step opened it"
    );
    let searches = history["bisections"].as_array().unwrap();
    assert_eq!(searches.len(), 1, "{history:#}");
    let search = &searches[0];
    let outcome = &search["outcome"];
    assert_eq!(outcome["kind"], "culprit", "{search:#}");
    assert_eq!(outcome["commit"]["sha"], shas[4].as_str(), "{search:#}");
    assert_eq!(outcome["commit"]["pr"], 14);
    let change = outcome["change"].as_f64().unwrap();
    assert!((0.2..0.4).contains(&change), "{search:#}");
    assert_eq!(
        outcome["skipped"][0]["sha"],
        shas[2].as_str(),
        "the commit that does not build: {search:#}"
    );
    assert_eq!(search["commits"].as_array().unwrap().len(), 6);
    // The first probe asks whether the whole range regressed, on fresh rounds: the step that
    // raised the alarm chose the range and may not confirm it.
    let step: i64 = s
        .count("SELECT MAX(id) FROM comparisons WHERE branch = 'main' AND state = 'done'")
        .await;
    let probes = search["probes"].as_array().unwrap();
    let confirm: Vec<i64> = probes[0]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_i64().unwrap())
        .collect();
    assert!(
        !confirm.is_empty() && !confirm.contains(&step),
        "{search:#}"
    );
    let samples_of = |ids: &[i64]| {
        format!(
            "SELECT s.id FROM samples s JOIN jobs j ON j.id = s.job_id \
             WHERE j.comparison_id IN ({})",
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let fresh = s
        .count(&format!(
            "SELECT COUNT(*) FROM ({}) c",
            samples_of(&confirm)
        ))
        .await;
    let shared = s
        .count(&format!(
            "SELECT COUNT(*) FROM ({}) c WHERE c.id IN ({})",
            samples_of(&confirm),
            samples_of(&[step])
        ))
        .await;
    assert!(fresh > 0, "the confirmation measured rounds of its own");
    eprintln!(
        "search: {} probes, {} rounds; the confirmation {} rounds",
        outcome["probes"], outcome["rounds"], probes[0]["rounds"]
    );
    assert_eq!(shared, 0, "the confirmation reused the alarm's samples");
    assert!(
        probes
            .iter()
            .all(|p| p["state"] == "decided" || p["state"] == "skipped"),
        "{search:#}"
    );
    let skipped: Vec<&Value> = probes.iter().filter(|p| p["state"] == "skipped").collect();
    assert_eq!(skipped.len(), 1, "{search:#}");
    assert!(
        skipped[0]["note"]
            .as_str()
            .unwrap()
            .contains("could not be built or run"),
        "{search:#}"
    );

    // The episode's issue names the commit, its PR and interval, the probes and rounds.
    let issues = s.github.issues();
    assert_eq!(issues.len(), 1, "{issues:#?}");
    let issue = &issues[0];
    let named = format!("**Culprit: `{}` (#14) +", short(&shas[4]));
    assert!(issue.body.contains(&named), "{}", issue.body);
    assert!(
        issue
            .title
            .contains(&format!("culprit {} (#14)", short(&shas[4]))),
        "{}",
        issue.title
    );
    assert!(
        issue.body.contains(&format!(
            "Skipped `{}` (#12): could not be built or run",
            short(&shas[2])
        )),
        "{}",
        issue.body
    );
    assert!(issue.body.contains(&format!(
        "{} probes and {} rounds over 5 commits",
        outcome["probes"], outcome["rounds"]
    )));
    // The culprit's PR is told; no other PR is.
    let told = s.github.bot_report_comments("main-culprit");
    assert_eq!(told.len(), 1, "{told:#?}");
    assert_eq!(told[0].pr, 14);
    assert!(told[0].body.contains("alone is **+"), "{}", told[0].body);

    // The history page marks it, and the search reads back by id.
    let page = s.page(&format!("/history?repository={REPO}")).await;
    assert!(page.contains("Culprit searches"), "{page}");
    assert!(
        page.contains(&format!("culprit {} (#14)", short(&shas[4]))),
        "{page}"
    );
    let by_id = http()
        .get(
            s.server
                .url(&format!("/api/v1/history/bisections/{}", search["id"])),
        )
        .bearer_auth(super::ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(by_id.status(), 200);
    let by_id: Value = by_id.json().await.unwrap();
    assert_eq!(by_id["outcome"], *outcome);

    // Asked again by hand for the same range, the search is not run twice: the ended one stays,
    // a new one reuses every split's and check's comparisons and measures only its own
    // confirmation (the earlier search's chose this range too).
    let before: i64 = s.count("SELECT COUNT(*) FROM comparisons").await;
    let again = http()
        .post(s.server.url("/api/v1/history/bisect"))
        .bearer_auth(super::ADMIN_TOKEN)
        .json(&json!({
            "repository": REPO,
            "benchmark": search["benchmark"],
            "metric": search["metric"],
            "good": short(&shas[0]),
            "bad": short(&shas[5]),
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 201);
    let again: Value = again.json().await.unwrap();
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM bisections WHERE state <> 'running'",
        2,
        120,
    )
    .await;
    let rerun: Value = http()
        .get(s.server.url(again["url"].as_str().unwrap()))
        .bearer_auth(super::ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rerun["outcome"]["commit"], outcome["commit"], "{rerun:#}");
    let added = s.count("SELECT COUNT(*) FROM comparisons").await - before;
    let reconfirmed = rerun["probes"][0]["comparisons"].as_array().unwrap().len() as i64;
    assert!(
        added >= 1 && added == reconfirmed,
        "{added} comparisons added, the confirmation has {reconfirmed}: {rerun:#}"
    );

    // Asked wrongly: each answer says what to give instead, and nothing is started.
    let ask = async |body: Value| {
        let answer = http()
            .post(s.server.url("/api/v1/history/bisect"))
            .bearer_auth(super::ADMIN_TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    };
    let wrong = [
        (
            json!({"repository": REPO, "benchmark": "spin", "metric": "time", "good": "0bad", "bad": short(&shas[5])}),
            400,
            "no compared commit",
        ),
        (
            json!({"repository": REPO, "benchmark": "spin", "metric": "time", "good": shas[5], "bad": short(&shas[5])}),
            400,
            "the same commit",
        ),
        (
            json!({"repository": REPO, "benchmark": "spin", "good": shas[0], "bad": shas[5], "suite": "other"}),
            404,
            "has the suite",
        ),
        (
            json!({"repository": "acme/unknown", "benchmark": "spin", "good": shas[0], "bad": shas[5]}),
            404,
            "repository acme/unknown",
        ),
    ];
    for (body, status, says) in wrong {
        let (got, text) = ask(body.clone()).await;
        assert_eq!(got, status, "{body}: {text}");
        assert!(text.contains(says), "{body}: {text}");
    }
    assert_eq!(s.count("SELECT COUNT(*) FROM bisections").await, 2);

    // In the episode's issue, the owner asks again: a third search, on the comment's word.
    let comment_id = 77_001;
    s.github
        .add_comment_with_id(comment_id, issue.number, "Codertocat", "/benchgate bisect");
    let mut c = fixture("webhooks/issue_comment.created.on-issue.with-installation.json");
    c["repository"]["full_name"] = json!(REPO);
    c["installation"] = json!({"id": 1});
    c["issue"]["number"] = json!(issue.number);
    c["comment"]["id"] = json!(comment_id);
    c["comment"]["body"] = json!("/benchgate bisect");
    c["comment"]["created_at"] = json!(chrono::Utc::now().to_rfc3339());
    let (status, body) = s.deliver("issue_comment", "d-bisect-1", &c).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (202, Some("command")),
        "{body}"
    );
    wait_for_count(
        &s,
        "SELECT COUNT(*) FROM bisections WHERE state <> 'running' AND requested_by = 'Codertocat'",
        1,
        120,
    )
    .await;
    s.outbox_drained().await;
    assert_eq!(
        s.github.reactions(),
        [(comment_id, "eyes".to_owned())],
        "the command is acknowledged"
    );
    let issue_now = &s.github.issues()[0];
    assert!(issue_now.body.contains(&named), "{}", issue_now.body);
    nothing_refused(&s.github);
}
